//! `tools/call`, `resources/read` and `prompts/get` answered on a stream transport
//! without rmcp's service loop.
//!
//! rmcp parses every message into its own types, routes it through its service loop and
//! a task of its own, and serializes the answer back; for these requests that is most of
//! a round trip's cost. The stream transport reads such a request in its plain shape
//! straight from its line (the one parse of that line), runs it through the same server
//! code rmcp's handler runs ([`McpServer::run_call`], and the handler's own
//! `read_resource` and `get_prompt`; for a session opened without `initialize`, rmcp's
//! own request handler), and writes its response here, in the bytes rmcp writes.
//! Everything else, including any request that looks unusual, still goes to rmcp.

use crate::server::McpServer;
use futures::StreamExt;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest,
    ErrorData, GetPromptRequest, GetPromptRequestParams, NumberOrString, ProgressToken,
    ReadResourceRequest, ReadResourceRequestParams, RequestId, RequestMetaObject, ResultType,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ServerHandler, Service};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use toolwright_core::tool::TaskSupport;

/// What the session gives the fast path once it has initialized: the server instance
/// rmcp serves (so its log level and connection state are the ones rmcp's handler
/// uses) and the session's peer, through which a call's progress, logs and requests to
/// the client go out.
pub(crate) struct StreamCalls {
    server: Arc<McpServer>,
    peer: Peer<RoleServer>,
    /// The session opened without `initialize` (protocol 2026-07-28): every request
    /// carries its own version and client context in `_meta`, which rmcp's request
    /// handler checks, and whose version shapes the answer.
    inline: bool,
}

impl StreamCalls {
    pub(crate) fn new(server: Arc<McpServer>, peer: Peer<RoleServer>, inline: bool) -> Self {
        Self {
            server,
            peer,
            inline,
        }
    }
}

/// A request answered here, taken from its line.
pub(crate) struct Request {
    id: RequestId,
    asked: Asked,
    progress: Option<ProgressToken>,
    /// What its `_meta` holds besides a progress token (a later protocol's version and
    /// client); most requests have nothing there.
    meta: Option<Map<String, Value>>,
}

/// What a [`Request`] asks for.
enum Asked {
    /// `tools/call`.
    Call(CallToolRequestParams),
    /// `resources/read`.
    Resource(ReadResourceRequestParams),
    /// `prompts/get`.
    Prompt(GetPromptRequestParams),
}

/// What a line read as [`CallLine`] is.
// Matched as soon as it is returned, once a line; boxing the request would cost every
// request an allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Read {
    /// A request in a plain shape answered here.
    Request(Request),
    /// Another message; valid JSON (it was read), for rmcp.
    Other,
}

/// The one shape of message answered here, read straight from its line: the members a
/// `tools/call`, `resources/read` or `prompts/get` request has, nothing else
/// (`deny_unknown_fields`), so that any other message fails at its first other member,
/// and is then read as a `Value` and checked as before. Reading the request into its own
/// shape, rather than into a `Value` taken apart afterwards, costs less than half (8.5k
/// instructions against 19k for a call): a `Value` allocates every key and hashes it
/// into a map.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallLine<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    id: Value,
    #[serde(borrow)]
    method: &'a str,
    params: CallLineParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallLineParams {
    /// A call's tool; a `prompts/get`'s prompt.
    #[serde(default)]
    name: Option<String>,
    /// A `resources/read`'s resource.
    #[serde(default)]
    uri: Option<String>,
    /// A call's arguments; a `prompts/get`'s.
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    /// A progress token; on protocol 2026-07-28, the request's version and client.
    #[serde(rename = "_meta", default)]
    meta: Option<LineMeta>,
}

/// A request's `_meta`: its progress token read on its own, so that the usual `_meta`
/// (a token alone) costs no map, whose allocations and drop were a call's largest
/// cost here (callgrind: about 700 instructions a call).
#[derive(Default)]
struct LineMeta {
    progress_token: Option<Value>,
    /// Every other member, when there is one.
    rest: Option<Map<String, Value>>,
}

