//! SIGTERM, which systemd, Docker and Kubernetes send, stops a server as Ctrl-C does:
//! a server process waiting on `shutdown_signal` refuses new connections, answers every
//! call in flight in full, and exits with status 0.
//!
//! The server process is this test binary run again with the ignored `server_process`
//! test selected; it reports on stdout when each call reaches its tool and when the
//! signal arrived, and its tools answer once the test says so on stdin, so every step
//! waits on an event.
#![cfg(unix)]

use std::process::Stdio;
use std::sync::LazyLock;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};
use tokio_util::sync::CancellationToken;
use toolwright_core::{ToolContext, tool, tools};
use toolwright_mcp::{McpClient, McpHttpServer, McpServer, shutdown_signal};

/// Calls started before the signal, half on each of the endpoint's two ways to answer.
const CALLS: u32 = 4;

/// Cancelled in the server process when the test says the tools may answer.
static RELEASE: LazyLock<CancellationToken> = LazyLock::new(CancellationToken::new);

/// The answer to call `n`: long enough to take several writes.
fn answer(n: u32) -> String {
    format!("call {n}: {}", "x".repeat(256 * 1024))
}

/// Announces the call, waits to be released, then answers (on the endpoint's JSON path:
/// it does not read its context).
#[tool]
async fn hold(
    /// The call's number
    n: u32,
) -> String {
    println!("entered {n}");
    RELEASE.cancelled().await;
    answer(n)
}

/// As `hold`, on the event-stream path (it reads its context).
#[tool]
async fn hold_streamed(
    /// The call's number
    n: u32,
    ctx: &ToolContext,
) -> String {
    let _ = ctx.cancellation();
    println!("entered {n}");
    RELEASE.cancelled().await;
    answer(n)
}

/// The server process: not a test by itself, run by `sigterm_lets_calls_in_flight_finish`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the server process that sigterm_lets_calls_in_flight_finish starts"]
async fn server_process() {
    let signal = shutdown_signal();
    let http = McpHttpServer::bind(McpServer::new(tools![hold, hold_streamed]), "127.0.0.1:0")
        .await
        .unwrap();
    println!("listening {}", http.url());
    let stop = http.shutdown_token();
    tokio::spawn(async move {
        signal.await;
        stop.cancel();
        println!("signalled");
    });
    tokio::spawn(async {
        let mut stdin = BufReader::new(tokio::io::stdin()).lines();
        if let Ok(Some(_)) = stdin.next_line().await {
            RELEASE.cancel();
        }
    });
    http.run().await.unwrap();
}

/// The server process's reports, line by line.
struct Reports(Lines<BufReader<ChildStdout>>);

impl Reports {
    /// The next report starting with `prefix`, without it (other lines are the test
    /// harness's).
    async fn next(&mut self, prefix: &str) -> String {
        let wait = async {
            while let Some(line) = self.0.next_line().await.unwrap() {
                if let Some(rest) = line.strip_prefix(prefix) {
                    return rest.trim().to_owned();
                }
            }
            panic!("the server process ended before reporting `{prefix}`");
        };
        tokio::time::timeout(Duration::from_secs(60), wait)
            .await
            .unwrap_or_else(|_| panic!("no `{prefix}` report from the server process"))
    }
}

fn start_server() -> (Child, Reports) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["server_process", "--exact", "--ignored", "--nocapture"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    (child, Reports(BufReader::new(stdout).lines()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_calls_in_flight_finish() {
    let (mut child, mut reports) = start_server();
    let url = reports.next("listening").await;
    let addr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .to_owned();

    let mut clients = Vec::new();
    let mut calls = Vec::new();
    for n in 0..CALLS {
        let client = McpClient::connect_http(&url).await.unwrap();
        let tools = client.toolset().unwrap();
        let name = if n % 2 == 0 { "hold" } else { "hold_streamed" };
        let tool = tools.get(name).unwrap().clone();
        calls.push(tokio::spawn(async move {
            tool.call(&serde_json::json!({ "n": n }), &ToolContext::default())
                .await
        }));
        clients.push(client);
    }
    let mut entered: Vec<u32> = Vec::new();
    for _ in 0..CALLS {
        entered.push(reports.next("entered").await.parse().unwrap());
    }
    entered.sort_unstable();
    assert_eq!(entered, (0..CALLS).collect::<Vec<_>>());

    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    reports.next("signalled").await;

    // New connections are refused once the listener is closed, which follows the
    // signal as soon as the accept loop sees it.
    let refused = async {
        loop {
            match tokio::net::TcpStream::connect(&addr).await {
                Err(error) => return error,
                Ok(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    };
    let error = tokio::time::timeout(Duration::from_secs(30), refused)
        .await
        .expect("the server kept accepting connections after SIGTERM");
    assert_eq!(error.kind(), std::io::ErrorKind::ConnectionRefused);

    // Only now may the tools answer: every call was in flight when the signal came.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"release\n").await.unwrap();
    stdin.flush().await.unwrap();
    for (n, call) in (0..CALLS).zip(calls) {
        let content = call.await.unwrap().unwrap_or_else(|error| {
            panic!("call {n} was cut off by the shutdown: {error}");
        });
        assert_eq!(content.len(), 1);
        assert_eq!(content[0].as_text(), Some(answer(n).as_str()), "call {n}");
    }
    for client in clients {
        client.close().await;
    }
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("the server process did not exit after its calls were answered")
        .unwrap();
    assert!(status.success(), "the server process exited with {status}");
}
