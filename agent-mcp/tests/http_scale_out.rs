//! Scale-out without sessions: two processes of examples/mcp-server.rs with
//! `--stateless`, and one client without a session spreading its calls over both, as a
//! load balancer would.

#[path = "support/raw_http.rs"]
mod raw_http;

use raw_http::{call, post};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The example's binary, built if needed, beside this test's own build.
fn example_server() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = Command::new(cargo)
        .current_dir(&root)
        .args([
            "build",
            "--quiet",
            "-p",
            "agent-examples",
            "--example",
            "mcp-server",
        ])
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building examples/mcp-server.rs failed");
    // This test runs from <target>/<profile>/deps; examples are built beside it.
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir.join("examples/mcp-server")
}

/// A running server process; killed when dropped.
struct Instance {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(binary: &PathBuf) -> Instance {
    let mut child = Command::new(binary)
        .args(["--http", "127.0.0.1:0", "--stateless"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("the server did not start: {line:?}"));
    let addr = url.trim_end_matches("/mcp").parse().unwrap();
    Instance { child, addr }
}

#[tokio::test]
async fn one_sessionless_client_spreads_its_calls_over_two_processes() {
    let binary = example_server();
    let instances = [start(&binary), start(&binary)];
    assert_ne!(instances[0].child.id(), instances[1].child.id());

    // The client initializes with one instance; no session is handed out.
    let init = post(
        instances[0].addr,
        None,
        &[],
        &raw_http::initialize_request(),
    )
    .await
    .unwrap();
    assert_eq!(init.status, 200, "{init:?}");
    assert!(init.header("mcp-session-id").is_none(), "{init:?}");

    // Its calls then go to either instance, alternately, and every one is answered.
    for i in 0..20_i64 {
        let instance = &instances[(i % 2) as usize];
        let reply = call(instance.addr, None, &[], "add", json!({"a": i, "b": 1}))
            .await
            .unwrap();
        assert_eq!(reply.status, 200, "call {i}: {reply:?}");
        let answer = reply.answer().expect("an answer");
        let sum = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("");
        assert_eq!(sum.parse::<f64>().ok(), Some((i + 1) as f64), "{answer}");
    }

    // One instance going away leaves the other serving the same client.
    let [first, second] = instances;
    drop(first);
    let reply = call(second.addr, None, &[], "add", json!({"a": 40, "b": 2}))
        .await
        .unwrap();
    let answer = reply.answer().expect("an answer");
    assert_eq!(answer["result"]["content"][0]["text"], "42.0", "{answer}");
}
