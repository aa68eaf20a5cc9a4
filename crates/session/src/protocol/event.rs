//! What the session tells its front end, in order, on the event channel [`Session::start`]
//! returns: [`SessionEvent`]s. The loop's own vocabulary ([`QueryEvent`]) is forwarded as it
//! is, so a front end that prints Claude Code's stream-json sees every message; what only the
//! session knows (turns, permission requests, background jobs, cost, notices) has its own
//! variants. Nothing here is printed by the library: warnings are [`Notice`]s.
//!
//! [`Session::start`]: crate::Session::start

use std::collections::BTreeMap;

use serde_json::Value;
use tine_fork_runtime::{BackgroundEvent, DrainReport, SourceUsage, UsageLedger};
use tine_permissions::PermissionMode;
use tine_query_loop::hooks::HookRun;
use tine_query_loop::{PermissionDenial, QueryEvent, Terminal, TurnResult};

use tine_fork_runtime::{TaskKind, TaskState};

use super::history::HistoryItem;
use super::info::SessionInfo;
use super::op::{OpId, QuestionId};

/// One thing that happened in the session, with the op it answers.
#[derive(Debug, Clone)]
pub struct Event {
    /// The op this event answers: every event of a turn names the turn's op (a turn the
    /// session started itself, to deliver background agents' reports, has an id of its own);
    /// `None` for what belongs to no op (start-up's notices, background jobs, tasks).
    pub id: Option<OpId>,
    /// What happened.
    pub msg: SessionEvent,
}

