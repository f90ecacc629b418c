//! `tools/call` over the stream transport (`serve_io`), which answers calls itself once
//! the session is initialized: the same bytes rmcp would write, calls that run side by
//! side and may ask their client, progress before the response, cancellation, and
//! everything else left to rmcp as before.

#[path = "support/events.rs"]
mod events;
#[path = "support/raw_stream.rs"]
mod raw_stream;

use events::{Flag, PATIENCE, idle_count, idle_since, within};
use futures::FutureExt;
use raw_stream::{Raw, Via};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use toolwright_core::{
    AgentResult, Content, Tool, ToolContext, ToolError, ToolSet, async_trait, tool::TypedTool,
};
use toolwright_mcp::{LogLevel, McpPeer, McpServer};

/// What the tools of a test share with it.
#[derive(Clone)]
struct Probes {
    /// A `waits` call started; one saw its cancellation.
    started: Flag,
    saw_cancel: Flag,
    gate: Arc<tokio::sync::Barrier>,
    /// A `held` call started; each permit lets one finish.
    held: Flag,
    finish: Arc<tokio::sync::Semaphore>,
    /// A `blocks` call blocks its thread until `unblock` holds true.
    blocking: Flag,
    unblock: Arc<(Mutex<bool>, Condvar)>,
}

impl Default for Probes {
    fn default() -> Self {
        Self {
            started: Flag::default(),
            saw_cancel: Flag::default(),
            gate: Arc::new(tokio::sync::Barrier::new(2)),
            held: Flag::default(),
            finish: Arc::new(tokio::sync::Semaphore::new(0)),
            blocking: Flag::default(),
            unblock: Arc::default(),
        }
    }
}

impl Probes {
    /// Lets `blocks` calls have their threads back.
    fn unblock(&self) {
        let (unblocked, changed) = &*self.unblock;
        *unblocked.lock().unwrap() = true;
        changed.notify_all();
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    /// What to echo
    text: String,
}

/// Echoes its text; its arguments are checked as any typed tool's are.
struct Echo;

#[async_trait]
impl TypedTool for Echo {
    type Args = EchoArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "echo"
    }

    fn description(&self) -> &'static str {
        "Echoes its text."
    }

    async fn call_typed(&self, args: EchoArgs, _ctx: &ToolContext) -> AgentResult<String> {
        Ok(args.text)
    }
}

/// One tool per behaviour a test needs.
#[derive(Clone, Copy)]
enum Kind {
    /// Fails with a tool error.
    Fails,
    /// Waits until a second call of it runs too.
    Gate,
    /// Asks its client to sample, and answers what the client's model said.
    Samples,
    /// Reports three steps of progress.
    Reports,
    /// Waits until cancelled, and records that it was.
    Waits,
    /// Blocks its thread until the test unblocks it.
    Blocks,
    /// Runs until the test lets it finish.
    Held,
}

struct Probe {
    kind: Kind,
    probes: Probes,
}

#[async_trait]
impl Tool for Probe {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Fails => "fails",
            Kind::Gate => "gate",
            Kind::Samples => "samples",
            Kind::Reports => "reports",
            Kind::Waits => "waits",
            Kind::Blocks => "blocks",
            Kind::Held => "held",
        }
    }

    fn description(&self) -> &'static str {
        "A probe for the stream transport's tests."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    async fn call(&self, _args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let text = match self.kind {
            Kind::Fails => return Err(ToolError::execution("the probe failed, as asked").into()),
            Kind::Gate => {
                let both = tokio::time::timeout(Duration::from_secs(5), self.probes.gate.wait());
                match both.await {
                    Ok(_) => "passed".to_owned(),
                    Err(_) => "alone".to_owned(),
                }
            }
            Kind::Samples => {
                let peer = ctx.state::<McpPeer>().expect("served over MCP");
                let params = json!({"maxTokens": 10, "messages": [
                    {"role": "user", "content": {"type": "text", "text": "say something"}}]});
                let answer = peer.request("sampling/createMessage", params).await?;
                format!("the client said: {}", answer["content"]["text"])
            }
            Kind::Reports => {
                for step in 1..=3 {
                    ctx.emit_progress(json!(step))?;
                }
                let peer = ctx.state::<McpPeer>().expect("served over MCP");
                peer.log(LogLevel::Info, "all three steps done").await?;
                "reported".to_owned()
            }
            Kind::Blocks => {
                self.probes.blocking.set();
                let (unblocked, changed) = &*self.probes.unblock;
                // Unblocked by the test, or, should the test fail first, after PATIENCE.
                let _ = changed
                    .wait_timeout_while(unblocked.lock().unwrap(), PATIENCE, |unblocked| {
                        !*unblocked
                    })
                    .unwrap();
                "unblocked".to_owned()
            }
            Kind::Waits => {
                self.probes.started.set();
                let cancelled = ctx.cancellation().cancelled();
                if tokio::time::timeout(Duration::from_secs(10), cancelled)
                    .await
                    .is_ok()
                {
                    self.probes.saw_cancel.set();
                }
                "waited".to_owned()
            }
            Kind::Held => {
                self.probes.held.set();
                self.probes.finish.acquire().await.unwrap().forget();
                "finished".to_owned()
            }
        };
        Ok(vec![Content::text(text)])
    }
}