impl<'de> Deserialize<'de> for LineMeta {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = LineMeta;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut members: A,
            ) -> Result<LineMeta, A::Error> {
                let mut meta = LineMeta::default();
                while let Some(key) = members.next_key::<std::borrow::Cow<'de, str>>()? {
                    let value = members.next_value::<Value>()?;
                    if key == "progressToken" && meta.progress_token.is_none() {
                        meta.progress_token = Some(value);
                    } else {
                        meta.rest
                            .get_or_insert_with(Map::new)
                            .insert(key.into_owned(), value);
                    }
                }
                Ok(meta)
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// `line` as a request answered here in its plainest form, or as another valid message;
/// `None` when it is neither (not JSON, or a shape read otherwise), for the caller to
/// read as a `Value`. It reads JSON as a `Value` would, under the same nesting limit,
/// so a line it reads is one a `Value` would have read too.
pub(crate) fn read_request(line: &[u8]) -> Option<Read> {
    // The line's UTF-8 checked once, rather than each string's on its own as reading
    // bytes does: a sixth of the read (callgrind). A line that is not UTF-8 is not JSON,
    // and reading it as a `Value` says so.
    let line = std::str::from_utf8(line).ok()?;
    let CallLine {
        jsonrpc,
        id,
        method,
        params,
    } = serde_json::from_str(line).ok()?;
    // Each method with the members its request has; a member of another's (a `uri` in a
    // call, `arguments` in a read) is left to rmcp.
    let asked = match (method, params.name, params.uri, params.arguments) {
        _ if jsonrpc != "2.0" => None,
        ("tools/call", Some(name), None, arguments) => {
            let mut call = CallToolRequestParams::new(name);
            call.arguments = arguments;
            Some(Asked::Call(call))
        }
        ("prompts/get", Some(name), None, arguments) => {
            let mut prompt = GetPromptRequestParams::new(name);
            prompt.arguments = arguments;
            Some(Asked::Prompt(prompt))
        }
        ("resources/read", None, Some(uri), None) => {
            Some(Asked::Resource(ReadResourceRequestParams::new(uri)))
        }
        _ => None,
    };
    let request = asked.and_then(|asked| {
        let LineMeta {
            progress_token,
            rest: meta,
        } = params.meta.unwrap_or_default();
        let progress = match progress_token {
            None => None,
            Some(token) => Some(ProgressToken(request_id(&token)?)),
        };
        Some(Request {
            id: request_id(&id)?,
            asked,
            progress,
            meta,
        })
    });
    // An id or token rmcp would not read is left to rmcp, and its error.
    Some(request.map_or(Read::Other, Read::Request))
}

/// The request `notifications/cancelled` names, when `message` is one.
pub(crate) fn cancelled(message: &Value) -> Option<RequestId> {
    if message.get("jsonrpc")? != "2.0" || message.get("method")? != "notifications/cancelled" {
        return None;
    }
    request_id(message.get("params")?.get("requestId")?)
}

/// A JSON-RPC id as rmcp reads one: a string, or an integer that fits an `i64`.
fn request_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::String(id) => Some(NumberOrString::String(id.as_str().into())),
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        _ => None,
    }
}

/// The fast requests (calls, reads, prompts) of one session that have not answered yet.
pub(crate) struct InFlight {
    /// Each running request's token, and the number it was started under: a request
    /// cancelled by its client is removed, so its answer is dropped, as rmcp drops the
    /// answer of a request it cancelled, even when the client reused the id since.
    calls: HashMap<RequestId, (CancellationToken, u64)>,
    started: u64,
}

/// A fast request started: what [`run`](Self::run) needs. Kept apart from the future
/// that runs it so the transport makes that future where it keeps it: the future is
/// kilobytes, and each move of it a copy.
pub(crate) struct Started {
    server: Arc<McpServer>,
    asked: Asked,
    context: RequestContext<RoleServer>,
    id: RequestId,
    started: u64,
    quiet: bool,
    inline: bool,
}

impl Started {
    /// Runs the request, through the code rmcp's handler runs for it.
    pub(crate) async fn run(self) -> Finished {
        let server = &*self.server;
        let result = if self.inline {
            shaped(server, self.asked, self.context).await
        } else {
            match self.asked {
                Asked::Call(params) => server
                    .run_call(params, self.context)
                    .await
                    .map(Answer::Call),
                Asked::Resource(params) => {
                    ServerHandler::read_resource(server, params, self.context)
                        .await
                        .map(|read| Answer::Other(Box::new(read.into())))
                }
                Asked::Prompt(params) => ServerHandler::get_prompt(server, params, self.context)
                    .await
                    .map(|prompt| Answer::Other(Box::new(prompt.into()))),
            }
        };
        Finished {
            id: self.id,
            started: self.started,
            quiet: self.quiet,
            result,
        }
    }
}

