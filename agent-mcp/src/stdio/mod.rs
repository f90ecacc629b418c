//! Serving an [`McpServer`] over stdio, or any byte stream pair.

mod calls;

use self::calls::{InFlight, Read, Response, StreamCalls};
use crate::server::{MAX_MESSAGE_BYTES, McpServer};
use futures::StreamExt;
use futures::lock::Mutex;
use futures::stream::FuturesUnordered;
use rmcp::ServiceExt;
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream, ReadHalf,
    WriteHalf,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolwright_core::ToolSet;

/// Serves `tools` over stdio (newline-delimited JSON-RPC on stdin/stdout) until the
/// client closes stdin. Diagnostics must go to stderr: stdout belongs to the protocol.
pub async fn serve_stdio(tools: ToolSet) -> io::Result<()> {
    serve_stdio_with(McpServer::new(tools)).await
}

/// Serves `server` over stdio; see [`serve_stdio`].
pub async fn serve_stdio_with(server: McpServer) -> io::Result<()> {
    serve_io(server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves `server` over a byte stream pair carrying newline-delimited JSON-RPC (the
/// stdio transport's framing), until `input` ends.
///
/// Every line is checked before rmcp sees it: a line that is not JSON (malformed,
/// nested deeper than serde_json's limit of 128, longer than [`MAX_MESSAGE_BYTES`]) is
/// answered with a JSON-RPC parse error (`-32700`), where rmcp alone would drop it in
/// silence, and the session goes on.
///
/// Once the session has initialized, `tools/call`, `resources/read` and `prompts/get`
/// requests are answered here, read straight from their line, rather than through
/// rmcp's message types and service loop (the larger part of a round trip's cost): each
/// runs exactly as rmcp would run it, its progress, log messages and requests to the
/// client go out through the session as before, and its response is the JSON rmcp would
/// write. So are they in a session a 2026-07-28 client opened without `initialize`,
/// after the request that opened it: each runs through rmcp's own request handler, which
/// checks the version and client its `_meta` names and shapes the answer for that
/// version. `notifications/cancelled` cancels such a request. They run concurrently, and input is
/// read while they run. The answer of a call whose tool reads no context is written as
/// soon as it is ready, before the next line is read: a client that reads no answers is
/// soon not read from either, rather than having them pile up in memory. A call's
/// progress and log messages go out before its answer. When input ends, calls still
/// running have five seconds to answer, as rmcp gives its own, and are then cancelled;
/// when the session ends otherwise, they are cancelled at once.
pub async fn serve_io<R, W>(server: McpServer, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // rmcp speaks to one end of an in-memory pipe; we stand between it and the client.
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (from_rmcp, to_rmcp) = tokio::io::split(ours);
    let (lines_tx, lines_rx) = mpsc::unbounded_channel();
    let server = Arc::new(server);
    let fast = Arc::new(OnceLock::new());
    let stop = CancellationToken::new();
    // Both pumps write to the client, a whole line under the lock at a time. futures'
    // lock rather than tokio's: taken and given back with an atomic operation each while
    // nobody waits, where tokio's semaphore locks its list of waiters on every release.
    let output = Arc::new(Mutex::new(output));
    let inbound = tokio::spawn(pump_inbound(
        input,
        to_rmcp,
        Answers {
            lines: lines_tx,
            output: output.clone(),
        },
        fast.clone(),
        stop.clone(),
    ));
    let outbound = tokio::spawn(pump_outbound(from_rmcp, lines_rx, output));

    let served = async {
        // The instance rmcp serves is the one fast calls run on: one log level and one
        // connection state for the session.
        let running = server
            .clone()
            .serve(tokio::io::split(theirs))
            .await
            .map_err(|e| io::Error::other(format!("MCP initialization failed: {e}")))?;
        // A session opened by `initialize` on a protocol before 2026-07-28, or by a
        // request with its own metadata (no `initialize`, no client info kept), whose
        // requests each name their version and client. One that says it opened with
        // `initialize` on a later protocol stays with rmcp.
        let inline = match running.peer().peer_info() {
            Some(info) => (info.protocol_version < ProtocolVersion::V_2026_07_28).then_some(false),
            None => Some(true),
        };
        if let Some(inline) = inline {
            let _ = fast.set(StreamCalls::new(server, running.peer().clone(), inline));
        }
        running
            .waiting()
            .await
            .map_err(|e| io::Error::other(format!("the MCP session failed: {e}")))?;
        Ok::<_, io::Error>(())
    };
    let result = served.await;
    // The session is over: the inbound pump stops reading (at end of input it has
    // stopped already, and its calls have a grace to answer in), then ends its calls.
    stop.cancel();
    let _ = inbound.await;
    // rmcp has dropped its end and our calls have ended, so the outbound pump drains
    // what is left and ends.
    let _ = outbound.await;
    result
}

/// Where the inbound pump's answers go.
struct Answers<W> {
    /// To the outbound pump, which writes them after what rmcp has written before.
    lines: mpsc::UnboundedSender<Vec<u8>>,
    /// The client's end, for answers written here.
    output: Arc<Mutex<W>>,
}

impl<W: AsyncWrite + Unpin> Answers<W> {
    /// Sends a fast call's response on its way; `false` once the client's end is gone.
    ///
    /// A quiet call's response is written here, saving the outbound pump's turn (a
    /// task's wake and poll, and a channel's send and receive, in every round trip):
    /// nothing of its own can be waiting in rmcp's pipe. Any other call's goes behind
    /// what rmcp wrote before it answered, its progress and log messages.
    async fn respond(&self, response: Response) -> bool {
        if response.quiet {
            write_line(&mut *self.output.lock().await, &response.line).await
        } else {
            self.lines.send(response.line).is_ok()
        }
    }
}

/// Client to rmcp: whole lines that are JSON pass, except the requests (and their
/// cancellations) answered here; the rest are answered here as parse errors.
async fn pump_inbound<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    input: R,
    mut to_rmcp: WriteHalf<DuplexStream>,
    answers: Answers<W>,
    fast: Arc<OnceLock<StreamCalls>>,
    stop: CancellationToken,
) {
    let mut input = LineReader::new(input);
    let mut in_flight = InFlight::new();
    // Polled beside the reader rather than spawned: no task per call (see BENCHMARKS.md).
    let mut running = FuturesUnordered::new();
    // The allocation a call is first polled in, kept while calls answer at once.
    let mut spare = None;
    let mut session_open = true;
    // One wait for the whole session, rather than one made and dropped at every turn.
    let stopped = stop.cancelled();
    tokio::pin!(stopped);
    loop {
        let too_long = tokio::select! {
            // Answers first: a finished call need not wait for the next line.
            biased;
            Some(finished) = running.next(), if !running.is_empty() => {
                if let Some(response) = in_flight.finish(finished)
                    && !answers.respond(response).await
                {
                    // The output is gone: nothing left to answer to.
                    session_open = false;
                    break;
                }
                continue;
            }
            () = &mut stopped => {
                session_open = false;
                break;
            }
            read = input.next_line() => match read {
                Ok(Some(too_long)) => too_long,
                Ok(None) | Err(_) => break,
            },
        };
        let line = &mut input.line;
        if line.iter().all(u8::is_ascii_whitespace) && !too_long {
            continue;
        }
        let fast_path = fast.get();
        // A line read as a fast request's shape is JSON within the limits; the rest are
        // read as a `Value`. Before the session is initialized, every line is.
        let read = match fast_path {
            Some(fast_path) if !too_long => match calls::read_request(line) {
                Some(Read::Request(request)) => match in_flight.start(fast_path, request) {
                    Some((started, tracking)) => {
                        let mut slot = spare.take().unwrap_or_else(|| Box::pin(None));
                        slot.as_mut().set(Some(started.run()));
                        match first_poll(&mut slot).await {
                            Some(finished) => {
                                slot.as_mut().set(None);
                                spare = Some(slot);
                                if !answers.respond(InFlight::answer(finished)).await {
                                    session_open = false;
                                    break;
                                }
                            }
                            None => {
                                in_flight.track(tracking);
                                running.push(CallSlot(slot));
                            }
                        }
                        continue;
                    }
                    // Its id is in use by a call still running, or its tool may run as a
                    // task: rmcp answers as it does.
                    None => true,
                },
                Some(Read::Other) => true,
                None => false,
            },
            _ => false,
        };
        if !read {
            let parsed = if too_long {
                Err(format!("message longer than {MAX_MESSAGE_BYTES} bytes"))
            } else {
                // Parsed into a `Value` (not skipped with `IgnoredAny`) because only that
                // path applies serde_json's nesting limit, the one rmcp's own parse would
                // trip on.
                serde_json::from_slice::<Value>(line).map_err(|e| e.to_string())
            };
            match parsed {
                Ok(message) => {
                    if fast_path.is_some()
                        && let Some(id) = calls::cancelled(&message)
                        && in_flight.cancel(&id)
                    {
                        continue;
                    }
                }
                Err(problem) => {
                    let error = json!({
                        "jsonrpc": "2.0",
                        "id": null,
                        "error": {"code": -32700, "message": format!("Parse error: {problem}")},
                    });
                    let _ = answers.lines.send(format!("{error}\n").into_bytes());
                    continue;
                }
            }
        }
        line.push(b'\n');
        if to_rmcp.write_all(line).await.is_err() {
            break;
        }
    }
    // rmcp sees end of stream: it answers the calls it has in flight (for a few
    // seconds), then closes the session.
    let _ = to_rmcp.shutdown().await;
    if session_open {
        // So do we: a client that writes its requests and closes its end (a shell pipe)
        // still gets its answers.
        let answered = async {
            while let Some(finished) = running.next().await {
                if let Some(response) = in_flight.finish(finished) {
                    answers.respond(response).await;
                }
            }
        };
        let _ = tokio::time::timeout(END_OF_INPUT_GRACE, answered).await;
    }
    // Calls still running are cancelled.
    in_flight.end(running);
}

/// A call's future in an allocation of its own, which a call that answers at its first
/// poll (most do) leaves to the next call: a call's state is kilobytes, and a new
/// allocation of it, and the moves into it, cost about a tenth of our side of a round
/// trip (callgrind).
type Slot<F> = Pin<Box<Option<F>>>;

/// Polls the call in `slot` once, with the pump's waker: its output when it answered.
/// One still running is then polled by [`CallSlot`], under a waker of its own.
async fn first_poll<F: Future>(slot: &mut Slot<F>) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        Poll::Ready(match slot.as_mut().as_pin_mut().map(|call| call.poll(cx)) {
            Some(Poll::Ready(output)) => Some(output),
            Some(Poll::Pending) | None => None,
        })
    })
    .await
}