/// Shouts its text. It reads no context, so its response is written as soon as it is
/// ready, not behind what rmcp writes.
#[toolwright_core::tool]
async fn shout(text: String) -> String {
    text.to_uppercase()
}

fn tools(probes: &Probes) -> ToolSet {
    let mut tools = toolwright_core::tools![shout];
    tools.register_tool(Echo).unwrap();
    for kind in [
        Kind::Fails,
        Kind::Gate,
        Kind::Samples,
        Kind::Reports,
        Kind::Waits,
        Kind::Blocks,
        Kind::Held,
    ] {
        let probes = probes.clone();
        tools.register_tool(Probe { kind, probes }).unwrap();
    }
    tools
}

fn call(id: Value, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap()
}

/// The replies to `lines`, one request at a time, in a session served `via`, and the
/// ids of the requests rmcp's service loop handled meanwhile.
async fn replies(via: Via, lines: &[Value]) -> (Vec<String>, Vec<String>) {
    let server = McpServer::new(tools(&Probes::default()));
    raw_stream::replies(server, via, lines).await
}

#[tokio::test]
async fn calls_are_answered_without_rmcp_in_the_bytes_rmcp_writes() {
    let lines = [
        call(json!(2), "echo", json!({"text": "hi \"there\" ✓"})),
        call(json!("s-3"), "fails", json!({})),
        call(json!(4), "nope", json!({})),
        call(json!(5), "echo", json!({"text": 5})),
        call(json!(6), "echo", json!({})),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "t"}, "_meta": {"progressToken": "p"}}}),
        json!({"jsonrpc": "2.0", "id": -8, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "negative id"}}}),
        // A tool that reads no context: its response is written straight away.
        call(json!(9), "shout", json!({"text": "quiet \"one\" ✓ \u{1}"})),
        json!({"jsonrpc": "2.0", "id": "q-10", "method": "tools/call",
            "params": {"name": "shout", "arguments": {"text": "p"}, "_meta": {"progressToken": 3}}}),
        call(json!(11), "shout", json!({"text": 11})),
        // The id of a call that has answered is free again.
        call(json!(9), "shout", json!({"text": "again"})),
    ];
    let (ours, handled_by_rmcp) = replies(Via::Stream, &lines).await;
    let (theirs, handled_by_rmcp_alone) = replies(Via::Rmcp, &lines).await;
    assert_eq!(ours, theirs);
    // None of them went through rmcp's service loop; served by rmcp, all of them did
    // (so the check above can fail).
    assert_eq!(handled_by_rmcp, Vec::<String>::new());
    assert_eq!(handled_by_rmcp_alone.len(), lines.len());

    let ours: Vec<Value> = ours.iter().map(|line| parse(line)).collect();
    assert_eq!(ours[0]["id"], 2);
    assert_eq!(ours[0]["result"]["content"][0]["text"], "hi \"there\" ✓");
    assert_eq!(ours[0]["result"]["isError"], false);
    assert_eq!(ours[1]["id"], "s-3");
    assert_eq!(ours[1]["result"]["isError"], true);
    assert!(
        ours[1]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("the probe failed")
    );
    assert_eq!(ours[2]["error"]["code"], -32602, "{}", ours[2]);
    for invalid in &ours[3..5] {
        assert_eq!(invalid["result"]["isError"], true, "{invalid}");
        let text = invalid["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("text"), "{text}");
    }
    assert_eq!(ours[5]["result"]["content"][0]["text"], "t");
    assert_eq!(ours[6]["id"], -8);
    assert_eq!(
        ours[7]["result"]["content"][0]["text"],
        "QUIET \"ONE\" ✓ \u{1}"
    );
    assert_eq!(ours[8]["result"]["content"][0]["text"], "P");
    assert_eq!(ours[9]["result"]["isError"], true, "{}", ours[9]);
    assert_eq!(ours[10]["id"], 9);
    assert_eq!(ours[10]["result"]["content"][0]["text"], "AGAIN");
}

