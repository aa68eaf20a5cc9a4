//! What one run of the loop adds up to, folded from its events as they come: the engine's
//! turn (and the session's running figures over it), a fork, and so a compaction summary or a
//! sub-agent run as forks, all count the same way.

use std::time::{Duration, Instant};

use tine_api_client::Usage;

use crate::events::QueryEvent;
use crate::transition::Terminal;

/// Requests, usage, cost, time spent waiting on the API, and the terminal, of one run of
/// [`query()`](crate::query()).
#[derive(Debug, Clone, Default)]
pub struct LoopTotals {
    /// Requests started (one per model call).
    pub requests: u32,
    /// Usage summed over the requests.
    pub usage: Usage,
    /// The first request's usage: what a fork read of its parent's cache.
    pub first_request_usage: Option<Usage>,
    /// The last request's usage so far: the size of the context it sent.
    pub last_request_usage: Option<Usage>,
    /// What the requests cost, in US dollars.
    pub cost_usd: f64,
    /// From each request's start to its usage (the end of its stream).
    pub api_duration: Duration,
    terminal: Option<Terminal>,
    request_started: Option<Instant>,
}

impl LoopTotals {
    /// Totals of no request.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts `event` in. `price` bills a request's usage for its model (`cost_usd`, or a
    /// ledger that records it too): each request is billed as it ends, so a run cancelled
    /// midway still counts what it spent.
    pub fn fold(&mut self, event: &QueryEvent, price: impl FnOnce(&str, &Usage) -> f64) {
        match event {
            QueryEvent::RequestStart { .. } => {
                self.requests += 1;
                self.request_started = Some(Instant::now());
            }
            QueryEvent::Usage { usage, model } => {
                self.first_request_usage.get_or_insert(*usage);
                self.last_request_usage = Some(*usage);
                self.usage += *usage;
                self.cost_usd += price(model, usage);
                if let Some(at) = self.request_started.take() {
                    self.api_duration += at.elapsed();
                }
            }
            QueryEvent::Terminal(terminal) => self.terminal = Some(terminal.clone()),
            QueryEvent::TextDelta { .. }
            | QueryEvent::ThinkingDelta { .. }
            | QueryEvent::ToolUseStart { .. }
            | QueryEvent::AssistantMessage { .. }
            | QueryEvent::UserMessage { .. }
            | QueryEvent::Retry(_)
            | QueryEvent::ToolDenied { .. }
            | QueryEvent::ToolProgress { .. }
            | QueryEvent::ToolResult { .. }
            | QueryEvent::HistoryReplaced { .. }
            | QueryEvent::ToolResultsCleared { .. }
            | QueryEvent::ContextWarning(_)
            | QueryEvent::Transition(_) => {}
        }
    }

    /// Ends the run: a request still open counts its time, and the terminal is the loop's
    /// (or a model error if the stream ended without one).
    pub fn finish(&mut self) -> Terminal {
        if let Some(at) = self.request_started.take() {
            self.api_duration += at.elapsed();
        }
        self.terminal
            .take()
            .unwrap_or_else(|| Terminal::ModelError {
                message: "the loop ended without a terminal event".to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tine_api_client::{ContentBlock, Message};

    fn usage(input: u64, read: u64) -> Usage {
        Usage {
            input_tokens: input,
            cache_read_input_tokens: read,
            ..Usage::default()
        }
    }

    #[test]
    fn requests_usage_cost_and_terminal_add_up() {
        let mut totals = LoopTotals::new();
        let events = [
            QueryEvent::RequestStart {
                turn: 1,
                max_tokens: 8192,
            },
            QueryEvent::Usage {
                usage: usage(10, 1000),
                model: "m".into(),
            },
            QueryEvent::UserMessage {
                message: Message::user(vec![ContentBlock::text("result")]),
                uuid: "u1".into(),
            },
            QueryEvent::RequestStart {
                turn: 1,
                max_tokens: 8192,
            },
            QueryEvent::Usage {
                usage: usage(20, 1500),
                model: "m".into(),
            },
            QueryEvent::Terminal(Terminal::Completed),
        ];
        for event in &events {
            totals.fold(event, |model, u| {
                assert_eq!(model, "m");
                u.input_tokens as f64 / 100.0
            });
        }
        let terminal = totals.finish();
        assert_eq!(totals.requests, 2);
        assert_eq!(totals.usage.input_tokens, 30);
        assert_eq!(totals.usage.cache_read_input_tokens, 2500);
        assert_eq!(totals.first_request_usage, Some(usage(10, 1000)));
        assert_eq!(totals.last_request_usage, Some(usage(20, 1500)));
        assert!((totals.cost_usd - 0.3).abs() < 1e-9, "{}", totals.cost_usd);
        assert_eq!(terminal, Terminal::Completed);
    }

    #[test]
    fn a_stream_without_a_terminal_is_a_model_error() {
        let mut totals = LoopTotals::new();
        totals.fold(
            &QueryEvent::RequestStart {
                turn: 1,
                max_tokens: 8192,
            },
            |_, _| 0.0,
        );
        let terminal = totals.finish();
        assert_eq!(totals.requests, 1);
        assert_eq!(totals.first_request_usage, None);
        assert_eq!(totals.last_request_usage, None);
        assert!(
            matches!(terminal, Terminal::ModelError { .. }),
            "{terminal:?}"
        );
    }
}
