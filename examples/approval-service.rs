//! An approval service: an HTTP API that starts agent runs, lists the runs waiting for a
//! person, and approves (with corrected arguments if need be) or denies their calls,
//! resuming each run where it paused. Runs live in a store, sealed, and every step is
//! checkpointed, so the service can be restarted, or run as several processes, at any
//! time.
//!
//! ```text
//! cargo run -p agent-examples --example approval-service -- [ADDR]
//! ```
//!
//! Runs go to SQLite (`approval-service.db`, or the file `RUNS_DB` names), or to Postgres
//! when `DATABASE_URL` is set. `STATE_KEY` seals the stored states (a development key is
//! used, with a warning, without it). The model is a scripted stand-in, so everything
//! works offline: ask it to "refund order 1042", or for the "status" of the order.
//!
//! - `POST /runs` `{"input": "..."}`: starts a run; answers where it stands.
//! - `GET /runs/waiting`: the runs waiting for a person, with their pending calls.
//! - `GET /runs/{run_id}`: where a run stands, with its approval records.
//! - `POST /runs/{run_id}/calls/{call_id}/approve` `{"who": "...", "reason": "...",
//!   "arguments": {...}}`: approves a call (`arguments` corrects the model's) and resumes.
//! - `POST /runs/{run_id}/calls/{call_id}/deny` `{"who": "...", "reason": "..."}`.
//!
//! A decision on a call that is not waiting, or that another person or process made
//! first, is `409 Conflict`; corrected arguments that do not fit the tool are `422`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use toolwright_core::{
    Agent, AgentError, RunState, RunStore, ToolError, ToolErrorKind,
    run::{ApprovalRecord, Decider, PendingCall, RunStatus, StoreError},
    testing::RuleLlm,
    tool, tools,
};
use toolwright_store::{PostgresStore, SqliteStore};

/// Look up an order.
#[tool(read_only)]
async fn order_status(
    /// The order number
    order: u32,
) -> String {
    format!("order {order} was delivered on Tuesday")
}

/// Refund `amount_cents` of an order to the customer.
#[tool(require_approval)]
async fn refund(
    /// The order number
    order: u32,
    /// How much to refund, in cents
    amount_cents: u32,
    ctx: &toolwright_core::ToolContext,
) -> Result<String, ToolError> {
    // A payment provider takes the key, and refunds once per key however often asked.
    Ok(format!(
        "refunded {amount_cents} cents on order {order} (idempotency key {})",
        ctx.idempotency_key()
    ))
}

/// The service's shared parts.
struct App {
    agent: Agent,
    store: Arc<dyn RunStore>,
}

/// The agent: a scripted model and the two tools, sealing and checkpointing into `store`.
fn agent(store: Arc<dyn RunStore>, key: &[u8]) -> Result<Agent, AgentError> {
    let llm = RuleLlm::new()
        .when(
            "refund",
            "refund",
            json!({"order": 1042, "amount_cents": 2500}),
        )
        .when("status", "order_status", json!({"order": 1042}))
        .fallback("I can refund an order or tell its status.");
    Agent::builder(llm)
        .system_prompt("You handle refunds. Refunds need a person's approval.")
        .tools(tools![order_status, refund])
        .state_key(key)
        .checkpoints(store)
        .build()
}

/// The routes, over `app`.
fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/runs", post(start))
        .route("/runs/waiting", get(waiting))
        .route("/runs/{run_id}", get(show))
        .route("/runs/{run_id}/calls/{call_id}/approve", post(approve))
        .route("/runs/{run_id}/calls/{call_id}/deny", post(deny))
        .with_state(app)
}

/// Where a run stands, as the API answers it.
#[derive(Serialize)]
struct RunView {
    run_id: String,
    status: RunStatus,
    revision: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer: Option<String>,
    pending: Vec<PendingCall>,
    approvals: Vec<ApprovalRecord>,
}

impl From<&RunState> for RunView {
    fn from(run: &RunState) -> Self {
        Self {
            run_id: run.run_id.clone(),
            status: run.status,
            revision: run.revision,
            answer: run.answer().map(str::to_owned),
            pending: run.pending(),
            approvals: run.approvals.clone(),
        }
    }
}

/// An error answer: a status and `{"error": "..."}`.
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1}))).into_response()
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        let status = match &error {
            StoreError::Conflict { .. } => StatusCode::CONFLICT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self(status, error.to_string())
    }
}

impl From<AgentError> for ApiError {
    fn from(error: AgentError) -> Self {
        Self(StatusCode::INTERNAL_SERVER_ERROR, error.to_string())
    }
}

type ApiResult = Result<Json<RunView>, ApiError>;

#[derive(Deserialize)]
struct StartRequest {
    input: String,
}

