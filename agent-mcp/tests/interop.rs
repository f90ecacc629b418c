//! The client side against real servers in other processes: our example server
//! (`interop/conformance-server.rs`: examples/mcp-server.rs's tools and the conformance
//! suite's) over stdio and HTTP, and a server we did not write, built with the official
//! Python SDK (`interop/fastmcp_server.py`), over stdio and HTTP, and one built with
//! FastMCP 4 (`interop/fastmcp4_server.py`), which speaks only protocol 2026-07-28.
//!
//! The Python servers need `.venv-interop` and `.venv-interop-v2` (made by
//! `scripts/install-interop-deps.sh`, which `scripts/test.sh` runs first).

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use toolwright_core::{Content, ToolContext, ToolErrorKind, ToolSet, tool::CallReporter};
use toolwright_mcp::{HttpClientOptions, McpClient};

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// The example server's binary, built once per test run (a no-op when up to date, as
/// under `cargo test --workspace --all-targets`).
fn example_server() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .current_dir(workspace_root())
            .args([
                "build",
                "--quiet",
                "-p",
                "agent-examples",
                "--example",
                "conformance-server",
            ])
            .status()
            .expect("cargo runs");
        assert!(
            status.success(),
            "building interop/conformance-server.rs failed"
        );
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target"));
        target.join("debug/examples/conformance-server")
    })
}

fn python() -> PathBuf {
    venv_python(".venv-interop")
}

/// The Python of the venv with the SDK's 2.x line and FastMCP 4.
fn python_v2() -> PathBuf {
    venv_python(".venv-interop-v2")
}

fn venv_python(venv: &str) -> PathBuf {
    let python = workspace_root().join(venv).join("bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-interop-deps.sh",
        python.display()
    );
    python
}

fn fastmcp_server() -> PathBuf {
    workspace_root().join("interop/fastmcp_server.py")
}

/// Records the progress a call reports.
#[derive(Default)]
struct Recorder(Mutex<Vec<serde_json::Value>>);

impl CallReporter for Recorder {
    fn progress(
        &self,
        _call_id: &str,
        value: serde_json::Value,
    ) -> Result<(), toolwright_core::ToolError> {
        self.0.lock().unwrap().push(value);
        Ok(())
    }

    fn set_context(&self, _call_id: &str, _value: serde_json::Value) {}
}

/// Calls `name` with a recording reporter; returns the output and the progress seen.
async fn call_with_progress(
    set: &ToolSet,
    name: &str,
    args: serde_json::Value,
) -> (Vec<Content>, Vec<serde_json::Value>) {
    let recorder = Arc::new(Recorder::default());
    let ctx = ToolContext::default().with_reporter(recorder.clone());
    let out = set.call(name, &args, &ctx).await.unwrap();
    let seen = recorder.0.lock().unwrap().clone();
    (out, seen)
}

fn text_of(contents: &[Content]) -> String {
    contents.iter().filter_map(Content::as_text).collect()
}

async fn call(
    set: &ToolSet,
    name: &str,
    args: serde_json::Value,
) -> toolwright_core::AgentResult<Vec<Content>> {
    set.call(name, &args, &ToolContext::default()).await
}

