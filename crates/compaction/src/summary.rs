//! The summary fork (seed 000 §8.2): `run_forked_agent` on the parent's cache-safe params —
//! the same system bytes, tool array, model and thinking, the parent's messages byte for byte —
//! with the summary instruction as the last user message; one turn, every tool refused, no
//! output limit of its own (it would change the thinking budget, so the cache key), and no
//! cache write: its breakpoint sits where the parent's last request put its own, so it reads
//! that whole prefix and writes nothing, neither its instruction nor the parent's last round
//! (the summarized history is never sent again). A summary request that is itself too long is retried
//! without the oldest rounds, up to [`MAX_TOO_LONG_RETRIES`] times.

use std::sync::Arc;

use serde_json::Value;
use tine_api_client::{ContentBlock, Message, Role, Usage};
use tine_fork_runtime::{
    CacheSafeParams, ForkParams, ForkPolicy, ParentContext, Refusals, run_forked_agent,
};
use tine_query_loop::{RequestTemplate, Terminal, message_text};
use tine_tools::Tool;

use crate::error::CompactionError;
use crate::prompt::{format_summary, summary_instruction};
use crate::rounds::drop_oldest_rounds;

/// The fork's query source and label (usage is billed under it).
pub(crate) const COMPACT_QUERY_SOURCE: &str = "compact";
/// Retries of a summary request refused as too long.
pub const MAX_TOO_LONG_RETRIES: u32 = 3;

/// The summary fork's `can_use_tool`: the tool array stays (it is part of the cache key), but a
/// summary needs no tool, so every call is refused.
pub(crate) fn summary_policy() -> ForkPolicy {
    ForkPolicy::no_tools(SummaryRefusals)
}

/// How the summary fork's refusal reads.
struct SummaryRefusals;

impl Refusals for SummaryRefusals {
    fn tool_not_allowed(&self, _tool: &dyn Tool, _input: &Value) -> String {
        "a compaction summary is written from the conversation; it runs no tools".to_owned()
    }
}

/// A summary and what it cost.
#[derive(Debug, Clone)]
pub(crate) struct Summary {
    /// The summary's text.
    pub text: String,
    /// The usage of the summary's successful request.
    pub usage: Option<Usage>,
    /// Oldest rounds left out to make the request fit.
    pub rounds_dropped: usize,
}

/// Summarizes `messages` with a fork of `parent` on `template`. `parent_cached`: how many of
/// `messages` the parent's last request sent (its cached prefix ends there); the summary's
/// breakpoint goes there too, so it reads that prefix and writes no cache at all (the rest of
/// the history is never sent again).
pub(crate) async fn summarize(
    parent: &ParentContext,
    template: &RequestTemplate,
    messages: Arc<[Message]>,
    parent_cached: Option<usize>,
    focus: Option<&str>,
) -> Result<Summary, CompactionError> {
    let prompt = Message::user(vec![ContentBlock::text(summary_instruction(focus))]);
    let mut messages = messages;
    let mut rounds_dropped = 0;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let cache_safe = Arc::new(CacheSafeParams {
            template: template.clone(),
            messages: Arc::clone(&messages),
        });
        let mut params = ForkParams::new(
            cache_safe,
            vec![prompt.clone()],
            Arc::new(summary_policy()),
            COMPACT_QUERY_SOURCE,
        );
        params.max_turns = Some(1);
        params.skip_cache_write = true;
        // Once the oldest rounds are gone the parent's prefix is not the fork's any more.
        params.parent_cached_messages = parent_cached.filter(|_| rounds_dropped == 0);
        let result = run_forked_agent(parent, params).await?;
        match &result.terminal {
            Terminal::Completed | Terminal::MaxTurns { .. } => {}
            Terminal::Aborted => return Err(CompactionError::Cancelled),
            Terminal::PromptTooLong { tokens, maximum } => {
                if attempt > MAX_TOO_LONG_RETRIES {
                    return Err(CompactionError::TooLong {
                        attempts: attempt,
                        rounds: rounds_dropped,
                    });
                }
                let gap = tokens.zip(*maximum).map(|(t, m)| t.saturating_sub(m));
                let Some((kept, dropped)) = drop_oldest_rounds(&messages, gap) else {
                    return Err(CompactionError::TooLong {
                        attempts: attempt,
                        rounds: rounds_dropped,
                    });
                };
                tracing::info!(
                    dropped,
                    gap,
                    attempt,
                    "the summary request was too long; retrying without the oldest rounds"
                );
                rounds_dropped += dropped;
                messages = Arc::from(kept);
                continue;
            }
            other => return Err(CompactionError::Model(other.describe())),
        }
        let reply = result
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(message_text)
            .unwrap_or_default();
        let text = format_summary(&reply).ok_or(CompactionError::EmptySummary)?;
        return Ok(Summary {
            text,
            usage: result.first_request_usage,
            rounds_dropped,
        });
    }
}
