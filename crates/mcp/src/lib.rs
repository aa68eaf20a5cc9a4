//! tine-mcp: MCP servers through rmcp, the official Rust SDK (seed 003 §八). Their tools become
//! tine [`Tool`](tine_tools::Tool)s named `mcp__SERVER__TOOL`, which the `ToolPool` orders after
//! the built-ins. Modules in reading order (private but `test_server`, behind the `test-server`
//! feature: the items re-exported at the root are the API):
//!
//! - `config`: one server's configuration in Claude Code's shape (stdio, streamable HTTP or sdk),
//!   with `${VAR}` expansion (`expand`).
//! - `sources`: where configurations come from (`--mcp-config`, `.mcp.json`, user and local
//!   settings, `~/.claude.json`) and which wins for a name.
//! - `trust`: whether a project's `.mcp.json` server may start.
//! - `names`: `mcp__SERVER__TOOL` within the API's name rules.
//! - `client`: one connection (child process group, HTTP or the SDK app's relay), the handshake
//!   under a deadline, elicitation; `http`: rmcp's HTTP transport over the workspace's reqwest;
//!   `sdk`: servers inside the Agent SDK app, reached through its [`SdkMcpRelay`].
//! - `slot`: one configured server and its connection, the state [`McpServerStatus`] shows.
//! - `manager`: the session's servers: parallel bounded start, statuses, exits reported,
//!   restart, shutdown.
//! - `tool`, `resources`, `output`: the tools the model calls and how results read.
//! - `commands`: `tine mcp list|get|add|remove|trust`.
//!
//! # Example
//!
//! A server's configuration as `.mcp.json` or `--mcp-config` write it, and the name its tools
//! get:
//!
//! ```
//! use serde_json::json;
//! use tine_mcp::McpServerConfig;
//! use tine_mcp::tool_name;
//!
//! let config = McpServerConfig::from_json(&json!({"command": "npx", "args": ["my-server"]}))?;
//! assert_eq!(config.transport_name(), "stdio");
//! assert_eq!(tool_name("github", "create_issue"), "mcp__github__create_issue");
//! # Ok::<(), tine_mcp::ServerConfigError>(())
//! ```
//!
//! [`McpManager::start`] connects the configured servers and returns their tools.
//! `examples/mcp_client.rs` does it against the crate's small test server over streamable
//! HTTP, in-process (`cargo run -p tine-mcp --example mcp_client`).
//!
//! # Types from lower crates
//!
//! Signatures use [`tine_tools`]'s [`Tool`](tine_tools::Tool) (an MCP tool is one) and
//! [`tine_config`]'s settings ([`LoadedSettings`](tine_config::LoadedSettings),
//! [`SettingsPaths`](tine_config::SettingsPaths)).
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod client;
mod commands;
mod config;
mod expand;
mod http;
mod manager;
mod names;
mod output;
mod resources;
mod sdk;
mod slot;
mod sources;
mod tool;
mod trust;

#[cfg(feature = "test-server")]
pub mod test_server;

pub use client::{ConnectError, ElicitationAnswer, ElicitationHandler, ElicitationRequest};
pub use commands::{
    MCP_USAGE, McpCommand, McpCommandEnv, McpCommandError, parse_mcp_args, run_mcp_command,
};

pub use config::{McpServerConfig, ServerConfigError};
pub use manager::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, McpError, McpEvent, McpManager, McpOptions,
    McpServerInfo, McpWarning,
};
pub use names::tool_name;
pub use resources::{LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL};
pub use sdk::SdkMcpRelay;
pub use slot::{McpServerIdentity, McpServerStatus, McpToolInfo};
pub use sources::{McpConfig, McpConfigError, McpScope, McpSources, ServerEntry, load_config};
pub use tool::McpTool;
pub use trust::{ProjectTrust, TrustDecision};
