//! Lines the main thread's file tools changed, for a status line's `total_lines_added` and
//! `total_lines_removed` (Claude Code's `cost` figures). Counted from what the tools report,
//! never re-read from disk: an Edit, NotebookEdit or a Write over a file carries its diff's
//! counts ([`ToolDisplay::Diff`]); a Write that created a file carries none, so its lines are
//! taken from the call's content. Failed calls count nothing; sub-agents' edits are theirs.

use std::collections::HashMap;

use tine_api_client::ToolUseBlock;
use tine_tools::{ToolDisplay, ToolOutput};

/// The Write tool's name (its new files come without a diff).
const WRITE: &str = "Write";

/// Lines added and removed so far, and the Write calls whose results are awaited.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileChanges {
    pub(crate) added: u64,
    pub(crate) removed: u64,
    /// Line counts of Write calls' contents by `tool_use` id, until their results come.
    writes: HashMap<String, u64>,
}

impl FileChanges {
    /// Counts going on from `added` and `removed`.
    pub(crate) fn from_totals(added: u64, removed: u64) -> Self {
        Self {
            added,
            removed,
            writes: HashMap::new(),
        }
    }

    /// A call the model made: a Write's content is kept in mind, in case it creates a file.
    pub(crate) fn on_call(&mut self, call: &ToolUseBlock) {
        if call.name == WRITE
            && let Some(content) = call.input.get("content").and_then(|c| c.as_str())
        {
            let lines = u64::try_from(content.lines().count()).unwrap_or(u64::MAX);
            self.writes.insert(call.id.clone(), lines);
        }
    }

    /// A call's result: its diff counted, or a created file's lines.
    pub(crate) fn on_result(&mut self, tool_use_id: &str, tool: &str, output: &ToolOutput) {
        let written = self.writes.remove(tool_use_id);
        if output.is_error {
            return;
        }
        // Only a diff or a Write's new file is a change of lines; whatever else a result
        // shows (a todo list, a shell run, an agent's totals) is not.
        if let ToolDisplay::Diff { added, removed, .. } = &output.display {
            self.added += u64::try_from(*added).unwrap_or(u64::MAX);
            self.removed += u64::try_from(*removed).unwrap_or(u64::MAX);
        } else if tool == WRITE && matches!(output.display, ToolDisplay::None) {
            self.added += written.unwrap_or(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str, input: serde_json::Value) -> ToolUseBlock {
        ToolUseBlock {
            id: id.to_owned(),
            name: name.to_owned(),
            input,
            cache_control: None,
        }
    }

    #[test]
    fn diffs_count_their_lines_and_a_new_file_all_of_its_own() {
        let mut changes = FileChanges::from_totals(1, 1);
        changes.on_call(&call("a", "Edit", json!({"old_string": "x"})));
        let edit = ToolOutput::text("updated").with_display(ToolDisplay::Diff {
            file_path: "f.rs".into(),
            unified: String::new(),
            added: 3,
            removed: 2,
        });
        changes.on_result("a", "Edit", &edit);
        changes.on_call(&call("b", WRITE, json!({"content": "one\ntwo\nthree\n"})));
        changes.on_result("b", WRITE, &ToolOutput::text("File created successfully"));
        assert_eq!((changes.added, changes.removed), (1 + 3 + 3, 1 + 2));
        // A failed write counts nothing, and a shell run is no file change.
        changes.on_call(&call("c", WRITE, json!({"content": "x\n"})));
        changes.on_result("c", WRITE, &ToolOutput::error("denied"));
        changes.on_result("d", "Bash", &ToolOutput::text("ok"));
        assert_eq!((changes.added, changes.removed), (7, 3));
        assert!(changes.writes.is_empty());
    }
}
