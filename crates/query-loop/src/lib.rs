//! tine-query-loop: the agent loop and everything a session needs around it. It must not know
//! forks, memory or compaction: it calls them through the traits of `plug` ([`CanUseTool`], [`Compactor`], [`StopHooks`], …).
//!
//! Modules, in reading order (private, their items re-exported at the root, but for
//! [`hooks`], the hooks subsystem's own vocabulary):
//! - `events`: [`QueryEvent`], what the loop tells its host while it runs.
//! - `transition`: why the loop went round again ([`Transition`]) and why it stopped
//!   ([`Terminal`]).
//! - `plug`: the traits upper layers and the host implement ([`CanUseTool`],
//!   [`PermissionPrompter`], [`Compactor`], [`StopHooks`], [`RequestMonitor`]) and the
//!   vocabulary of their answers.
//! - `request`: [`RequestTemplate`], the fixed part of every request, and request building
//!   with the two cache breakpoints.
//! - `repair`: the tool-use pairing repair run on the history before every request.
//! - `replacement`: oversized tool results replaced by a preview, each decision frozen.
//! - `stuck`: the same call failing the same way again and again ends the turn.
//! - `thinking`: the thinking budget made valid against the model and `max_tokens`.
//! - `params`: [`QueryParams`], everything fixed for one run of the loop.
//! - `reply`: one reply streamed, its deltas forwarded as events.
//! - `query`: [`query()`], the loop itself as a stream of events, one method per branch of an
//!   iteration.
//! - `spawn`: how a tool call sees the turn in progress ([`TurnInProgress`], filled by the
//!   loop per call) and the [`SubagentSpawner`] the Agent tool starts sub-agents through.
//! - `totals`: [`LoopTotals`], one run's requests, usage, cost and terminal folded from its
//!   events (the engine's turns and forks count the same way).
//! - `transcript`: the session's JSONL transcript: writer, tolerant reader, resume,
//!   `--continue`.
//! - `context`: AGENTS.md / CLAUDE.md discovery, environment facts, git snapshot, and the
//!   rendering of the system prompt and user context, once per session.
//! - [`hooks`]: the user's command hooks for every Claude Code event ([`hooks::Hooks`], the
//!   value a session holds) and the post-sampling registry.
//!   `tool_calls` (private) runs a reply's tool calls with their PreToolUse/PostToolUse hooks.
//! - `engine`: [`QueryEngine`], the session: one [`query()`] per turn (`engine/turn.rs`),
//!   messages, usage, denials and the transcript across turns; `engine_config` its defaults.
//! - `timestamp`: RFC 3339 / day formatting used by the transcript and the context.
//!
//! # Example
//!
//! One turn through [`query()`] with a scripted model: the reply streams as events and the
//! loop ends with a [`Terminal`]:
//!
//! ```
//! use std::sync::Arc;
//!
//! use futures::StreamExt;
//! use tine_api_client::{Message, ScriptedClient};
//! use tine_query_loop::{
//!     QueryEvent, QueryParams, RequestTemplate, Terminal, query, system_prompt_blocks,
//! };
//! use tine_tools::{Tool, ToolContext};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let client = ScriptedClient::new();
//! client.push_message(ScriptedClient::text_reply("Nothing to fix."));
//! let tools: Arc<[Arc<dyn Tool>]> = Arc::from(Vec::new());
//! let template = RequestTemplate {
//!     model: "claude-sonnet-4-5".into(),
//!     system: Arc::new(system_prompt_blocks("You are a coding agent.")),
//!     tools: Default::default(),
//!     thinking: None,
//!     skip_cache_write: false,
//!     replacements: None,
//!     effort: None,
//! };
//! let params = QueryParams::new(Arc::new(client), template, tools, ToolContext::new("."));
//!
//! let mut events = query(params, vec![Message::user("Anything to fix?")]);
//! let mut text = String::new();
//! let mut terminal = None;
//! while let Some(event) = events.next().await {
//!     match event {
//!         QueryEvent::TextDelta { text: delta } => text.push_str(&delta),
//!         QueryEvent::Terminal(end) => terminal = Some(end),
//!         _ => {}
//!     }
//! }
//! assert_eq!(text, "Nothing to fix.");
//! assert_eq!(terminal, Some(Terminal::Completed));
//! # });
//! ```
//!
//! A session across turns is a [`QueryEngine`] made from an [`EngineConfig`]
//! ([`EngineConfig::new`] for the defaults). `examples/one_turn.rs` runs a turn with tool calls
//! against the bundled simulator (`cargo run -p tine-query-loop --example one_turn`).
//!
//! # Types from lower crates
//!
//! Signatures use [`tine_api_client`]'s wire types ([`Message`](tine_api_client::Message),
//! [`ContentBlock`](tine_api_client::ContentBlock), [`Usage`](tine_api_client::Usage), the
//! [`ModelClient`](tine_api_client::ModelClient) trait), [`tine_tools`]'s [`Tool`](tine_tools::Tool),
//! [`ToolContext`](tine_tools::ToolContext) and [`ToolOutput`](tine_tools::ToolOutput), and
//! [`tine_config`]'s [`SessionId`](tine_config::SessionId) and settings.
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod budget;
mod context;
mod engine;
mod engine_config;
mod events;
pub mod hooks;
mod params;
mod plug;
mod query;
mod repair;
mod replacement;
mod reply;
mod reply_room;
mod request;
mod spawn;
mod stuck;
mod thinking;
mod timestamp;
mod tool_calls;
mod totals;
mod transcript;
mod transition;

