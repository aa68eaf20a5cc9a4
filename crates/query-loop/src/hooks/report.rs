//! Each hook run as it starts and ends, for a host that reports them (Claude Code's
//! `--include-hook-events`: `system` messages `hook_started` and `hook_response`). Only a
//! [`super::Hooks`] given a [`HookObserver`] builds them: without one a run costs nothing.

use std::sync::Arc;

use super::event::HookEvent;

/// Told each time a hook starts and ends (see [`super::Hooks::with_observer`]).
pub type HookObserver = Arc<dyn Fn(HookRun) + Send + Sync>;

/// What runs a hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookHandler {
    /// A shell command from settings.
    Command(String),
    /// An app's callback, by its id.
    Callback(String),
}

impl std::fmt::Display for HookHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookHandler::Command(command) => write!(f, "hook `{command}`"),
            HookHandler::Callback(id) => write!(f, "hook callback `{id}`"),
        }
    }
}

/// One hook's start or end.
#[derive(Debug, Clone, PartialEq)]
pub struct HookRun {
    /// The same for a run's start and end, unique per run (Claude Code's `hook_id`).
    pub hook_id: String,
    /// The event.
    pub event: HookEvent,
    /// Claude Code's `hook_name`: the event and what its matcher was matched against
    /// (`PreToolUse:Bash`, `SessionStart:startup`), the event alone for events without one
    /// (`Stop`).
    pub hook_name: String,
    /// The command or callback.
    pub handler: HookHandler,
    /// Started, or how it ended.
    pub phase: HookPhase,
}

/// Where a hook run is.
#[derive(Debug, Clone, PartialEq)]
pub enum HookPhase {
    /// It starts (`hook_started`).
    Started,
    /// It ended (`hook_response`).
    Ended(HookRunEnd),
}

/// How a hook run ended (`hook_response`'s fields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRunEnd {
    /// Success, error or cancelled.
    pub outcome: HookRunOutcome,
    /// What it said: a command's stdout then stderr; a callback's JSON answer.
    pub output: String,
    /// A command's stdout (empty for a callback).
    pub stdout: String,
    /// A command's stderr; why a run failed (a timeout, a callback's error).
    pub stderr: String,
    /// A command's exit code (`None` for a callback, a timeout, a command that never started).
    pub exit_code: Option<i32>,
}

/// `hook_response`'s `outcome`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookRunOutcome {
    /// It ran and what it said could be read (exit 0; a callback's answer).
    Success,
    /// It blocked (exit 2), failed, timed out, or said what tine cannot read.
    Error,
    /// It was stopped before it ended (the turn was interrupted).
    Cancelled,
}

impl HookRunOutcome {
    /// The word Claude Code sends (`success`, `error`, `cancelled`).
    pub fn as_str(self) -> &'static str {
        match self {
            HookRunOutcome::Success => "success",
            HookRunOutcome::Error => "error",
            HookRunOutcome::Cancelled => "cancelled",
        }
    }
}

/// Reports one run: `Started` when made, its end when [`RunReporter::end`] is called, and
/// `Cancelled` if it is dropped first (the run's future was dropped).
pub(crate) struct RunReporter {
    observer: HookObserver,
    run: Option<HookRun>,
}

impl RunReporter {
    pub(crate) fn start(
        observer: &HookObserver,
        event: HookEvent,
        hook_name: &str,
        handler: HookHandler,
    ) -> Self {
        let run = HookRun {
            hook_id: uuid::Uuid::new_v4().to_string(),
            event,
            hook_name: hook_name.to_owned(),
            handler,
            phase: HookPhase::Started,
        };
        observer(run.clone());
        Self {
            observer: Arc::clone(observer),
            run: Some(run),
        }
    }

    pub(crate) fn end(mut self, end: HookRunEnd) {
        self.send(end);
    }

    fn send(&mut self, end: HookRunEnd) {
        if let Some(mut run) = self.run.take() {
            run.phase = HookPhase::Ended(end);
            (self.observer)(run);
        }
    }
}

impl Drop for RunReporter {
    fn drop(&mut self) {
        self.send(HookRunEnd {
            outcome: HookRunOutcome::Cancelled,
            output: String::new(),
            stdout: String::new(),
            stderr: String::new(),
            exit_code: None,
        });
    }
}
