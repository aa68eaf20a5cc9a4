//! The small MCP server the tests run, built on rmcp's server side (feature `test-server` only):
//! over stdio as the `tine-mcp-test-server` binary, over streamable HTTP in-process, and as an
//! Agent SDK app's in-process server behind an [`SdkMcpRelay`] ([`InProcessRelay`]).
//!
//! Tools: `echo {text}` (read-only hint), `add {a, b}`, `slow {ms}`, `crash` (the process exits
//! mid-call when `exit_on_crash`), `big {lines}` (a large result), `image`, `ask` (an elicitation), `fail` (an
//! `isError` result). One text resource, `test://readme`, unless `resources` is off. With
//! `permission_prompt`, also `approve {tool_name, input, tool_use_id}`, a
//! `--permission-prompt-tool`: it denies a Bash command containing `deny-me` and allows any
//! other call, a Bash command extended with `&& touch approved-<tool_use_id>`. With
//! `extra_tools` N, also `tool_000` .. `tool_N-1` ([`extra_tool_definition`]), each about as big
//! as a real server's tool (~1.2 KB: a paragraph and five described parameters), answering
//! `tool_NNN ok: <arguments>`: a session with many tools (tool search, its benchmark).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use futures::channel::mpsc;
use futures::future::BoxFuture;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InitializeResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig,
};
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use tokio::sync::oneshot;

use crate::SdkMcpRelay;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// How the test server behaves.
#[derive(Debug, Clone)]
pub struct TestServer {
    /// `crash` exits the process (stdio); otherwise it answers an error.
    pub exit_on_crash: bool,
    /// Offer the resources capability.
    pub resources: bool,
    /// Offer the `approve` tool (a permission prompt tool).
    pub permission_prompt: bool,
    /// How many generated tools (`tool_000`, ...) to offer besides.
    pub extra_tools: usize,
}

impl Default for TestServer {
    fn default() -> Self {
        TestServer {
            exit_on_crash: true,
            resources: true,
            permission_prompt: false,
            extra_tools: 0,
        }
    }
}

const SUBJECTS: [&str; 8] = [
    "issue",
    "pull request",
    "branch",
    "deployment",
    "ticket",
    "channel",
    "invoice",
    "dashboard",
];
const VERBS: [&str; 6] = [
    "creates", "lists", "updates", "closes", "searches", "archives",
];

/// Generated tool `i`: `tool_NNN`, a description naming what it does to which subject, and
/// five described parameters, about 1.2 KB in all, like a real server's tool.
pub fn extra_tool_definition(i: usize) -> Value {
    let subject = SUBJECTS[i % SUBJECTS.len()];
    let verb = VERBS[(i / SUBJECTS.len()) % VERBS.len()];
    let described = |kind: &str, text: String| json!({"type": kind, "description": text});
    json!({
        "name": format!("tool_{i:03}"),
        "description": format!(
            "{verb} a {subject} in the workspace (generated test tool {i}). Use it when the \
             task names a {subject} and the person wants it {verb}; it answers with what it \
             did. Every call is recorded in the audit log of the workspace, so prefer one call \
             with several labels over many calls. Fails when the {subject} does not exist or \
             the caller may not change it."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": described("string", format!("The {subject}'s identifier, as shown in its URL or returned by a listing tool.")),
                "query": described("string", format!("Free text to match against the {subject}'s title and body; leave empty to match every one.")),
                "limit": described("integer", "How many results to return at most, between 1 and 100; 20 when absent.".to_owned()),
                "include_archived": described("boolean", format!("Whether archived {subject}s count too; false when absent.")),
                "labels": {"type": "array", "items": {"type": "string"}, "description": format!("Labels the {subject} must carry, all of them; none when absent.")}
            },
            "required": ["id"]
        }
    })
}

fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn text_result(text: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    let text: String = text.into();
    Ok(CallToolResponse::Complete(from_json::<CallToolResult>(
        json!({"content": [{"type": "text", "text": text}]}),
    )?))
}

