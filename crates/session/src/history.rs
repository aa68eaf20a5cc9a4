//! A resumed conversation as [`HistoryItem`]s (`tine -c`, `tine -r ID`, `Op::Resume`): the
//! transcript's chain from its last compaction, as the engine's resume reads it (the file is
//! read once), so a front end can show what was said. What tine itself put into user messages
//! (`<system-reminder>` blocks: the session's context, recalled memories) is not the person's
//! and is left out; the summary message after a compaction boundary is the model's new
//! history, not a prompt, so the boundary stands for it.

use tine_api_client::{ContentBlock, Message, MessageContent, Role, ToolResultContent};
use tine_query_loop::{CompactBoundary, RecordType, TranscriptRecord};

use crate::protocol::HistoryItem;

/// A prompt of a resumed chain: where a rewind to before it goes on from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChainPrompt {
    /// Its record's uuid.
    pub uuid: String,
    /// The record before it.
    pub parent: Option<String>,
    /// Its text.
    pub text: String,
}

/// The prompts of a chain, oldest first (the ones [`of_chain`] shows as `Prompt`).
pub(crate) fn prompts_of(chain: &[TranscriptRecord]) -> Vec<ChainPrompt> {
    let mut out = Vec::new();
    let mut summary_next = false;
    for record in chain {
        if CompactBoundary::from_record(record).is_some() {
            summary_next = true;
            continue;
        }
        let message = match (&record.kind, &record.message) {
            (RecordType::User | RecordType::Assistant, Some(message)) => message,
            _ => continue,
        };
        if std::mem::take(&mut summary_next) && message.role == Role::User {
            continue;
        }
        if message.role == Role::User
            && let Some(text) = prompt_text(&message.content)
        {
            out.push(ChainPrompt {
                uuid: record.uuid.clone(),
                parent: record.parent_uuid.clone(),
                text,
            });
        }
    }
    out
}

/// The items of a resumed chain, oldest first.
pub(crate) fn of_chain(chain: &[TranscriptRecord]) -> Vec<HistoryItem> {
    let mut out = Vec::new();
    // The user message right after a boundary is the summary the boundary stands for.
    let mut summary_next = false;
    for record in chain {
        if let Some(boundary) = CompactBoundary::from_record(record) {
            out.push(HistoryItem::Compaction(boundary));
            summary_next = true;
            continue;
        }
        let message = match (&record.kind, &record.message) {
            (RecordType::User | RecordType::Assistant, Some(message)) => message,
            _ => continue,
        };
        if std::mem::take(&mut summary_next) && message.role == Role::User {
            continue;
        }
        push_message(message, &mut out);
    }
    out
}

pub(crate) fn push_message(message: &Message, out: &mut Vec<HistoryItem>) {
    match message.role {
        Role::User => {
            if let Some(prompt) = prompt_text(&message.content) {
                out.push(HistoryItem::Prompt(prompt));
            }
            if let MessageContent::Blocks(blocks) = &message.content {
                for block in blocks {
                    if let ContentBlock::ToolResult(result) = block {
                        let content = match &result.content {
                            Some(ToolResultContent::Text(text)) => text.clone(),
                            Some(ToolResultContent::Blocks(blocks)) => blocks_text(blocks),
                            None => String::new(),
                        };
                        out.push(HistoryItem::ToolResult {
                            id: result.tool_use_id.clone(),
                            is_error: result.is_error.unwrap_or(false),
                            content,
                        });
                    }
                }
            }
        }
        Role::Assistant => match &message.content {
            MessageContent::Text(text) => out.push(HistoryItem::Text(text.clone())),
            MessageContent::Blocks(blocks) => {
                for block in blocks {
                    match block {
                        ContentBlock::Text(text) => out.push(HistoryItem::Text(text.text.clone())),
                        ContentBlock::Thinking(thinking) => {
                            out.push(HistoryItem::Thinking(thinking.thinking.clone()));
                        }
                        ContentBlock::ToolUse(call) => out.push(HistoryItem::ToolCall {
                            id: call.id.clone(),
                            tool: call.name.clone(),
                            input: call.input.clone(),
                        }),
                        ContentBlock::Image(_)
                        | ContentBlock::Document(_)
                        | ContentBlock::ToolResult(_)
                        | ContentBlock::RedactedThinking(_)
                        | ContentBlock::ToolReference(_)
                        | ContentBlock::Unknown(_) => {}
                    }
                }
            }
        },
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
                // What a ToolSearch result says beside its references.
                ContentBlock::Text(t)
                    if t.text.starts_with(tine_tools::TOOL_LOADED) && loads_tools(blocks) =>
                {
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
            None => rest = "",
        }
    }
    out.push_str(rest);
    out.trim().to_owned()
}

/// The text of a tool result's blocks.
fn blocks_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            ContentBlock::ToolReference(r) => Some(format!("Loaded {}", r.tool_name)),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a user message holds a tool result that loaded tools (ToolSearch's).
fn loads_tools(blocks: &[ContentBlock]) -> bool {
    blocks.iter().any(|b| match b {
        ContentBlock::ToolResult(r) => matches!(
            &r.content,
            Some(ToolResultContent::Blocks(inner))
                if inner.iter().any(|i| matches!(i, ContentBlock::ToolReference(_)))
        ),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn each_turn_is_its_prompt_and_its_reply() {
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
        let chain: Vec<_> = messages
            .into_iter()
            .map(|m| {
                let kind = match m.role {
                    Role::User => RecordType::User,
                    Role::Assistant => RecordType::Assistant,
                };
                record(kind, Some(m), None)
            })
            .collect();
        let items = of_chain(&chain);
        let prompts: Vec<_> = items
            .iter()
            .filter_map(|e| match e {
                HistoryItem::Prompt(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(prompts, ["list the files", "thanks"]);
        assert!(items.contains(&HistoryItem::ToolCall {
            id: "t1".into(),
            tool: "Bash".into(),
            input: json!({"command": "ls"}),
        }));
        assert!(items.contains(&HistoryItem::ToolResult {
            id: "t1".into(),
            is_error: false,
            content: "a\nb".into(),
        }));
    }

    #[test]
    fn a_tool_search_result_is_no_prompt_and_names_what_it_loaded() {
        let results = Message::user(vec![
            ContentBlock::ToolResult(tine_api_client::ToolResultBlock {
                tool_use_id: "t1".into(),
                content: Some(ToolResultContent::Blocks(vec![
                    ContentBlock::tool_reference("mcp__s__add"),
                ])),
                is_error: None,
                cache_control: None,
            }),
            ContentBlock::text(tine_tools::TOOL_LOADED),
        ]);
        let mut items = Vec::new();
        push_message(&results, &mut items);
        assert_eq!(
            items,
            [HistoryItem::ToolResult {
                id: "t1".into(),
                is_error: false,
                content: "Loaded mcp__s__add".into(),
            }]
        );
    }

    #[test]
    fn a_compaction_boundary_stands_for_the_summary() {
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
        let items = of_chain(&chain);
        assert_eq!(items[0], HistoryItem::Compaction(boundary));
        assert_eq!(items[1], HistoryItem::Prompt("next question".into()));
        assert_eq!(items[2], HistoryItem::Text("An answer.".into()));
        assert_eq!(items.len(), 3, "the summary is no prompt: {items:?}");
    }
}
