#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hooks;
mod paths;
mod transcript;