/// The tools, in a deliberately unsorted order (tine sorts them).
pub fn tool_definitions() -> Value {
    let object = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required});
    json!([
        {"name": "slow", "description": "Sleeps `ms` milliseconds, then answers.",
         "inputSchema": object(json!({"ms": {"type": "integer"}}), json!(["ms"]))},
        {"name": "echo", "description": "Answers its `text`.",
         "inputSchema": object(json!({"text": {"type": "string"}}), json!(["text"])),
         "annotations": {"readOnlyHint": true}},
        {"name": "add", "description": "Adds two numbers.",
         "inputSchema": object(json!({"a": {"type": "number"}, "b": {"type": "number"}}), json!(["a", "b"]))},
        {"name": "crash", "description": "Makes the server exit mid-call.",
         "inputSchema": {"type": "object", "properties": {}}},
        {"name": "big", "description": "Answers `lines` numbered lines.",
         "inputSchema": object(json!({"lines": {"type": "integer"}}), json!(["lines"]))},
        {"name": "image", "description": "Answers a caption and a tiny PNG.",
         "inputSchema": {"type": "object", "properties": {}}},
        {"name": "fail", "description": "Answers an error result.",
         "inputSchema": {"type": "object", "properties": {}}},
        {"name": "ask", "description": "Asks the user which branch (elicitation), answers what came back.",
         "inputSchema": {"type": "object", "properties": {}}}
    ])
}

