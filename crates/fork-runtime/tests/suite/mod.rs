#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cache_break;
mod drain;
mod fork;
mod harness;
mod pipeline;
mod side_query;
mod subagent;
