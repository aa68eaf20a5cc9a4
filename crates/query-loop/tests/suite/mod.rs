#![allow(clippy::unwrap_used, clippy::expect_used)]

mod context;
mod engine;
mod hook_callbacks;
mod hooks;
mod paths;
mod query_loop;
mod stuck;
mod support;
mod tool_array;
mod tool_search;
mod transcript;