/// A call still running after its first poll, in its slot.
struct CallSlot<F>(Slot<F>);

impl<F: Future> Future for CallSlot<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        match self.get_mut().0.as_mut().as_pin_mut() {
            Some(call) => call.poll(cx),
            // Never: a slot is pushed with its call in it, and not polled once done.
            None => Poll::Pending,
        }
    }
}

/// How long calls in flight when input ends may still answer: rmcp's own grace for its
/// handlers at end of input.
const END_OF_INPUT_GRACE: Duration = Duration::from_secs(5);

/// Reads lines of at most a cap, keeping what it has read of a line between calls of
/// [`next_line`](Self::next_line), so a `select!` may drop that call midway.
struct LineReader<R> {
    input: BufReader<R>,
    /// The line read last (without its newline), once `next_line` has returned it.
    line: Vec<u8>,
    too_long: bool,
    read_any: bool,
    /// `line` holds a whole line, returned already: the next call starts afresh.
    returned: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(input: R) -> Self {
        Self {
            input: BufReader::new(input),
            line: Vec::new(),
            too_long: false,
            read_any: false,
            returned: false,
        }
    }

    /// Reads one line into `self.line`. `Ok(None)` at end of input; `Ok(Some(true))`
    /// when the line was longer than [`MAX_MESSAGE_BYTES`]: its excess is skipped, so a
    /// huge line costs at most that much memory.
    async fn next_line(&mut self) -> io::Result<Option<bool>> {
        if self.returned {
            self.line.clear();
            self.too_long = false;
            self.read_any = false;
            self.returned = false;
        }
        loop {
            let buf = self.input.fill_buf().await?;
            if buf.is_empty() {
                self.returned = true;
                return Ok(self.read_any.then_some(self.too_long));
            }
            self.read_any = true;
            let (chunk, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            if !self.too_long && self.line.len() + chunk.len() <= MAX_MESSAGE_BYTES {
                self.line.extend_from_slice(chunk);
            } else {
                self.too_long = true;
                self.line.clear();
            }
            let consumed = done.unwrap_or(buf.len());
            self.input.consume(consumed);
            if done.is_some() {
                self.returned = true;
                return Ok(Some(self.too_long));
            }
        }
    }
}

/// rmcp's lines and ours (parse errors, fast calls' responses) to the client, a whole
/// line at a time so they never interleave.
async fn pump_outbound<W: AsyncWrite + Unpin>(
    from_rmcp: ReadHalf<DuplexStream>,
    mut ours: mpsc::UnboundedReceiver<Vec<u8>>,
    output: Arc<Mutex<W>>,
) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    // Kept across iterations: a read interrupted by one of our lines resumes where it was.
    let mut rmcp_line = Vec::new();
    let mut ours_open = true;
    loop {
        let written = tokio::select! {
            // rmcp's first: a fast call's progress, which rmcp has written by the time
            // the call answers, goes out before its response.
            biased;
            read = from_rmcp.read_until(b'\n', &mut rmcp_line) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let written = write_line(&mut *output.lock().await, &rmcp_line).await;
                    rmcp_line.clear();
                    written
                }
            },
            line = ours.recv(), if ours_open => match line {
                Some(line) => write_line(&mut *output.lock().await, &line).await,
                None => {
                    ours_open = false;
                    continue;
                }
            },
        };
        if !written {
            return;
        }
    }
    // rmcp is done; what we answer until our calls have ended still goes out.
    while let Some(line) = ours.recv().await {
        if !write_line(&mut *output.lock().await, &line).await {
            return;
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(output: &mut W, line: &[u8]) -> bool {
    output.write_all(line).await.is_ok() && output.flush().await.is_ok()
}