async fn start(State(app): State<Arc<App>>, Json(request): Json<StartRequest>) -> ApiResult {
    let mut run = app.agent.start(request.input);
    app.store.save_run(&app.agent, &mut run).await?;
    app.agent.run(&mut run).await?;
    Ok(Json(RunView::from(&run)))
}

/// A waiting run and its pending calls.
#[derive(Serialize)]
struct WaitingView {
    run_id: String,
    revision: u64,
    pending: Vec<PendingCall>,
}

async fn waiting(State(app): State<Arc<App>>) -> Result<Json<Vec<WaitingView>>, ApiError> {
    let mut views = Vec::new();
    for waiting in app.store.waiting().await? {
        // A run whose stored state is refused (edited in the database) is left out.
        if let Ok(Some(run)) = app.store.load_run(&app.agent, &waiting.run_id).await {
            views.push(WaitingView {
                run_id: run.run_id.clone(),
                revision: run.revision,
                pending: run.pending(),
            });
        }
    }
    Ok(Json(views))
}

async fn load(app: &App, run_id: &str) -> Result<RunState, ApiError> {
    app.store
        .load_run(&app.agent, run_id)
        .await?
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no run `{run_id}`")))
}

async fn show(State(app): State<Arc<App>>, Path(run_id): Path<String>) -> ApiResult {
    Ok(Json(RunView::from(&load(&app, &run_id).await?)))
}

#[derive(Deserialize)]
struct Decision {
    who: String,
    #[serde(default)]
    reason: Option<String>,
    /// Corrected arguments for the call, instead of the model's.
    #[serde(default)]
    arguments: Option<Value>,
}

impl Decision {
    fn decider(&self) -> Decider {
        let decider = Decider::new(self.who.clone());
        match &self.reason {
            Some(reason) => decider.reason(reason.clone()),
            None => decider,
        }
    }
}

