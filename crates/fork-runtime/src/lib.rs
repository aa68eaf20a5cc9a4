//! tine-fork-runtime: background agents that run on the parent's prompt cache (seed 000).
//!
//! Modules in reading order (private: the items re-exported at the root are the API):
//! - `cache_safe`: [`CacheSafeParams`], the five parts of the cache key, and the per-session
//!   [`CacheSafeSlot`] they are saved into after each main-thread turn.
//! - `subagent`: [`create_subagent_context`], a fork's isolated context (table 4.2 of seed 000).
//! - `fork`: [`run_forked_agent`], the query loop on the parent's prefix plus the fork's prompt.
//! - `pipeline`: the [`StopHookPipeline`], which saves the params, starts [`BackgroundJob`]s
//!   and runs the user's stop hooks.
//! - `job_outcome`: [`JobOutcome`], what a job reports: a line for people and its typed
//!   [`JobDetail`].
//! - `coalesce`: [`CoalescingJob`], a background job run one at a time plus a trailing run
//!   for the triggers that came meanwhile.
//! - `fork_policy`: [`ForkPolicy`], the `can_use_tool` of every fork that cannot ask: which
//!   tools, read-only or not, where it may write, judged by the permission engine in a
//!   [`ForkScope`] or by another checker.
//! - `side_query`: [`side_query()`], one call with no loop and no tools,
//!   optionally answering JSON validated against a schema; usage per query source in a
//!   [`UsageLedger`]; [`SideModel`], a small model asked that way.
//! - `cache_break`: the [`CacheBreakDetector`], a `RequestMonitor` that names the part of
//!   the cache key ([`RequestFingerprint`], hashes only) that changed when a cache read fell short.
//! - `web_summary`: [`SideQuerySummarizer`], WebFetch's summarizer on a small model.
//! - `fork_child`: fork children of the turn in progress (seed 002):
//!   [`build_forked_messages`], the placeholder results, the boilerplate, the recursion guard.
//! - `agents`: typed agents: the built-ins and `.tine/agents/*.md` and the like.
//! - `tasks`: the [`TaskRegistry`]: task ids, output files under `TINE_HOME/tasks/`,
//!   notifications of finished background tasks.
//! - `worktree`: `isolation: worktree`, a typed agent's own git worktree
//!   ([`AgentWorktree`]), kept with its branch when the agent changed something.
//! - `agent_stop`: the [`SubagentStopHook`] call point and who a sub-agent is
//!   ([`SubagentIdentity`]) for it.
//! - `agent_runtime`: [`AgentRuntime`], the session's `SubagentSpawner` (fork path, typed
//!   agents, foreground and background); `agent_report`: what the parent and the output file
//!   read about an agent; `agent_activity`: what it has done so far, told as it happens (its
//!   task's row, and the progress lines under a foreground agent's call).
//! - `agent_tool`: the Agent, TaskOutput and TaskStop tools.
//!
//! # Example
//!
//! A fork is the parent's request as it was ([`CacheSafeParams`]: system prompt, tool array,
//! model, messages) plus a prompt of its own, run by [`run_forked_agent`] on a
//! [`ParentContext`]; because the prefix is byte-identical, its first request reads the
//! parent's prompt cache. `examples/fork_on_parent_cache.rs` shows it on the bundled simulator
//! with the cache figures (`cargo run -p tine-fork-runtime --example fork_on_parent_cache`).
//! The smallest use of the crate, a [`side_query()`] with a JSON schema:
//!
//! ```
//! use std::sync::Arc;
//!
//! use serde_json::json;
//! use tine_api_client::{Message, ScriptedClient};
//! use tine_fork_runtime::{SideQuery, side_query};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let client = ScriptedClient::new();
//! client.push_message(ScriptedClient::text_reply(r#"{"language": "Rust"}"#));
//!
//! let query = SideQuery::new("claude-haiku-4-5", "example", vec![Message::user("Which language?")])
//!     .with_schema(json!({
//!         "type": "object",
//!         "properties": {"language": {"type": "string"}},
//!         "required": ["language"]
//!     }));
//! let answer = side_query(&client, &query, None).await?;
//! assert_eq!(answer.json, Some(json!({"language": "Rust"})));
//! # Ok::<(), tine_fork_runtime::SideQueryError>(())
//! # }).unwrap();
//! ```
//!
//! # Types from lower crates
//!
//! Signatures use [`tine_query_loop`]'s plug traits and request template
//! ([`CanUseTool`](tine_query_loop::CanUseTool), [`RequestTemplate`](tine_query_loop::RequestTemplate),
//! [`Terminal`](tine_query_loop::Terminal); the content-replacement state is re-exported here),
//! [`tine_api_client`]'s messages, usage and [`ModelClient`](tine_api_client::ModelClient),
//! [`tine_tools`]'s [`Tool`](tine_tools::Tool) and [`ToolContext`](tine_tools::ToolContext), and
//! [`tine_config`]'s [`SessionId`](tine_config::SessionId).
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod agent_activity;
mod agent_report;
mod agent_runtime;
mod agent_stop;
mod agent_tool;
mod agents;
mod cache_break;
mod cache_safe;
mod coalesce;
mod fork;
mod fork_child;
mod fork_policy;
mod job_outcome;
mod pipeline;
mod side_query;
mod subagent;
mod tasks;
mod web_summary;
mod worktree;

