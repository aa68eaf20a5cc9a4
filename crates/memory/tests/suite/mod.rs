#![allow(clippy::unwrap_used, clippy::expect_used)]

mod extraction;
mod harness;
mod recall;
mod scenario;
