#![allow(clippy::unwrap_used, clippy::expect_used)]

mod file_state;
mod read;
mod schema;
mod support;