/// `asked` answered by rmcp's own request handler, which checks the request's `_meta`,
/// dispatches, and shapes the result and errors for the version the request names.
/// Boxed, and behind a `dyn`: its future holds every handler's, and would otherwise grow
/// every call's state, and its code the code of every call.
fn shaped(
    server: &McpServer,
    asked: Asked,
    context: RequestContext<RoleServer>,
) -> Pin<Box<dyn Future<Output = Result<Answer, ErrorData>> + Send + '_>> {
    let request = match asked {
        Asked::Call(params) => ClientRequest::CallToolRequest(CallToolRequest::new(params)),
        Asked::Resource(params) => {
            ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
        }
        Asked::Prompt(params) => ClientRequest::GetPromptRequest(GetPromptRequest::new(params)),
    };
    Box::pin(async move {
        Service::handle_request(server, request, context)
            .await
            .map(|result| Answer::Shaped(Box::new(result)))
    })
}

/// What tracks a call that did not answer at its first poll.
pub(crate) struct Tracking {
    id: RequestId,
    ct: CancellationToken,
    started: u64,
}

/// A fast request that has answered.
pub(crate) struct Finished {
    id: RequestId,
    started: u64,
    /// It cannot have reached the client (see [`Response::quiet`]).
    quiet: bool,
    result: Result<Answer, ErrorData>,
}

/// A fast request's result.
enum Answer {
    /// A call's, most often written by [`write_result`] itself.
    Call(CallToolResult),
    /// A read's or a prompt's, written through rmcp's types. Boxed: rmcp's result enum
    /// is several times a call's result, and would grow every call's state with it.
    Other(Box<ServerResult>),
    /// Any result of a session without `initialize`, shaped already by rmcp's request
    /// handler for the request's version.
    Shaped(Box<ServerResult>),
}

/// The response line of a fast request.
pub(crate) struct Response {
    /// The line, newline included.
    pub(crate) line: Vec<u8>,
    /// The request wrote nothing through the session before answering: a call whose
    /// tool does not read its context (so it has no progress to report and no log to
    /// write), or does not exist. Its response needs not wait behind rmcp's lines, so it
    /// may be written as soon as it is ready. A read or a prompt may log through its
    /// context, and is never quiet.
    pub(crate) quiet: bool,
}

impl InFlight {
    pub(crate) fn new() -> Self {
        Self {
            calls: HashMap::new(),
            started: 0,
        }
    }

    /// What runs `request`, and what tracks it should it not answer at its first poll;
    /// or `None` when a request with its id is running already (a client's mistake), or
    /// it calls a tool that may run as a task (both left to rmcp).
    pub(crate) fn start(
        &mut self,
        fast: &StreamCalls,
        request: Request,
    ) -> Option<(Started, Tracking)> {
        // Cheap while no request is tracked, the usual case: no hash of an empty map.
        if self.calls.contains_key(&request.id) {
            return None;
        }
        // A request of an initialized session names no more than a progress token in its
        // `_meta`; one naming a version or a client is rmcp's to check.
        if !fast.inline && request.meta.is_some() {
            return None;
        }
        let quiet = match &request.asked {
            Asked::Call(params) => {
                let tools = fast.server.tools();
                let tool = tools.get(&params.name);
                // A task tool's call may become a task, which rmcp's path starts.
                if tool.is_some_and(|tool| tool.task_support() != TaskSupport::Forbidden) {
                    return None;
                }
                tool.is_none_or(|tool| !tool.uses_context())
            }
            Asked::Resource(_) | Asked::Prompt(_) => false,
        };
        self.started += 1;
        // A token of the request's own, as rmcp gives a request. Not a child of a session
        // token, as rmcp's are: every running request's is in `calls`, cancelled from
        // there when the session ends, which spares each the parent's lock twice.
        let mut context = RequestContext::new(request.id.clone(), fast.peer.clone());
        let tracking = Tracking {
            id: request.id.clone(),
            ct: context.ct.clone(),
            started: self.started,
        };
        if fast.inline {
            context.meta = RequestMetaObject(request.meta.unwrap_or_default().into());
            if let Some(progress) = request.progress {
                context.meta.set_progress_token(progress);
            }
        } else if let Some(progress) = request.progress
            && !quiet
        {
            // A tool that does not read its context cannot report progress: no token,
            // and so no reporter for the call.
            context.meta.set_progress_token(progress);
        }
        let started = Started {
            server: fast.server.clone(),
            asked: request.asked,
            context,
            id: request.id,
            started: tracking.started,
            quiet,
            inline: fast.inline,
        };
        Some((started, tracking))
    }

