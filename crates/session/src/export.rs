//! `/export [FILE]`: the conversation as plain text, written to FILE (relative to the project)
//! or, without one, to `conversation-<date>-<time>.txt` in the project: the prompts, the
//! replies, each tool call with the start of its result. What tine itself put into user
//! messages (the session's context, recalled memories) is left out, as in the history a resumed
//! session shows. `/export --clipboard` ([`EXPORT_CLIPBOARD`]) writes nothing: the text goes
//! back as the command's data (`{"clipboard": text, "lines": n}`) for the front end to copy
//! (the TUI's `/export` without a file, through the terminal's OSC 52); the session never
//! writes to the terminal itself.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tine_api_client::Message;

use crate::protocol::{HistoryItem, call_summary};

/// The argument of `/export` asking for the text as data, not a file.
pub const EXPORT_CLIPBOARD: &str = "--clipboard";

/// How many lines of a tool result the export keeps.
const RESULT_LINES: usize = 6;

/// The conversation of `messages` as text.
pub(crate) fn text(messages: &[Message]) -> String {
    let mut items = Vec::new();
    for message in messages {
        crate::history::push_message(message, &mut items);
    }
    let mut out = String::new();
    for item in &items {
        match item {
            HistoryItem::Prompt(text) => {
                let _ = writeln!(out, "\n> {}\n", text.trim().replace('\n', "\n> "));
            }
            HistoryItem::Text(text) => {
                let _ = writeln!(out, "{}\n", text.trim());
            }
            HistoryItem::Thinking(_) | HistoryItem::Compaction(_) => {}
            HistoryItem::ToolCall { tool, input, .. } => {
                let _ = writeln!(out, "● {tool}({})", call_summary(tool, input));
            }
            HistoryItem::ToolResult {
                content, is_error, ..
            } => {
                let mut lines = content.lines();
                let first: Vec<&str> = lines.by_ref().take(RESULT_LINES).collect();
                let rest = lines.count();
                let mark = if *is_error { "  ⎿ error: " } else { "  ⎿ " };
                let _ = writeln!(out, "{mark}{}", first.join("\n    "));
                if rest > 0 {
                    let _ = writeln!(out, "    … ({rest} more lines)");
                }
                out.push('\n');
            }
        }
    }
    out.trim_start().to_owned()
}

/// Where `/export` writes: `args` (relative to `cwd`), or a dated file in `cwd`.
pub(crate) fn target(cwd: &Path, args: &str) -> PathBuf {
    let name = args.trim();
    if name.is_empty() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        cwd.join(format!("conversation-{now}.txt"))
    } else {
        cwd.join(name)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tine_api_client::ContentBlock;

    use super::*;

    #[test]
    fn prompts_replies_and_calls_read_as_plain_text() {
        let messages = vec![
            Message::user(vec![
                ContentBlock::text("<system-reminder>context</system-reminder>"),
                ContentBlock::text("what is in a.txt?"),
            ]),
            Message::assistant(vec![
                ContentBlock::text("Let me look."),
                ContentBlock::tool_use("t1", "Read", json!({"file_path": "a.txt"})),
            ]),
            Message::user(vec![ContentBlock::tool_result("t1", "1\thello", false)]),
            Message::assistant(vec![ContentBlock::text("It says hello.")]),
        ];
        let text = text(&messages);
        assert!(text.starts_with("> what is in a.txt?"), "{text}");
        assert!(text.contains("● Read(a.txt)"), "{text}");
        assert!(text.contains("⎿ 1\thello"), "{text}");
        assert!(text.contains("It says hello."), "{text}");
        assert!(!text.contains("context"), "{text}");
        assert_eq!(
            target(Path::new("/p"), "out.txt"),
            PathBuf::from("/p/out.txt")
        );
    }
}
