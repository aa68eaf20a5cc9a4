//! One server tool as a tine [`Tool`]: `mcp__SERVER__TOOL`, the server's description and input
//! schema, a call through rmcp bounded by `MCP_TOOL_TIMEOUT` and the call's cancellation.
//!
//! Permissions: every call needs approval unless a rule allows it (`mcp__SERVER`,
//! `mcp__SERVER__*`, `mcp__SERVER__TOOL`): the tool's own verdict is `Passthrough`. A tool whose
//! `readOnlyHint` is true calls itself read-only, as Claude Code counts it: plan mode and the
//! read-only agents let it run. The permission engine still asks for it (a server's hint is
//! only the server's word, so it never skips approval), and it may run beside other such calls.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value};
use tine_permissions::{PermissionTarget, ToolVerdict};
use tine_tools::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};

use crate::names::tool_name;
use crate::output::{OutputLimits, call_result_output};
use crate::slot::ServerSlot;

/// Claude Code's cap on an MCP tool's description.
pub const MAX_DESCRIPTION_CHARS: usize = 2048;

/// One tool of an MCP server, as a [`tine_tools::Tool`] named `mcp__SERVER__TOOL`.
pub struct McpTool {
    name: String,
    /// The tool's name on its server.
    remote: String,
    description: String,
    schema: Value,
    read_only_hint: bool,
    destructive_hint: bool,
    server: Arc<ServerSlot>,
    timeout: Duration,
    limits: OutputLimits,
}

impl McpTool {
    pub(crate) fn new(
        server: Arc<ServerSlot>,
        tool: &rmcp::model::Tool,
        timeout: Duration,
        limits: OutputLimits,
    ) -> Self {
        let mut description = tool.description.as_deref().unwrap_or_default().to_owned();
        if description.chars().count() > MAX_DESCRIPTION_CHARS {
            description = description.chars().take(MAX_DESCRIPTION_CHARS).collect();
            description.push_str("… [description truncated]");
        }
        let mut schema = Value::Object(tool.input_schema.as_ref().clone());
        // The Messages API needs an object schema; some servers omit `type`.
        if let Value::Object(map) = &mut schema
            && !map.contains_key("type")
        {
            map.insert("type".into(), Value::String("object".into()));
        }
        let hints = tool.annotations.as_ref();
        McpTool {
            name: tool_name(server.name(), &tool.name),
            remote: tool.name.to_string(),
            description,
            schema,
            read_only_hint: hints.and_then(|h| h.read_only_hint) == Some(true),
            destructive_hint: hints.and_then(|h| h.destructive_hint) == Some(true),
            server,
            timeout,
            limits,
        }
    }

    /// The server this tool belongs to.
    pub fn server_name(&self) -> &str {
        self.server.name()
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let live = match self.server.live() {
            Ok(live) => live,
            Err(why) => return Ok(ToolOutput::error(why)),
        };
        let arguments: Map<String, Value> = match input {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::InvalidInput(format!(
                    "the input must be an object, not {other}"
                )));
            }
        };
        let params = CallToolRequestParams::new(self.remote.clone()).with_arguments(arguments);
        // Dropping the request (timeout, cancellation) sends `notifications/cancelled`.
        let result = tokio::select! {
            result = live.peer.call_tool(params) => result,
            () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled),
            () = tokio::time::sleep(self.timeout) => {
                return Ok(ToolOutput::error(format!(
                    "MCP tool {} did not answer within {} ms (MCP_TOOL_TIMEOUT); the call was cancelled",
                    self.name,
                    self.timeout.as_millis()
                )));
            }
        };
        match result {
            Ok(result) => {
                let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                let output =
                    call_result_output(&value, self.server.name(), &self.remote, &self.limits);
                Ok(output.with_summary(format!("{} answered", self.name)))
            }
            Err(rmcp::ServiceError::McpError(error)) => Ok(ToolOutput::error(format!(
                "MCP server {} refused the call: {} (code {})",
                self.server.name(),
                error.message,
                error.code.0
            ))),
            Err(error) => {
                // A broken connection: say so the same way as for a server known to be gone.
                let why = match self.server.live() {
                    Ok(_) => format!(
                        "MCP server {} is not running: {error}. The user can restart it with /mcp.",
                        self.server.name()
                    ),
                    Err(why) => why,
                };
                Ok(ToolOutput::error(why))
            }
        }
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(self.run(input, ctx))
    }

    fn permission_target(&self, _input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Other { content: None }
    }

    fn check_permissions(&self, _input: &Value, _ctx: &ToolContext) -> ToolVerdict {
        ToolVerdict::Passthrough
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        self.read_only_hint
    }

    fn is_destructive(&self, _input: &Value) -> bool {
        self.destructive_hint
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        self.read_only_hint
    }

    fn render_call(&self, input: &Value) -> String {
        format!("{} ({} MCP)({input})", self.remote, self.server.name())
    }
}
