//! Helpers shared by the suite: a context rooted in a temporary directory.

use std::path::Path;

use serde_json::Value;
use tine_tools::{Tool, ToolContext, ToolOutput, run_tool};

/// A context whose cwd is `dir`.
pub(super) fn context(dir: &Path) -> ToolContext {
    ToolContext::new(dir.canonicalize().unwrap())
}

/// Runs `tool` on `input` the way the loop does.
pub(super) async fn run(tool: &dyn Tool, input: Value, ctx: &ToolContext) -> ToolOutput {
    run_tool(tool, input, ctx).await
}