/// What happened (an [`Event`]'s message).
#[derive(Debug, Clone)]
pub enum SessionEvent {
    /// What the session is: the first event of every session, and again after `Op::Clear`
    /// and `Op::Resume` put another conversation in its place (a front end then starts its
    /// transcript over).
    Configured(SessionInfo),
    /// The conversation so far of a resumed session, right after its `Configured`: what a
    /// front end shows again (`tine -c`, `Op::Resume`).
    History(Vec<HistoryItem>),
    /// Something the person should read: a settings warning at start, a rule that could not
    /// be saved, background jobs given up on at shutdown. Front ends show it; the library
    /// never prints.
    Notice(Notice),
    /// An op could not be carried out (an answer to a question no longer open, a mode that
    /// settings forbid, an unknown task, ...): why, for the person.
    OpFailed {
        /// What went wrong and what to do.
        message: String,
    },
    /// Background agents ended and their reports go to the model: the turn the session
    /// starts to deliver them follows, with this event's id.
    AgentReports(Vec<AgentReport>),
    /// A turn began (a prompt's, a command's, or the session's own for agent reports).
    /// Exactly one [`SessionEvent::TurnEnded`] with the same id follows.
    TurnStarted,
    /// One event of the running turn's loop, in order: text and thinking deltas, tool calls,
    /// progress and results, retries, the messages as they join the conversation,
    /// transitions, and the loop's `Terminal` last (then `TurnEnded`).
    Query(QueryEvent),
    /// A tool call's input has streamed completely (sent when its reply is complete, before
    /// the call runs), so a call line can show its argument.
    ToolInput {
        /// The `tool_use` id (as in `QueryEvent::ToolUseStart` and `ToolResult`).
        id: String,
        /// The tool's name.
        tool: String,
        /// The call's complete input.
        input: Value,
    },
    /// A call needs a person's approval: answer it with [`crate::Op::Answer`]. Only with
    /// [`crate::Approvals::Interactive`]; headless sessions answer by their rules and never
    /// send this.
    PermissionRequest(PermissionRequest),
    /// A pending request was withdrawn without an answer (its turn was interrupted): take it
    /// off the screen.
    PermissionWithdrawn {
        /// The withdrawn request's id.
        question: QuestionId,
    },
    /// The model is stuck (the same call failed the same way several times in a row): answer
    /// with [`crate::Op::Answer`] whether it goes on. Only with
    /// [`crate::Approvals::Interactive`] (headless sessions stop the turn); the question ends
    /// with its turn (an interruption stops it).
    StuckModel(StuckQuestion),
    /// An MCP server asks the person something while one of its tools runs: answer with
    /// [`crate::Op::Answer`]. Only with [`crate::Approvals::Interactive`] (headless sessions
    /// decline without asking).
    Elicitation(ElicitationQuestion),
    /// An open elicitation was withdrawn (its turn was interrupted, the session ended): take
    /// it off the screen; the server read "cancel".
    ElicitationWithdrawn {
        /// The withdrawn elicitation's id.
        question: QuestionId,
    },
    /// What a slash command answered.
    CommandOutput(CommandOutput),
    /// A UserPromptSubmit hook refused the turn's prompt: it was not sent (no request was
    /// made), and its `TurnEnded` follows as failed. `reason` is the hook's, for the user.
    PromptBlocked {
        /// The hook's reason.
        reason: String,
    },
    /// The turn is over.
    TurnEnded(TurnEnd),
    /// A background job started, finished (memory saved, a dream), failed or was cancelled.
    Background(BackgroundEvent),
    /// A background task appeared or changed: a sub-agent of the task registry, or a
    /// background shell (Bash `run_in_background`). A tasks panel upserts it by `id`.
    Task(TaskUpdate),
    /// A task was stopped ([`crate::Op::StopTask`]).
    TaskStopped(StoppedTask),
    /// Figures for a status line: after each of the main thread's requests and each turn.
    Usage(UsageReport),
    /// The permission mode changed ([`crate::Op::SetPermissionMode`], or a plan approved).
    PermissionModeChanged(PermissionMode),
    /// The model changed ([`crate::Op::SetModel`], `/model NAME`): its id, aliases resolved.
    ModelChanged(String),
    /// Extended thinking was turned on or off ([`crate::Op::SetThinking`], `/thinking`).
    ThinkingChanged(bool),
    /// Verbose sessions only: a request of the main thread is about to be sent.
    Request(RequestSummary),
    /// Verbose sessions only: a request read less of the cache than it should have; the text
    /// names the part of the key that changed.
    CacheBreak(String),
    /// With [`crate::SessionOptions::include_partial_messages`] only: one raw server event of
    /// a main-thread response, as it arrived (stream-json's `stream_event` lines).
    StreamEvent(tine_api_client::StreamEvent),
    /// `--fallback-model`: the main model stayed overloaded, so the session goes on with the
    /// fallback from this request on (a [`SessionEvent::Notice`] says so in words too).
    ModelFallback {
        /// The overloaded model.
        from: String,
        /// The model in use from now on.
        to: String,
    },
    /// What was being done and what comes next, for the person back after an idle gap (the
    /// answer to [`crate::Op::AwaySummary`]; 1-3 sentences from the small fast model).
    AwaySummary(String),
    /// With [`crate::SessionOptions::include_hook_events`] only: a hook (a settings command or
    /// an app's callback) started or ended (Claude Code's `hook_started` / `hook_response`).
    Hook(HookRun),
    /// The prompts a rewind can go back to ([`crate::Op::RewindPoints`]), oldest first.
    RewindPoints(Vec<RewindPoint>),
    /// A rewind was done ([`crate::Op::Rewind`]); after a conversation rewind a new
    /// `Configured` and `History` come first, as for a resume.
    Rewound(RewindReport),
    /// A rewind of the code changed nothing: these files the session changed were changed by
    /// someone else too since. Ask, and rewind again with `force` to restore them anyway.
    RewindConflicts {
        /// The prompt's number.
        prompt: usize,
        /// The files, relative to the project.
        files: Vec<std::path::PathBuf>,
    },
    /// The session has ended ([`crate::Op::Finish`], [`crate::Op::Shutdown`]): the last event;
    /// the channel closes after it.
    ShutdownComplete(ShutdownReport),
}

/// A prompt a rewind can go back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindPoint {
    /// Its number in the conversation, counted from 1.
    pub prompt: usize,
    /// Its text (the start of it).
    pub text: String,
    /// When it was sent (seconds since the Unix epoch; 0 when unknown).
    pub at: u64,
    /// The files its turn and the later ones changed (relative to the project); empty when
    /// it changed none or has no checkpoint.
    pub files: Vec<std::path::PathBuf>,
    /// Whether its files can go back (a checkpoint was taken before its changes).
    pub code: bool,
}

/// What a rewind did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindReport {
    /// The prompt gone back to.
    pub prompt: usize,
    /// What went back.
    pub scope: super::op::RewindScope,
    /// The prompt's text, for the input box.
    pub text: String,
    /// Files written back to their content then.
    pub restored: Vec<std::path::PathBuf>,
    /// Files removed (created since).
    pub removed: Vec<std::path::PathBuf>,
}

/// One background agent whose report a turn delivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentReport {
    /// The task's id (`a_…`).
    pub id: String,
    /// The description its Agent call gave.
    pub description: String,
    /// How it ended (stopped past the drain bound: `Cancelled`).
    pub state: TaskState,
}

