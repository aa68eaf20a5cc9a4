//! tine-checkpoints' tests: a real `git`, real files in temporary directories.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
