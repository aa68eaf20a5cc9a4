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
use tine_query_loop::{PermissionDenial, QueryEvent, Terminal, TurnResult};

use crate::submission::{PermissionId, StuckId, SubmissionId};

/// One thing that happened in the session.
#[derive(Debug, Clone)]
pub enum SessionEvent {
    /// Something the person should read: a settings warning at start, a rule that could not
    /// be saved, background jobs given up on at shutdown. Front ends show it; the library
    /// never prints.
    Notice(Notice),
    /// A submission began (a prompt's turn, or a command). Exactly one [`SessionEvent::TurnEnded`]
    /// with the same id follows.
    TurnStarted {
        /// The submission's id.
        id: SubmissionId,
    },
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
    /// A call needs a person's approval: answer it with
    /// [`crate::SessionHandle::answer_permission`]. Only with [`crate::Approvals::Interactive`];
    /// headless sessions answer by their rules and never send this.
    PermissionRequest(PermissionRequest),
    /// A pending request was withdrawn without an answer (its turn was interrupted): take it
    /// off the screen.
    PermissionWithdrawn {
        /// The withdrawn request's id.
        id: PermissionId,
    },
    /// The model is stuck (the same call failed the same way several times in a row): answer
    /// with [`crate::SessionHandle::answer_stuck`] whether it goes on. Only with
    /// [`crate::Approvals::Interactive`] (headless sessions stop the turn); the question ends
    /// with its turn (an interruption stops it).
    StuckModel(StuckQuestion),
    /// An MCP server asks the person something while one of its tools runs: answer with
    /// [`crate::SessionHandle::answer_elicitation`]. Only with [`crate::Approvals::Interactive`]
    /// (headless sessions decline without asking).
    Elicitation(crate::elicitation::ElicitationQuestion),
    /// An open elicitation was withdrawn (its turn was interrupted, the session ended): take
    /// it off the screen; the server read "cancel".
    ElicitationWithdrawn {
        /// The withdrawn elicitation's id.
        id: crate::elicitation::ElicitationId,
    },
    /// What a slash command answered.
    CommandOutput(CommandOutput),
    /// A UserPromptSubmit hook refused the submission's prompt: it was not sent (no request
    /// was made), and its `TurnEnded` follows as failed. `reason` is the hook's, for the user.
    PromptBlocked {
        /// The submission's id.
        id: SubmissionId,
        /// The hook's reason.
        reason: String,
    },
    /// The submission is over.
    TurnEnded(TurnEnd),
    /// A background job started, finished (memory saved, a dream), failed or was cancelled.
    Background(BackgroundEvent),
    /// Figures for a status line: after each of the main thread's requests and each turn.
    Usage(UsageReport),
    /// The permission mode changed (confirming [`crate::SessionHandle::set_permission_mode`]).
    PermissionModeChanged(PermissionMode),
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
    /// answer to `SessionHandle::away_summary`; 1-3 sentences from the small fast model).
    AwaySummary(String),
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
    /// Echo it in [`crate::SessionHandle::answer_permission`].
    pub id: PermissionId,
    /// The tool's name ("Bash", "Edit").
    pub tool: String,
    /// The call's input as the model sent it.
    pub input: Value,
    /// What it touches, as people read it: the file or the command.
    pub target: String,
    /// Why it asks (the permission engine's message).
    pub reason: String,
    /// The rule "yes, and don't ask again" adds (the ask's first suggestion, e.g.
    /// `Bash(npm test:*)`); `None` when there is none to offer.
    pub always_rule: Option<String>,
}

/// The model made the same call `repeats` times in a row and got the same error each time.
#[derive(Debug, Clone, PartialEq)]
pub struct StuckQuestion {
    /// Echo it in [`crate::SessionHandle::answer_stuck`].
    pub id: StuckId,
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
    /// The command's submission.
    pub id: SubmissionId,
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
    /// Cancelled by [`crate::SessionHandle::interrupt`] or the session's cancellation.
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
    /// The submission's id.
    pub id: SubmissionId,
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
}

impl SessionCost {
    /// The main thread's totals so far plus the ledger's.
    pub fn collect(main: SourceUsage, ledger: &UsageLedger) -> Self {
        let mut by_source = ledger.snapshot();
        *by_source.entry(MAIN_SOURCE.to_owned()).or_default() += main;
        Self {
            by_source,
            by_model: ledger.by_model(),
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
#[derive(Debug, Clone, PartialEq)]
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
}

/// What a verbose session says about each main-thread request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSummary {
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

/// What [`crate::SessionHandle::shutdown`] found.
#[derive(Debug, Clone, Default)]
pub struct ShutdownReport {
    /// The background jobs: finished, or given up on at the grace's end.
    pub drain: DrainReport,
    /// Every request of the session, background jobs included.
    pub cost: SessionCost,
    /// Every call refused in the session.
    pub denials: Vec<PermissionDenial>,
}
