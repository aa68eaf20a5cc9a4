//! The away summary (seed 001 §16.2.5): when the person comes back to the UI after an idle
//! gap, the small fast model reads the last [`AWAY_MESSAGES`] messages and says in one to
//! three sentences what was being done and what comes next, for a card. No fork and no cache
//! write: a one-off request (`side_query`, which sets no `cache_control` anywhere) to a
//! different model, whose cache entry nobody would read.
//!
//! The front end decides when the person returned (its idle clock); the session only answers
//! [`crate::Op::AwaySummary`] with [`crate::SessionEvent::AwaySummary`]. Off
//! (`awaySummaryEnabled: false`, or `--bare`), the handle's call does nothing.

use std::sync::Arc;
use std::time::Duration;

use tine_api_client::{ContentBlock, Message, MessageContent, ModelClient, Role};
use tine_config::settings::LoadedSettings;
use tine_fork_runtime::{SideQuery, UsageLedger, side_query};
use tine_query_loop::repair_tool_pairing;

/// The setting that turns the away summary off (`false`); on by default.
pub(crate) const AWAY_SUMMARY_SETTING: &str = "awaySummaryEnabled";
/// The setting for the idle gap after which a return gets a summary, in minutes.
pub(crate) const AWAY_IDLE_SETTING: &str = "awaySummaryIdleMinutes";
/// The default idle gap.
pub(crate) const DEFAULT_AWAY_IDLE: Duration = Duration::from_secs(5 * 60);
/// How many of the latest messages the summary reads.
pub const AWAY_MESSAGES: usize = 30;
/// The ledger source of its requests.
pub const AWAY_QUERY_SOURCE: &str = "away_summary";
/// The instruction appended after the recent messages.
pub(crate) const AWAY_PROMPT: &str = "The user stepped away from this session and has just come \
back. In 1-3 short sentences, remind them what was being worked on (the task, not the \
details) and what the next step is. No greeting, no lists, no status report.";

/// Whether and when the away summary runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AwayOptions {
    /// `awaySummaryEnabled` (default on).
    pub enabled: bool,
    /// `awaySummaryIdleMinutes` (default 5).
    pub idle: Duration,
}

impl Default for AwayOptions {
    fn default() -> Self {
        Self {
            enabled: true,
            idle: DEFAULT_AWAY_IDLE,
        }
    }
}

impl AwayOptions {
    /// The options from settings, with a warning for each value of the wrong type.
    pub(crate) fn from_settings(settings: &LoadedSettings) -> (Self, Vec<String>) {
        let mut options = Self::default();
        let mut warnings = Vec::new();
        if let Some((value, source)) = settings.get(AWAY_SUMMARY_SETTING) {
            match value.as_bool() {
                Some(on) => options.enabled = on,
                None => warnings.push(format!(
                    "`{AWAY_SUMMARY_SETTING}` in {} must be true or false, not {value}",
                    source.as_str()
                )),
            }
        }
        if let Some((value, source)) = settings.get(AWAY_IDLE_SETTING) {
            match value.as_f64().filter(|m| *m > 0.0 && m.is_finite()) {
                Some(minutes) => options.idle = Duration::from_secs_f64(minutes * 60.0),
                None => warnings.push(format!(
                    "`{AWAY_IDLE_SETTING}` in {} must be a number of minutes above 0, not \
                     {value}; using 5",
                    source.as_str()
                )),
            }
        }
        (options, warnings)
    }
}

/// The summarizer and the idle gap, unless off by the setting or `--bare`.
pub(crate) fn configure(
    loaded: &LoadedSettings,
    bare: bool,
    client: &Arc<dyn ModelClient>,
    small_model: &str,
    ledger: &UsageLedger,
    notices: &mut Vec<crate::protocol::Notice>,
) -> Option<(AwaySummarizer, Duration)> {
    let (options, warnings) = AwayOptions::from_settings(loaded);
    notices.extend(warnings.into_iter().map(crate::protocol::Notice::warning));
    if bare || !options.enabled {
        return None;
    }
    let summarizer = AwaySummarizer {
        client: Arc::clone(client),
        model: small_model.to_owned(),
        ledger: ledger.clone(),
    };
    Some((summarizer, options.idle))
}