pub use budget::{RunBudget, SpendingLimit};
pub use context::{
    BASE_SYSTEM_PROMPT, EnvironmentFacts, GatherOptions, GitSnapshot, InstructionFile,
    InstructionSource, LEAN_SYSTEM_PROMPT, MAX_GIT_STATUS_CHARS, MAX_INSTRUCTION_FILE_BYTES,
    RenderedContext, SessionContext, discover_instruction_files, find_repo_root,
};
pub use engine::{
    EngineConfig, EngineError, PermissionDenial, QueryEngine, TurnResult, prompt_text,
};
pub use events::QueryEvent;
pub use hooks::{HookError, PostSamplingContext, PostSamplingHooks, PostSamplingSummary};
pub use params::{EndAfterTools, PostSampling, QueryParams, QuerySource, RequestObserver};
pub use plug::{
    AllowAll, Annotation, BeforeRequest, CanUseTool, CheckedCall, CompactContext, CompactError,
    Compacted, Compactor, ContextWarning, CurrentPrompt, PermissionOutcome, PermissionPrompter,
    ReplyRoom, RequestMonitor, StopContext, StopHookOutcome, StopHooks,
};
pub use query::{LoopState, message_text, query};
pub use repair::{is_well_paired, repair_tool_pairing};
pub use replacement::{
    ContentReplacementState, MAX_TOOL_RESULT_CHARS, PREVIEW_CHARS, SharedReplacements,
    lock as lock_replacements,
};
pub use reply_room::{MIN_REPLY_TOKENS, reply_floor};
pub use request::{RequestTemplate, system_prompt_blocks, tool_definitions};
pub use spawn::{AgentRequest, Spawner, SubagentSpawner, TurnInProgress};
pub use stuck::{
    DEFAULT_MAX_REPEATED_FAILURES, FailureStreak, RepeatedFailure, RepeatedFailureHandler,
    StuckDecision,
};
pub use thinking::{DEFAULT_THINKING_BUDGET, budget_from_env};
pub use timestamp::{rfc3339_utc, utc_date};
pub use totals::LoopTotals;
pub use transcript::{
    COMPACT_BOUNDARY, CompactBoundary, CompactTrigger, DroppedContext, RecordType, ResumedSession,
    TranscriptAnnotator, TranscriptError, TranscriptRead, TranscriptRecord, TranscriptWarning,
    TranscriptWriter, WriterOptions, fork_transcript, latest_session, load_session,
    load_session_at, load_session_with, read_transcript,
};
pub use transition::{Terminal, Transition};
