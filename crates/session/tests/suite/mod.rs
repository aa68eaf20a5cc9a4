#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents;
mod fork_prefix;
mod hooks;
mod idle;
mod interrupt;
mod permissions;
mod stuck;
mod support;
mod turns;
