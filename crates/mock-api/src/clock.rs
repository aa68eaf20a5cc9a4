//! A controllable clock for cache TTLs: real elapsed time (or none, when manual) plus whatever
//! a test has added with [`MockClock::advance`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Time as the simulator sees it, as a duration since the clock was made.
#[derive(Debug, Clone)]
pub struct MockClock {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// `None` for a manual clock: only `advance` moves it.
    start: Option<Instant>,
    offset: Mutex<Duration>,
}

impl MockClock {
    /// Real time, plus any `advance`.
    pub fn system() -> Self {
        Self::with_start(Some(Instant::now()))
    }

    /// Frozen time that moves only with `advance`.
    pub fn manual() -> Self {
        Self::with_start(None)
    }

    fn with_start(start: Option<Instant>) -> Self {
        Self {
            inner: Arc::new(Inner {
                start,
                offset: Mutex::new(Duration::ZERO),
            }),
        }
    }

    /// Moves the clock forward (every clone sees it).
    pub fn advance(&self, by: Duration) {
        let mut offset = self.inner.offset.lock().unwrap_or_else(|e| e.into_inner());
        *offset += by;
    }

    /// Now, as a duration since the clock was made.
    pub fn now(&self) -> Duration {
        let offset = *self.inner.offset.lock().unwrap_or_else(|e| e.into_inner());
        self.inner.start.map(|s| s.elapsed()).unwrap_or_default() + offset
    }
}

impl Default for MockClock {
    fn default() -> Self {
        Self::system()
    }
}
