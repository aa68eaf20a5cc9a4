//! Tool-use pairing repair, run on the history before every request (seed 000 §5.2): every
//! `tool_use` must be answered by a `tool_result` in the very next user message, and every
//! `tool_result` must answer a `tool_use` of the message just before, or the API refuses the
//! request with a 400. An interrupted turn (Ctrl-C, a killed process) breaks both rules.
//!
//! The repair is deterministic and idempotent: the main loop and a fork repairing the same
//! history produce the same bytes, so the fork still hits the parent's prompt cache.

use std::collections::HashSet;

use tine_api_client::{ContentBlock, Message, MessageContent, Role};

/// The content of the result given to a `tool_use` that never got one.
pub(crate) const INTERRUPTED_TOOL_RESULT: &str = "[Request interrupted by user for tool use]";

/// Returns the history with pairing repaired, or `None` when it is already well formed.
pub fn repair_tool_pairing(messages: &[Message]) -> Option<Vec<Message>> {
    if is_well_paired(messages) {
        return None;
    }
    let mut out: Vec<Message> = Vec::with_capacity(messages.len() + 1);
    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        match message.role {
            Role::Assistant => {
                out.push(message.clone());
                let uses = tool_use_ids(message);
                if uses.is_empty() {
                    i += 1;
                    continue;
                }
                // The answer must be the next message; build it from what is there.
                let next = messages.get(i + 1).filter(|m| m.role == Role::User);
                let mut answered: HashSet<&str> = HashSet::new();
                let mut results: Vec<ContentBlock> = Vec::new();
                let mut rest: Vec<ContentBlock> = Vec::new();
                if let Some(next) = next {
                    for block in blocks(next) {
                        match block {
                            ContentBlock::ToolResult(r) => {
                                if uses.contains(&r.tool_use_id.as_str())
                                    && answered.insert(r.tool_use_id.as_str())
                                {
                                    results.push(block.clone());
                                }
                                // else: orphan or duplicate, dropped
                            }
                            other => rest.push(other.clone()),
                        }
                    }
                }
                // Answers in call order; missing ones become "interrupted".
                let mut ordered: Vec<ContentBlock> = Vec::with_capacity(uses.len() + rest.len());
                for id in &uses {
                    let found = results
                        .iter()
                        .find(|b| matches!(b, ContentBlock::ToolResult(r) if r.tool_use_id == *id));
                    match found {
                        Some(block) => ordered.push(block.clone()),
                        None => {
                            ordered.push(ContentBlock::tool_result(
                                *id,
                                INTERRUPTED_TOOL_RESULT,
                                true,
                            ));
                        }
                    }
                }
                ordered.extend(rest);
                out.push(Message {
                    role: Role::User,
                    content: MessageContent::Blocks(ordered),
                });
                i += if next.is_some() { 2 } else { 1 };
            }
            Role::User => {
                // A user message not directly after a tool-calling assistant message: any
                // tool_result in it is an orphan.
                let kept: Vec<ContentBlock> = blocks(message)
                    .iter()
                    .filter(|b| !matches!(b, ContentBlock::ToolResult(_)))
                    .cloned()
                    .collect();
                match &message.content {
                    MessageContent::Text(_) => out.push(message.clone()),
                    MessageContent::Blocks(b) if kept.len() == b.len() => out.push(message.clone()),
                    MessageContent::Blocks(_) if kept.is_empty() => {} // nothing left: drop it
                    MessageContent::Blocks(_) => out.push(Message {
                        role: Role::User,
                        content: MessageContent::Blocks(kept),
                    }),
                }
                i += 1;
            }
        }
    }
    Some(out)
}

/// Whether every tool_use is answered in order by the next message and no tool_result is an
/// orphan or a duplicate.
pub fn is_well_paired(messages: &[Message]) -> bool {
    let mut expected: Vec<&str> = Vec::new(); // ids the current user message must answer
    for message in messages {
        match message.role {
            Role::Assistant => {
                if !expected.is_empty() {
                    return false; // tool_use not followed by its results
                }
                expected = tool_use_ids(message);
            }
            Role::User => {
                let results: Vec<&str> = blocks(message)
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolResult(r) => Some(r.tool_use_id.as_str()),
                        _ => None,
                    })
                    .collect();
                // Exactly the expected ids, in call order, at the front of the message.
                if results != expected {
                    return false;
                }
                let leading = blocks(message)
                    .iter()
                    .take_while(|b| matches!(b, ContentBlock::ToolResult(_)))
                    .count();
                if leading != results.len() {
                    return false;
                }
                expected.clear();
            }
        }
    }
    expected.is_empty()
}

fn blocks(message: &Message) -> &[ContentBlock] {
    match &message.content {
        MessageContent::Blocks(b) => b,
        MessageContent::Text(_) => &[],
    }
}

fn tool_use_ids(message: &Message) -> Vec<&str> {
    let mut seen = HashSet::new();
    blocks(message)
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse(t) if seen.insert(t.id.as_str()) => Some(t.id.as_str()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
#[path = "repair_tests.rs"]
mod tests;
