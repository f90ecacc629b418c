//! `resources/read` and `prompts/get` over the stream transport (`serve_io`), which
//! answers them itself once the session is initialized, as it answers `tools/call`: the
//! same bytes rmcp would write, errors included, a read's log messages before its
//! answer, cancellation, and every line it does not read in full left to rmcp as before.

#[path = "support/events.rs"]
mod events;
#[path = "support/raw_stream.rs"]
mod raw_stream;

use events::Flag;
use raw_stream::{Raw, Via, replies};
use serde_json::{Value, json};
use toolwright_core::Content;
use toolwright_mcp::prompts::{FeatureError, FnPrompt, PromptArgument, PromptMessage, PromptSet};
use toolwright_mcp::resources::{
    FnResource, FnTemplate, ResourceContent, ResourceInfo, ResourceSet,
};
use toolwright_mcp::{LogLevel, McpPeer, McpServer};

/// What the resources of a test share with it.
#[derive(Clone, Default)]
struct Probes {
    /// A `wait://` read started; one saw its cancellation.
    started: Flag,
    saw_cancel: Flag,
}

const PIXEL: &str = "aGk=";

/// What each fixed resource but the two below holds: its URI, MIME type and contents.
const FIXED: [(&str, Option<&str>); 6] = [
    ("text://greeting", None),
    ("config://app", Some("application/json")),
    ("logo://png", Some("image/png")),
    ("empty://nothing", None),
    ("broken://always", None),
    // No principal on stdio: a scoped resource is readable, on both paths alike.
    ("secret://plans", None),
];

fn contents_of(uri: &str) -> Result<Vec<ResourceContent>, FeatureError> {
    Ok(match uri {
        "text://greeting" => vec![ResourceContent::text("hello \"there\" ✓ \u{1}")],
        "config://app" => vec![ResourceContent::json(&json!({"debug": false}))?],
        "logo://png" => vec![ResourceContent::blob(PIXEL, "image/png")],
        "broken://always" => return Err(FeatureError::failed("the disk is gone")),
        "secret://plans" => vec![ResourceContent::text("the plans")],
        _ => Vec::new(),
    })
}

fn resources(probes: &Probes) -> ResourceSet {
    let mut set = ResourceSet::new();
    for (uri, mime_type) in FIXED {
        let mut info = ResourceInfo::named(uri.split(':').next().unwrap());
        if let Some(mime_type) = mime_type {
            info = info.with_mime_type(mime_type);
        }
        let read = FnResource::new(uri, info, move |_ctx| async move { contents_of(uri) });
        let read = if uri.starts_with("secret:") {
            read.with_scopes(["admin"])
        } else {
            read
        };
        set.add_resource(read).unwrap();
    }
    set.add_resource(FnResource::new(
        "logs://one",
        ResourceInfo::named("logs"),
        |ctx| async move {
            let peer = ctx.state::<McpPeer>().expect("served over MCP");
            peer.log(LogLevel::Info, "read once")
                .await
                .map_err(|e| FeatureError::failed(e.to_string()))?;
            Ok(vec![ResourceContent::text("logged")])
        },
    ))
    .unwrap();
    let probes = probes.clone();
    set.add_resource(FnResource::new(
        "wait://cancel",
        ResourceInfo::named("waits"),
        move |ctx| {
            let probes = probes.clone();
            async move {
                probes.started.set();
                ctx.cancellation().cancelled().await;
                probes.saw_cancel.set();
                Ok(vec![ResourceContent::text("cancelled")])
            }
        },
    ))
    .unwrap();
    let orders = FnTemplate::new(
        "orders://{n}",
        ResourceInfo::named("order").with_mime_type("text/plain"),
        |_uri, params, _ctx| async move {
            match params.get("n").map(String::as_str) {
                Some("lost") => Err(FeatureError::not_found("order `lost` is not on file")),
                n => Ok(vec![ResourceContent::text(format!("order {n:?}"))]),
            }
        },
    )
    .unwrap();
    set.add_template(orders).unwrap();
    set
}

