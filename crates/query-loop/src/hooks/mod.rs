//! Hooks around the loop, in Claude Code's shape: the user's shell commands from settings for
//! every event tine runs (PreToolUse, PostToolUse, UserPromptSubmit, SessionStart, SessionEnd,
//! Notification, PreCompact, SubagentStop, Stop), and the in-process post-sampling registry
//! upper layers plug background work into.
//!
//! Modules in reading order: `config` (what the settings' hooks mean: events, matchers,
//! [`HookConfig`]), `process` (running one command: own process group, no credentials,
//! timeout), `run` (one event's hooks at once and what they said: [`HookOutcome`]), `session`
//! ([`Hooks`], one method per event, the value a session holds; it is the loop's `StopHooks`
//! too), `stop` (the older Stop-only API and [`CommandStopHooks`], on the same runner),
//! `post_sampling`.

mod config;
mod post_sampling;
mod process;
mod run;
mod session;
mod stop;

pub use config::{DEFAULT_HOOK_TIMEOUT, HookCommand, HookConfig, HookEvent, Matcher};
pub use post_sampling::{HookError, PostSamplingContext, PostSamplingHooks, PostSamplingSummary};
pub use process::{
    ProcessOutput as HookCommandOutput, RunError as HookRunError, run_shell as run_hook_command,
};
pub use run::{HookOutcome, HookPermission, HookRunFailure};
pub use session::{
    HookNotifier, Hooks, PromptVerdict, SessionStartSource, SubagentStop,
    reminders as hook_reminders,
};
pub use stop::{
    CommandStopHooks, HookFailure, HookMatcher, HookSpec, HooksSettings, StopHookCommand,
    StopHookInput, StopHookReport, run_stop_hooks, stop_commands_from_settings,
};
// The plug point's answer, defined beside the trait; named here too, where hooks produce it.
pub use crate::plug::StopHookOutcome;
