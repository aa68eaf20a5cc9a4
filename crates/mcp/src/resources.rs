//! Claude Code's two resource tools: `ListMcpResourcesTool {server?}` lists what the connected
//! servers offer, `ReadMcpResourceTool {server, uri}` reads one. Offered only when a connected
//! server has the resources capability. Both only read, so they run without approval, like
//! Claude Code's.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ReadResourceRequestParams;
use serde::Deserialize;
use serde_json::{Value, json};
use tine_permissions::PermissionTarget;
use tine_tools::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput, parse_input};

use crate::output::{OutputLimits, limit_output, render_blocks};
use crate::slot::ServerSlot;

/// The name of the tool listing the servers' resources.
pub const LIST_RESOURCES_TOOL: &str = "ListMcpResourcesTool";
/// The name of the tool reading one resource.
pub const READ_RESOURCE_TOOL: &str = "ReadMcpResourceTool";

/// What the resource tools reach: the session's servers, the tool timeout, the output limits.
#[derive(Clone)]
pub(crate) struct ResourceAccess {
    pub(crate) slots: Arc<[Arc<ServerSlot>]>,
    pub(crate) timeout: Duration,
    pub(crate) limits: OutputLimits,
}

/// Lists the resources of the connected servers (`resources/list`).
pub struct ListMcpResourcesTool {
    inner: ResourceAccess,
}

impl ListMcpResourcesTool {
    pub(crate) fn new(inner: ResourceAccess) -> Self {
        Self { inner }
    }
}

#[derive(Deserialize)]
struct ListInput {
    server: Option<String>,
}

#[derive(Deserialize)]
struct ReadInput {
    server: String,
    uri: String,
}

/// Waits for `future` unless the call is cancelled or the tool timeout passes.
async fn bounded<T>(
    inner: &ResourceAccess,
    ctx: &ToolContext,
    future: impl Future<Output = Result<T, rmcp::ServiceError>>,
) -> Result<Result<T, String>, ToolError> {
    tokio::select! {
        result = future => Ok(result.map_err(|e| e.to_string())),
        () = ctx.cancellation().cancelled() => Err(ToolError::Cancelled),
        () = tokio::time::sleep(inner.timeout) => Ok(Err(format!(
            "no answer within {} ms (MCP_TOOL_TIMEOUT)",
            inner.timeout.as_millis()
        ))),
    }
}

impl Tool for ListMcpResourcesTool {
    fn name(&self) -> &str {
        LIST_RESOURCES_TOOL
    }

    fn description(&self) -> String {
        "Lists the resources (files, records, documents) that connected MCP servers offer, each \
         with its server, uri, name, description and mimeType. Give `server` to list one server's \
         resources only. Read one with ReadMcpResourceTool."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "Only this server's resources"}
            },
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: ListInput = parse_input(input)?;
            if let Some(server) = &input.server
                && !self.inner.slots.iter().any(|s| s.name() == server)
            {
                return Ok(ToolOutput::error(format!(
                    "no MCP server named `{server}`; the servers are: {}",
                    self.inner
                        .slots
                        .iter()
                        .map(|s| s.name().to_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            let mut listed = Vec::new();
            let mut problems = Vec::new();
            for slot in self.inner.slots.iter() {
                if input.server.as_deref().is_some_and(|s| s != slot.name()) {
                    continue;
                }
                let live = match slot.live() {
                    Ok(live) if live.has_resources => live,
                    Ok(_) => continue,
                    Err(why) => {
                        if input.server.is_some() {
                            problems.push(why);
                        }
                        continue;
                    }
                };
                match bounded(&self.inner, ctx, live.peer.list_all_resources()).await? {
                    Ok(resources) => {
                        for resource in resources {
                            let mut value = serde_json::to_value(&resource).unwrap_or(Value::Null);
                            if let Value::Object(map) = &mut value {
                                map.insert("server".into(), json!(slot.name()));
                            }
                            listed.push(value);
                        }
                    }
                    Err(why) => problems.push(format!("{}: {why}", slot.name())),
                }
            }
            if listed.is_empty() && !problems.is_empty() {
                return Ok(ToolOutput::error(problems.join("\n")));
            }
            let mut text = serde_json::to_string_pretty(&listed).unwrap_or_default();
            for problem in problems {
                text.push_str(&format!("\n(not listed: {problem})"));
            }
            let text = limit_output(text, "resources", "list", &self.inner.limits);
            Ok(ToolOutput::text(text).with_summary(format!("{} resources", listed.len())))
        })
    }

    fn permission_target(&self, _input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Other { content: None }
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }
}

/// Reads one resource of a server (`resources/read`).
pub struct ReadMcpResourceTool {
    inner: ResourceAccess,
}

impl ReadMcpResourceTool {
    pub(crate) fn new(inner: ResourceAccess) -> Self {
        Self { inner }
    }
}

impl Tool for ReadMcpResourceTool {
    fn name(&self) -> &str {
        READ_RESOURCE_TOOL
    }

    fn description(&self) -> String {
        "Reads one resource of an MCP server by its URI (find them with ListMcpResourcesTool)."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "The MCP server's name"},
                "uri": {"type": "string", "description": "The resource's URI"}
            },
            "required": ["server", "uri"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: ReadInput = parse_input(input)?;
            let Some(slot) = self.inner.slots.iter().find(|s| s.name() == input.server) else {
                return Ok(ToolOutput::error(format!(
                    "no MCP server named `{}`",
                    input.server
                )));
            };
            let live = match slot.live() {
                Ok(live) => live,
                Err(why) => return Ok(ToolOutput::error(why)),
            };
            if !live.has_resources {
                return Ok(ToolOutput::error(format!(
                    "MCP server {} offers no resources",
                    input.server
                )));
            }
            let params = ReadResourceRequestParams::new(input.uri.clone());
            match bounded(&self.inner, ctx, live.peer.read_resource(params)).await? {
                Ok(result) => {
                    let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                    let contents = value
                        .get("contents")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or_default();
                    let text = limit_output(
                        render_blocks(contents),
                        slot.name(),
                        "resource",
                        &self.inner.limits,
                    );
                    Ok(ToolOutput::text(text).with_summary(format!("Read {}", input.uri)))
                }
                Err(why) => Ok(ToolOutput::error(format!(
                    "MCP server {} could not read {}: {why}",
                    input.server, input.uri
                ))),
            }
        })
    }

    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Other {
            content: input.get("uri").and_then(Value::as_str).map(str::to_owned),
        }
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }
}
