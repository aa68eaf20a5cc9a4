#![allow(clippy::unwrap_used, clippy::expect_used)]

mod edit_write;
mod file_state;
mod read;
mod schema;
mod search;
mod support;
mod tool_bash;