/// What every connection to the example server must show, whatever the transport.
async fn check_example_server(client: &McpClient) {
    assert_eq!(client.server_name(), "agent-mcp-conformance");
    let set = client.toolset().unwrap();
    for name in [
        "get_weather",
        "add",
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_error_handling",
        "json_schema_2020_12_tool",
    ] {
        assert!(set.get(name).is_some(), "{name} is listed");
    }

    // Schema, output schema and hints survive the round trip.
    let weather = set.definition("get_weather").unwrap();
    assert_eq!(weather.parameters["properties"]["city"]["type"], "string");
    assert_eq!(weather.parameters["required"], json!(["city"]));
    assert!(weather.output_schema.is_some());
    assert_eq!(weather.annotations.read_only, Some(true));
    assert_eq!(weather.title.as_deref(), Some("Weather lookup"));

    let out = call(&set, "add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(text_of(&out), "5.0");

    let out = call(
        &set,
        "get_weather",
        json!({"city": "Paris", "unit": "fahrenheit"}),
    )
    .await
    .unwrap();
    let structured = out
        .iter()
        .find_map(Content::as_json)
        .expect("structured content");
    assert_eq!(structured["city"], "Paris");
    assert_eq!(structured["unit"], "fahrenheit");
    let as_text: serde_json::Value = serde_json::from_str(&text_of(&out)).unwrap();
    assert_eq!(&as_text, structured, "the text block carries the same JSON");

    let out = call(&set, "test_image_content", json!({})).await.unwrap();
    assert!(matches!(&out[..], [Content::Image { mime_type, .. }] if mime_type == "image/png"));
    let out = call(&set, "test_audio_content", json!({})).await.unwrap();
    assert!(matches!(&out[..], [Content::Audio { mime_type, .. }] if mime_type == "audio/wav"));
    let out = call(&set, "test_embedded_resource", json!({}))
        .await
        .unwrap();
    assert_eq!(
        out,
        vec![Content::text_resource(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content."
        )]
    );

    let error = call(&set, "test_error_handling", json!({}))
        .await
        .unwrap_err();
    assert_eq!(error.tool_error_kind(), Some(ToolErrorKind::Execution));
    assert_eq!(
        error.to_string(),
        "This tool intentionally returns an error for testing"
    );

    let error = call(&set, "add", json!({"a": "two", "b": 3}))
        .await
        .unwrap_err();
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::InvalidArguments)
    );
    // The server's message names the argument and what it expected.
    assert_eq!(
        error.to_string(),
        r#"Invalid arguments: a: invalid type: string "two", expected f64"#
    );

    let error = call(&set, "sleep", json!({"ms": 5000})).await.unwrap_err();
    assert_eq!(error.tool_error_kind(), Some(ToolErrorKind::Timeout));
    assert_eq!(error.to_string(), "tool `sleep` timed out after 1000ms");

    // The server's progress notifications reach the caller's reporter.
    let (out, progress) = call_with_progress(&set, "test_tool_with_progress", json!({})).await;
    assert_eq!(text_of(&out), "Progress test completed");
    assert_eq!(
        progress,
        [
            json!({"progress": 0.0, "total": 100.0}),
            json!({"progress": 50.0, "total": 100.0}),
            json!({"progress": 100.0, "total": 100.0}),
        ]
    );
}

#[tokio::test]
async fn example_server_over_stdio() {
    let client = McpClient::connect_stdio(Command::new(example_server()))
        .await
        .unwrap();
    check_example_server(&client).await;
    client.close().await;
}

/// Starts `command`, which prints `listening on URL` on stderr, and returns the URL.
async fn spawn_http(mut command: Command) -> (Child, String) {
    command.stderr(Stdio::piped()).kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("listening on ") {
                return url.to_owned();
            }
        }
        panic!("the server exited before listening");
    })
    .await
    .expect("the server listens within 30s");
    // Keep draining stderr so the child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

#[tokio::test]
async fn example_server_over_http() {
    let mut command = Command::new(example_server());
    command.args(["--http", "127.0.0.1:0"]);
    let (mut child, url) = spawn_http(command).await;
    let client = McpClient::connect_http(&url).await.unwrap();
    check_example_server(&client).await;
    client.close().await;
    child.kill().await.unwrap();
}

/// What every connection to the Python server must show, whatever the transport.
async fn check_python_server(client: &McpClient) {
    assert_eq!(client.server_name(), "python-fastmcp-server");
    let set = client.toolset().unwrap();
    let mut names: Vec<_> = set.iter().map(|t| t.name()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["count", "fail", "greet", "grow", "multiply", "weather"]
    );
    assert_eq!(
        set.definition("multiply").unwrap().parameters["properties"]["a"]["type"],
        "integer"
    );

    let out = call(&set, "multiply", json!({"a": 6, "b": 7}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "42");
    assert_eq!(
        out.iter().find_map(Content::as_json),
        Some(&json!({"result": 42}))
    );

    let out = call(&set, "greet", json!({"name": "Ada"})).await.unwrap();
    assert_eq!(text_of(&out), "Hello, Ada!");

    let out = call(&set, "weather", json!({"city": "Oslo"}))
        .await
        .unwrap();
    let structured = out.iter().find_map(Content::as_json).unwrap();
    assert_eq!(structured["city"], "Oslo");
    assert_eq!(structured["temperature"], 21.5);

    let (out, progress) = call_with_progress(&set, "count", json!({"n": 3})).await;
    assert_eq!(text_of(&out), "counted to 3");
    let steps: Vec<_> = progress
        .iter()
        .map(|p| (p["progress"].clone(), p["total"].clone()))
        .collect();
    assert_eq!(
        steps,
        [
            (json!(1.0), json!(3.0)),
            (json!(2.0), json!(3.0)),
            (json!(3.0), json!(3.0))
        ]
    );

    // A Python exception becomes a tool error the model can read.
    let error = call(&set, "fail", json!({"reason": "disk full"}))
        .await
        .unwrap_err();
    assert_eq!(error.tool_error_kind(), Some(ToolErrorKind::Execution));
    assert_eq!(
        error.to_string(),
        "Error executing tool fail: disk full",
        "{error:?}"
    );

    // Arguments the Python side rejects come back as errors too.
    let error = call(&set, "multiply", json!({"a": "six", "b": 7}))
        .await
        .unwrap_err();
    // FastMCP answers with an error result (so an execution error here) carrying
    // pydantic's report: the tool, the argument `a` on its own line, what it expected.
    assert_eq!(error.tool_error_kind(), Some(ToolErrorKind::Execution));
    let message = error.to_string();
    assert!(
        message.starts_with("Error executing tool multiply: 1 validation error"),
        "{message}"
    );
    assert!(
        message.contains("\na\n  Input should be a valid integer"),
        "{message}"
    );
    assert!(message.contains("input_value='six'"), "{message}");

    // Our own checks apply before anything is sent: the schema is closed.
    let error = call(&set, "greet", json!([1])).await.unwrap_err();
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::InvalidArguments)
    );
    assert_eq!(
        error.to_string(),
        "Invalid arguments: expected a JSON object"
    );
}

