//! A resumed conversation shown again (`tine -c`, `tine -r ID`, `/resume`): the transcript's
//! messages as the events they were, per turn `UserMessage`, the reply's text and tool calls,
//! then `TurnEnded`. What tine itself put into user messages (`<system-reminder>` blocks: the
//! session's context, recalled memories) is not the person's and is left out. A compaction
//! boundary (the chain starts at the last one) is its card, as it was live; the summary message
//! after it is the model's new history, not something the person typed, so the card stands for
//! it.

use std::collections::HashMap;

use tine_api_client::{ContentBlock, Message, MessageContent, Role, ToolResultContent};
use tine_query_loop::{CompactBoundary, RecordType, TranscriptRecord};
use tine_tui::{ToolDisplayView, ToolResultView, TurnEndReason, UiEvent};

use super::adapter::{compaction_view, tool_args};

/// One step of a resumed chain.
enum Item<'a> {
    /// A `compact_boundary` record.
    Compacted(CompactBoundary),
    Message(&'a Message),
}

/// The UI's events for a resumed session's chain (`ResumedSession::chain`), oldest first.
pub fn replay_chain(chain: &[TranscriptRecord]) -> Vec<UiEvent> {
    replay(chain.iter().filter_map(|record| {
        if let Some(boundary) = CompactBoundary::from_record(record) {
            return Some(Item::Compacted(boundary));
        }
        match record.kind {
            RecordType::User | RecordType::Assistant => record.message.as_ref().map(Item::Message),
            _ => None,
        }
    }))
}

/// The UI's events for `items`, oldest first.
fn replay<'a>(items: impl Iterator<Item = Item<'a>>) -> Vec<UiEvent> {
    let mut out = Vec::new();
    let mut in_turn = false;
    let mut tools: HashMap<String, String> = HashMap::new();
    // The user message right after a boundary is the summary the card stands for.
    let mut summary_next = false;
    for item in items {
        let message = match item {
            Item::Compacted(boundary) => {
                if in_turn {
                    out.push(turn_end());
                    in_turn = false;
                }
                out.push(UiEvent::Compacted(compaction_view(&boundary)));
                summary_next = true;
                continue;
            }
            Item::Message(message) => message,
        };
        if std::mem::take(&mut summary_next) && message.role == Role::User {
            continue;
        }
        match message.role {
            Role::User => {
                let prompt = prompt_text(&message.content);
                if let Some(prompt) = prompt {
                    if in_turn {
                        out.push(turn_end());
                    }
                    out.push(UiEvent::UserMessage(prompt));
                    in_turn = true;
                }
                if let MessageContent::Blocks(blocks) = &message.content {
                    for block in blocks {
                        if let ContentBlock::ToolResult(result) = block {
                            let content = match &result.content {
                                Some(ToolResultContent::Text(text)) => text.clone(),
                                Some(ToolResultContent::Blocks(blocks)) => blocks_text(blocks),
                                None => String::new(),
                            };
                            tools.remove(&result.tool_use_id);
                            out.push(UiEvent::ToolFinished {
                                id: result.tool_use_id.clone(),
                                result: ToolResultView {
                                    is_error: result.is_error.unwrap_or(false),
                                    summary: summary(&content),
                                    content,
                                    display: ToolDisplayView::None,
                                },
                            });
                        }
                    }
                }
            }
            Role::Assistant => {
                in_turn = true;
                out.push(UiEvent::RequestStarted);
                match &message.content {
                    MessageContent::Text(text) => out.push(UiEvent::TextDelta(text.clone())),
                    MessageContent::Blocks(blocks) => {
                        for block in blocks {
                            match block {
                                ContentBlock::Text(text) => {
                                    out.push(UiEvent::TextDelta(text.text.clone()));
                                }
                                ContentBlock::Thinking(thinking) => {
                                    out.push(UiEvent::ThinkingDelta(thinking.thinking.clone()));
                                }
                                ContentBlock::ToolUse(call) => {
                                    tools.insert(call.id.clone(), call.name.clone());
                                    out.push(UiEvent::ToolStarted {
                                        id: call.id.clone(),
                                        tool: call.name.clone(),
                                        args: tool_args(&call.name, &call.input),
                                    });
                                }
                                ContentBlock::Image(_)
                                | ContentBlock::Document(_)
                                | ContentBlock::ToolResult(_)
                                | ContentBlock::RedactedThinking(_)
                                | ContentBlock::Unknown(_) => {}
                            }
                        }
                    }
                }
            }
        }
    }
    if in_turn {
        out.push(turn_end());
    }
    out
}

