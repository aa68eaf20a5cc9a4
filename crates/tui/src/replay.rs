//! A resumed conversation shown again (`tine -c`, `tine -r ID`, `/resume ID`): the session's
//! [`HistoryItem`]s as the entries they were live: each prompt, the reply's text and thinking,
//! its tool calls with their results (a result's summary is its line, or how many lines it
//! has), and a compaction as its card.

use tine_session::{HistoryItem, ToolOutput};

use crate::app::App;
use crate::entry::Entry;
use crate::shown::call_args;
use crate::stream::MarkdownStream;
use crate::wrap::sanitize;

impl App {
    pub(crate) fn replay(&mut self, items: Vec<HistoryItem>) {
        let cwd = self.info.as_ref().map(|info| info.cwd.clone());
        for item in items {
            match item {
                HistoryItem::Prompt(text) => {
                    self.close_open();
                    self.transcript.push(Entry::User { text });
                }
                HistoryItem::Text(text) => {
                    self.close_open();
                    let stream = MarkdownStream::complete(&sanitize(&text));
                    self.transcript.push(Entry::Assistant(stream));
                }
                HistoryItem::Thinking(text) => {
                    self.close_open();
                    self.transcript.push(Entry::Thinking { text, done: true });
                }
                HistoryItem::ToolCall { id, tool, input } => {
                    let args = call_args(&tool, &input, cwd.as_deref());
                    self.tool_started(id, tool, args);
                }
                HistoryItem::ToolResult {
                    id,
                    is_error,
                    content,
                } => {
                    let summary = summary(&content);
                    let result = match is_error {
                        true => ToolOutput::error(content),
                        false => ToolOutput::text(content),
                    };
                    self.tool_finished(id, result.with_summary(summary));
                }
                HistoryItem::Compaction(boundary) => {
                    self.close_open();
                    self.transcript.push(Entry::Compacted(boundary));
                }
            }
        }
        self.close_open();
    }
}

/// A replayed result's line: itself when it is one line (cut at 100 characters), else how
/// many lines it has.
fn summary(content: &str) -> String {
    let lines = content.lines().count();
    match content.lines().next() {
        Some(first) if lines == 1 => first.chars().take(100).collect(),
        _ => format!("{lines} lines"),
    }
}