async fn approve(
    State(app): State<Arc<App>>,
    Path((run_id, call_id)): Path<(String, String)>,
    Json(decision): Json<Decision>,
) -> ApiResult {
    let mut run = load(&app, &run_id).await?;
    let decided = match decision.arguments.clone() {
        Some(arguments) => app
            .agent
            .approve_with(&mut run, &call_id, arguments, decision.decider())
            .map_err(|e| match e.tool_error_kind() {
                // The person's corrected arguments do not fit the tool's schema.
                Some(ToolErrorKind::InvalidArguments) => {
                    ApiError(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
                }
                _ => ApiError(StatusCode::CONFLICT, e.to_string()),
            }),
        None => run
            .approve_by(&call_id, decision.decider())
            .map_err(|e| ApiError(StatusCode::CONFLICT, e.to_string())),
    };
    decided?;
    resume(&app, run).await
}

async fn deny(
    State(app): State<Arc<App>>,
    Path((run_id, call_id)): Path<(String, String)>,
    Json(decision): Json<Decision>,
) -> ApiResult {
    let mut run = load(&app, &run_id).await?;
    run.deny_by(&call_id, decision.decider())
        .map_err(|e| ApiError(StatusCode::CONFLICT, e.to_string()))?;
    resume(&app, run).await
}

/// Saves the decision (the claim: of two people deciding at once, one gets a conflict),
/// then runs the run on until it pauses again or ends.
async fn resume(app: &App, mut run: RunState) -> ApiResult {
    app.store.save_run(&app.agent, &mut run).await?;
    app.agent.run(&mut run).await?;
    Ok(Json(RunView::from(&run)))
}

/// The store: Postgres when `DATABASE_URL` is set, else SQLite.
async fn open_store() -> Result<Arc<dyn RunStore>, StoreError> {
    if let Ok(url) = std::env::var("DATABASE_URL") {
        eprintln!("storing runs in Postgres");
        return Ok(Arc::new(PostgresStore::connect(&url).await?));
    }
    let path = std::env::var("RUNS_DB").unwrap_or_else(|_| "approval-service.db".to_owned());
    eprintln!("storing runs in SQLite at {path}");
    Ok(Arc::new(SqliteStore::open(path).await?))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".to_owned());
    let key = std::env::var("STATE_KEY").unwrap_or_else(|_| {
        eprintln!("warning: STATE_KEY is not set; sealing runs with a development key");
        "development key, not for production".to_owned()
    });
    let store = open_store().await?;
    let agent = agent(store.clone(), key.as_bytes())?;
    let app = Arc::new(App { agent, store });
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    // Every step is checkpointed, so even a kill loses nothing but the requests in
    // flight; on Ctrl-C or SIGTERM those are answered before the process ends.
    axum::serve(listener, router(app))
        .with_graceful_shutdown(toolwright_mcp::shutdown_signal())
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

    /// The service on a free port of 127.0.0.1, over an in-memory SQLite store.
    async fn serve() -> (String, Arc<App>) {
        let store: Arc<dyn RunStore> = Arc::new(SqliteStore::open_in_memory().await.unwrap());
        let app = Arc::new(App {
            agent: agent(store.clone(), KEY).unwrap(),
            store,
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(axum::serve(listener, router(app.clone())).into_future());
        (base, app)
    }

    async fn send(method: &str, url: &str, body: Option<Value>) -> (StatusCode, Value) {
        // Plain HTTP, but reqwest wants a TLS provider to build a client.
        #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::new();
        let mut request = match method {
            "GET" => client.get(url),
            _ => client.post(url),
        };
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = StatusCode::from_u16(response.status().as_u16()).unwrap();
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn start_refund(base: &str) -> (String, String) {
        let (status, run) = send(
            "POST",
            &format!("{base}/runs"),
            Some(json!({"input": "Please refund order 1042"})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{run}");
        assert_eq!(run["status"], "waiting_for_human");
        let call = &run["pending"][0]["call"];
        assert_eq!(call["name"], "refund");
        (
            run["run_id"].as_str().unwrap().to_owned(),
            call["id"].as_str().unwrap().to_owned(),
        )
    }

    #[tokio::test]
    async fn a_refund_waits_is_listed_and_is_approved_with_a_corrected_amount() {
        let (base, _) = serve().await;
        let (run_id, call_id) = start_refund(&base).await;

        let (status, waiting) = send("GET", &format!("{base}/runs/waiting"), None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(waiting[0]["run_id"], run_id.as_str());
        assert_eq!(waiting[0]["pending"][0]["call"]["id"], call_id.as_str());

        let decide = format!("{base}/runs/{run_id}/calls/{call_id}/approve");
        let (status, error) = send(
            "POST",
            &decide,
            Some(json!({"who": "alice", "arguments": {"order": 1042, "amount_cents": "lots"}})),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
        assert!(error["error"].as_str().unwrap().contains("amount_cents"));

        let (status, run) = send(
            "POST",
            &decide,
            Some(json!({
                "who": "alice",
                "reason": "only the damaged item",
                "arguments": {"order": 1042, "amount_cents": 1200},
            })),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{run}");
        assert_eq!(run["status"], "finished");
        let answer = run["answer"].as_str().unwrap();
        assert!(answer.contains("refunded 1200 cents"), "{answer}");
        assert!(answer.contains(&format!("{run_id}:{call_id}")), "{answer}");
        assert_eq!(run["approvals"][0]["who"], "alice");
        assert_eq!(run["approvals"][0]["corrected_from"]["amount_cents"], 2500);

        let (_, waiting) = send("GET", &format!("{base}/runs/waiting"), None).await;
        assert_eq!(waiting, json!([]));
        let (status, _) = send("POST", &decide, Some(json!({"who": "bob"}))).await;
        assert_eq!(
            status,
            StatusCode::CONFLICT,
            "a decided call cannot be decided again"
        );
    }

    #[tokio::test]
    async fn a_denied_refund_never_runs_and_the_reason_reaches_the_model() {
        let (base, _) = serve().await;
        let (run_id, call_id) = start_refund(&base).await;
        let (status, run) = send(
            "POST",
            &format!("{base}/runs/{run_id}/calls/{call_id}/deny"),
            Some(json!({"who": "carol", "reason": "already refunded"})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{run}");
        let answer = run["answer"].as_str().unwrap();
        assert!(answer.contains("already refunded"), "{answer}");
        assert!(!answer.contains("refunded 2500"), "{answer}");
        assert_eq!(run["approvals"][0]["decision"], "denied");

        let (status, shown) = send("GET", &format!("{base}/runs/{run_id}"), None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(shown["status"], "finished");
    }

    #[tokio::test]
    async fn two_people_approving_at_once_resume_the_run_once() {
        let (base, _) = serve().await;
        let (run_id, call_id) = start_refund(&base).await;
        let decide = format!("{base}/runs/{run_id}/calls/{call_id}/approve");
        let (a, b) = tokio::join!(
            send("POST", &decide, Some(json!({"who": "alice"}))),
            send("POST", &decide, Some(json!({"who": "bob"}))),
        );
        let mut statuses = [a.0, b.0];
        statuses.sort();
        assert_eq!(statuses, [StatusCode::OK, StatusCode::CONFLICT]);
        let (_, run) = send("GET", &format!("{base}/runs/{run_id}"), None).await;
        assert_eq!(run["approvals"].as_array().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn unknown_runs_are_not_found_and_a_run_without_approval_finishes() {
        let (base, _) = serve().await;
        let (status, _) = send("GET", &format!("{base}/runs/run_nope"), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, run) = send(
            "POST",
            &format!("{base}/runs"),
            Some(json!({"input": "What is the status of my order?"})),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(run["status"], "finished");
        assert!(run["answer"].as_str().unwrap().contains("delivered"));
    }
}
