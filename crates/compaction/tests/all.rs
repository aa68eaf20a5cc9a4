//! Integration tests of tine-compaction against the in-process mock API.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
