//! tine-test-support: what the in-process tests and benchmarks of several crates share, so
//! each suite says only what it tests. A dev-dependency only: no product crate may depend on
//! it normally (`cargo xtask check-layers` says so), and it may use any crate of ours.
//!
//! Modules, in reading order:
//! - [`mock`]: the in-process mock and a client for it, the long system prompt that passes the
//!   minimum cacheable prefix, the built-in tools sorted as the CLI sorts them.
//! - [`project`]: [`ScratchProject`], a tine home and a project directory, deleted on drop.
//! - [`session`]: [`SessionBuilder`], a main-thread session on the mock wired as the CLI wires
//!   it (the engine's stop hooks are the pipeline, whose parent context shares the engine's
//!   tool context), and the engine config it starts from.
//! - [`tally`]: [`EventTally`], the background events a pipeline sent, read without waiting
//!   for a forwarder; [`eventually`] for what happens on another task.
//! - [`requests`]: questions about the requests the mock recorded.
//! - [`settings`]: [`SettingsFixture`], a scratch project's settings files (config's and the
//!   permission engine's suites).
//! - [`fuzz`]: [`fuzz_config`], the property suites' case count (`PROPTEST_CASES`).
//!
//! The tests of the built `tine` binary have their own support crate (`tests/`, tine-e2e).

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod fuzz;
pub mod mock;
pub mod project;
pub mod requests;
pub mod session;
pub mod settings;
pub mod tally;

pub use fuzz::fuzz_config;
pub use mock::{
    MODEL, Tools, big_system_prompt, client_for, openai_client_for, server, tool_setup,
};
pub use project::ScratchProject;
pub use requests::{api_usage, body_has, last_user_has};
pub use session::{Session, SessionBuilder, engine_config};
pub use settings::SettingsFixture;
pub use tally::{EventTally, eventually};
