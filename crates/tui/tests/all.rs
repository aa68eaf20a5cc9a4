//! tine-tui's integration tests: widgets and states as snapshots on ratatui's TestBackend, the
//! App driven by keys and session events, the terminal loop under paused time, and the UI on
//! a real session against the in-process mock (`suite/session_ui`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
