//! The UI's vocabulary with the session: what the session tells the UI ([`UiEvent`]) and what
//! the UI asks of it ([`UiCommand`]), with the view types they carry. The shapes follow what the
//! session naturally has (query-loop's `QueryEvent`, the tools' `ToolOutput`/`ToolDisplay`, the
//! stop-hook pipeline's `BackgroundEvent`, the permission engine's ask), so the adapter that maps
//! one onto the other is a `match` with one arm per event. The UI depends on none of those
//! crates: these types are its own.

use std::time::Duration;

/// Something the session tells the UI, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum UiEvent {
    /// The session began a turn the UI did not start itself (the UI reserves a turn when it
    /// submits; this is for anything else that talks to the model).
    TurnStarted,
    /// A request of the running turn is about to be sent (`QueryEvent::RequestStart`). What
    /// streams from here on is one reply; a `Retry` with `discard_partial` voids it.
    RequestStarted,
    /// A piece of the reply's text (markdown).
    TextDelta(String),
    /// A piece of the reply's thinking.
    ThinkingDelta(String),
    /// A tool call began, or its input is now known: the call line "● Read(src/main.rs)".
    /// Sent again with the same `id` to update `args` (e.g. first at `ToolUseStart` with no
    /// args, then with the rendered input once it has streamed).
    ToolStarted {
        id: String,
        tool: String,
        /// The call's argument as people read it: the file, the command, the pattern.
        args: String,
    },
    /// Progress of a running tool (`QueryEvent::ToolProgress`).
    ToolProgress {
        id: String,
        elapsed: Duration,
        lines: u64,
        bytes: u64,
    },
    /// A tool call finished (or was refused, or interrupted).
    ToolFinished { id: String, result: ToolResultView },
    /// A call needs a person's approval. Requests queue and are asked one at a time.
    PermissionRequest(PermissionRequest),
    /// The model is stuck (the same call failing the same way again and again): asked in the
    /// dialog's queue whether it goes on. The question ends with its turn.
    StuckModel(StuckQuestion),
    /// An MCP server asks the person something (elicitation): a dialog of its own.
    Elicitation(crate::elicitation::ElicitationRequest),
    /// The session withdrew an elicitation (its turn was interrupted): take it off.
    ElicitationWithdrawn { id: String },
    /// The request failed and is retried (`RetryNotice`, shown beside the spinner). With
    /// `discard_partial`, what streamed of the current reply is void and is taken off screen.
    Retry {
        message: String,
        discard_partial: bool,
    },
    /// The turn is over; queued prompts go next.
    TurnEnded { reason: TurnEndReason },
    /// A line for the person: "saved 2 memories", a warning the session returned as data.
    Notice { level: NoticeLevel, text: String },
    /// What a slash command answered (`/cost`, `/memory`, ...), as markdown.
    CommandOutput { command: String, text: String },
    /// A background task appeared or changed (jobs of the stop-hook pipeline, shells, agents).
    /// Upserted by `id`.
    Task(TaskView),
    /// Model, context, cost and cache figures for the status line (replace the previous ones).
    Usage(UsageView),
    /// The permission mode changed (on the session's side, or confirming the UI's cycle).
    PermissionModeChanged(PermissionMode),
    /// A user prompt of a resumed conversation (`tine -c`, `/resume`): replayed history is
    /// `UserMessage`, then the reply's events as they were, then `TurnEnded`.
    UserMessage(String),
    /// The conversation was reset (`/clear` done, or `/resume` about to replay another one).
    Cleared,
    /// What was being done and what comes next, for the person back after an idle gap: the
    /// away card (the answer to [`UiCommand::AwaySummary`]).
    AwaySummary(String),
    /// The session replaced the conversation by a summary: on its own near the context's
    /// limit, when the API said the prompt was too long, or for `/compact`.
    Compacted(CompactionView),
}

/// A compaction as the transcript shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionView {
    /// `auto`, `manual` (`/compact`) or `reactive` (the prompt was too long).
    pub trigger: String,
    /// The context before (estimated from the last usage) and after (estimated).
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// Messages the summary replaced.
    pub messages_summarized: usize,
}

/// How a turn ended (`Terminal` of query-loop, in three kinds a person distinguishes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEndReason {
    /// The model finished.
    Completed,
    /// Cancelled (Esc, Ctrl-C): the transcript says "Interrupted by user".
    Interrupted,
    /// Anything else: the `Terminal::describe()` text.
    Failed { message: String },
}

/// How loud a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

/// What a finished tool call produced (the tools' `ToolOutput`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResultView {
    pub is_error: bool,
    /// One line ("Read 42 lines", "Added 3 lines, removed 1 line").
    pub summary: String,
    /// The text the model saw.
    pub content: String,
    pub display: ToolDisplayView,
}

/// Structured extras of a result (the tools' `ToolDisplay`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolDisplayView {
    /// Just the summary (and the content, expanded).
    #[default]
    None,
    /// A file change, shown as a coloured diff.
    Diff { path: String, diff: DiffSource },
    /// The todo list after TodoWrite.
    Todos(Vec<TodoView>),
    /// A shell run: its output is the content.
    Shell {
        exit_code: Option<i32>,
        timed_out: bool,
        background_task: Option<String>,
    },
}

