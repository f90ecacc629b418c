#![allow(dead_code)] // each test binary uses its own part of this helper.

//! A bare HTTP/1.1 client over loopback TCP, so a test controls every header and byte
//! an attacker would, and reads every status and header the server answers with.

use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response, read to its end.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body: a JSON body, or the `data:` lines of an
    /// event stream.
    pub fn messages(&self) -> Vec<Value> {
        if let Ok(value) = serde_json::from_str::<Value>(&self.body) {
            return vec![value];
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect()
    }

    /// The JSON-RPC response in the body (a result or an error), if any.
    pub fn answer(&self) -> Option<Value> {
        self.messages()
            .into_iter()
            .find(|m| !m["id"].is_null() && (m.get("result").is_some() || m.get("error").is_some()))
    }
}

/// Sends one request on a fresh connection (`Connection: close`) and reads the whole
/// response; at most 60 s.
pub async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Reply> {
    tokio::time::timeout(Duration::from_secs(60), async {
        let mut stream = TcpStream::connect(addr).await?;
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("host"))
        {
            head.push_str(&format!("Host: {addr}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        parse(&raw)
    })
    .await
    .map_err(|_| std::io::Error::other("no complete response within 60 s"))?
}

fn parse(raw: &[u8]) -> std::io::Result<Reply> {
    let bad = |what: &str| std::io::Error::other(format!("bad response: {what}"));
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| bad("head not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        body = dechunk(&body);
    }
    Ok(Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&raw[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
            .unwrap_or(0);
        raw = &raw[line_end + 2..];
        if size == 0 || raw.len() < size {
            out.extend_from_slice(&raw[..size.min(raw.len())]);
            break;
        }
        out.extend_from_slice(&raw[..size]);
        raw = raw.get(size + 2..).unwrap_or_default();
    }
    out
}

/// The headers every MCP POST carries.
pub const MCP_HEADERS: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

/// A JSON-RPC request.
pub fn rpc(id: u64, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

/// The `initialize` request.
pub fn initialize_request() -> Vec<u8> {
    rpc(
        1,
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"},
        }),
    )
}

/// An MCP POST to `/mcp` with `extra` headers (and the session's id, if any).
pub async fn post(
    addr: SocketAddr,
    session: Option<&str>,
    extra: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Reply> {
    let mut headers: Vec<(&str, &str)> = MCP_HEADERS.to_vec();
    headers.extend_from_slice(extra);
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    send(addr, "POST", "/mcp", &headers, body).await
}

/// Opens a session: `initialize`, then `notifications/initialized`. The reply to
/// `initialize` and the session id, if the server gave one.
pub async fn open_session(
    addr: SocketAddr,
    extra: &[(&str, &str)],
) -> std::io::Result<(Reply, Option<String>)> {
    let reply = post(addr, None, extra, &initialize_request()).await?;
    let session = reply.header("mcp-session-id").map(str::to_owned);
    if reply.status == 200 {
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        post(
            addr,
            session.as_deref(),
            extra,
            initialized.to_string().as_bytes(),
        )
        .await?;
    }
    Ok((reply, session))
}

/// `tools/call` of `name` with `arguments` in `session`.
pub async fn call(
    addr: SocketAddr,
    session: Option<&str>,
    extra: &[(&str, &str)],
    name: &str,
    arguments: Value,
) -> std::io::Result<Reply> {
    // Ids are unique within a session, as JSON-RPC requires.
    static NEXT_ID: AtomicU64 = AtomicU64::new(100);
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let body = rpc(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    );
    post(addr, session, extra, &body).await
}

/// Opens `session`'s standalone event stream (a GET) and reads it on a task of its own,
/// which ends when the stream does: the server ends it when it closes the session. The
/// status of the GET, and that task.
pub async fn standalone_stream(
    addr: SocketAddr,
    session: &str,
) -> std::io::Result<(u16, tokio::task::JoinHandle<()>)> {
    let mut stream = TcpStream::connect(addr).await?;
    let head = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 1024];
    while !raw.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await? {
            0 => return Err(std::io::Error::other("closed before the response's head")),
            n => raw.extend_from_slice(&buf[..n]),
        }
    }
    let status = parse(&raw)?.status;
    let reading = tokio::spawn(async move {
        // Events (and keep-alives) until the end of the stream, or a reset.
        while let Ok(1..) = stream.read(&mut buf).await {}
    });
    Ok((status, reading))
}

/// A server listening on a free loopback port; it shuts down when dropped.
pub struct Running {
    pub addr: std::net::SocketAddr,
    _stop: tokio_util::sync::DropGuard,
}

/// Serves `server` as `options` say on a free loopback port, with a short shutdown grace.
pub async fn serve_on_loopback(
    server: toolwright_mcp::McpServer,
    options: toolwright_mcp::HttpOptions,
) -> Running {
    let http = toolwright_mcp::McpHttpServer::bind(server, "127.0.0.1:0")
        .await
        .unwrap()
        .with_options(options)
        .with_shutdown_grace(Duration::from_millis(100));
    let running = Running {
        addr: http.local_addr(),
        _stop: http.shutdown_token().drop_guard(),
    };
    tokio::spawn(http.run());
    running
}
