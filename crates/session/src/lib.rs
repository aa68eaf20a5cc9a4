//! tine-session: one session for every front end (the TUI, headless `-p`, and any other). It
//! assembles the engine, the forks' parent, the stop-hook pipeline, memory, compaction and the
//! MCP servers from options and settings, runs each turn's protocol (a per-turn cancellation
//! token, recall, the cache-safe slot cleared, background jobs, the cost of every request), and
//! speaks one protocol with its front end: a queue of typed operations in ([`Op`]) and a stream
//! of events out ([`Event`]), in the shape of codex's `Op` / `EventMsg` pair:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use tine_session::{Op, Session, SessionEvent, SessionOptions};
//! let (session, mut events) = Session::start(SessionOptions::new(".")).await?;
//! let prompt = session.submit(Op::Prompt("what does this project do?".into()))?;
//! while let Some(event) = events.recv().await {
//!     if let (Some(id), SessionEvent::TurnEnded(end)) = (event.id, &event.msg)
//!         && id == prompt
//!     {
//!         println!("{:?}", end.outcome);
//!         break;
//!     }
//! }
//! let report = session.shutdown().await; // memory extraction and other jobs finish here
//! # let _ = report; Ok(()) }
//! ```
//!
//! The library never prints: warnings are [`Notice`] events.
//!
//! Modules, in reading order (private but the namespaces [`custom_commands`], [`skills`],
//! [`speculation`], [`provider`] and [`sandbox`]: the items re-exported at the root are the API):
//! - `protocol`: the protocol every front end speaks: [`Op`] and its ids ([`OpId`],
//!   [`QuestionId`]), [`Event`] / [`SessionEvent`] and what they carry ([`TurnEnd`],
//!   [`UsageReport`], [`SessionCost`], [`PermissionRequest`], [`Notice`], ...), [`SessionInfo`]
//!   with the command table ([`CommandInfo`]), [`HistoryItem`], [`call_summary`].
//! - `options`: [`SessionOptions`], what a front end asks for; `error`: [`StartError`] and the
//!   handle's refusals.
//! - `handle`: [`Session::start`] and the [`SessionHandle`]: ops queued or done at once on the
//!   state the task shares (`shared`); `emit`: events named by their op.
//! - `actor`: the session's task: queued ops in order, agent reports as turns, another
//!   conversation in place for clear and resume, the end; `conversation`: the conversation in
//!   place and the turn protocol; `watch`: the tasks panel's feed.
//! - `assemble`: start-up in stages, from options and settings to the engine and its forks'
//!   parent; [`provider`]: anthropic or openai, the model, the client; [`sandbox`]: the Bash
//!   sandbox's settings and decision; `flags`: the flags that shape a session
//!   (`--system-prompt`, `--add-dir`, `--session-id`, `--fallback-model`).
//! - `can_use_tool`, `permission`, `plan_mode`, `questions`, `preview`: the main thread's
//!   `can_use_tool` (asks to a person with a preview of the edit, or denials headless; what a
//!   PreToolUse hook's allow or ask leaves of the rules; ExitPlanMode), the open questions.
//! - `hooks`: the user's command hooks and an app's ([`AppHooks`]), one value for the loop, the
//!   pipeline, the permission checker and the task (SessionStart, UserPromptSubmit,
//!   SessionEnd).
//! - `agents`: sub-agents: typed agents' definitions, the Agent and task tools, the spawner and
//!   task registry on the tool context; `tasks`: what `Op::StopTask` stops.
//! - `stuck`: a stuck model asked about; `elicitation`: an MCP server's question to the person
//!   (declined headless).
//! - `away`: the away summary; [`speculation`]: read-only tools pre-run on the draft.
//! - `magic`: Magic Docs wired in; `thinking`: extended thinking at start and `/thinking`;
//!   `web_search`: the API's web search server tool, offered when the rules allow it.
//! - `mcp`: the MCP servers (tine-mcp): started in assembly, their exits as notices, `/mcp`,
//!   restart and toggle, stopped at the end.
//! - `plugins`: Claude Code's plugins ([`SessionPlugins`]): `--plugin-dir` and the enabled
//!   installed ones, their commands, agents, skills, hooks and MCP servers joining the
//!   session's own at start; [`PluginCommands`]: `tine plugin ...` and `/plugin`.
//! - `main_client`: the main thread's client (the fallback model on overload, raw stream
//!   events); `structured`: `--json-schema`'s StructuredOutput tool; `prompt_tool`:
//!   `--permission-prompt-tool`, an MCP tool answering headless asks.
//! - `command_table`, `commands`, `listing`: the session's slash commands and their table;
//!   [`custom_commands`]: the Markdown prompts of `.tine/commands/` and `.claude/commands/`;
//!   `command_inline`: their `` !`command` `` outputs and `@path` files.
//! - `rewind`: the conversation's prompts and their checkpoints (tine-checkpoints): a snapshot
//!   before a prompt's first call that can change files and after its turn; `Op::Rewind`,
//!   `/rewind`.
//! - [`skills`], `skill_tool`: the skills and the `Skill` tool; `history`: a resumed
//!   conversation as [`HistoryItem`]s.
//! - `status_line`: the settings' `statusLine` command ([`StatusLineCommand`], run by an
//!   interactive front end) and the output style's name it is told; `file_changes`: the lines
//!   the main thread's file tools changed ([`UsageReport`]'s).
//!
//! `examples/one_prompt.rs` runs the same on the bundled simulator, offline, printing the
//! events (`cargo run -p tine-session --example one_prompt`).
//!
//! # Types from lower crates
//!
//! Signatures use the lower crates' own types where a front end meets them, and the ones its
//! events carry are re-exported here, so a front end needs this crate alone:
//! [`tine_api_client`]'s [`ModelClient`](tine_api_client::ModelClient) and messages,
//! [`tine_permissions`]'s [`PermissionMode`] (re-exported), [`tine_config`]'s settings and
//! [`SessionId`](tine_config::SessionId), [`tine_query_loop`]'s [`QueryEvent`], turn results,
//! [`StuckDecision`], and its hooks' [`HookCallbacks`] and [`HookRun`], [`tine_tools`]'
//! [`ToolOutput`] and [`ToolDisplay`], [`tine_mcp`]'s [`ElicitationAnswer`] and
//! [`SdkMcpRelay`], [`tine_fork_runtime`]'s [`BackgroundEvent`], [`TaskKind`] and [`TaskState`]
//! (all re-exported).
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod actor;
mod agents;
mod assemble;
mod away;
mod can_use_tool;
mod command_inline;
mod command_table;
mod commands;
mod context_view;
mod conversation;
pub mod custom_commands;
mod elicitation;
mod emit;
mod error;
mod export;
mod file_changes;
mod flags;
mod handle;
mod history;
mod hooks;
mod lean;
mod lines;
mod listing;
mod magic;
mod main_client;
mod mcp;
mod options;
mod output_style;
mod permission;
mod plan_mode;
mod plugins;
mod preview;
mod private_state;
mod prompt_tool;
mod protocol;
pub mod provider;
mod questions;
mod rewind;
pub mod sandbox;
mod shared;
mod skill_tool;
pub mod skills;
pub mod speculation;
mod status_line;
mod structured;
mod stuck;
mod tasks;
mod thinking;
mod tool_search;
mod trust;
mod watch;
mod web_search;