/// A client that writes calls and reads no answer is not read from for long: once its
/// end of the pipe is full, the reader waits to write, and stops reading. Nothing piles
/// up in the server's memory meanwhile, and once the client reads, every call is
/// answered.
#[tokio::test]
async fn a_client_that_does_not_read_is_not_read_from() {
    const CALLS: i64 = 5_000;
    let raw = Raw::initialized(
        McpServer::new(tools(&Probes::default())),
        Via::Stream,
        json!({}),
    )
    .await;
    let (mut write, mut lines) = (raw.write, raw.lines);
    let idle_before = idle_count();
    let writer = tokio::spawn(async move {
        for id in 0..CALLS {
            let line = call(json!(id), "shout", json!({"text": "more"}));
            write
                .write_all(format!("{line}\n").as_bytes())
                .await
                .unwrap();
        }
        write
    });
    // About 500 KB of calls against pipes of 64 KB each way. Once nothing on this
    // runtime can run (it goes idle), the server is waiting to write answers no one
    // reads, and reads no more calls: the writer is held up, for good.
    idle_since(idle_before, "the runtime went idle").await;
    assert!(
        !writer.is_finished(),
        "every call was read with no answer read"
    );
    let mut answered = 0;
    while answered < CALLS {
        let line = within("the next answer", lines.next_line())
            .await
            .unwrap()
            .expect("the server still writes");
        assert_eq!(parse(&line)["id"], answered, "{line}");
        answered += 1;
    }
    drop(writer.await.unwrap());
}

/// Responses written straight from the reader and rmcp's lines share the client's end:
/// with lines far longer than one write of the pipe, none is cut into by another.
#[tokio::test]
async fn straight_answers_and_rmcps_lines_never_interleave() {
    let mut raw = Raw::initialized(
        McpServer::new(tools(&Probes::default())),
        Via::Stream,
        json!({}),
    )
    .await;
    let long = "x".repeat(48 * 1024);
    let mut sent = Vec::new();
    let mut lines = Vec::new();
    for i in 0..40 {
        // A quiet call's long answer, a request rmcp answers, and a call whose progress
        // rmcp writes, back to back.
        lines.push(call(json!(i * 3), "shout", json!({"text": long})));
        lines.push(json!({"jsonrpc": "2.0", "id": i * 3 + 1, "method": "tools/list"}));
        lines.push(
            json!({"jsonrpc": "2.0", "id": i * 3 + 2, "method": "tools/call",
            "params": {"name": "reports", "_meta": {"progressToken": i}}}),
        );
        sent.extend([i * 3, i * 3 + 1, i * 3 + 2]);
    }
    // Written from a task of its own: the server's answers fill the pipe long before
    // every request is written.
    let mut write = raw.write;
    let writer = tokio::spawn(async move {
        for line in lines {
            write.write_all(line.to_string().as_bytes()).await.unwrap();
            write.write_all(b"\n").await.unwrap();
        }
        write
    });
    let mut answered = Vec::new();
    while answered.len() < sent.len() {
        let line = tokio::time::timeout(Duration::from_secs(20), raw.lines.next_line())
            .await
            .expect("a line within 20s")
            .unwrap()
            .expect("the server still writes");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("a line cut into: {e}: {}", &line[..line.len().min(200)]));
        if let Some(id) = message["id"].as_i64() {
            if id % 3 == 0 {
                assert_eq!(message["result"]["content"][0]["text"], long.to_uppercase());
            }
            answered.push(id);
        }
    }
    answered.sort_unstable();
    assert_eq!(answered, sent);
    drop(writer.await.unwrap());
}

