//! Bytes a client could send to the MCP server over stdio framing, after a valid
//! handshake: whatever they are, the server must not panic and must still answer the
//! next well-formed request.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolwright_core::{tool, tools};
use toolwright_mcp::{McpServer, serve_io};

/// Adds two numbers.
#[tool]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

/// Echoes a message, optionally repeated.
#[tool]
async fn echo(message: String, times: Option<u8>) -> String {
    message.repeat(usize::from(times.unwrap_or(1)).min(8))
}

const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
);
const PROBE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"probe","method":"tools/list"}"#,
    "\n"
);

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

fuzz_target!(|data: &[u8]| {
    runtime().block_on(async {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server);
        let serving = tokio::spawn(serve_io(
            McpServer::new(tools![add, echo]),
            server_read,
            server_write,
        ));
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut lines = BufReader::new(client_read).lines();

        client_write
            .write_all(HANDSHAKE.as_bytes())
            .await
            .expect("write");
        client_write.write_all(data).await.expect("write");
        client_write.write_all(b"\n").await.expect("write");
        client_write
            .write_all(PROBE.as_bytes())
            .await
            .expect("write");

        // The probe's answer must come, whatever came before it.
        let answered = tokio::time::timeout(Duration::from_secs(5), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains(r#""id":"probe""#) && line.contains("\"result\"") {
                    return true;
                }
            }
            false
        })
        .await
        .unwrap_or(false);

        drop(client_write);
        drop(lines);
        match tokio::time::timeout(Duration::from_secs(5), serving).await {
            Ok(Err(join)) if join.is_panic() => panic!("the server panicked: {join}"),
            _ => {}
        }
        assert!(answered, "the server stopped answering after {data:?}");
    });
});
