#![allow(clippy::unwrap_used, clippy::expect_used)]

mod context;
mod edit_write;
mod editor_files;
mod file_state;
mod fuzz_bash;
mod fuzz_tools;
mod git_config_secrets;
mod media;
mod pool;
mod read;
mod schema;
mod search;
mod security_paths;
mod support;
mod tool_bash;
mod web_fetch;
