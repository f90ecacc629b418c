//! Streaming costs: how fast a provider's server-sent events are parsed into
//! [`LlmEvent`]s (MB/s), and how much later the first text delta reaches the caller than
//! its bytes reach a plain HTTP client posting the same request to the same server
//! (goal: at most 1.1×). The two are measured in alternation, pair by pair, and the
//! median ratio of the pairs is printed after the group.
//!
//! `cargo bench -p toolwright-llm --bench sse`

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use serde_json::json;
use std::cell::RefCell;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolwright_core::{
    LlmClient, Message,
    llm::{LlmEvent, LlmRequest, LlmStream},
};
use toolwright_llm::{AnthropicClient, GeminiClient, OpenAiClient, OpenAiResponsesClient};

/// A Chat Completions stream of `n` text chunks, then the finish reason, a usage chunk
/// and `[DONE]`.
fn openai_body(n: usize) -> String {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        let event = json!({
            "id": "chatcmpl-AbC", "object": "chat.completion.chunk", "created": 1741570283,
            "model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_06737a9306",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
            "usage": null
        });
        format!("data: {event}\n\n")
    };
    let mut body = chunk(json!({"role": "assistant", "content": ""}), json!(null));
    for i in 0..n {
        body.push_str(&chunk(json!({"content": format!(" word{i}")}), json!(null)));
    }
    body.push_str(&chunk(json!({}), json!("stop")));
    body.push_str("data: {\"id\":\"chatcmpl-AbC\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":20}}\n\n");
    body.push_str("data: [DONE]\n\n");
    body
}

/// A Messages API stream of `n` text deltas.
fn anthropic_body(n: usize) -> String {
    let event = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
    let mut body = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    body.push_str(&event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ));
    for i in 0..n {
        body.push_str(&event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": format!(" word{i}")}}),
        ));
    }
    body.push_str(&event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    body.push_str(&event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 20}}),
    ));
    body.push_str(&event("message_stop", json!({"type": "message_stop"})));
    body
}

