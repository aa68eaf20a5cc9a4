//! tine-tools: what the model acts through. Modules in reading order (private but `sandbox`, the
//! launcher's protocol the cli speaks; the items re-exported at the root are the API):
//!
//! - `tool`: the `Tool` trait, `ToolOutput`, `ToolError`, and [`run_tool`], how the loop runs
//!   one call (validate against the schema, call, errors become `is_error` results).
//! - `schema`: the small JSON Schema validator behind that check.
//! - `context`: `ToolContext`, what a call runs in (cwd, caches, cancellation, progress).
//! - `extensions`: tool-specific state on the context by type (todos, background shells,
//!   the WebFetch summarizer), so the context knows none of them.
//! - `display`: what a result carries for UIs (diff, todos, shell run, a sub-agent's totals)
//!   and how a call reads to people ([`call_summary`]).
//! - `activity`: what the Agent tool reports of the sub-agent it runs ([`SubagentProgress`]).
//! - [`sandbox`]: the OS sandbox Bash runs under when the session enabled one (its policy and
//!   the launcher's argument protocol; the cli applies it).
//! - `file_state`: the LRU file-state cache behind Edit and Write's read-before-write rule.
//! - `read_listener`: who is told about the files Read shows (Magic Docs).
//! - `editor_files`: the editor's files (ACP's `fs/*` methods), which Read, Write and Edit go
//!   through when the context holds one; `editor_terminal`: the editor's terminal (ACP's
//!   `terminal/*`), where Bash runs a foreground command when the context holds one.
//! - `orphans`: no child of tine outlives it, even after `kill -9` (parent-death signal, a
//!   watchdog, and a reaper of dead sessions' records under `TINE_HOME/run`).
//! - `builtin`: Read (text, images, PDFs, notebooks), Write, Edit, NotebookEdit, Bash, Glob,
//!   Grep, TodoWrite, WebFetch, ExitPlanMode.
//! - `pool`: the tool pool, sorted, deduplicated and serialized once for the prompt cache.
//! - `tool_search`: deferred tools (the Messages API's tool search): ToolSearch, the array
//!   split into what is sent and the catalog, the reminder naming them.
//!
//! What a call touches and a tool's own verdict (`PermissionTarget`, `ToolVerdict`), the
//! permission engine and bash analysis are `tine-permissions`'s, one layer down.
//!
//! # Example
//!
//! Run one built-in tool the way the loop does (input checked against its schema, errors
//! turned into `is_error` results):
//!
//! ```
//! use serde_json::json;
//! use tine_tools::{ReadTool, Tool, ToolContext, run_tool};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("notes.md"), "first\nsecond\n")?;
//! let ctx = ToolContext::new(dir.path());
//!
//! let output = run_tool(&ReadTool, json!({"file_path": "notes.md"}), &ctx).await;
//! assert!(!output.is_error);
//! assert!(output.content.contains("second"));
//!
//! let missing = run_tool(&ReadTool, json!({"file_path": "nope.md"}), &ctx).await;
//! assert!(missing.is_error);
//! # Ok::<(), std::io::Error>(())
//! # }).unwrap();
//! ```
//!
//! Whether a call may run at all is the permission engine's decision ([`PermissionTarget`]
//! and [`ToolVerdict`] are what a tool tells it). `examples/run_tool.rs` runs Write, Bash and
//! Read behind it in two permission modes (`cargo run -p tine-tools --example run_tool`).
//!
//! # Types from lower crates
//!
//! Signatures use [`tine_api_client`]'s [`ToolDefinition`](tine_api_client::ToolDefinition) and
//! [`ToolArray`](tine_api_client::ToolArray) (what the pool serializes), and
//! [`tine_permissions`]'s [`PermissionTarget`] and [`ToolVerdict`], re-exported here.
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod activity;
mod builtin;
mod context;
mod display;
mod editor_files;
mod editor_terminal;
mod extensions;
mod file_state;
mod landlock;
mod orphans;
mod pool;
mod read_listener;
pub mod sandbox;
mod schema;
mod tool;
mod tool_search;

pub use activity::{
    RECENT_SUBAGENT_CALLS, SubagentActivity, SubagentCall, SubagentProgress, SubagentStep,
    SubagentTotals,
};
pub use builtin::background::{BackgroundTasks, TaskReport, TaskStatus};
pub use builtin::bash::BashTool;
pub use builtin::bash_output::{BashOutputTool, KillShellTool};
pub use builtin::builtin_tools;
pub use builtin::edit::EditTool;
pub use builtin::exit_plan_mode::{EXIT_PLAN_MODE, ExitPlanModeTool, PLAN_APPROVED};
pub use builtin::glob::GlobTool;
pub use builtin::grep::GrepTool;
pub use builtin::notebook::NotebookEditTool;
pub use builtin::read::ReadTool;
pub use builtin::shell::CREDENTIAL_ENV_VARS;
pub use builtin::shell::kill_tool_processes;
// Other crates' child processes (MCP servers) join the groups `kill_tool_processes` ends.
pub use builtin::shell::track_group as track_tool_process_group;
pub use builtin::todo::{TodoList, TodoWriteTool};
pub use builtin::walk::project_paths;
pub use builtin::web_fetch::{
    MAX_CONTENT_CHARS as WEB_FETCH_MAX_CONTENT_CHARS, SummarizerError, WebFetchSummarizer,
    WebFetchTool, WebSummarizer, WebSummaryRequest,
};
pub use builtin::write::WriteTool;
pub use context::{ChannelProgress, NoProgress, ProgressSink, ToolContext, ToolProgress};
pub use display::{TodoItem, TodoStatus, ToolDisplay, call_summary};
pub use editor_files::{EditorFiles, EditorFs, EditorFuture};
pub use editor_terminal::{EditorTerm, EditorTerminal, TerminalEnding, TerminalRun};
pub use extensions::ContextExtension;
pub use file_state::{FILE_STATE_CAPACITY, FileState, FileStateCache, Staleness, hash_content};
pub use orphans::{
    SESSION_MARKER_VAR, WATCHDOG_SUBCOMMAND, guard_child, install_process_records, watchdog_main,
};
pub use pool::{ToolPool, definition_of};
pub use read_listener::{FileReadListener, HEAD_LINES, OnFileRead};
pub use sandbox::{BashSandbox, SandboxPolicy};
pub use schema::{SchemaViolation, validate};
pub use tool::{
    MediaKind, Tool, ToolError, ToolFuture, ToolMedia, ToolOutput, parse_input, run_tool,
};
pub use tool_search::{
    DEFAULT_MAX_RESULTS as TOOL_SEARCH_DEFAULT_MAX_RESULTS, DEFERRED_PLACEHOLDER,
    NO_MATCHING_TOOLS, RARELY_USED_BUILTINS, TOOL_LOADED, TOOL_SEARCH, ToolSearchTool, defer_tools,
    deferred_tools_reminder, placeholder_definition, search as search_tools, unloaded_call_error,
};
// The vocabulary of `Tool::permission_target` and `Tool::check_permissions`, so a tool can be
// written against this crate alone.
pub use tine_permissions::{PermissionTarget, ToolVerdict};
