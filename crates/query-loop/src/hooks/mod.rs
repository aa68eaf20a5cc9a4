//! Hooks around the loop, in Claude Code's shape: the user's shell commands from settings and
//! the callbacks an app registers (the Agent SDK's) for every event tine runs (PreToolUse,
//! PostToolUse, UserPromptSubmit, SessionStart, SessionEnd, Notification, PreCompact,
//! PostCompact, SubagentStop, Stop), and the in-process post-sampling registry upper layers
//! plug background work into. This is the one place hook settings get
//! their meaning and hooks run: the loop, the session and the compactor all call [`Hooks`].
//!
//! Modules in reading order: `event` (the events, matchers), `config` (what the settings'
//! hooks mean: [`HookConfig`]), `callback` (an app's hooks: [`HookCallbacks`], what its
//! `initialize` request registers), `process` (running one command: own process group, no credentials,
//! timeout), `run` (one event's hooks at once and what they said: [`HookOutcome`]), `report`
//! (each run as it starts and ends, for `--include-hook-events`: [`HookRun`]), `session`
//! ([`Hooks`], one method per event, the value a session holds; it is the loop's `StopHooks`
//! too), `post_sampling`.

mod callback;
mod config;
mod event;
mod post_sampling;
mod process;
mod report;
mod run;
mod session;

pub use callback::{CallbackHook, HookCallbacks, callback_hooks_from_json};
pub use config::{HookCommand, HookConfig};
pub use event::{DEFAULT_HOOK_TIMEOUT, HookEvent, Matcher};
pub use post_sampling::{HookError, PostSamplingContext, PostSamplingHooks, PostSamplingSummary};
pub use report::{HookHandler, HookObserver, HookPhase, HookRun, HookRunEnd, HookRunOutcome};
pub use run::{HookOutcome, HookPermission, HookRunFailure};
pub use session::{
    HookNotifier, Hooks, PromptVerdict, SessionStartSource, SubagentStop,
    reminders as hook_reminders,
};
// The plug point's answer, defined beside the trait; named here too, where hooks produce it.
pub use crate::plug::StopHookOutcome;
