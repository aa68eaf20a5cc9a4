//! Speculation's UI side: while the person types, the draft is handed to the session
//! ([`Op::Speculate`]) once typing pauses for [`SPECULATION_DEBOUNCE`], so it can pre-run the
//! read-only tools the request will need. Only when no turn runs, no dialog is open and the
//! draft is a prompt of at least [`SPECULATION_MIN_CHARS`] characters (not a slash command);
//! each distinct draft once. Off (the session's
//! [`SessionInfo::speculation`](tine_session::SessionInfo), off by default), no timer is ever
//! set.

use std::time::Duration;

use tine_session::Op;
use tokio::time::Instant;

/// How long typing must pause before the draft is speculated on.
pub(crate) const SPECULATION_DEBOUNCE: Duration = Duration::from_millis(400);
/// Drafts shorter than this are not worth a request.
pub(crate) const SPECULATION_MIN_CHARS: usize = 8;

/// Speculation's state.
#[derive(Debug, Default)]
pub(crate) struct SpeculationState {
    on: bool,
    /// The prompt box's text when last looked at.
    draft: String,
    /// When the pause is long enough to send the draft.
    deadline: Option<Instant>,
    /// The last draft sent.
    sent: Option<String>,
}

impl SpeculationState {
    /// On or off (the session's `speculationEnabled`).
    pub(crate) fn set_on(&mut self, on: bool) {
        self.on = on;
        if !on {
            self.deadline = None;
        }
    }

    /// After a terminal event: a changed draft (re)starts the pause.
    pub(crate) fn note_draft(&mut self, text: &str, now: Instant) {
        if !self.on || text == self.draft {
            return;
        }
        self.draft = text.to_owned();
        self.deadline = Some(now + SPECULATION_DEBOUNCE);
    }

    /// When speculation next needs to wake the loop.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// What is due at `now`: the draft, once typing paused long enough, if `allowed` (no turn
    /// runs, no dialog is open).
    pub(crate) fn due(&mut self, now: Instant, allowed: bool) -> Option<Op> {
        let deadline = self.deadline?;
        if now < deadline {
            return None;
        }
        self.deadline = None;
        let draft = self.draft.trim().to_owned();
        let worth_it = draft.chars().count() >= SPECULATION_MIN_CHARS
            && !draft.starts_with('/')
            && allowed
            && self.sent.as_deref() != Some(draft.as_str());
        if !worth_it {
            return None;
        }
        self.sent = Some(draft.clone());
        Some(Op::Speculate(draft))
    }
}