/// What the session needs to answer an away summary.
#[derive(Clone)]
pub(crate) struct AwaySummarizer {
    pub client: Arc<dyn ModelClient>,
    pub model: String,
    pub ledger: UsageLedger,
}

impl AwaySummarizer {
    /// The summary of `recent` (the window [`recent_messages`] chose), or `None` when the
    /// request failed (logged: a missing card is no error to show).
    pub(crate) async fn summarize(&self, recent: Vec<Message>) -> Option<String> {
        let mut recent = recent;
        recent.push(Message::user(vec![ContentBlock::text(AWAY_PROMPT)]));
        let mut query = SideQuery::new(&self.model, AWAY_QUERY_SOURCE, recent);
        query.max_tokens = 300;
        match side_query(self.client.as_ref(), &query, Some(&self.ledger)).await {
            Ok(result) => {
                let text = result.text.trim().to_owned();
                (!text.is_empty()).then_some(text)
            }
            Err(error) => {
                tracing::warn!(%error, "the away summary failed");
                None
            }
        }
    }
}

/// Starts the summary of `messages` beside the session's work; its event follows when the
/// small model answers (never after the session's token is cancelled).
pub(crate) fn start(
    away: Option<&AwaySummarizer>,
    messages: &[Message],
    events: &crate::emit::Emitter,
    id: crate::protocol::OpId,
    token: &tokio_util::sync::CancellationToken,
) {
    let Some(away) = away.cloned() else {
        return;
    };
    let recent = recent_messages(messages);
    if recent.is_empty() {
        return;
    }
    let events = events.clone();
    let token = token.clone();
    tokio::spawn(async move {
        let summary = tokio::select! {
            summary = away.summarize(recent) => summary,
            () = token.cancelled() => None,
        };
        if let Some(text) = summary {
            let _ = events.emit_for(id, crate::protocol::SessionEvent::AwaySummary(text));
        }
    });
}

/// The last [`AWAY_MESSAGES`] messages, starting at a person's message (not a tool result,
/// whose call would be cut off), tool calls paired, ending with the model's reply (the
/// summary's instruction is the next user message).
fn recent_messages(messages: &[Message]) -> Vec<Message> {
    let start = messages.len().saturating_sub(AWAY_MESSAGES);
    let window = &messages[start..];
    let Some(first) = window.iter().position(is_person) else {
        return Vec::new();
    };
    let mut recent: Vec<Message> = window[first..].to_vec();
    if let Some(repaired) = repair_tool_pairing(&recent) {
        recent = repaired;
    }
    while recent.last().is_some_and(|m| m.role == Role::User) {
        recent.pop();
    }
    recent
}

/// A user message the person wrote (no tool result in it).
fn is_person(message: &Message) -> bool {
    message.role == Role::User
        && match &message.content {
            MessageContent::Text(_) => true,
            MessageContent::Blocks(blocks) => !blocks
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult(_))),
        }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn the_window_starts_at_a_persons_message_and_ends_with_a_reply() {
        let mut messages = Vec::new();
        for i in 0..20 {
            messages.push(Message::user(vec![ContentBlock::text(format!("ask {i}"))]));
            messages.push(Message::assistant(vec![ContentBlock::tool_use(
                format!("t{i}"),
                "Read",
                json!({"file_path": "a"}),
            )]));
            messages.push(Message::user(vec![ContentBlock::tool_result(
                format!("t{i}"),
                "x",
                false,
            )]));
            messages.push(Message::assistant(vec![ContentBlock::text("done")]));
        }
        let recent = recent_messages(&messages);
        assert!(recent.len() <= AWAY_MESSAGES);
        assert!(is_person(&recent[0]), "{:?}", recent[0]);
        assert_eq!(recent.last().unwrap().role, Role::Assistant);
        assert!(recent_messages(&[]).is_empty());
    }
}
