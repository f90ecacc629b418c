//! The core's security property, over MCP: a Hidden or inactive Deferred tool never
//! runs, whatever name or casing the client sends, and the answer never names a tool
//! the client was not offered.

#[path = "support/in_memory.rs"]
mod in_memory;
#[path = "../../tests/name_variants.rs"]
mod name_variants;

use in_memory::Session;
use name_variants::name_variant;
use proptest::prelude::*;
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use toolwright_core::{tool, tool::ActivationContext, tools};

const HIDDEN: &str = "secret_tool";
const DEFERRED: &str = "deferred_tool";

static HIDDEN_RUNS: AtomicUsize = AtomicUsize::new(0);
static DEFERRED_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Hidden: for the application's own use, never a client's.
#[tool(exposure = "hidden")]
async fn secret_tool() -> &'static str {
    HIDDEN_RUNS.fetch_add(1, Ordering::SeqCst);
    "ran"
}

async fn never(_ctx: &ActivationContext) -> bool {
    false
}

/// Deferred, and never active.
#[tool(exposure = "deferred", activate_when = never)]
async fn deferred_tool() -> &'static str {
    DEFERRED_RUNS.fetch_add(1, Ordering::SeqCst);
    "ran"
}

/// Offered to every client.
#[tool]
async fn visible() -> &'static str {
    "ok"
}

fn session() -> &'static Session {
    static SESSION: OnceLock<Session> = OnceLock::new();
    SESSION.get_or_init(|| Session::serve(tools![secret_tool, deferred_tool, visible]))
}

/// Calls `name` and returns what the client reads: the protocol error's message, or the
/// result's text if the server answered with a result.
fn call(name: &str) -> Result<String, TestCaseError> {
    match session().call(CallToolRequestParams::new(name.to_owned())) {
        Err(ServiceError::McpError(data)) => Ok(data.message.into_owned()),
        Err(other) => Err(TestCaseError::fail(format!(
            "{name:?}: the transport failed: {other}"
        ))),
        Ok(result) => {
            prop_assert_eq!(result.is_error, Some(true), "{:?} ran: {:?}", name, result);
            Ok(serde_json::to_string(&result.content).expect("serializable"))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn hidden_and_inactive_tools_never_run_over_mcp_whatever_the_name(
        hidden in name_variant(HIDDEN),
        deferred in name_variant(DEFERRED),
    ) {
        for name in [&hidden, &deferred] {
            let answer = call(name)?;
            prop_assert!(answer.contains("Unknown tool"), "{name:?}: {answer}");
            // The answer may repeat what the client sent, but suggests nothing it was
            // not offered.
            let suggested = answer.replace(name.as_str(), "");
            prop_assert!(
                !suggested.contains(HIDDEN) && !suggested.contains(DEFERRED),
                "{name:?}: {answer}"
            );
        }
        prop_assert_eq!(HIDDEN_RUNS.load(Ordering::SeqCst), 0);
        prop_assert_eq!(DEFERRED_RUNS.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn an_offered_tool_runs_on_the_same_session() {
    let result = session()
        .call(CallToolRequestParams::new("visible"))
        .expect("the call succeeds");
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        "ok"
    );
}
