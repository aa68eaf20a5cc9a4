//! Micro-compaction: after an idle gap longer than the cache's lifetime the cached prefix is
//! gone, so the bytes of old tool results buy nothing; all but the most recent few are cleared.
//!
//! Clearing goes through the session's content-replacement decisions, not the history: the
//! decision for each cleared `tool_use_id` becomes the cleared text, so every later request
//! and every fork (which clones the decisions, seed 000 §四) serializes those results the same
//! way, and the transcript keeps them whole. This is the one place a frozen decision changes,
//! and only because the cache that froze it has expired.

use tine_api_client::{ContentBlock, Message, MessageContent, ToolResultContent};
use tine_query_loop::ContentReplacementState;

/// What a cleared tool result says instead.
pub const CLEARED_TOOL_RESULT: &str = "[Old tool result content cleared]";

/// Clears every tool result of `messages` but the last `keep`; returns how many changed.
/// Results already cleared, or no longer than the marker, are left alone.
pub(crate) fn clear_old_tool_results(
    messages: &[Message],
    state: &mut ContentReplacementState,
    keep: usize,
) -> usize {
    let results: Vec<(&str, usize)> = messages
        .iter()
        .filter_map(|m| match &m.content {
            MessageContent::Blocks(blocks) => Some(blocks),
            MessageContent::Text(_) => None,
        })
        .flatten()
        .filter_map(|b| match b {
            ContentBlock::ToolResult(r) => {
                Some((r.tool_use_id.as_str(), sent_len(r.content.as_ref())))
            }
            _ => None,
        })
        .collect();
    let older = results.len().saturating_sub(keep);
    let mut cleared = 0;
    for (id, len) in &results[..older] {
        let decision = state.decisions.get(*id).cloned().flatten();
        let len = decision.as_ref().map_or(*len, String::len);
        if decision.as_deref() == Some(CLEARED_TOOL_RESULT) || len <= CLEARED_TOOL_RESULT.len() {
            continue;
        }
        state
            .decisions
            .insert((*id).to_owned(), Some(CLEARED_TOOL_RESULT.to_owned()));
        cleared += 1;
    }
    cleared
}

fn sent_len(content: Option<&ToolResultContent>) -> usize {
    match content {
        None => 0,
        Some(ToolResultContent::Text(t)) => t.len(),
        // What ToolSearch loaded stays loaded: its references are a few bytes, and clearing
        // them would take the tools out of every later request.
        Some(ToolResultContent::Blocks(blocks))
            if blocks
                .iter()
                .all(|b| matches!(b, ContentBlock::ToolReference(_))) =>
        {
            0
        }
        // Images and documents are worth clearing too.
        Some(ToolResultContent::Blocks(_)) => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| {
                Message::user(vec![ContentBlock::tool_result(
                    format!("t{i}"),
                    format!("the output of call {i}, long enough to be worth clearing"),
                    false,
                )])
            })
            .collect()
    }

    #[test]
    fn all_but_the_last_five_are_cleared_once() {
        let messages = results(8);
        let mut state = ContentReplacementState::default();
        assert_eq!(clear_old_tool_results(&messages, &mut state, 5), 3);
        assert_eq!(
            state.decisions.get("t0"),
            Some(&Some(CLEARED_TOOL_RESULT.to_owned()))
        );
        assert_eq!(state.decisions.get("t3"), None);
        assert_eq!(clear_old_tool_results(&messages, &mut state, 5), 0);
        // What goes on the wire: the cleared text, for the main thread and a clone alike.
        let mut sent = messages.clone();
        state.clone().apply(&mut sent);
        let MessageContent::Blocks(b) = &sent[0].content else {
            panic!()
        };
        let ContentBlock::ToolResult(r) = &b[0] else {
            panic!()
        };
        assert_eq!(
            r.content,
            Some(ToolResultContent::Text(CLEARED_TOOL_RESULT.to_owned()))
        );
    }

    #[test]
    fn a_result_that_loaded_tools_is_never_cleared() {
        let mut messages = results(7);
        messages[0] = Message::user(vec![ContentBlock::ToolResult(
            tine_api_client::ToolResultBlock {
                tool_use_id: "t0".into(),
                content: Some(ToolResultContent::Blocks(vec![
                    ContentBlock::tool_reference("mcp__s__add"),
                ])),
                is_error: None,
                cache_control: None,
            },
        )]);
        let mut state = ContentReplacementState::default();
        assert_eq!(clear_old_tool_results(&messages, &mut state, 5), 1);
        assert_eq!(state.decisions.get("t0"), None);
        assert!(state.decisions.contains_key("t1"));
    }
}