/// A background task as a tasks panel lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskUpdate {
    /// What [`crate::Op::StopTask`] takes.
    pub id: String,
    /// An agent or a shell.
    pub kind: TaskKind,
    /// The agent's description, or the shell's command line.
    pub title: String,
    /// Where it is.
    pub state: TaskState,
    /// How it ended, in words ("completed", "exited with code 0"); empty while it runs.
    pub detail: String,
    /// Where an agent's output is written as it runs (`None` for a shell: BashOutput reads it).
    pub output_file: Option<std::path::PathBuf>,
    /// An agent's totals and latest calls so far (`None` for a shell, and for an agent before
    /// its first reply); each new reply of a running agent is an update.
    pub activity: Option<tine_tools::SubagentActivity>,
}

/// What an MCP server asks the person (`elicitation/create`).
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationQuestion {
    /// Name it in [`crate::Op::Answer`].
    pub id: QuestionId,
    /// The server's name (as configured).
    pub server: String,
    /// The server's question, for people.
    pub message: String,
    /// Form mode: the JSON Schema of the answer (an object of flat properties: string,
    /// number, integer, boolean, enum).
    pub schema: Option<Value>,
    /// URL mode: the page the server wants opened.
    pub url: Option<String>,
}

/// What [`crate::Op::StopTask`] stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoppedTask {
    /// A sub-agent; its end is reported as it comes.
    Agent {
        /// The agent's description, as its Agent call gave it.
        description: String,
    },
    /// A background shell, killed.
    Shell {
        /// The command the shell ran.
        command: String,
    },
    /// The running dream; its lock was rolled back.
    Dream,
}

/// How loud a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeLevel {
    /// For information ("this directory's sessions moved to ...").
    Info,
    /// Something is off but the session goes on (a setting ignored, memory off).
    Warning,
}

/// A line for the person, returned as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// How much it matters.
    pub level: NoticeLevel,
    /// What to show.
    pub text: String,
}

impl Notice {
    /// An informational notice.
    pub fn info(text: impl Into<String>) -> Self {
        Self {
            level: NoticeLevel::Info,
            text: text.into(),
        }
    }

    /// A warning.
    pub fn warning(text: impl Into<String>) -> Self {
        Self {
            level: NoticeLevel::Warning,
            text: text.into(),
        }
    }
}

/// A call waiting for approval (the permission engine said "ask").
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionRequest {
    /// Name it in [`crate::Op::Answer`].
    pub id: QuestionId,
    /// The tool's name ("Bash", "Edit").
    pub tool: String,
    /// The call's input as the model sent it.
    pub input: Value,
    /// What it touches, as people read it: the file or the command.
    pub target: String,
    /// Why it asks (the permission engine's message).
    pub reason: String,
    /// What "yes, and don't ask again" ([`crate::PermissionAnswer::Always`]) does: adds rules
    /// (`Bash(npm test:*)`, saved in local settings) or, for an edit in the project, switches
    /// this session to acceptEdits and saves nothing; `None` when nothing is offered. For a
    /// plan approval, the acceptEdits mode "yes" leaves plan mode for.
    pub always: Option<tine_permissions::AlwaysAllow>,
    /// For Edit and Write: the change the call would make (the file before and after).
    pub preview: Option<EditPreview>,
    /// The model's `tool_use` id of the call.
    pub tool_use_id: Option<String>,
}

/// What an Edit or Write would change: the file's text before and after (a front end diffs
/// them); the edit's strings alone when the file does not hold them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditPreview {
    /// The text before.
    pub before: String,
    /// The text after.
    pub after: String,
}

/// The model made the same call `repeats` times in a row and got the same error each time.
#[derive(Debug, Clone, PartialEq)]
pub struct StuckQuestion {
    /// Name it in [`crate::Op::Answer`].
    pub id: QuestionId,
    /// The tool called.
    pub tool: String,
    /// The call's input.
    pub input: Value,
    /// The start of the error the model got each time.
    pub error: String,
    /// How many times in a row.
    pub repeats: u32,
}

/// What a slash command answered.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandOutput {
    /// The command's name, without the slash.
    pub command: String,
    /// For people (markdown).
    pub text: String,
    /// Whether the command failed.
    pub is_error: bool,
    /// Structured detail for machine-readable output (`Value::Null` when none).
    pub data: Value,
}

/// How a submission ended, in the three kinds a person distinguishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnOutcome {
    /// The model finished (or the command succeeded).
    Completed,
    /// Cancelled by [`crate::Op::Interrupt`] or the session's cancellation.
    Interrupted,
    /// Anything else, described.
    Failed {
        /// What went wrong.
        message: String,
    },
}

