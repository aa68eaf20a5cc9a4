//! tine-tui's integration tests: widgets and states as snapshots on ratatui's TestBackend, the
//! App driven by keys and session events, and the terminal loop under paused time.
mod suite;
