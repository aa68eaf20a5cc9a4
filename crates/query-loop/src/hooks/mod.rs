//! Hooks around the loop: user stop hooks (shell commands from settings, Claude-Code-compatible)
//! and the in-process post-sampling hook registry upper layers plug background work into.

mod post_sampling;
mod process;
mod stop;

pub use post_sampling::{HookError, PostSamplingContext, PostSamplingHooks, PostSamplingSummary};
pub use stop::{
    DEFAULT_HOOK_TIMEOUT, HookFailure, HookMatcher, HookSpec, HooksSettings, StopHookCommand,
    StopHookInput, StopHookOutcome, StopHookReport, run_stop_hooks, stop_commands_from_settings,
};
