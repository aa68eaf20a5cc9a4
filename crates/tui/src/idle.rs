//! The idle hint: a minute after a turn ended with nothing sent since, the UI tells
//! the session to start what background jobs put off (a batched memory extraction,
//! [`Op::FlushBackground`]), so memories do not wait for the exit, and that the prompt has
//! waited ([`Op::NotifyIdle`]: Notification hooks hear `idle_prompt`). Once per idle stretch.

use std::time::Duration;

use tine_session::Op;
use tokio::time::Instant;

/// How long after a turn, with nothing typed, the idle hint goes.
pub const IDLE_AFTER: Duration = Duration::from_secs(60);

/// The idle timer.
#[derive(Debug)]
pub(crate) struct IdleTimer {
    after: Duration,
    at: Option<Instant>,
}

impl IdleTimer {
    pub(crate) fn new(after: Duration) -> Self {
        Self { after, at: None }
    }

    /// A turn ended at `now`: the stretch starts.
    pub(crate) fn arm(&mut self, now: Instant) {
        self.at = Some(now + self.after);
    }

    /// Something was sent, or a turn started: not idle.
    pub(crate) fn disarm(&mut self) {
        self.at = None;
    }

    /// When the hint is due.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.at
    }

    /// The hint's ops, once, when due at `now`.
    pub(crate) fn due(&mut self, now: Instant) -> Vec<Op> {
        match self.at {
            Some(at) if now >= at => {
                self.at = None;
                vec![Op::FlushBackground, Op::NotifyIdle]
            }
            _ => Vec::new(),
        }
    }
}