/// A Responses API stream as it starts: `response.created` and `response.in_progress`
/// (each echoing the whole response object, instructions and tools included), the
/// message item and its part, then `n` text deltas.
fn responses_body(n: usize) -> String {
    let tool = |name: &str| {
        json!({"type": "function", "name": name, "description": "Looks something up for the user by name and date.", "strict": true,
            "parameters": {"type": "object", "additionalProperties": false, "required": ["name", "date"],
                "properties": {"name": {"type": "string", "description": "What to look up"}, "date": {"type": ["string", "null"], "description": "When, as YYYY-MM-DD"}}}})
    };
    let response = |status: &str| {
        json!({"id": "resp_67ccd2bed1ec8190", "object": "response", "created_at": 1741476542, "status": status,
            "error": null, "incomplete_details": null, "instructions": "You are a helpful assistant. Answer briefly and cite the tools you used.",
            "max_output_tokens": null, "model": "gpt-4.1-2025-04-14", "output": [], "parallel_tool_calls": true,
            "previous_response_id": null, "reasoning": {"effort": null, "summary": null}, "store": false, "temperature": 1.0,
            "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [tool("search"), tool("calendar")],
            "top_p": 1.0, "truncation": "disabled", "usage": null, "user": null, "metadata": {}})
    };
    let event = |data: serde_json::Value| {
        format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap()
        )
    };
    let mut body = event(
        json!({"type": "response.created", "sequence_number": 0, "response": response("in_progress")}),
    );
    body.push_str(&event(json!({"type": "response.in_progress", "sequence_number": 1, "response": response("in_progress")})));
    body.push_str(&event(json!({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0,
        "item": {"id": "msg_67ccd2bf17f0", "type": "message", "status": "in_progress", "role": "assistant", "content": []}})));
    body.push_str(&event(json!({"type": "response.content_part.added", "sequence_number": 3, "item_id": "msg_67ccd2bf17f0",
        "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})));
    for i in 0..n {
        body.push_str(&event(json!({"type": "response.output_text.delta", "sequence_number": 4 + i, "item_id": "msg_67ccd2bf17f0",
            "output_index": 0, "content_index": 0, "delta": format!(" word{i}")})));
    }
    body
}

/// A Gemini `streamGenerateContent?alt=sse` stream of `n` chunks, each a whole response
/// with its safety ratings, usage and model version.
fn gemini_body(n: usize) -> String {
    let rating = |category: &str| json!({"category": category, "probability": "NEGLIGIBLE"});
    (0..n)
        .map(|i| {
            let chunk = json!({
                "candidates": [{"content": {"parts": [{"text": format!(" word{i}")}], "role": "model"}, "index": 0,
                    "safetyRatings": [rating("HARM_CATEGORY_HATE_SPEECH"), rating("HARM_CATEGORY_DANGEROUS_CONTENT"),
                        rating("HARM_CATEGORY_HARASSMENT"), rating("HARM_CATEGORY_SEXUALLY_EXPLICIT")]}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": i + 1, "totalTokenCount": i + 11},
                "modelVersion": "gemini-2.0-flash", "responseId": "mT2BaMqLJ9GVz7IPnqWv-Qk"
            });
            format!("data: {chunk}\r\n\r\n")
        })
        .collect()
}

/// `body` in 1 KiB pieces, as a network delivers it.
fn pieces(body: &str) -> Vec<Bytes> {
    body.as_bytes()
        .chunks(1024)
        .map(Bytes::copy_from_slice)
        .collect()
}

fn parse_throughput(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let messages = [Message::user("hi")];
    let request = LlmRequest::new(&messages, &[]);
    let openai = OpenAiClient::builder("m").build().unwrap();
    let anthropic = AnthropicClient::builder("m").api_key("k").build().unwrap();
    let mut group = c.benchmark_group("sse_parse");
    let cases = [
        ("openai", pieces(&openai_body(2000))),
        ("anthropic", pieces(&anthropic_body(2000))),
    ];
    for (name, body) in cases {
        let len: usize = body.iter().map(Bytes::len).sum();
        group.throughput(Throughput::Bytes(len as u64));
        // The SSE crate alone: the floor under any parser built on it.
        group.bench_function(format!("{name}/sse_only"), |b| {
            b.to_async(&runtime).iter(|| async {
                let bytes = futures::stream::iter(body.clone()).map(Ok::<_, Infallible>);
                let mut sse = sse_stream::SseStream::from_bytes_stream(bytes);
                let mut count = 0usize;
                while let Some(event) = sse.next().await {
                    count += usize::from(event.is_ok());
                }
                count
            })
        });
        group.bench_function(format!("{name}/events"), |b| {
            b.to_async(&runtime).iter(|| async {
                let bytes = futures::stream::iter(body.clone()).map(Ok::<_, std::io::Error>);
                let mut events = match name {
                    "openai" => openai.parse_stream(&request, bytes),
                    _ => anthropic.parse_stream(&request, bytes),
                };
                let mut count = 0usize;
                while let Some(event) = events.next().await {
                    count += usize::from(event.is_ok());
                }
                assert!(count > 2000);
                count
            })
        });
    }
    group.finish();
}

/// Connections the server accepted: few, when clients reuse them.
static CONNECTIONS: AtomicUsize = AtomicUsize::new(0);

/// Where the first text delta's event ends in `body`: a plain reader has the first
/// delta once it has this many bytes of the body.
fn first_delta_end(body: &str) -> usize {
    let delta = body.find("\"content\":\" word0\"").unwrap();
    body[delta..].find("\n\n").unwrap() + delta + 2
}

/// A keep-alive HTTP/1.1 server on loopback answering every POST with `body`: the head
/// and the events up to the first text delta at once, the rest a moment later, as a
/// model writes.
async fn serve(body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let split = response.len() - body.len() + first_delta_end(&body);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            CONNECTIONS.fetch_add(1, Ordering::Relaxed);
            // Each write goes out at once, as a streaming server's do.
            let _ = stream.set_nodelay(true);
            let response = response.clone();
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 16 * 1024];
                loop {
                    // One request: the head, then `content-length` bytes of body.
                    let (head_end, length) = loop {
                        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buffer[..end]).to_lowercase();
                            let length = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            break (end + 4, length);
                        }
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                        }
                    };
                    while buffer.len() < head_end + length {
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                        }
                    }
                    buffer.drain(..head_end + length);
                    let (first, rest) = response.as_bytes().split_at(split);
                    if stream.write_all(first).await.is_err() {
                        return;
                    }
                    // The client reads the first events before the rest is written.
                    tokio::task::yield_now().await;
                    if stream.write_all(rest).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// The two sides measured against each other: the same POST of the same bytes to the
/// same server, read by a plain HTTP client up to the first delta's bytes, and by the
/// model client up to its first text delta.
struct Sides {
    raw: reqwest::Client,
    client: OpenAiClient,
    endpoint: String,
    body: Vec<u8>,
    first_delta_end: usize,
}

impl Sides {
    /// The plain reader: the POST, then body chunks until the first delta's bytes are
    /// in (counted, not parsed: the least any reader must do), then the rest untimed so
    /// the connection is reused.
    async fn raw(&self) -> Duration {
        let start = Instant::now();
        let response = self
            .raw
            .post(&self.endpoint)
            .header("content-type", "application/json")
            .body(self.body.clone())
            .send()
            .await
            .unwrap();
        let mut bytes = response.bytes_stream();
        let mut received = 0;
        while received < self.first_delta_end {
            received += bytes.next().await.unwrap().unwrap().len();
        }
        let elapsed = start.elapsed();
        while bytes.next().await.is_some() {}
        elapsed
    }

    /// The model client: `stream` to its first text delta (body, transport, parsing).
    async fn client(&self) -> Duration {
        let messages = [Message::user("hi")];
        let request = LlmRequest::new(&messages, &[]);
        let start = Instant::now();
        until_first_delta(start, self.client.stream(request)).await
    }

    /// One pair, the side going first alternating with `turn` so that neither always
    /// finds the connection or the caches warmer.
    async fn pair(&self, turn: u64) -> (Duration, Duration) {
        if turn.is_multiple_of(2) {
            let raw = self.raw().await;
            (raw, self.client().await)
        } else {
            let client = self.client().await;
            (self.raw().await, client)
        }
    }
}

fn time_to_first_delta(c: &mut Criterion) {
    // One thread for server and client: no cross-thread wakeups in the figures.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answer = openai_body(20);
    let url = runtime.block_on(serve(answer.clone()));
    let client = OpenAiClient::builder("m")
        .base_url(format!("{url}/v1"))
        .build()
        .unwrap();
    let messages = [Message::user("hi")];
    let request = LlmRequest::new(&messages, &[]);
    let sides = Sides {
        raw: reqwest::Client::builder()
            .tls_backend_preconfigured(toolwright_llm::tls_config().unwrap())
            .build()
            .unwrap(),
        endpoint: client.stream_url().to_owned(),
        body: serde_json::to_vec(&client.stream_body(&request).unwrap()).unwrap(),
        client: client.clone(),
        first_delta_end: first_delta_end(&answer),
    };
    // Every pair either side measured, for the paired ratio below.
    let pairs = RefCell::new(Vec::new());

    let mut group = c.benchmark_group("time_to_first_delta");
    // The parsing's own cost: the whole answer already in memory, to its first delta.
    let whole = Bytes::from(answer);
    group.bench_function("in_memory_parse", |b| {
        b.to_async(&runtime)
            .iter_custom(|iters| parse_to_first_delta(iters, &client, &whole))
    });
    // The same for a Responses API stream, whose first events repeat the response.
    let responses = OpenAiResponsesClient::builder("m").build().unwrap();
    let whole = Bytes::from(responses_body(20));
    group.bench_function("in_memory_parse/responses", |b| {
        b.to_async(&runtime)
            .iter_custom(|iters| parse_to_first_delta(iters, &responses, &whole))
    });
    // And for a Gemini stream, whose every event is a whole response.
    let gemini = GeminiClient::builder("m").api_key("k").build().unwrap();
    let whole = Bytes::from(gemini_body(20));
    group.bench_function("in_memory_parse/gemini", |b| {
        b.to_async(&runtime)
            .iter_custom(|iters| parse_to_first_delta(iters, &gemini, &whole))
    });
    // Both sides run in every iteration of both benchmarks, alternating, so that a
    // machine busy with other work slows them alike; each benchmark reports its side.
    for (name, ours) in [("raw_bytes", false), ("client_stream", true)] {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter_custom(|iters| {
                let (sides, pairs) = (&sides, &pairs);
                async move {
                    let mut total = Duration::ZERO;
                    for turn in 0..iters {
                        let (raw, client) = sides.pair(turn).await;
                        pairs.borrow_mut().push((raw, client));
                        total += if ours { client } else { raw };
                    }
                    total
                }
            })
        });
    }
    group.finish();
    let opened = CONNECTIONS.swap(0, Ordering::Relaxed);
    let pairs = pairs.into_inner();
    // A filter that left out both paired benchmarks measured no pair.
    if pairs.is_empty() {
        return;
    }
    let median = |mut times: Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let ratios = pairs
        .iter()
        .map(|(raw, client)| client.as_secs_f64() / raw.as_secs_f64())
        .collect();
    let raw = median(pairs.iter().map(|p| p.0.as_secs_f64()).collect());
    let ours = median(pairs.iter().map(|p| p.1.as_secs_f64()).collect());
    eprintln!(
        "time to first delta over {} alternated pairs ({opened} connections): raw {:.1} µs, \
         client {:.1} µs; client/raw: median of pair ratios {:.3}×, ratio of medians {:.3}× \
         (goal ≤ 1.1×)",
        pairs.len(),
        raw * 1e6,
        ours * 1e6,
        median(ratios),
        ours / raw,
    );
}

/// The time `client` takes, over `iters` runs, to parse `whole` (an answer in memory)
/// to its first text delta.
async fn parse_to_first_delta<P: toolwright_llm::Provider>(
    iters: u64,
    client: &toolwright_llm::Client<P>,
    whole: &Bytes,
) -> Duration {
    let messages = [Message::user("hi")];
    let request = LlmRequest::new(&messages, &[]);
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let start = Instant::now();
        let bytes = futures::stream::iter([Ok::<_, Infallible>(whole.clone())]);
        let events = client.parse_stream(&request, bytes);
        total += until_first_delta(start, events).await;
    }
    total
}

/// The time from `start` to the first text delta of `events`, which are then read to
/// their end (untimed) so the connection is reused.
async fn until_first_delta(start: Instant, mut events: LlmStream<'_>) -> Duration {
    loop {
        match events.next().await {
            Some(Ok(LlmEvent::TextDelta { .. })) => break,
            Some(Ok(_)) => {}
            other => panic!("no text delta: {other:?}"),
        }
    }
    let elapsed = start.elapsed();
    while events.next().await.is_some() {}
    elapsed
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = parse_throughput, time_to_first_delta
}
criterion_main!(benches);