#[tokio::test]
async fn a_tools_call_before_initialize_goes_to_rmcp_which_answers_as_it_always_has() {
    let early = call(json!(1), "echo", json!({"text": "too early"}));
    let mut answers = Vec::new();
    for via in [Via::Stream, Via::Rmcp] {
        let mut raw = Raw::open(McpServer::new(tools(&Probes::default())), via);
        raw.send(&early).await;
        answers.push(raw.next().await);
    }
    assert_eq!(answers[0], answers[1]);
    let answer = parse(&answers[0]);
    assert_eq!(answer["id"], 1);
    assert!(answer["error"].is_object(), "{answer}");
}

#[tokio::test]
async fn calls_run_side_by_side_with_rmcps_client() {
    let probes = Probes::default();
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (input, output) = tokio::io::split(server_end);
    tokio::spawn(toolwright_mcp::serve_io(
        McpServer::new(tools(&probes)),
        input,
        output,
    ));
    let client = ().serve(client_end).await.unwrap();
    let gate = || client.call_tool(CallToolRequestParams::new("gate"));
    // Each waits for the other: they pass only if both run at once.
    let (first, second) = tokio::join!(gate(), gate());
    for result in [first.unwrap(), second.unwrap()] {
        let content = serde_json::to_value(&result.content).unwrap();
        assert_eq!(content[0]["text"], "passed");
    }
}

/// The reader answers other calls while a tool blocks its thread: on a runtime with
/// threads to spare, each tool runs in a task of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_blocking_its_thread_does_not_hold_up_other_calls() {
    let probes = Probes::default();
    let mut raw = Raw::initialized(McpServer::new(tools(&probes)), Via::Stream, json!({})).await;
    raw.send(&call(json!("slow"), "blocks", json!({}))).await;
    probes.blocking.wait("the tool blocked its thread").await;
    raw.send(&call(json!("quick"), "echo", json!({"text": "quick"})))
        .await;
    // Answered while the tool still blocks: it is unblocked only now.
    let first = parse(&raw.next().await);
    assert_eq!(
        first["id"], "quick",
        "a call was held up by a tool blocking its thread: {first}"
    );
    probes.unblock();
    let second = parse(&raw.next().await);
    assert_eq!(second["result"]["content"][0]["text"], "unblocked");
}

#[tokio::test]
async fn a_call_asks_its_client_and_the_answer_comes_back_through_the_stream() {
    let mut raw = Raw::initialized(
        McpServer::new(tools(&Probes::default())),
        Via::Stream,
        json!({"sampling": {}}),
    )
    .await;
    raw.send(&call(json!(9), "samples", json!({}))).await;
    let request = parse(&raw.next().await);
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    // Another call is answered while the first waits for its client.
    raw.send(&call(json!(10), "echo", json!({"text": "meanwhile"})))
        .await;
    let meanwhile = parse(&raw.next().await);
    assert_eq!(meanwhile["id"], 10);
    raw.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "role": "assistant", "model": "m", "stopReason": "endTurn",
        "content": {"type": "text", "text": "hello from the client"}}}))
        .await;
    let answer = parse(&raw.next().await);
    assert_eq!(answer["id"], 9);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "the client said: \"hello from the client\""
    );
}

