//! tine-fork-runtime: background agents that run on the parent's prompt cache (seed 000).
//!
//! Modules in reading order:
//! - [`cache_safe`]: [`CacheSafeParams`], the five parts of the cache key, and the per-session
//!   [`CacheSafeSlot`] they are saved into after each main-thread turn.
//! - [`subagent`]: [`create_subagent_context`], a fork's isolated context (table 4.2 of seed 000).
//! - [`fork`]: [`run_forked_agent`], the query loop on the parent's prefix plus the fork's prompt.
//! - [`pipeline`]: the [`StopHookPipeline`], which saves the params, starts [`BackgroundJob`]s
//!   and runs the user's stop hooks.

pub mod cache_safe;
pub mod fork;
pub mod pipeline;
pub mod subagent;

pub use cache_safe::{CacheSafeParams, CacheSafeSlot};
pub use fork::{ForkError, ForkParams, ForkResult, OnMessage, run_forked_agent};
pub use pipeline::{
    BackgroundEvent, BackgroundJob, DEFAULT_DRAIN_TIMEOUT, DrainReport, JobContext, JobError,
    JobOutcome, StopHookPipeline,
};
pub use subagent::{
    AppStateSink, AppStateStore, ContentReplacementState, NoAppState, NotificationSink,
    ParentContext, SessionInfo, SubagentContext, SubagentOverrides, create_subagent_context,
};
