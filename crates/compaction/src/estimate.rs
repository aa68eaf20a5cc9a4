//! How big the next request is: the last reply's usage (what the API counted) plus an estimate
//! of what was added since, at 4 bytes of JSON per token (the same ratio the mock counts with;
//! close enough to the real tokenizer to place a threshold that keeps 13k tokens of margin).

use std::time::Instant;

use tine_api_client::{ContentBlock, Message, MessageContent, ToolResultContent};
use tine_query_loop::{ContentReplacementState, RequestTemplate};
use tine_query_loop::{MAX_TOOL_RESULT_CHARS, PREVIEW_CHARS};

/// Bytes per estimated token.
pub(crate) const BYTES_PER_TOKEN: u64 = 4;

/// The usage of the loop's last reply: its request's prompt tokens and how many messages that
/// request carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UsageMark {
    /// The prompt tokens (input, cache written and cache read) of that request.
    pub prompt_tokens: u64,
    /// How many messages that request carried.
    pub messages: usize,
    /// When the reply came.
    pub at: Instant,
}

/// Estimated tokens of `bytes` bytes of text ([`BYTES_PER_TOKEN`] per token, rounded up).
pub(crate) fn tokens_for_bytes(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

/// The tokens of the system prompt and the tool array.
pub(crate) fn template_tokens(template: &RequestTemplate) -> u64 {
    let system = serde_json::to_vec(&*template.system).map_or(0, |b| b.len());
    let tools = serde_json::to_vec(&*template.tools).map_or(0, |b| b.len());
    tokens_for_bytes(system + tools)
}

/// The tokens of `messages` as they go on the wire: a tool result the replacement decisions
/// (or the size rule, for one not yet decided) shrink counts at its sent size.
pub(crate) fn messages_tokens(
    messages: &[Message],
    decisions: Option<&ContentReplacementState>,
) -> u64 {
    messages.iter().map(|m| message_tokens(m, decisions)).sum()
}

fn message_tokens(message: &Message, decisions: Option<&ContentReplacementState>) -> u64 {
    let mut bytes = serde_json::to_vec(message).map_or(0, |b| b.len());
    if let MessageContent::Blocks(blocks) = &message.content {
        for block in blocks {
            let ContentBlock::ToolResult(result) = block else {
                continue;
            };
            let Some(ToolResultContent::Text(text)) = &result.content else {
                continue;
            };
            let sent = match decisions.and_then(|d| d.decisions.get(&result.tool_use_id)) {
                Some(Some(replaced)) => replaced.len(),
                Some(None) => continue,
                None if text.chars().count() > MAX_TOOL_RESULT_CHARS => PREVIEW_CHARS + 300,
                None => continue,
            };
            bytes = bytes.saturating_sub(text.len()) + sent;
        }
    }
    tokens_for_bytes(bytes)
}

/// The next request's prompt size: from the mark when it describes this history, otherwise
/// everything estimated.
pub(crate) fn context_tokens(
    mark: Option<UsageMark>,
    messages: &[Message],
    template: &RequestTemplate,
    decisions: Option<&ContentReplacementState>,
) -> u64 {
    match mark {
        Some(mark) if mark.messages <= messages.len() => {
            mark.prompt_tokens + messages_tokens(&messages[mark.messages..], decisions)
        }
        _ => template_tokens(template) + messages_tokens(messages, decisions),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_tool_result_counts_at_its_preview_size() {
        let big = "x".repeat(MAX_TOOL_RESULT_CHARS + 1);
        let m = Message::user(vec![ContentBlock::tool_result("t", big, false)]);
        let undecided = messages_tokens(std::slice::from_ref(&m), None);
        assert!(undecided < 1_000, "{undecided}");
        let mut state = ContentReplacementState::default();
        state.decisions.insert("t".into(), None);
        let kept = messages_tokens(std::slice::from_ref(&m), Some(&state));
        assert!(kept > 25_000, "{kept}");
    }

    #[test]
    fn the_mark_counts_only_what_came_after_it() {
        let template = RequestTemplate {
            model: "m".into(),
            system: std::sync::Arc::new(tine_query_loop::system_prompt_blocks("s")),
            tools: Default::default(),
            thinking: None,
            skip_cache_write: false,
            replacements: None,
            effort: None,
        };
        let history = vec![
            Message::user("a".repeat(400)),
            Message::user("b".repeat(40)),
        ];
        let mark = UsageMark {
            prompt_tokens: 1_000,
            messages: 1,
            at: Instant::now(),
        };
        let with = context_tokens(Some(mark), &history, &template, None);
        assert!((1_010..1_030).contains(&with), "{with}");
        let stale = UsageMark {
            messages: 5,
            ..mark
        };
        let without = context_tokens(Some(stale), &history, &template, None);
        assert!(without < 200, "{without}");
    }
}