#[tokio::test]
async fn progress_and_logs_go_out_before_the_response() {
    let mut raw = Raw::initialized(
        McpServer::new(tools(&Probes::default())),
        Via::Stream,
        json!({}),
    )
    .await;
    raw.send(&json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "reports", "_meta": {"progressToken": 77}}}))
        .await;
    // Progress travels through a task of its own, the log message straight through the
    // session: each in order, both before the response.
    let mut progress = Vec::new();
    let mut logs = Vec::new();
    for _ in 0..4 {
        let line = parse(&raw.next().await);
        match line["method"].as_str() {
            Some("notifications/progress") => {
                assert_eq!(line["params"]["progressToken"], 77);
                progress.push(line["params"]["progress"].as_f64().unwrap());
            }
            Some("notifications/message") => logs.push(line["params"]["data"].clone()),
            _ => panic!("a notification before the response, not {line}"),
        }
    }
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    assert_eq!(logs, [json!("all three steps done")]);
    let answer = parse(&raw.next().await);
    assert_eq!(answer["id"], 11);
    assert_eq!(answer["result"]["content"][0]["text"], "reported");
}

#[tokio::test]
async fn notifications_cancelled_cancels_a_call_and_its_response_is_not_sent() {
    let probes = Probes::default();
    let mut raw = Raw::initialized(McpServer::new(tools(&probes)), Via::Stream, json!({})).await;
    raw.send(&call(json!("w"), "waits", json!({}))).await;
    probes.started.wait("the call started").await;
    raw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "w", "reason": "changed my mind"}}),
    )
    .await;
    probes
        .saw_cancel
        .wait("the call saw its cancellation")
        .await;
    // The next line is the next call's answer: a cancelled request is not answered.
    raw.send(&call(json!(12), "echo", json!({"text": "next"})))
        .await;
    let next = parse(&raw.next().await);
    assert_eq!(next["id"], 12, "{next}");
}

#[tokio::test]
async fn a_call_reusing_the_id_of_one_running_goes_to_rmcp() {
    let probes = Probes::default();
    let mut raw = Raw::initialized(McpServer::new(tools(&probes)), Via::Stream, json!({})).await;
    raw.send(&call(json!("dup"), "waits", json!({}))).await;
    probes.started.wait("the first call started").await;
    raw.send(&call(json!("dup"), "echo", json!({"text": "second"})))
        .await;
    let second = parse(&raw.next().await);
    assert_eq!(second["result"]["content"][0]["text"], "second");
    // The first is still ours to cancel.
    raw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "dup"}}),
    )
    .await;
    probes
        .saw_cancel
        .wait("the first call saw its cancellation")
        .await;
}

