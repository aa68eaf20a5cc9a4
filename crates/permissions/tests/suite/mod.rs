#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash_corpus;
mod fuzz_rules;
mod fuzz_settings;
mod permissions_answers;
