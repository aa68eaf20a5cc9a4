#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash_corpus;
mod edit_write;
mod file_state;
mod read;
mod schema;
mod support;
mod tool_bash;
