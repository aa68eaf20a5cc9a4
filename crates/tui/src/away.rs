//! The away card: when the person comes back after an idle gap (terminal focus regained, or
//! the first key or paste after it), the UI asks the session for a summary of where things
//! stand ([`Op::AwaySummary`]) and shows the answer as a card above the prompt box until the
//! next prompt is sent (or Esc).
//!
//! The gap is counted from the person's last key, paste or focus event, or from the end of the
//! last turn, whichever is later; a turn running is never "away". Off (the session's
//! [`SessionInfo::away_after`](tine_session::SessionInfo) is `None`, the default), nothing is
//! ever asked.

use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEventKind};
use ratatui::text::{Line, Span};
use tine_session::Op;
use tokio::time::Instant;

use crate::theme;
use crate::wrap::sanitize;

/// The away card's state.
#[derive(Debug, Default)]
pub(crate) struct AwayState {
    /// After how long idle a return asks for a summary; `None`: off.
    after: Option<Duration>,
    /// The person's (or the last turn's) last sign of life.
    last_activity: Option<Instant>,
    /// A summary was asked for and has not come yet.
    asked: bool,
    card: Option<String>,
}

impl AwayState {
    /// On after `after` idle (the session's `awaySummaryIdleMinutes`), or off with `None`.
    pub(crate) fn set_after(&mut self, after: Option<Duration>) {
        self.after = after;
    }

    /// The card shown, if any.
    pub(crate) fn card(&self) -> Option<&str> {
        self.card.as_deref()
    }

    /// A terminal event, before the app handles it: a return after the gap asks for the
    /// summary when `may_ask` (no turn runs, there is something to summarize); Enter or Esc
    /// takes the card away.
    pub(crate) fn note_presence(&mut self, event: &Event, now: Instant, may_ask: bool) -> Vec<Op> {
        let presence = match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                if matches!(key.code, KeyCode::Enter | KeyCode::Esc) {
                    self.card = None;
                }
                true
            }
            Event::Paste(_) | Event::FocusGained => true,
            _ => false,
        };
        let Some(after) = self.after.filter(|_| presence) else {
            return Vec::new();
        };
        let gap = self.last_activity.map(|t| now.saturating_duration_since(t));
        self.last_activity = Some(now);
        let returned = gap.is_some_and(|gap| gap >= after);
        if returned && may_ask && !self.asked {
            self.asked = true;
            return vec![Op::AwaySummary];
        }
        Vec::new()
    }

    /// A turn ended: the idle gap starts now.
    pub(crate) fn note_turn_end(&mut self, now: Instant) {
        self.last_activity = Some(now);
    }

    /// The session's summary arrived.
    pub(crate) fn show(&mut self, text: &str) {
        self.asked = false;
        self.card = Some(sanitize(text.trim()));
    }

    /// The card's rows (title and text, wrapped to `width` less the borders), none when there
    /// is no card.
    pub(crate) fn rows(&self, width: u16) -> Vec<Line<'static>> {
        let Some(card) = &self.card else {
            return Vec::new();
        };
        let inner = usize::from(width.saturating_sub(4)).max(10);
        let mut rows = Vec::new();
        for paragraph in card.lines() {
            let mut line = String::new();
            for word in paragraph.split_whitespace() {
                if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > inner {
                    rows.push(Line::from(Span::raw(std::mem::take(&mut line))));
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
            if !line.is_empty() {
                rows.push(Line::from(Span::raw(line)));
            }
        }
        rows.truncate(6);
        rows.push(Line::from(Span::styled(
            "enter or esc to dismiss".to_owned(),
            theme::dim(),
        )));
        rows
    }
}
