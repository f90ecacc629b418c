//! Streaming costs: how fast a provider's server-sent events are parsed into
//! [`LlmEvent`]s (MB/s), and how much later the first text delta reaches the caller than
//! the first bytes reach a plain HTTP client (goal: at most 1.1×).
//!
//! `cargo bench -p agent-llm --bench sse`

use agent_core::{LlmClient, LlmEvent, LlmRequest, LlmStream, Message};
use agent_llm::{AnthropicClient, OpenAiClient};
use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use serde_json::json;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

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
    let anthropic = AnthropicClient::builder("k", "m").build().unwrap();
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

/// A keep-alive HTTP/1.1 server on loopback answering every POST with `body`: the head
/// and the first two events at once, the rest a moment later, as a model writes.
async fn serve(body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let first_two = body
        .match_indices("\n\n")
        .nth(1)
        .map_or(body.len(), |(at, _)| at + 2);
    let split = response.len() - body.len() + first_two;
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

fn time_to_first_delta(c: &mut Criterion) {
    // One thread for server and client: no cross-thread wakeups in the figures.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = runtime.block_on(serve(openai_body(20)));
    let client = OpenAiClient::builder("m")
        .base_url(format!("{url}/v1"))
        .build()
        .unwrap();
    let raw = reqwest::Client::builder()
        .tls_backend_preconfigured(agent_llm::tls_config().unwrap())
        .build()
        .unwrap();
    let messages = [Message::user("hi")];
    let request = LlmRequest::new(&messages, &[]);
    let body = serde_json::to_vec(&client.stream_body(&request).unwrap()).unwrap();
    let endpoint = client.stream_url().to_owned();

    let mut group = c.benchmark_group("time_to_first_delta");
    // The parsing's own cost: the whole answer already in memory, to its first delta.
    let answer = Bytes::from(openai_body(20));
    group.bench_function("in_memory_parse", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            let client = client.clone();
            let answer = answer.clone();
            async move {
                let messages = [Message::user("hi")];
                let request = LlmRequest::new(&messages, &[]);
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let bytes = futures::stream::iter([Ok::<_, Infallible>(answer.clone())]);
                    let events = client.parse_stream(&request, bytes);
                    total += until_first_delta(start, events).await;
                }
                total
            }
        })
    });
    // The floor: a plain POST and its first bytes.
    group.bench_function("raw_bytes", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            let raw = raw.clone();
            let body = body.clone();
            let endpoint = endpoint.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let response = post(&raw, &endpoint, &body).await;
                    let mut bytes = response.bytes_stream();
                    let first = bytes.next().await;
                    total += start.elapsed();
                    assert!(first.is_some());
                    // Read to the end, untimed, so the connection is reused.
                    while bytes.next().await.is_some() {}
                }
                total
            }
        })
    });
    let opened = CONNECTIONS.swap(0, Ordering::Relaxed);
    eprintln!("raw_bytes opened {opened} connections");
    // The same POST, its bytes parsed into events: the parsing's share.
    group.bench_function("raw_post_parse_stream", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            let raw = raw.clone();
            let body = body.clone();
            let endpoint = endpoint.clone();
            let client = client.clone();
            async move {
                let messages = [Message::user("hi")];
                let request = LlmRequest::new(&messages, &[]);
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let response = post(&raw, &endpoint, &body).await;
                    let events = client.parse_stream(&request, response.bytes_stream());
                    total += until_first_delta(start, events).await;
                }
                total
            }
        })
    });
    // The whole client: body, transport, parsing.
    group.bench_function("client_stream", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            let client = client.clone();
            async move {
                let messages = [Message::user("hi")];
                let request = LlmRequest::new(&messages, &[]);
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let events = client.stream(request);
                    total += until_first_delta(start, events).await;
                }
                total
            }
        })
    });
    let opened = CONNECTIONS.swap(0, Ordering::Relaxed);
    eprintln!("client_stream opened {opened} connections");
    group.finish();
}

/// The request body POSTed as it is, with nothing of the model client.
async fn post(raw: &reqwest::Client, endpoint: &str, body: &[u8]) -> reqwest::Response {
    raw.post(endpoint)
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await
        .unwrap()
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