/// The `approve` tool's answer.
fn approve(args: &Value) -> Value {
    let tool = args["tool_name"].as_str().unwrap_or_default();
    let id = args["tool_use_id"].as_str().unwrap_or_default();
    let mut input = args["input"].clone();
    let command = input["command"].as_str().map(str::to_owned);
    match command {
        Some(command) if command.contains("deny-me") => json!({
            "behavior": "deny",
            "message": format!("the approve tool refused the {tool} call {id}"),
        }),
        Some(command) if tool == "Bash" => {
            input["command"] = json!(format!("{command} && touch approved-{id}"));
            json!({"behavior": "allow", "updatedInput": input})
        }
        _ => json!({"behavior": "allow", "updatedInput": input}),
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = json!({"tools": {}});
        if self.resources {
            capabilities["resources"] = json!({});
        }
        let capabilities: ServerCapabilities =
            serde_json::from_value(capabilities).unwrap_or_default();
        InitializeResult::new(capabilities)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = tool_definitions();
        if let Some(list) = tools.as_array_mut() {
            list.extend((0..self.extra_tools).map(extra_tool_definition));
        }
        if self.permission_prompt
            && let Some(list) = tools.as_array_mut()
        {
            list.push(json!({"name": "approve",
                "description": "Answers a permission question (--permission-prompt-tool).",
                "inputSchema": {"type": "object", "properties": {
                    "tool_name": {"type": "string"}, "input": {"type": "object"},
                    "tool_use_id": {"type": "string"}}, "required": ["tool_name", "input"]}}));
        }
        from_json(json!({"tools": tools}))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        match request.name.as_ref() {
            "echo" => text_result(args["text"].as_str().unwrap_or_default()),
            "approve" if self.permission_prompt => text_result(approve(&args).to_string()),
            "add" => {
                let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                text_result(sum.to_string())
            }
            "slow" => {
                let ms = args["ms"].as_u64().unwrap_or(0);
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                text_result(format!("slept {ms} ms"))
            }
            "crash" if self.exit_on_crash => std::process::exit(3),
            "crash" => Err(ErrorData::internal_error("crash requested", None)),
            "big" => {
                let lines = args["lines"].as_u64().unwrap_or(0);
                let text: String = (0..lines).map(|i| format!("line {i:06}\n")).collect();
                text_result(text)
            }
            "image" => Ok(CallToolResponse::Complete(from_json(json!({"content": [
                {"type": "text", "text": "a dot"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
            ]}))?)),
            "fail" => Ok(CallToolResponse::Complete(from_json(json!({
                "content": [{"type": "text", "text": "it failed"}], "isError": true
            }))?)),
            "ask" => {
                let params = from_json(json!({
                    "message": "Which branch?",
                    "requestedSchema": {"type": "object", "properties": {"branch": {"type": "string"}}}
                }))?;
                let answer = match context.peer.create_elicitation(params).await {
                    Ok(result) => {
                        let value = serde_json::to_value(&result).unwrap_or_default();
                        format!(
                            "{}:{}",
                            value["action"].as_str().unwrap_or("?"),
                            value["content"]
                        )
                    }
                    Err(error) => format!("refused:{error}"),
                };
                text_result(answer)
            }
            extra
                if extra
                    .strip_prefix("tool_")
                    .and_then(|n| n.parse::<usize>().ok())
                    .is_some_and(|n| n < self.extra_tools) =>
            {
                text_result(format!("{extra} ok: {args}"))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        from_json(json!({"resources": [
            {"uri": "test://readme", "name": "readme", "mimeType": "text/plain"}
        ]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != "test://readme" {
            return Err(ErrorData::resource_not_found(request.uri.clone(), None));
        }
        Ok(ReadResourceResponse::Complete(from_json::<
            ReadResourceResult,
        >(
            json!({"contents": [{"uri": "test://readme", "text": "hello resource"}]}),
        )?))
    }
}

/// Serves `server` over streamable HTTP on 127.0.0.1 (a free port) at `/mcp`, until `stop`.
pub async fn serve_http(
    server: TestServer,
    stop: CancellationToken,
) -> std::io::Result<SocketAddr> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    });
    Ok(addr)
}

/// The requests sent to the in-process server and not answered yet, by their id's JSON text.
type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>;

/// The test server inside the test process, reached the way the Agent SDK's bridge reaches an
/// app's in-process server: each JSON-RPC message relayed goes to one rmcp server session over
/// in-memory channels; a request resolves with the server's response, anything else with the
/// SDK's acknowledgement (`{"jsonrpc": "2.0", "result": {}}`). As in the SDK, a server name it
/// does not hold is answered with a JSON-RPC error, and the server's own requests to the
/// client are refused. It records every message it was given.
pub struct InProcessRelay {
    name: String,
    to_server: mpsc::UnboundedSender<ClientJsonRpcMessage>,
    pending: Pending,
    received: Arc<Mutex<Vec<(String, Value)>>>,
}

impl InProcessRelay {
    /// Serves `server` as the app's server `name` (its key in `mcpServers`).
    pub fn start(server: TestServer, name: &str) -> Self {
        let (to_server, from_client) = mpsc::unbounded::<ClientJsonRpcMessage>();
        let (to_client, mut from_server) = mpsc::unbounded::<ServerJsonRpcMessage>();
        tokio::spawn(async move {
            if let Ok(running) = server.serve((to_client, from_client)).await {
                let _ = running.waiting().await;
            }
        });
        let pending = Pending::default();
        let answered = Arc::clone(&pending);
        let refusals = to_server.clone();
        tokio::spawn(async move {
            while let Some(message) = from_server.next().await {
                match message {
                    JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {
                        let value = serde_json::to_value(&message).unwrap_or_default();
                        let waiter = answered
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .remove(&value["id"].to_string());
                        if let Some(waiter) = waiter {
                            let _ = waiter.send(value);
                        }
                    }
                    JsonRpcMessage::Request(request) => {
                        let refusal = ErrorData::new(
                            ErrorCode::METHOD_NOT_FOUND,
                            "requests to the client are not supported for SDK servers",
                            None,
                        );
                        let _ = refusals
                            .unbounded_send(JsonRpcMessage::error(refusal, Some(request.id)));
                    }
                    JsonRpcMessage::Notification(_) => {}
                }
            }
        });
        InProcessRelay {
            name: name.to_owned(),
            to_server,
            pending,
            received: Arc::default(),
        }
    }

    /// Every message relayed so far, with the server it was for.
    pub fn received(&self) -> Vec<(String, Value)> {
        self.received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The methods relayed so far (`"a response"` for a response), in order.
    pub fn methods(&self) -> Vec<String> {
        self.received()
            .iter()
            .map(|(_, m)| m["method"].as_str().unwrap_or("a response").to_owned())
            .collect()
    }
}

impl SdkMcpRelay for InProcessRelay {
    fn send(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>> {
        self.received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((server.to_owned(), message.clone()));
        let error = |code: i32, text: String| json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": code, "message": text}});
        if server != self.name {
            let answer = error(-32601, format!("Server '{server}' not found"));
            return Box::pin(std::future::ready(Ok(answer)));
        }
        let parsed = match serde_json::from_value::<ClientJsonRpcMessage>(message.clone()) {
            Ok(parsed) => parsed,
            Err(e) => return Box::pin(std::future::ready(Ok(error(-32603, e.to_string())))),
        };
        let waiter = matches!(parsed, JsonRpcMessage::Request(_)).then(|| {
            let (tx, rx) = oneshot::channel();
            self.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(message["id"].to_string(), tx);
            rx
        });
        if self.to_server.unbounded_send(parsed).is_err() {
            return Box::pin(std::future::ready(Err(format!(
                "SDK MCP server '{server}' is not running"
            ))));
        }
        let server = server.to_owned();
        Box::pin(async move {
            match waiter {
                Some(rx) => rx
                    .await
                    .map_err(|_| format!("SDK MCP server '{server}' session closed")),
                None => Ok(json!({"jsonrpc": "2.0", "result": {}})),
            }
        })
    }
}
