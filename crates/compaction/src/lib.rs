//! tine-compaction: compaction of long conversations (seed 003 §九, seed 000 §8.2), as the
//! query loop's `Compactor`: automatic before a request crosses the threshold, reactive on
//! "prompt is too long", manual on `/compact [focus]`, and micro (old tool results cleared)
//! once the cache has gone cold. The summary is a fork on the parent's cache: its first request
//! reads the parent's whole cached prefix. A sibling of memory: memory's hook is wired in by
//! the host as a plain function.
//!
//! Modules, in reading order (private: the items named below, re-exported at the root, are the
//! API):
//! - `config`: thresholds (effective window − 13k), the switches, [`CompactionConfig`].
//! - `estimate`: the context size from the last usage plus an estimate of what came since.
//! - `micro`: clearing old tool results through the content-replacement decisions.
//! - `plan`: what a compaction summarizes and keeps: never the current turn's prompt.
//! - `prompt`: the summary instruction (nine sections after an `<analysis>` scratchpad), the
//!   reading of the reply, the continuation message.
//! - `rounds`: dropping the oldest whole API rounds when the summary request is too long.
//! - `summary`: the summary fork and its retries.
//! - `dropped`: what the summarized part held (for the boundary record).
//! - `reattach`: recent files, todos and running shells put back after the summary.
//! - `compactor`: [`SessionCompactor`], the plug itself, with the circuit breaker; it runs
//!   the session's PreCompact / PostCompact hooks through `tine_query_loop::hooks::Hooks`.
//! - `log`: `/compact log` and `tine compact log`.
//!
//! # Example
//!
//! A host builds a [`SessionCompactor`] on the session's [`tine_fork_runtime::ParentContext`]
//! and sets it as the engine's `compactor` (`tine_query_loop::EngineConfig`); from then on the
//! loop compacts at the thresholds below, and `QueryEngine::compact_now` compacts on demand.
//! `examples/compact_history.rs` does that on the bundled simulator
//! (`cargo run -p tine-compaction --example compact_history`). Where the thresholds sit, and
//! what is kept of a summary reply:
//!
//! ```
//! use tine_compaction::Thresholds;
//! use tine_compaction::format_summary;
//!
//! // Claude's 200k window: the reply's 20k room, then a 13k buffer.
//! let levels = Thresholds::for_model("claude-sonnet-4-5", None);
//! assert_eq!(levels.auto_compact, 200_000 - 20_000 - 13_000);
//! // A 32k local model compacts well before its window is full, not on every request.
//! let small = Thresholds::for_window("qwen2.5-coder:7b", 32_768, None);
//! assert!(small.auto_compact > 16_000 && small.auto_compact < 32_768);
//!
//! let reply = "<analysis>thinking aloud</analysis>\n<summary>Fixed the parser.</summary>";
//! assert_eq!(format_summary(reply).as_deref(), Some("Fixed the parser."));
//! ```
//!
//! # Types from lower crates
//!
//! Signatures use [`tine_query_loop`]'s compaction plug, boundary records and hooks
//! ([`Compactor`](tine_query_loop::Compactor), [`CompactBoundary`](tine_query_loop::CompactBoundary),
//! [`Hooks`](tine_query_loop::hooks::Hooks)),
//! [`tine_fork_runtime`]'s [`ParentContext`](tine_fork_runtime::ParentContext),
//! [`tine_api_client`]'s messages and usage, [`tine_tools`]'s [`ToolContext`](tine_tools::ToolContext)
//! and [`tine_config`]'s [`SessionId`](tine_config::SessionId).
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod compactor;
mod config;
mod dropped;
mod error;
mod estimate;
mod log;
mod micro;
mod plan;
mod prompt;
mod reattach;
mod rounds;
mod summary;

pub use compactor::{
    BeforeCompaction, Clock, CompactionReport, ManualClock, SessionCompactor, SystemClock,
};
pub use config::{AUTO_COMPACT_SETTING, CACHE_TTL, CompactionConfig, IDLE_CLEAR_ENV, Thresholds};
pub use error::CompactionError;
pub use log::{LogEntry, LogError, compact_log};
pub use micro::CLEARED_TOOL_RESULT;
pub use prompt::{CONTINUATION_PREFIX, SUMMARY_INSTRUCTION_MARKER, format_summary};
pub use rounds::TRUNCATED_MARKER;
pub use summary::MAX_TOO_LONG_RETRIES;
