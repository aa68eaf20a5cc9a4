//! tine-mock-api: a faithful local simulator of the Anthropic Messages API, with prompt-cache
//! accounting, scripted replies and injected faults, for tests, benchmarks and the offline demo;
//! and of OpenAI-compatible chat completions, driven by the same scenarios.
//! It parses raw JSON and depends on no tine crate, so a client bug shows up as a failure
//! instead of being shared. The scenario format is documented in `docs/mock-api.md`.
//!
//! Modules, in reading order:
//! - [`server`]: [`MockServer`] and [`MockConfig`], starting, inspecting and stopping it.
//! - `messages`: `POST /v1/messages` and `count_tokens`, with the real API's checks and cache.
//! - `route`: what both model routes share: the server's state, the window checks, the
//!   scripted reply and the faults on the wire.
//! - [`chat`]: `POST /v1/chat/completions`, the same scenarios over OpenAI's wire (conversion,
//!   chunks in OpenAI's or Ollama's dialect, automatic prefix caching).
//! - [`scenario`]: [`Scenario`], [`Rule`], [`When`]: the scripted model (JSON or builder);
//!   [`reply`]: [`Reply`], what it says; [`fault`]: [`Fault`], the failures it injects.
//! - [`script`]: choosing the rule for a request and rendering its reply.
//! - [`validate`]: header and body checks with the real API's wording.
//! - [`prompt`]: a request as blocks with running prefix hashes; [`tokens`]: the estimate.
//! - [`cache`]: [`PromptCache`], breakpoints, lookback, TTLs, minimum length, usage.
//! - [`sse`]: the response and event shapes; [`log`]: [`RequestRecord`] and the JSONL log;
//!   [`clock`]: [`MockClock`]; [`error`]: [`ApiError`] and [`MockError`]; `json`: reading a raw
//!   request's fields.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tine_mock_api::MockError> {
//! use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
//! let scenario = Scenario::new().rule(Rule::new().last_user_contains("hi").reply(Reply::text("Hello!")));
//! let server = MockServer::start(MockConfig::new(scenario)).await?;
//! let url = format!("{}/v1/messages", server.base_url());
//! // ... send requests to `url`, then inspect what the server saw:
//! for record in server.requests() {
//!     println!("{} {:?}", record.number, record.usage);
//! }
//! server.stop().await;
//! # Ok(()) }
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod cache;
pub mod chat;
pub mod clock;
pub mod error;
pub mod fault;
mod json;
pub mod log;
mod messages;
pub mod prompt;
pub mod reply;
mod route;
pub mod scenario;
pub mod script;
pub mod server;
pub mod sse;
pub mod tokens;
pub mod validate;

pub use cache::{
    BreakpointReport, CacheHit, CacheReport, DEFAULT_MIN_CACHEABLE_TOKENS, LOOKBACK_BLOCKS,
    PromptCache, Usage, WriteTicket,
};
pub use chat::ChatDialect;
pub use clock::MockClock;
pub use error::{ApiError, MockError};
pub use fault::Fault;
pub use log::RequestRecord;
pub use prompt::{CacheTtl, Prompt, PromptBlock, Segment, analyze};
pub use reply::{Reply, ReplyBlock};
pub use scenario::{Captures, DEFAULT_CONTEXT_WINDOW, Rule, Scenario, TextMatch, When};
pub use script::Completion;
pub use server::{MockConfig, MockServer};
