#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fork;
mod harness;
mod pipeline;
mod subagent;
