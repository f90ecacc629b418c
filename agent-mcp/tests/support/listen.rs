#![allow(dead_code)] // each test binary uses its own part of this helper.

//! A `subscriptions/listen` stream (MCP 2026-07-28) over a bare loopback connection,
//! read event by event as the server sends them.

use super::events::within;
use super::raw_http;
use serde_json::{Value, json};
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const VERSION: &str = "2026-07-28";

/// The `_meta` of a 2026-07-28 request that declares no capabilities.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A `subscriptions/listen` stream, read as its events arrive.
pub struct Listen {
    stream: TcpStream,
    buffered: String,
}

impl Listen {
    /// Opens a listen stream for `filter`, as the caller `token` names (if any).
    pub async fn open(addr: SocketAddr, filter: Value, token: Option<&str>) -> Self {
        let body = raw_http::rpc(
            41,
            "subscriptions/listen",
            json!({"_meta": meta(), "notifications": filter}),
        );
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {VERSION}\r\n\
             Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        if let Some(token) = token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        head.push_str("\r\n");
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&body).await.unwrap();
        Self {
            stream,
            buffered: String::new(),
        }
    }

    /// The next JSON-RPC message on the stream; `None` once it has ended.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(found) = self.take_message() {
                return Some(found);
            }
            let mut buf = [0u8; 4096];
            let read = within("a listen stream event", self.stream.read(&mut buf)).await;
            match read {
                Ok(0) | Err(_) => return self.take_message(),
                Ok(n) => self.buffered.push_str(&String::from_utf8_lossy(&buf[..n])),
            }
        }
    }

    /// The first complete `data:` line buffered, parsed (a non-JSON body line, such as
    /// a chunk size, is skipped).
    fn take_message(&mut self) -> Option<Value> {
        while let Some(end) = self.buffered.find('\n') {
            let line: String = self.buffered.drain(..=end).collect();
            let line = line.trim();
            let data = line.strip_prefix("data:").unwrap_or(line).trim();
            if let Ok(message) = serde_json::from_str::<Value>(data)
                && message.is_object()
            {
                return Some(message);
            }
        }
        None
    }

    /// Every message until the stream ends.
    pub async fn rest(mut self) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(message) = self.next().await {
            all.push(message);
        }
        all
    }
}