pub use assemble::{gather_context, settings_paths, user_home_from_env};
pub use away::{AWAY_MESSAGES, AWAY_QUERY_SOURCE};
pub use command_table::{COMMANDS, CommandSpec, find as find_command};
pub use error::{AnswerError, ModeError, SessionClosed, StartError};
pub use export::EXPORT_CLIPBOARD;
pub use handle::{Session, SessionHandle};
pub use hooks::AppHooks;
pub use lines::{LineError, MAX_LINE_BYTES, read_capped_line};
pub use main_client::OVERLOADED_BEFORE_FALLBACK;
pub use options::{Approvals, Resume, SessionOptions};
pub use plugins::{
    LoadedPlugin, PluginCommandError, PluginCommands, PluginOrigin, PluginParts, PluginPlaces,
    SessionPlugins,
};
pub use protocol::{
    AgentReport, Answer, CLAUDE_CODE_PROTOCOL_VERSION, CommandInfo, CommandOutput, CommandSource,
    EditPreview, ElicitationQuestion, Event, HistoryItem, MAIN_SOURCE, Notice, NoticeLevel, Op,
    OpId, PermissionAnswer, PermissionRequest, PermissionUpdate, QuestionId, RequestSummary,
    RewindPoint, RewindReport, RewindScope, RewindTarget, SessionCost, SessionEndReason,
    SessionEvent, SessionInfo, ShutdownReport, StatusLineCommand, StoppedTask, StuckQuestion,
    TaskUpdate, TurnEnd, TurnOutcome, UsageReport, call_summary,
};
pub use provider::{DEFAULT_MODEL, model_from};
pub use structured::{MAX_STRUCTURED_OUTPUT_RETRIES, STRUCTURED_OUTPUT_TOOL};
pub use tasks::StopTaskError;
/// A background job's report ([`SessionEvent::Background`]); a typed agent an app defines
/// ([`SessionOptions::agents`]).
pub use tine_fork_runtime::{AgentDefinition, AgentSource, BackgroundEvent};
/// The task registry's vocabulary a [`TaskUpdate`] and an [`AgentReport`] use.
pub use tine_fork_runtime::{TaskKind, TaskState};
/// A person's answer to an [`ElicitationQuestion`] ([`Answer::Elicitation`]).
pub use tine_mcp::ElicitationAnswer;
/// How an Agent SDK app's in-process MCP servers are reached
/// ([`SessionOptions::sdk_mcp_relay`]).
pub use tine_mcp::SdkMcpRelay;
/// The permission modes ([`Op::SetPermissionMode`]), what a request's "don't ask again" does
/// ([`AlwaysAllow`]), the rules of a [`PermissionUpdate`], where they are kept and what they do.
pub use tine_permissions::{
    AlwaysAllow, PermissionMode, PermissionRule, PersistDestination, RuleBehavior,
};
/// How a stuck model's question is answered ([`Answer::Stuck`]).
pub use tine_query_loop::StuckDecision;
/// An app's hook callbacks ([`AppHooks`]) and each hook run as [`SessionEvent::Hook`]
/// reports it.
pub use tine_query_loop::hooks::{
    HookCallbacks, HookEvent, HookHandler, HookPhase, HookRun, HookRunEnd, HookRunOutcome,
};
/// The loop's events, forwarded in [`SessionEvent::Query`].
pub use tine_query_loop::{CompactBoundary, QueryEvent};
/// What a finished tool call carries for front ends ([`SessionEvent::Query`]'s results), what
/// a running Agent call's progress and a [`TaskUpdate`] say of a sub-agent, and the editor's
/// files Read, Write and Edit go through ([`SessionOptions::editor_files`]) and its terminal
/// Bash runs in ([`SessionOptions::editor_terminal`]).
pub use tine_tools::{
    EditorFiles, EditorFs, EditorFuture, EditorTerm, EditorTerminal, SubagentActivity,
    SubagentCall, SubagentProgress, SubagentStep, SubagentTotals, TerminalEnding, TerminalRun,
    ToolDisplay, ToolOutput, ToolProgress,
};
pub use trust::{WorkspaceSummary, workspace_summary};
