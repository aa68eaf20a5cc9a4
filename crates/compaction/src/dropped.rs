//! What a compaction takes from the model's view, counted for the boundary record and
//! `/compact log`: the user's messages, the files it read, the tool calls it made.

use tine_api_client::{ContentBlock, Message, MessageContent, Role};
use tine_query_loop::{DroppedContext, prompt_text};

use crate::prompt::CONTINUATION_PREFIX;

/// Characters kept of each user message in the record.
const PROMPT_EXCERPT_CHARS: usize = 120;

/// What `messages` (about to be summarized) hold.
pub(crate) fn dropped_context(messages: &[Message]) -> DroppedContext {
    let mut dropped = DroppedContext::default();
    for message in messages {
        let MessageContent::Blocks(blocks) = &message.content else {
            if message.role == Role::User {
                count_prompt(&mut dropped, message);
            }
            continue;
        };
        match message.role {
            Role::User => {
                let is_results = blocks
                    .iter()
                    .any(|b| matches!(b, ContentBlock::ToolResult(_)));
                if !is_results {
                    count_prompt(&mut dropped, message);
                }
            }
            Role::Assistant => {
                for block in blocks {
                    let ContentBlock::ToolUse(call) = block else {
                        continue;
                    };
                    *dropped.tool_calls.entry(call.name.clone()).or_default() += 1;
                    if call.name == "Read"
                        && let Some(path) = call.input.get("file_path").and_then(|p| p.as_str())
                        && !dropped.files_read.iter().any(|f| f == path)
                    {
                        dropped.files_read.push(path.to_owned());
                    }
                }
            }
        }
    }
    dropped
}

fn count_prompt(dropped: &mut DroppedContext, message: &Message) {
    let text = prompt_text(message);
    // An earlier compaction's summary is not something the user said.
    if text.trim().is_empty() || text.starts_with(CONTINUATION_PREFIX) {
        return;
    }
    dropped.user_messages += 1;
    dropped.user_prompts.push(excerpt(text));
}

/// One line, at most `PROMPT_EXCERPT_CHARS` characters.
pub(crate) fn excerpt(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= PROMPT_EXCERPT_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(PROMPT_EXCERPT_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tine_api_client::ToolUseBlock;

    use super::*;

    fn call(id: &str, name: &str, input: serde_json::Value) -> ContentBlock {
        ContentBlock::ToolUse(ToolUseBlock {
            id: id.into(),
            name: name.into(),
            input,
            cache_control: None,
        })
    }

    #[test]
    fn prompts_files_and_calls_are_counted() {
        let messages = vec![
            Message::user(vec![
                ContentBlock::text("<env>context</env>"),
                ContentBlock::text("fix   the\nbug"),
            ]),
            Message::assistant(vec![
                call("1", "Read", json!({"file_path": "/p/a.rs"})),
                call("2", "Read", json!({"file_path": "/p/a.rs"})),
                call("3", "Bash", json!({"command": "ls"})),
            ]),
            Message::user(vec![
                ContentBlock::tool_result("1", "x", false),
                ContentBlock::tool_result("2", "x", false),
                ContentBlock::tool_result("3", "x", false),
            ]),
            Message::user(format!("{CONTINUATION_PREFIX} earlier...")),
            Message::user("and ".repeat(100)),
        ];
        let d = dropped_context(&messages);
        assert_eq!(d.user_messages, 2);
        assert_eq!(d.user_prompts[0], "fix the bug");
        assert!(d.user_prompts[1].ends_with('…'));
        assert_eq!(d.user_prompts[1].chars().count(), PROMPT_EXCERPT_CHARS);
        assert_eq!(d.files_read, ["/p/a.rs"]);
        assert_eq!(d.tool_calls.get("Read"), Some(&2));
        assert_eq!(d.tool_calls.get("Bash"), Some(&1));
    }
}