fn prompts() -> PromptSet {
    let mut set = PromptSet::new();
    let arguments = vec![
        PromptArgument::required("name", "Whom to greet"),
        PromptArgument::optional("tone", "How"),
    ];
    set.add(FnPrompt::new(
        "greet",
        "Greets someone.",
        arguments,
        |args, _ctx| async move {
            let tone = args.get("tone").map_or("plainly", String::as_str);
            let greeting = format!("Greet {} {tone}.", args["name"]);
            Ok(vec![
                PromptMessage::user(greeting),
                PromptMessage::user(Content::image(PIXEL, "image/png")),
                PromptMessage::assistant("Hello!"),
            ])
        },
    ))
    .unwrap();
    set.add(FnPrompt::new(
        "fails",
        "Always fails.",
        Vec::new(),
        |_args, _ctx| async { Err(FeatureError::failed("no prompt today")) },
    ))
    .unwrap();
    set
}

fn server(probes: &Probes) -> McpServer {
    McpServer::new(toolwright_core::ToolSet::new())
        .with_resources(resources(probes))
        .with_prompts(prompts())
}

fn read(id: Value, uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}})
}

fn prompt(id: Value, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "prompts/get",
        "params": {"name": name, "arguments": arguments}})
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap()
}

/// The replies to `lines` from the stream transport and from rmcp's own `serve`, and the
/// ids of the requests rmcp's service loop handled under the stream transport.
async fn both(lines: &[Value]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let probes = Probes::default();
    let (ours, handled_by_rmcp) = replies(server(&probes), Via::Stream, lines).await;
    let (theirs, handled_by_rmcp_alone) = replies(server(&probes), Via::Rmcp, lines).await;
    // Served by rmcp, every request goes through its loop (so a check of ours can fail).
    assert_eq!(handled_by_rmcp_alone.len(), lines.len());
    (ours, theirs, handled_by_rmcp)
}

#[tokio::test]
async fn reads_and_prompts_are_answered_without_rmcp_in_the_bytes_rmcp_writes() {
    let lines = [
        read(json!(1), "text://greeting"),
        read(json!("r-2"), "config://app"),
        read(json!(3), "logo://png"),
        read(json!(4), "orders://7"),
        read(json!(-5), "secret://plans"),
        json!({"jsonrpc": "2.0", "id": 6, "method": "resources/read",
            "params": {"uri": "text://greeting", "_meta": {"progressToken": "p"}}}),
        // Errors: nothing there, nothing in it, a template's own not-found, a failure.
        read(json!(7), "nowhere://at-all"),
        read(json!(8), "empty://nothing"),
        read(json!(9), "orders://lost"),
        read(json!(10), "broken://always"),
        prompt(json!(11), "greet", json!({"name": "Ada", "tone": "warmly"})),
        json!({"jsonrpc": "2.0", "id": "p-12", "method": "prompts/get",
            "params": {"name": "greet", "arguments": {"name": "x"}}}),
        prompt(json!(13), "greet", json!({})),
        prompt(json!(14), "greet", json!({"name": 5})),
        prompt(json!(15), "nope", json!({})),
        prompt(json!(16), "fails", json!({})),
        json!({"jsonrpc": "2.0", "id": 17, "method": "prompts/get",
            "params": {"name": "fails", "arguments": null}}),
        // The id of a request that has answered is free again.
        read(json!(1), "orders://8"),
    ];
    let (ours, theirs, handled_by_rmcp) = both(&lines).await;
    assert_eq!(ours, theirs);
    assert_eq!(handled_by_rmcp, Vec::<String>::new());

    let ours: Vec<Value> = ours.iter().map(|line| parse(line)).collect();
    let text = |i: usize| ours[i]["result"]["contents"][0]["text"].clone();
    assert_eq!(text(0), "hello \"there\" ✓ \u{1}");
    assert_eq!(ours[1]["id"], "r-2");
    assert_eq!(text(1), r#"{"debug":false}"#);
    assert_eq!(ours[2]["result"]["contents"][0]["blob"], PIXEL);
    assert_eq!(text(3), r#"order Some("7")"#);
    assert_eq!(ours[4]["id"], -5);
    assert_eq!(text(5), text(0));
    // A 2025 session keeps rmcp's resource-not-found code.
    for missing in &ours[6..9] {
        assert_eq!(missing["error"]["code"], -32002, "{missing}");
    }
    assert!(
        ours[9]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the disk is gone")
    );
    assert_eq!(ours[10]["result"]["messages"].as_array().unwrap().len(), 3);
    assert_eq!(
        ours[10]["result"]["messages"][0]["content"]["text"],
        "Greet Ada warmly."
    );
    assert_eq!(ours[11]["id"], "p-12");
    for invalid in &ours[12..15] {
        assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    }
    assert!(ours[16]["error"].is_object(), "{}", ours[16]);
    assert_eq!(ours[17]["id"], 1);
    assert_eq!(text(17), r#"order Some("8")"#);
}

#[tokio::test]
async fn lines_not_read_in_full_are_left_to_rmcp_and_answered_as_before() {
    let lines = [
        // Members missing, of the wrong type, or unknown to the plain shapes.
        json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": 7}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "prompts/get",
            "params": {"name": "greet", "arguments": ["name"]}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "resources/read",
            "params": {"uri": "text://greeting", "extra": true}}),
        json!({"jsonrpc": "2.0", "id": 6, "method": "resources/read",
            "params": {"uri": "text://greeting", "name": "greeting"}}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "resources/templates/list"}),
    ];
    let (ours, theirs, handled_by_rmcp) = both(&lines).await;
    assert_eq!(ours, theirs);
    assert_eq!(handled_by_rmcp.len(), lines.len(), "{handled_by_rmcp:?}");
    // rmcp reads a request whose parameters do not fit its method as one it does not
    // know (-32601, the method as the message), and so it still does.
    for (invalid, line) in ours[..4].iter().zip(&lines) {
        let error = &parse(invalid)["error"];
        assert_eq!(error["code"], -32601, "{invalid}");
        assert_eq!(error["message"], line["method"], "{invalid}");
    }
    for answered in &ours[4..] {
        assert!(parse(answered)["result"].is_object(), "{answered}");
    }
}

