#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash_corpus;
mod context;
mod edit_write;
mod file_state;
mod permissions_answers;
mod pool;
mod read;
mod schema;
mod search;
mod security_paths;
mod support;
mod tool_bash;
mod web_fetch;
