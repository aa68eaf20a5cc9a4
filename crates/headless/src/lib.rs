//! tine-headless: headless tine (`tine -p`), a front end of the session protocol. It maps
//! standard input and output onto tine-session's ops and events, in Claude Code's shapes:
//! a prompt (or stream-json user messages, one per line) in; text, one `json` result, or
//! `stream-json` lines (system init, assistant and user messages, results) out; and, on
//! stream-json, the Claude Agent SDK's control protocol (`control_request` /
//! `control_response` in both directions), so apps built on the SDK run tine.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tine_headless::HeadlessError> {
//! use tine_headless::{Headless, InputFormat, OutputFormat};
//! let options = tine_session::SessionOptions::new(".");
//! let code = tine_headless::run(options, Headless::new(InputFormat::Text, OutputFormat::Json)
//!     .with_prompt("what does this project do?"), &mut |_| {}).await?;
//! # let _ = code; Ok(()) }
//! ```
//!
//! Modules, in reading order:
//! - `config`: [`Headless`], what a run asks for, and [`HeadlessError`].
//! - `run`: [`run`]: the session started, the input read and submitted, the events printed,
//!   the exit code.
//! - `control`: stream-json input and the Agent SDK's control protocol on it.
//! - `front`, `output`: the events printed as text, json and stream-json; `text`: each reply
//!   printed once.
//! - `start`: the session started (a settings refusal printed whole).
//! - `signals`: SIGINT, SIGTERM and SIGHUP abort the session (exit 130, 143, 129).
//!
//! It is a front end: it owns standard output and prints (the session never does).
#![warn(missing_docs, unnameable_types)]

mod config;
mod control;
mod front;
mod output;
mod run;
mod signals;
mod start;
mod text;

pub use config::{Headless, HeadlessError, InputFormat, OutputFormat};
pub use control::stream_json_prompt;
pub use run::run;
