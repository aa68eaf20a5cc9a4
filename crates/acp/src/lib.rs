//! tine-acp: `tine acp`, the front end of the session protocol for editors (Zed, JetBrains IDEs,
//! Neovim's CodeCompanion and avante, ...) over the Agent Client Protocol: JSON-RPC on standard
//! input and output, spoken through the official `agent-client-protocol` crate.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tine_acp::AcpError> {
//! let config = tine_acp::AcpConfig {
//!     template: tine_session::SessionOptions::new("."),
//!     bypass_allowed: false,
//! };
//! tine_acp::serve(config).await // until the editor closes the connection
//! # }
//! ```
//!
//! Each `session/new` or `session/load` is a tine session ([`tine_session::Session`]); its
//! events become `session/update`s, its permission asks `session/request_permission`, and, when
//! the editor offers them, its Read, Write and Edit go through the editor's files.
//!
//! Modules: `server` (the handlers, several sessions per connection), `live` (one session: its
//! pump, prompts and their stop reasons, cancel), `updates` (events and history as updates),
//! `tool_calls` (a call's kind, title, locations and content), `permission` (asks), `prompt`
//! (an editor's content blocks as the op), `editor` (the editor's files), `jobs` (what the pump
//! sends the editor, in order with the updates), `terminal` (the editor's terminal for Bash), `stdio` (standard input and
//! output as capped lines), `modes`
//! (permission modes as session modes).
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod editor;
mod jobs;
mod live;
mod modes;
mod permission;
mod prompt;
mod server;
mod stdio;
mod terminal;
mod tool_calls;
mod updates;

pub use server::{AcpConfig, AcpError, serve, serve_on};
