//! `TINE_PROFILE_STARTUP=1`: the time of each start-up phase, printed to stderr.

use std::time::Instant;

/// Marks phases since process start (approximately: since `main` began).
pub(crate) struct StartupProfile {
    enabled: bool,
    start: Instant,
    last: Instant,
}

impl StartupProfile {
    pub(crate) fn from_env() -> Self {
        let now = Instant::now();
        Self {
            enabled: std::env::var_os("TINE_PROFILE_STARTUP")
                .is_some_and(|v| v != "0" && !v.is_empty()),
            start: now,
            last: now,
        }
    }

    /// Ends the phase called `name`.
    pub(crate) fn mark(&mut self, name: &str) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        eprintln!(
            "[startup] {name:<16} {:>8.3} ms  (total {:>8.3} ms)",
            (now - self.last).as_secs_f64() * 1e3,
            (now - self.start).as_secs_f64() * 1e3
        );
        self.last = now;
    }
}