    /// Tracks a call still running after its first poll, so that its cancellation and
    /// the session's end reach it. One that answered at once was never tracked: no
    /// line was read meanwhile that could have cancelled it or reused its id.
    pub(crate) fn track(&mut self, call: Tracking) {
        self.calls.insert(call.id, (call.ct, call.started));
    }

    /// Cancels the running call `id`; `false` when no fast call has that id.
    pub(crate) fn cancel(&mut self, id: &RequestId) -> bool {
        match self.calls.remove(id) {
            Some((ct, _)) => {
                ct.cancel();
                true
            }
            None => false,
        }
    }

    /// The response of a tracked call that answered, or `None` when its client cancelled
    /// it.
    pub(crate) fn finish(&mut self, finished: Finished) -> Option<Response> {
        match self.calls.remove(&finished.id) {
            Some((_, started)) if started == finished.started => {}
            // Cancelled, and its id taken by a call running now: that one stays.
            Some(other) => {
                self.calls.insert(finished.id, other);
                return None;
            }
            None => return None,
        }
        Some(Self::answer(finished))
    }

    /// The response of a request that answered at its first poll (never tracked).
    pub(crate) fn answer(finished: Finished) -> Response {
        let mut line = match finished.result {
            // The envelope rmcp's `JsonRpcResponse` writes, around the result as rmcp
            // writes it.
            Ok(result) => {
                let mut line = Vec::with_capacity(256);
                line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                serde_json::to_writer(&mut line, &finished.id)
                    .and_then(|()| {
                        line.extend_from_slice(br#","result":"#);
                        match result {
                            Answer::Call(result) => write_result(&mut line, result),
                            Answer::Other(result) => write_server_result(&mut line, *result),
                            Answer::Shaped(result) => serde_json::to_writer(&mut line, &result),
                        }
                    })
                    .map(|()| {
                        line.push(b'}');
                        line
                    })
            }
            Err(error) => {
                serde_json::to_vec(&ServerJsonRpcMessage::error(error, Some(finished.id)))
            }
        }
        .unwrap_or_else(|e| {
            // rmcp's types serialize to JSON; this is a bug, and the client still hears.
            let error = ErrorData::internal_error(format!("response not serializable: {e}"), None);
            serde_json::to_vec(&ServerJsonRpcMessage::error(error, None)).unwrap_or_default()
        });
        line.push(b'\n');
        Response {
            line,
            quiet: finished.quiet,
        }
    }

    /// Cancels every call still running.
    fn cancel_all(&mut self) {
        for (ct, _) in self.calls.values() {
            ct.cancel();
        }
        self.calls.clear();
    }

    /// Ends the session's calls: each is cancelled, and left to finish in a task of its
    /// own (as rmcp leaves its handlers), unanswered, so a tool sees its cancellation
    /// rather than being dropped mid-step.
    pub(crate) fn end<F>(mut self, running: futures::stream::FuturesUnordered<F>)
    where
        F: Future<Output = Finished> + Send + 'static,
    {
        self.cancel_all();
        if !running.is_empty() {
            tokio::spawn(running.for_each(|_| async {}));
        }
    }
}

/// Writes `result` as rmcp's handler writes it for a peer on a protocol before
/// 2026-07-28, the only ones answered here (see `serve_io`).
fn write_result(line: &mut Vec<u8>, result: CallToolResult) -> serde_json::Result<()> {
    if is_plain(&result) {
        // Text blocks alone, the common result, written here in the bytes rmcp's
        // serializer writes (its enums and wrappers cost four times as much); the
        // `plain_results_are_written_as_rmcp_writes_them` test holds the two together.
        line.extend_from_slice(br#"{"content":["#);
        for (i, block) in result.content.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(br#"{"type":"text","text":"#);
            let text = block.as_text().map_or("", |text| text.text.as_str());
            serde_json::to_writer(&mut *line, text)?;
            line.push(b'}');
        }
        line.push(b']');
        match result.is_error {
            Some(true) => line.extend_from_slice(br#","isError":true}"#),
            Some(false) => line.extend_from_slice(br#","isError":false}"#),
            None => line.push(b'}'),
        }
        return Ok(());
    }
    write_as_rmcp(line, result)
}

/// Writes `result` through rmcp's own types, as its handler does for a peer on a
/// protocol before 2026-07-28.
fn write_as_rmcp(line: &mut Vec<u8>, result: CallToolResult) -> serde_json::Result<()> {
    write_server_result(line, ServerResult::from(CallToolResponse::from(result)))
}

/// Writes `result` as rmcp's handler writes any result for a peer on a protocol before
/// 2026-07-28.
fn write_server_result(line: &mut Vec<u8>, mut result: ServerResult) -> serde_json::Result<()> {
    result.strip_result_type_for_legacy_peer();
    result.strip_non_object_output_for_legacy_peer();
    serde_json::to_writer(line, &result)
}

/// A result of text blocks without metadata or annotations, no structured content and
/// no metadata, complete: all [`write_result`] writes itself.
fn is_plain(result: &CallToolResult) -> bool {
    result
        .result_type
        .as_ref()
        .is_none_or(ResultType::is_complete)
        && result.structured_content.is_none()
        && result.meta.is_none()
        && result.content.iter().all(|block| {
            block
                .as_text()
                .is_some_and(|text| text.meta.is_none() && text.annotations.is_none())
        })
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // The session is over: whatever still runs is told to stop.
        self.cancel_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rmcp::model::ContentBlock;

    const CALL: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","n":[1,2.5,null,true]},"_meta":{"progressToken":"p"}}}"#;

    #[test]
    fn a_plain_call_is_read_with_its_id_name_arguments_and_token() {
        let Some(Read::Request(request)) = read_request(CALL.as_bytes()) else {
            panic!("a plain call")
        };
        assert_eq!(request.id, NumberOrString::Number(7));
        let Asked::Call(call) = request.asked else {
            panic!("a call")
        };
        assert_eq!(call.name, "echo");
        assert_eq!(
            Value::Object(call.arguments.unwrap()),
            serde_json::json!({"text": "hi", "n": [1, 2.5, null, true]})
        );
        assert_eq!(
            request.progress,
            Some(ProgressToken(NumberOrString::String("p".into())))
        );
    }

    #[test]
    fn a_meta_is_read_as_its_token_and_the_rest() {
        let Some(Read::Request(call)) = read_request(CALL.as_bytes()) else {
            panic!("a plain call")
        };
        assert!(call.meta.is_none(), "a token alone leaves nothing else");
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a://b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1}}}"#;
        let Some(Read::Request(request)) = read_request(line) else {
            panic!("a read")
        };
        assert_eq!(
            request.progress,
            Some(ProgressToken(NumberOrString::Number(1)))
        );
        let rest = Value::Object(request.meta.unwrap());
        assert_eq!(
            rest,
            serde_json::json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
        );
        let not_an_object = br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a://b","_meta":[1]}}"#;
        assert!(read_request(not_an_object).is_none());
    }

    #[test]
    fn a_plain_read_and_a_plain_prompt_are_read_with_their_members() {
        let read = br#"{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"a://b","_meta":{"progressToken":2}}}"#;
        let Some(Read::Request(request)) = read_request(read) else {
            panic!("a plain read")
        };
        assert_eq!(request.id, NumberOrString::String("r".into()));
        assert_eq!(
            request.progress,
            Some(ProgressToken(NumberOrString::Number(2)))
        );
        assert!(matches!(request.asked, Asked::Resource(read) if read.uri == "a://b"));
        let prompt = br#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"p","arguments":{"who":"x"}}}"#;
        let Some(Read::Request(request)) = read_request(prompt) else {
            panic!("a plain prompt")
        };
        let Asked::Prompt(prompt) = request.asked else {
            panic!("a prompt")
        };
        assert_eq!(prompt.name, "p");
        assert_eq!(
            Value::Object(prompt.arguments.unwrap()),
            serde_json::json!({"who": "x"})
        );
        let bare = br#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"p"}}"#;
        assert!(matches!(read_request(bare), Some(Read::Request(_))));
    }

    #[test]
    fn other_messages_are_not_calls_and_deep_nesting_is_refused_as_a_value_refuses_it() {
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"name":"x"}}"#;
        assert!(matches!(read_request(ping), Some(Read::Other)));
        // A request with a member it lacks, or one it does not have, is left to rmcp.
        for other in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"p","uri":"a://b"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"a://b","name":"n"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"a://b","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"a://b"}}"#,
            r#"{"jsonrpc":"1.0","id":3,"method":"resources/read","params":{"uri":"a://b"}}"#,
        ] {
            assert!(
                matches!(read_request(other.as_bytes()), Some(Read::Other)),
                "{other}"
            );
        }
        // Members of a later protocol's request are not read here at all.
        let later = br#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"p","requestState":"s"}}"#;
        assert!(read_request(later).is_none());
        let with_uri = CALL.replace(r#""name":"echo""#, r#""name":"echo","uri":"a://b""#);
        assert!(matches!(
            read_request(with_uri.as_bytes()),
            Some(Read::Other)
        ));
        let nested_uri = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{{"uri":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(read_request(nested_uri.as_bytes()).is_none());
        let float_id = CALL.replace(r#""id":7"#, r#""id":7.5"#);
        assert!(matches!(
            read_request(float_id.as_bytes()),
            Some(Read::Other)
        ));
        let nested = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"a":{}{}}}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(serde_json::from_slice::<Value>(nested.as_bytes()).is_err());
        assert!(read_request(nested.as_bytes()).is_none());
    }

    /// The result as rmcp's handler writes it to a peer on a protocol before 2026-07-28.
    fn as_rmcp_writes(result: CallToolResult) -> String {
        let mut line = Vec::new();
        write_as_rmcp(&mut line, result).unwrap();
        String::from_utf8(line).unwrap()
    }

    fn as_written(result: CallToolResult) -> String {
        let mut line = Vec::new();
        write_result(&mut line, result).unwrap();
        String::from_utf8(line).unwrap()
    }

    fn texts(texts: &[&str]) -> Vec<ContentBlock> {
        texts.iter().map(|text| ContentBlock::text(*text)).collect()
    }

    #[test]
    fn plain_results_are_written_as_rmcp_writes_them() {
        let escapes = "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7} ✓ 😀 \u{2028}";
        let mut no_flag = CallToolResult::success(texts(&["x"]));
        no_flag.is_error = None;
        let mut no_type = CallToolResult::success(texts(&["y"]));
        no_type.result_type = None;
        let plain = [
            CallToolResult::success(texts(&["Beijing: 3 days, 22°C"])),
            CallToolResult::success(texts(&[escapes, "", "second"])),
            CallToolResult::success(Vec::new()),
            CallToolResult::error(texts(&["it failed"])),
            no_flag,
            no_type,
        ];
        for result in plain {
            assert!(is_plain(&result));
            assert_eq!(as_written(result.clone()), as_rmcp_writes(result));
        }
        // Anything else goes through rmcp's own serializer, and so is written alike.
        let mut annotated = ContentBlock::text("a");
        if let ContentBlock::Text(text) = &mut annotated {
            text.annotations = Some(Default::default());
        }
        let others = [
            CallToolResult::success(texts(&["t"]))
                .with_meta(Some(rmcp::model::MetaObject::default())),
            CallToolResult::structured(serde_json::json!({"a": 1})),
            CallToolResult::structured(serde_json::json!([1, 2])),
            CallToolResult::success(vec![ContentBlock::image("aGk=", "image/png")]),
            CallToolResult::success(vec![annotated]),
        ];
        for result in others {
            assert!(!is_plain(&result));
            assert_eq!(as_written(result.clone()), as_rmcp_writes(result));
        }
    }

    proptest! {
        /// Any text, any number of blocks, either flag: written as rmcp writes it.
        #[test]
        fn any_plain_text_is_written_as_rmcp_writes_it(
            blocks in proptest::collection::vec(any::<String>(), 0..4),
            error in any::<Option<bool>>(),
        ) {
            let mut result = CallToolResult::success(
                blocks.iter().map(|text| ContentBlock::text(text.as_str())).collect(),
            );
            result.is_error = error;
            prop_assert_eq!(as_written(result.clone()), as_rmcp_writes(result));
        }

        /// Whatever the line, reading it never panics, and a line read is one a
        /// `Value` reads too: nothing skips the check every other line gets.
        #[test]
        fn a_line_read_is_valid_json(
            at in 0..CALL.len(),
            cut in 0usize..4,
            insert in "[ -~]{0,3}",
            junk in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut line = CALL.as_bytes()[..at].to_vec();
            line.extend_from_slice(insert.as_bytes());
            line.extend_from_slice(&CALL.as_bytes()[(at + cut).min(CALL.len())..]);
            for candidate in [&line, &junk] {
                if read_request(candidate).is_some() {
                    prop_assert!(serde_json::from_slice::<Value>(candidate).is_ok());
                }
            }
        }
    }
}