impl TurnOutcome {
    /// The outcome of a loop that ended with `terminal`.
    pub fn of(terminal: &Terminal) -> Self {
        if terminal.is_success() {
            Self::Completed
        } else if *terminal == Terminal::Aborted {
            Self::Interrupted
        } else {
            Self::Failed {
                message: terminal.describe(),
            }
        }
    }
}

/// The end of one submission.
#[derive(Debug, Clone)]
pub struct TurnEnd {
    /// How it ended.
    pub outcome: TurnOutcome,
    /// What the loop produced; `None` for a command that ran no turn, or a turn interrupted
    /// before it started.
    pub result: Option<TurnResult>,
    /// Every request of the session so far, by source.
    pub cost: SessionCost,
    /// Every call refused in the session so far.
    pub denials: Vec<PermissionDenial>,
    /// With a `--json-schema` ([`crate::SessionOptions::json_schema`]): the turn's final
    /// answer, valid against the schema; `None` when the model never gave one (the turn then
    /// failed) or the session has no schema.
    pub structured_output: Option<Value>,
}

/// The query source of the main thread's requests in [`SessionCost`].
pub const MAIN_SOURCE: &str = "main";

/// What the session's requests used and cost, by query source: [`MAIN_SOURCE`] and every
/// source of the session's ledger (`extract_memories`, `memory_recall`, `web_fetch`, ...).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionCost {
    /// Usage and cost per query source.
    pub by_source: BTreeMap<String, SourceUsage>,
    /// The same usage by the model that answered (the main thread's, a `--fallback-model`'s
    /// after a switch, the small fast model's side queries): `-p`'s `modelUsage`.
    pub by_model: BTreeMap<String, SourceUsage>,
    /// Each model of `by_model`'s context window on the session's endpoint (`modelUsage`'s
    /// `contextWindow`: `TINE_CONTEXT_WINDOW`'s figure for a local model).
    pub context_windows: BTreeMap<String, u64>,
}

impl SessionCost {
    /// The main thread's totals so far plus the ledger's.
    pub fn collect(main: SourceUsage, ledger: &UsageLedger) -> Self {
        let mut by_source = ledger.snapshot();
        *by_source.entry(MAIN_SOURCE.to_owned()).or_default() += main;
        Self {
            by_source,
            by_model: ledger.by_model(),
            context_windows: BTreeMap::new(),
        }
    }

    /// Summed over every source.
    pub fn total(&self) -> SourceUsage {
        self.by_source
            .values()
            .fold(SourceUsage::default(), |mut total, s| {
                total += *s;
                total
            })
    }
}

/// The status line's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageReport {
    /// The session's model.
    pub model: String,
    /// Tokens of the last main-thread request's prompt (input + cache read + cache write).
    pub context_tokens: u64,
    /// The model's context window on the session's endpoint (`TINE_CONTEXT_WINDOW` /
    /// `openai.contextWindow` for a local model), capped by `TINE_AUTO_COMPACT_WINDOW`.
    pub context_window: u64,
    /// Everything the session spent so far, side queries and forks included.
    pub cost: SessionCost,
    /// Share of the last request's prompt read from the cache (0..=1), if there was one.
    pub cache_read_share: Option<f64>,
    /// The last main-thread request's tokens by kind (`None` before the first request).
    pub last_request: Option<tine_api_client::Usage>,
    /// How long the main thread's requests took, from each one's start to the end of its
    /// stream, summed over the conversation.
    pub api_duration: std::time::Duration,
    /// Lines the main thread's file tools added (Edit, Write, NotebookEdit), summed over the
    /// conversation; a file written anew counts all of its lines.
    pub lines_added: u64,
    /// Lines they removed.
    pub lines_removed: u64,
}

/// What a verbose session says about each main-thread request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSummary {
    /// The path it is posted to (`/v1/messages`, `/v1/chat/completions`).
    pub endpoint: String,
    /// The model asked.
    pub model: String,
    /// Messages in the request.
    pub messages: usize,
    /// Tools in the request.
    pub tools: usize,
    /// The request's `max_tokens`.
    pub max_tokens: u32,
    /// Size of the request body.
    pub bytes: usize,
}

/// What the session's end found ([`SessionEvent::ShutdownComplete`]).
#[derive(Debug, Clone, Default)]
pub struct ShutdownReport {
    /// The background jobs: finished, or given up on at the grace's end.
    pub drain: DrainReport,
    /// Every request of the session, background jobs included.
    pub cost: SessionCost,
    /// Every call refused in the session.
    pub denials: Vec<PermissionDenial>,
}