#[tokio::test]
async fn a_client_that_closes_its_end_after_writing_still_gets_its_answers() {
    let mut answers = Vec::new();
    for via in [Via::Stream, Via::Rmcp] {
        let mut raw =
            Raw::initialized(McpServer::new(tools(&Probes::default())), via, json!({})).await;
        raw.send(&call(json!(14), "echo", json!({"text": "piped"})))
            .await;
        raw.write.shutdown().await.unwrap();
        answers.push(raw.next().await);
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(parse(&answers[0])["result"]["content"][0]["text"], "piped");
}

#[tokio::test]
async fn calls_still_running_when_input_ends_are_cancelled_after_a_grace() {
    let probes = Probes::default();
    let mut raw = Raw::initialized(McpServer::new(tools(&probes)), Via::Stream, json!({})).await;
    raw.send(&call(json!(13), "waits", json!({}))).await;
    raw.send(&call(json!(15), "held", json!({}))).await;
    probes.started.wait("the waiting call started").await;
    probes.held.wait("the held call started").await;
    let before = idle_count();
    raw.write.shutdown().await.unwrap();
    // Once nothing on this runtime can run, the server has taken in the end of input,
    // and done all it does then without waiting...
    idle_since(before, "the server took in the end of input").await;
    assert!(
        !probes.saw_cancel.is_set(),
        "a call was cancelled as soon as input ended"
    );
    // ... and calls still running may still answer (for five seconds, as rmcp gives its
    // own calls): one let finish now is answered.
    probes.finish.add_permits(1);
    let answer = parse(&raw.next().await);
    assert_eq!(
        answer["result"]["content"][0]["text"], "finished",
        "a call running when input ended was not let finish: {answer}"
    );
    // Once the grace is up, calls still running are cancelled.
    probes
        .saw_cancel
        .wait("the call still running was cancelled after the grace")
        .await;
    within("the server stopped at end of input", raw.served)
        .await
        .unwrap();
}

/// Lines that are JSON but not a plain call: each is left to rmcp, which answers (or
/// not) exactly as it does without the fast path, and the session goes on.
#[tokio::test]
async fn unusual_lines_get_rmcps_answers_and_the_session_goes_on() {
    let unusual = [
        "[]",
        r#"[{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}]"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}"#,
        r#"{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":21.5,"method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":1e30,"method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":5}}"#,
        r#"{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"echo","arguments":[1]}}"#,
        r#"{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"echo","_meta":3}}"#,
        r#"{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"},"_meta":{"progressToken":1,"other":2}}}"#,
        r#"{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"echo","arguments":{"text":"c"}},"extra":1}"#,
        r#"{"jsonrpc":"1.0","id":28,"method":"tools/call","params":{"name":"echo","arguments":{"text":"d"}}}"#,
        r#"{"jsonrpc":"2.0","id":29,"method":"tools\/call","params":{"name":"echo","arguments":{"text":"e"}}}"#,
        r#"{"jsonrpc":"2.0","id":30,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":31,"method":"tools/call","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":32,"id":33,"method":"tools/call","params":{"name":"echo","arguments":{"text":"f"}}}"#,
        r#"{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"echo","arguments":null}}"#,
        r#"{"jsonrpc":"2.0","id":36,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h"},"_meta":null}}"#,
        r#"{"jsonrpc":"2.0","id":37,"method":"tools/call","params":{"name":"echo","arguments":{"text":"i"},"_meta":{"progressToken":null}}}"#,
        r#"{"jsonrpc":"2.0","id":38,"method":"tools/call","params":{"name":"echo","arguments":{"text":"j"},"_meta":{}}}"#,
        r#"{"jsonrpc":"2.0","id":39,"method":"tools/call","params":{"name":"echo","arguments":{"text":"k"},"_meta":{"progressToken":-1}}}"#,
        r#"{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"ech\u006f","arguments":{"text":"l"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}"#,
        r#"{"jsonrpc":"2.0","id":998,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{"name":"echo","arguments":{"text":"g"}}}"#,
    ];
    let mut seen = Vec::new();
    for via in [Via::Rmcp, Via::Stream] {
        let mut raw =
            Raw::initialized(McpServer::new(tools(&Probes::default())), via, json!({})).await;
        let mut replies = Vec::new();
        for (i, line) in unusual.iter().enumerate() {
            raw.send_line(line).await;
            // A ping after each line: its answer shows the session goes on.
            raw.send(&json!({"jsonrpc": "2.0", "id": format!("ping-{i}"), "method": "ping"}))
                .await;
            loop {
                let reply = raw.next().await;
                if parse(&reply)["id"] == format!("ping-{i}") {
                    break;
                }
                replies.push(reply);
            }
        }
        // A call's answer may come after the ping's: once nothing on this runtime can
        // run, every answer has been written.
        idle_since(idle_count(), "the session went idle").await;
        while let Some(reply) = raw.lines.next_line().now_or_never() {
            replies.push(reply.unwrap().expect("the server still writes"));
        }
        replies.sort();
        seen.push(replies);
    }
    assert_eq!(seen[0], seen[1]);
    assert!(seen[1].iter().any(|reply| reply.contains("\"id\":35")));
}

/// Arbitrary lines never stop the session.
#[tokio::test]
async fn garbage_never_stops_the_session() {
    let mut raw = Raw::initialized(
        McpServer::new(tools(&Probes::default())),
        Via::Stream,
        json!({}),
    )
    .await;
    let garbage = [
        "\u{0}\u{1}\u{2}",
        "{",
        "}{",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\ud800"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}} trailing"#,
        "\"just a string\"",
        "12345678901234567890123456789",
        "null",
    ];
    for line in garbage {
        raw.send_line(line).await;
    }
    raw.send(&call(json!(40), "echo", json!({"text": "alive"})))
        .await;
    loop {
        let reply = parse(&raw.next().await);
        if reply["id"] == 40 {
            assert_eq!(reply["result"]["content"][0]["text"], "alive");
            break;
        }
    }
}
