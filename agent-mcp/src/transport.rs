//! Serving an [`McpServer`] over stdio, or any byte stream pair.

use crate::server::McpServer;
use agent_core::ToolSet;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use std::io;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
    ReadHalf, WriteHalf,
};
use tokio::sync::mpsc;

/// Serves `tools` over stdio (newline-delimited JSON-RPC on stdin/stdout) until the
/// client closes stdin. Diagnostics must go to stderr: stdout belongs to the protocol.
pub async fn serve_stdio(tools: ToolSet) -> io::Result<()> {
    serve_stdio_with(McpServer::new(tools)).await
}

/// Serves `server` over stdio; see [`serve_stdio`].
pub async fn serve_stdio_with(server: McpServer) -> io::Result<()> {
    serve_io(server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// The largest JSON-RPC message accepted on a stream transport: the same bound rmcp's
/// Streamable HTTP server puts on a request body.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// Serves `server` over a byte stream pair carrying newline-delimited JSON-RPC (the
/// stdio transport's framing), until `input` ends.
///
/// Every line is checked before rmcp sees it: a line that is not JSON (malformed,
/// nested deeper than serde_json's limit of 128, longer than [`MAX_MESSAGE_BYTES`]) is
/// answered with a JSON-RPC parse error (`-32700`), where rmcp alone would drop it in
/// silence, and the session goes on.
pub async fn serve_io<R, W>(server: McpServer, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // rmcp speaks to one end of an in-memory pipe; we stand between it and the client.
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (from_rmcp, to_rmcp) = tokio::io::split(ours);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel();
    let inbound = tokio::spawn(pump_inbound(input, to_rmcp, errors_tx));
    let outbound = tokio::spawn(pump_outbound(from_rmcp, errors_rx, output));

    let served = async {
        let running = server
            .serve(tokio::io::split(theirs))
            .await
            .map_err(|e| io::Error::other(format!("MCP initialization failed: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| io::Error::other(format!("the MCP session failed: {e}")))?;
        Ok::<_, io::Error>(())
    };
    let result = served.await;
    inbound.abort();
    // rmcp has dropped its end, so the outbound pump drains what is left and ends.
    let _ = outbound.await;
    result
}

/// Client to rmcp: whole lines that are JSON pass; the rest are answered here.
async fn pump_inbound<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: WriteHalf<DuplexStream>,
    errors: mpsc::UnboundedSender<String>,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let too_long = match read_line_capped(&mut input, &mut line, MAX_MESSAGE_BYTES).await {
            Ok(None) => break,
            Ok(Some(too_long)) => too_long,
            Err(_) => break,
        };
        if line.iter().all(u8::is_ascii_whitespace) && !too_long {
            continue;
        }
        let problem = if too_long {
            Some(format!("message longer than {MAX_MESSAGE_BYTES} bytes"))
        } else {
            // Parsed into a `Value` (not skipped with `IgnoredAny`) because only that path
            // applies serde_json's nesting limit, the one rmcp's own parse would trip on.
            serde_json::from_slice::<Value>(&line)
                .err()
                .map(|e| e.to_string())
        };
        if let Some(problem) = problem {
            let error = json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32700, "message": format!("Parse error: {problem}")},
            });
            let _ = errors.send(error.to_string());
            continue;
        }
        line.push(b'\n');
        if to_rmcp.write_all(&line).await.is_err() {
            break;
        }
    }
    // End of input: rmcp sees end of stream and closes the session.
    let _ = to_rmcp.shutdown().await;
}

/// Reads one line (without its newline) into `line`. `Ok(None)` at end of input;
/// `Ok(Some(true))` when the line was longer than `cap`: its excess is skipped, so a
/// huge line costs at most `cap` bytes of memory.
async fn read_line_capped<R: AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<bool>> {
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(read_any.then_some(too_long));
        }
        read_any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long && line.len() + chunk.len() <= cap {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line.clear();
        }
        let consumed = done.unwrap_or(buf.len());
        input.consume(consumed);
        if done.is_some() {
            return Ok(Some(too_long));
        }
    }
}

/// rmcp and parse errors to the client, a whole line at a time so they never interleave.
async fn pump_outbound<W: AsyncWrite + Unpin>(
    from_rmcp: ReadHalf<DuplexStream>,
    mut errors: mpsc::UnboundedReceiver<String>,
    mut output: W,
) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut errors_open = true;
    loop {
        line.clear();
        tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
            error = errors.recv(), if errors_open => match error {
                Some(error) => {
                    line.extend_from_slice(error.as_bytes());
                    line.push(b'\n');
                }
                None => {
                    errors_open = false;
                    continue;
                }
            },
        }
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}