#[tokio::test]
async fn python_fastmcp_server_over_stdio() {
    let mut command = Command::new(python());
    command.arg(fastmcp_server());
    let client = McpClient::connect_stdio(command).await.unwrap();
    check_python_server(&client).await;
    client.close().await;
}

#[tokio::test]
async fn python_fastmcp_server_over_http() {
    let (mut child, client) = python_server_over_http(python(), fastmcp_server()).await;
    check_python_server(&client).await;
    client.close().await;
    child.kill().await.unwrap();
}

/// Starts `script` with `python` as an HTTP server on a free port, and connects to it
/// once it is up.
async fn python_server_over_http(python: PathBuf, script: PathBuf) -> (Child, McpClient) {
    // A free port: bind, read it, release it for the Python server.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(python)
        .arg(script)
        .args(["--http", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let started = Instant::now();
    let client = loop {
        match McpClient::connect_http_with(&url, &agreeing()).await {
            Ok(client) => break client,
            Err(error) if started.elapsed() < Duration::from_secs(30) => {
                let _ = error;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(error) => panic!("the Python server did not come up: {error}"),
        }
    };
    (child, client)
}

/// Options that accept every form the server sends with `{"sure": true}`.
fn agreeing() -> HttpClientOptions {
    HttpClientOptions::new().with_elicitation(|_message, _schema| async {
        Some(serde_json::Map::from_iter([(
            "sure".to_owned(),
            json!(true),
        )]))
    })
}

#[tokio::test]
async fn fastmcp4_server_over_2026_07_28() {
    let script = workspace_root().join("interop/fastmcp4_server.py");
    let (mut child, client) = python_server_over_http(python_v2(), script).await;
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_name(), "fastmcp4-server");
    let set = client.toolset().unwrap();
    let out = call(&set, "multiply", json!({"a": 6, "b": 7}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "42");
    // The tool asks its user: FastMCP 4 sends `input_required`, the client answers
    // with its elicitation handler and sends the call again.
    let out = call(&set, "confirm", json!({"what": "deploy"}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "did deploy");
    client.close().await;
    child.kill().await.unwrap();
}

#[tokio::test]
async fn python_server_changing_its_tools_is_listed_again() {
    let mut command = Command::new(python());
    command.arg(fastmcp_server());
    let client = McpClient::connect_stdio(command).await.unwrap();
    let before = client.toolset().unwrap();
    let mut changes = client.tool_changes();
    let out = call(&before, "grow", json!({})).await.unwrap();
    assert_eq!(text_of(&out), "divide added, greet removed");
    tokio::time::timeout(Duration::from_secs(30), changes.changed())
        .await
        .expect("the tools listed again after the server's notice")
        .unwrap();
    let mut names = client.tool_names();
    names.sort_unstable();
    assert_eq!(
        names,
        ["count", "divide", "fail", "grow", "multiply", "weather"]
    );
    let out = call(
        &client.toolset().unwrap(),
        "divide",
        json!({"a": 7, "b": 2}),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&out), "3.5");
    // `greet`, made before the change, says the server no longer offers it.
    let error = call(&before, "greet", json!({"name": "Ada"}))
        .await
        .unwrap_err();
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::UnknownTool),
        "{error}"
    );
    assert!(
        error.to_string().contains("no longer offers `greet`"),
        "{error}"
    );
    client.close().await;
}
