//! WebSearch, the API's server tool: the server runs the searches, so nobody can be asked
//! about one. It is offered (appended to the tool array once, at start, so every request and
//! fork sends the same bytes) only when the permission rules already allow `WebSearch`: an
//! allow rule (`permissions.allow`, `--allowedTools WebSearch`) or bypassPermissions; a deny
//! rule keeps it out. Its `server_tool_use` and `web_search_tool_result` blocks stay in the
//! history as the API sent them.

use serde_json::{Value, json};
use tine_api_client::ToolArray;
use tine_permissions::{
    PermissionContext, PermissionDecision, PermissionQuery, PermissionTarget, ToolVerdict,
};

/// The name permission rules use.
pub(crate) const WEB_SEARCH_RULE: &str = "WebSearch";

/// Searches one request may make (Claude Code's figure).
pub(crate) const WEB_SEARCH_MAX_USES: u32 = 8;

/// The server tool's definition.
pub(crate) fn web_search_tool() -> Value {
    json!({
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": WEB_SEARCH_MAX_USES,
    })
}

/// `tools` with the web search appended when the rules allow `WebSearch`.
pub(crate) fn offer(tools: ToolArray, permissions: &PermissionContext) -> ToolArray {
    let request = PermissionQuery {
        tool: WEB_SEARCH_RULE,
        target: &PermissionTarget::Other { content: None },
        verdict: &ToolVerdict::Passthrough,
        // A search reaches outside the machine: only a rule or the mode allows it.
        is_read_only: false,
    };
    match permissions.decide(&request) {
        PermissionDecision::Allow { .. } => tools.with_server_tools(vec![web_search_tool()]),
        PermissionDecision::Ask { .. } | PermissionDecision::Deny { .. } => tools,
    }
}
