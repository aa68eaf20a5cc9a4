//! What the loop's suites share: the loop's params on a scripted client.

use std::sync::Arc;

use tine_api_client::{ModelClient, ScriptedClient, ToolDefinition};
use tine_query_loop::{QueryParams, RequestTemplate, system_prompt_blocks};
use tine_tools::builtin_tools;
use tine_tools::{Tool, ToolContext};

/// The loop's params for a run in `dir` on `client`: the built-in tools, a short system prompt.
pub(super) fn params(client: &ScriptedClient, dir: &std::path::Path) -> QueryParams {
    let tools: Vec<Arc<dyn Tool>> = builtin_tools();
    let defs: Vec<ToolDefinition> = tine_query_loop::tool_definitions(&tools).to_vec();
    let template = RequestTemplate {
        model: "claude-sonnet-4-5".into(),
        system: Arc::new(system_prompt_blocks("You are tine.")),
        tools: defs.into(),
        thinking: None,
        skip_cache_write: false,
        replacements: None,
        effort: None,
    };
    let client: Arc<dyn ModelClient> = Arc::new(client.clone());
    QueryParams::new(client, template, Arc::from(tools), ToolContext::new(dir))
}