fn turn_end() -> UiEvent {
    UiEvent::TurnEnded {
        reason: TurnEndReason::Completed,
    }
}

/// The person's words in a user message, if it has any (tool results alone have none).
fn prompt_text(content: &MessageContent) -> Option<String> {
    let text = match content {
        MessageContent::Text(text) => strip_reminders(text),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                // A block of tine's own (context, recalled memories) is dropped whole.
                ContentBlock::Text(t) if t.text.trim_start().starts_with("<system-reminder>") => {
                    None
                }
                ContentBlock::Text(t) => Some(strip_reminders(&t.text)),
                _ => None,
            })
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
    };
    (!text.trim().is_empty()).then_some(text)
}

/// `text` without its `<system-reminder>...</system-reminder>` parts.
fn strip_reminders(text: &str) -> String {
    const OPEN: &str = "<system-reminder>";
    const CLOSE: &str = "</system-reminder>";
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        out.push_str(&rest[..start]);
        match rest[start..].find(CLOSE) {
            Some(end) => rest = &rest[start + end + CLOSE.len()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.trim().to_owned()
}

fn blocks_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn summary(content: &str) -> String {
    let lines = content.lines().count();
    match content.lines().next() {
        Some(first) if lines == 1 => first.chars().take(100).collect(),
        _ => format!("{lines} lines"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_turn_is_its_prompt_its_reply_and_its_end() {
        let messages = [
            Message::user(vec![
                ContentBlock::text("<system-reminder>context</system-reminder>"),
                ContentBlock::text("list the files"),
            ]),
            Message {
                role: Role::Assistant,
                content: MessageContent::Blocks(vec![
                    ContentBlock::text("Looking."),
                    ContentBlock::tool_use("t1", "Bash", json!({"command": "ls"})),
                ]),
            },
            Message::user(vec![ContentBlock::tool_result("t1", "a\nb", false)]),
            Message {
                role: Role::Assistant,
                content: MessageContent::Blocks(vec![ContentBlock::text("Two files.")]),
            },
            Message::user("thanks".to_owned()),
        ];
        let events = replay(messages.iter().map(Item::Message));
        let users: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                UiEvent::UserMessage(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(users, ["list the files", "thanks"]);
        let ends = events
            .iter()
            .filter(|e| matches!(e, UiEvent::TurnEnded { .. }))
            .count();
        assert_eq!(ends, 2);
        assert!(events.contains(&UiEvent::ToolStarted {
            id: "t1".into(),
            tool: "Bash".into(),
            args: "ls".into()
        }));
        assert!(matches!(events.last(), Some(UiEvent::TurnEnded { .. })));
    }

    fn record(
        kind: RecordType,
        message: Option<Message>,
        data: Option<serde_json::Value>,
    ) -> TranscriptRecord {
        TranscriptRecord {
            kind,
            uuid: String::new(),
            parent_uuid: None,
            session_id: None,
            timestamp: String::new(),
            cwd: None,
            is_sidechain: false,
            agent_id: None,
            message,
            data,
        }
    }

    #[test]
    fn a_compaction_boundary_is_its_card_and_the_summary_is_not_a_prompt() {
        let boundary = CompactBoundary {
            trigger: tine_query_loop::CompactTrigger::Manual,
            tokens_before: 156_855,
            tokens_after: 11_902,
            messages_summarized: 42,
            rounds_dropped: 0,
            dropped: Default::default(),
            focus: None,
            files_reattached: Vec::new(),
            summary_prompt_tokens: 0,
            summary_cache_read_tokens: 0,
        };
        let chain = vec![
            record(RecordType::System, None, Some(boundary.to_data())),
            record(
                RecordType::User,
                Some(Message::user(vec![
                    ContentBlock::text("<system-reminder>context</system-reminder>"),
                    ContentBlock::text(
                        "This session is being continued from an earlier conversation. SUMMARY",
                    ),
                ])),
                None,
            ),
            record(
                RecordType::User,
                Some(Message::user("next question".to_owned())),
                None,
            ),
            record(
                RecordType::Assistant,
                Some(Message {
                    role: Role::Assistant,
                    content: MessageContent::Text("An answer.".into()),
                }),
                None,
            ),
        ];
        let events = replay_chain(&chain);
        assert_eq!(
            events[0],
            UiEvent::Compacted(tine_tui::CompactionView {
                trigger: "manual".into(),
                tokens_before: 156_855,
                tokens_after: 11_902,
                messages_summarized: 42,
            })
        );
        let users: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                UiEvent::UserMessage(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            users,
            ["next question"],
            "the summary is no prompt: {events:?}"
        );
        assert!(events.contains(&UiEvent::TextDelta("An answer.".into())));
    }
}
