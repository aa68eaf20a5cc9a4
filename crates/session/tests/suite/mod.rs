#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents;
mod app_hooks;
mod away;
mod editor_files;
mod fork_prefix;
mod hooks;
mod idle;
mod interrupt;
mod permissions;
mod plan_mode;
mod sdk_mcp;
mod speculation;
mod stuck;
mod support;
mod thinking;
mod turns;
