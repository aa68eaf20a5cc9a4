//! Speculation's UI side (seed 001 §16.2.4 ④): while the person types, the draft is handed to
//! the session ([`UiCommand::Speculate`]) once typing pauses for [`SPECULATION_DEBOUNCE`], so
//! it can pre-run the read-only tools the request will need. Only when no turn runs, no dialog
//! is open and the draft is a prompt of at least [`SPECULATION_MIN_CHARS`] characters (not a
//! slash command); each distinct draft once. Off ([`App::set_speculation`], the default), no
//! timer is ever set.

use std::time::Duration;

use tokio::time::Instant;

use crate::app::App;
use crate::event::UiCommand;

/// How long typing must pause before the draft is speculated on.
pub const SPECULATION_DEBOUNCE: Duration = Duration::from_millis(400);
/// Drafts shorter than this are not worth a request.
pub const SPECULATION_MIN_CHARS: usize = 8;

/// Speculation's state on the [`App`].
#[derive(Debug, Default)]
pub struct SpeculationState {
    on: bool,
    /// The prompt box's text when last looked at.
    draft: String,
    /// When the pause is long enough to send the draft.
    deadline: Option<Instant>,
    /// The last draft sent.
    sent: Option<String>,
}

impl App {
    /// Turns speculation on or off (the session's `speculationEnabled`).
    pub fn set_speculation(&mut self, on: bool) {
        self.speculation.on = on;
        if !on {
            self.speculation.deadline = None;
        }
    }

    /// After a terminal event: a changed draft (re)starts the pause.
    pub(crate) fn note_draft(&mut self, now: Instant) {
        if !self.speculation.on {
            return;
        }
        let text = self.input.text();
        if text == self.speculation.draft {
            return;
        }
        self.speculation.draft = text.to_owned();
        self.speculation.deadline = Some(now + SPECULATION_DEBOUNCE);
    }

    /// When speculation next needs to wake the loop.
    pub(crate) fn speculation_deadline(&self) -> Option<Instant> {
        self.speculation.deadline
    }

    /// What is due at `now`: the draft, once typing paused long enough.
    pub fn due_commands(&mut self, now: Instant) -> Vec<UiCommand> {
        let Some(deadline) = self.speculation.deadline else {
            return Vec::new();
        };
        if now < deadline {
            return Vec::new();
        }
        self.speculation.deadline = None;
        let draft = self.speculation.draft.trim().to_owned();
        let worth_it = draft.chars().count() >= SPECULATION_MIN_CHARS
            && !draft.starts_with('/')
            && self.turn.is_none()
            && !self.dialog.is_open()
            && self.speculation.sent.as_deref() != Some(draft.as_str());
        if !worth_it {
            return Vec::new();
        }
        self.speculation.sent = Some(draft.clone());
        vec![UiCommand::Speculate(draft)]
    }
}