#[tokio::test]
async fn a_line_that_is_not_json_is_a_parse_error_and_the_session_goes_on() {
    let mut raw = Raw::initialized(server(&Probes::default()), Via::Stream, json!({})).await;
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"text://greeting"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"greet",}}"#,
    ] {
        raw.send_line(line).await;
        let reply = parse(&raw.next().await);
        assert_eq!(reply["error"]["code"], -32700, "{reply}");
        assert_eq!(reply["id"], Value::Null);
    }
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{{"name":"greet","arguments":{{"name":{}{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    raw.send_line(&deep).await;
    assert_eq!(parse(&raw.next().await)["error"]["code"], -32700);
    raw.send(&read(json!(4), "text://greeting")).await;
    assert_eq!(parse(&raw.next().await)["id"], 4);
}

#[tokio::test]
async fn a_read_that_logs_is_answered_after_its_log_message() {
    let mut lines = Vec::new();
    for via in [Via::Stream, Via::Rmcp] {
        let mut raw = Raw::initialized(server(&Probes::default()), via, json!({})).await;
        raw.send(&read(json!(1), "logs://one")).await;
        lines.push([raw.next().await, raw.next().await]);
    }
    assert_eq!(lines[0], lines[1]);
    let [log, answer] = &lines[0];
    assert_eq!(parse(log)["method"], "notifications/message", "{log}");
    assert_eq!(parse(answer)["result"]["contents"][0]["text"], "logged");
}

#[tokio::test]
async fn a_cancelled_read_sees_its_cancellation_and_is_not_answered() {
    let probes = Probes::default();
    let mut raw = Raw::initialized(server(&probes), Via::Stream, json!({})).await;
    raw.send(&read(json!(1), "wait://cancel")).await;
    probes.started.wait("the read started").await;
    raw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1}}),
    )
    .await;
    probes
        .saw_cancel
        .wait("the read saw its cancellation")
        .await;
    // The next line is the next request's answer: the cancelled read has none.
    raw.send(&prompt(json!(2), "greet", json!({"name": "x"})))
        .await;
    assert_eq!(parse(&raw.next().await)["id"], 2);
}
