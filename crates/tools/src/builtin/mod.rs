//! The built-in tools: Read, Write, Edit, NotebookEdit, Bash (with BashOutput and KillShell for
//! background runs), Glob, Grep, TodoWrite, WebFetch, ExitPlanMode. Each is a unit struct implementing [`crate::Tool`].

pub mod background;
pub mod bash;
pub mod bash_output;
pub mod edit;
pub mod exit_plan_mode;
pub(crate) mod files;
pub mod glob;
pub mod grep;
pub mod html;
pub(crate) mod image_size;
pub(crate) mod input;
pub mod notebook;
pub mod read;
pub mod read_media;
pub(crate) mod shell;
pub mod todo;
pub(crate) mod walk;
pub mod web_fetch;
pub mod write;

use std::sync::Arc;

use crate::tool::Tool;

/// Every built-in tool, in no particular order (the pool sorts them).
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(bash::BashTool),
        Arc::new(bash_output::BashOutputTool),
        Arc::new(bash_output::KillShellTool),
        Arc::new(edit::EditTool),
        Arc::new(exit_plan_mode::ExitPlanModeTool),
        Arc::new(glob::GlobTool),
        Arc::new(grep::GrepTool),
        Arc::new(notebook::NotebookEditTool),
        Arc::new(read::ReadTool),
        Arc::new(todo::TodoWriteTool),
        Arc::new(web_fetch::WebFetchTool),
        Arc::new(write::WriteTool),
    ]
}
