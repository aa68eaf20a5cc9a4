//! Hooks around the loop: user stop hooks (shell commands from settings, Claude-Code-compatible,
//! run through [`CommandStopHooks`], an implementation of the loop's `StopHooks`) and the
//! in-process post-sampling hook registry upper layers plug background work into.

mod post_sampling;
mod process;
mod stop;

pub use post_sampling::{HookError, PostSamplingContext, PostSamplingHooks, PostSamplingSummary};
pub use process::{
    CommandOutput as HookCommandOutput, RunError as HookRunError, run_shell as run_hook_command,
};
pub use stop::{
    CommandStopHooks, DEFAULT_HOOK_TIMEOUT, HookFailure, HookMatcher, HookSpec, HooksSettings,
    StopHookCommand, StopHookInput, StopHookReport, run_stop_hooks, stop_commands_from_settings,
};
// The plug point's answer, defined beside the trait; named here too, where hooks produce it.
pub use crate::plug::StopHookOutcome;