pub use agent_runtime::{AGENT_ONLY_TOOLS, AgentRuntime, AgentUserContext};
pub use agent_stop::{SubagentIdentity, SubagentStopHook, last_assistant_text};
pub use agent_tool::{AgentTool, TaskOutputTool, TaskStopTool, agent_tools};
pub use agents::{
    AgentDefinition, AgentFileError, AgentSource, agent_dirs, builtin_agents, load_agents,
    parse_agent_file, resolve_model,
};
pub use cache_break::{
    BreakCause, CACHE_HASHES_KIND, CACHE_RESET_KIND, CacheBreak, CacheBreakDetector, CacheHashes,
    KEPT_BREAKS, OnCacheBreak, RequestFingerprint, ToolHash,
};
pub use cache_safe::{CacheSafeParams, CacheSafeSlot};
pub use coalesce::{CoalescedWork, CoalescingJob, STASHED, Trigger};
pub use fork::{ForkError, ForkParams, ForkResult, OnEvent, OnMessage, run_forked_agent};
pub use fork_child::{
    FORK_PLACEHOLDER_RESULT, FORK_QUERY_SOURCE, build_forked_messages, fork_directive_text,
    is_fork_child,
};
pub use fork_policy::{
    FILE_WRITE_TOOLS, ForkPolicy, ForkScope, Refusals, WritableFiles, WritablePaths,
    engine_decision, resolve_write_path,
};
pub use job_outcome::{JobDetail, JobOutcome, NotRun};
pub use pipeline::{
    BackgroundEvent, BackgroundJob, CANCEL_GRACE, DEFAULT_DRAIN_TIMEOUT, DrainReport, JobContext,
    JobError, StopHookPipeline, WrapsJob,
};
pub use side_query::{
    CLI_SYSTEM_PREFIX, DEFAULT_SIDE_QUERY_MAX_TOKENS, SideModel, SideQuery, SideQueryError,
    SideQueryResult, SourceUsage, UsageLedger, side_query,
};
pub use subagent::{
    AppStateSink, AppStateStore, NoAppState, NotificationSink, ParentContext, SessionLocation,
    SubagentContext, SubagentOverrides, create_subagent_context,
};
pub use tasks::{
    TaskError, TaskKind, TaskNotification, TaskOutput, TaskRegistry, TaskSnapshot, TaskState,
};
pub use tine_query_loop::{ContentReplacementState, SharedReplacements};
pub use web_summary::{DEFAULT_SMALL_FAST_MODEL, SideQuerySummarizer, WEB_FETCH_QUERY_SOURCE};
pub use worktree::{
    AgentWorktree, WORKTREE_ISOLATION, WorktreeError, WorktreeGuard, WorktreeOutcome,
    create_worktree, repository_of,
};