/// Where a diff comes from: the file's text before and after (the UI diffs them with
/// `similar`), or a unified diff already made (what `ToolDisplay::Diff` carries today).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffSource {
    Texts { before: String, after: String },
    Unified(String),
}

/// One todo item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodoView {
    pub content: String,
    pub status: TodoStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// A call waiting for approval (the permission engine's `Ask`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionRequest {
    /// Echoed in the answer.
    pub id: String,
    /// The tool's name ("Bash", "Edit").
    pub tool: String,
    /// What it touches, as people read it: the file or the command.
    pub summary: String,
    /// Why it asks (the engine's message), if it said.
    pub reason: Option<String>,
    /// The rule option 2 adds ("Bash(npm test:*)", "Edit"), from the ask's suggestions; with
    /// none, option 2 is not offered.
    pub always_rule: Option<String>,
    /// For Edit/Write: the change the call would make, shown in the dialog.
    pub preview: Option<DiffSource>,
}

/// The model made the same call `repeats` times in a row and got the same error each time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StuckQuestion {
    /// Echoed in the answer.
    pub id: String,
    pub tool: String,
    /// The call's argument as people read it.
    pub args: String,
    /// The start of the error it keeps getting.
    pub error: String,
    pub repeats: u32,
}

/// A background task in the tasks panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskView {
    pub id: String,
    pub kind: TaskKind,
    /// "memory extraction", "npm run dev".
    pub title: String,
    pub status: TaskStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// A job of the stop-hook pipeline (memory extraction, dream, ...).
    Job,
    /// A background shell.
    Shell,
    /// A sub-agent.
    Agent,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStatus {
    Running,
    Finished { summary: String },
    Failed { error: String },
    Cancelled,
}

/// The status line's figures.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UsageView {
    pub model: String,
    /// Tokens of the last request's prompt (input + cache read + cache write).
    pub context_tokens: u64,
    /// The model's context window.
    pub context_window: u64,
    /// Everything the session spent so far, side queries and forks included.
    pub session_cost_usd: f64,
    /// Share of the last request's prompt read from the cache (0..=1), if there was one.
    pub cache_read_share: Option<f64>,
}

/// Claude Code's permission modes that a person cycles through with Shift+Tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PermissionMode {
    #[default]
    Default,
    AcceptEdits,
    Plan,
    BypassPermissions,
}

impl PermissionMode {
    /// default → acceptEdits → plan → (bypassPermissions, when the session allows it) → default.
    pub fn next(self, bypass_available: bool) -> Self {
        match self {
            Self::Default => Self::AcceptEdits,
            Self::AcceptEdits => Self::Plan,
            Self::Plan if bypass_available => Self::BypassPermissions,
            Self::Plan | Self::BypassPermissions => Self::Default,
        }
    }

    /// The settings name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::BypassPermissions => "bypassPermissions",
        }
    }
}

/// Something the UI asks of the session.
///
/// The turn guard: the UI holds it from a `Submit` (or a `SlashCommand` whose spec
/// `runs_turn`) until the session's `TurnEnded`, and sends nothing of the kind meanwhile. So
/// every such command must be answered by exactly one `TurnEnded`, also when the turn could
/// not start (`Failed`) or was interrupted (`Interrupted`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiCommand {
    /// A prompt, pasted texts expanded. Sent when no turn runs (the UI queues the rest).
    Submit(String),
    /// A slash command the session handles (`/compact`, `/cost`, a custom command, ...).
    /// `/help`, `/tasks` and `/exit` are handled by the UI; `/clear` is both (the UI clears its
    /// transcript and sends it).
    SlashCommand { name: String, args: String },
    /// Stop the running turn (Esc, Ctrl-C): the turn only, never background work. The UI has
    /// dropped the turn's pending permission requests; the session cancels their asks.
    Interrupt,
    /// The answer to a [`PermissionRequest`].
    AnswerPermission {
        id: String,
        answer: PermissionAnswer,
    },
    /// The answer to a [`StuckQuestion`]: let the model go on, or stop the turn.
    AnswerStuck { id: String, keep_going: bool },
    /// The answer to an [`crate::elicitation::ElicitationRequest`].
    AnswerElicitation {
        id: String,
        reply: crate::elicitation::ElicitationReply,
    },
    /// Shift+Tab: the mode the person cycled to (shown at once; the session applies it).
    CyclePermissionMode { to: PermissionMode },
    /// Stop background task `id` (the tasks panel's `k`): an agent as TaskStop stops it, a
    /// shell, or the dream (its consolidation lock rolled back).
    StopTask { id: String },
    /// Ctrl+B while a sub-agent runs in the foreground: send it to the background (the turn
    /// goes on without waiting; its report comes as a notification).
    BackgroundAgents,
    /// Leave (`/exit`, Ctrl-D on an empty prompt, Ctrl-C twice).
    Exit,
    /// The person is back after an idle gap: summarize where things stand.
    AwaySummary,
    /// Typing paused on this draft: pre-run the read-only tools it will need.
    Speculate(String),
}

/// The person's answer to a permission request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionAnswer {
    /// "1. Yes": run it this once.
    Once,
    /// "2. Yes, and don't ask again for `<rule>`": run it and persist the request's `always_rule`.
    Always,
    /// "3. No", with what to do differently, if the person wrote it (Esc: none).
    No { feedback: Option<String> },
}
