//! What a result carries for UIs besides its text: a diff, the todo list, a shell run, a
//! sub-agent's totals; and how a call reads to people ([`call_summary`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::activity::SubagentTotals;

/// Structured extras of a result, for UIs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolDisplay {
    /// Nothing beyond the text.
    #[default]
    None,
    /// A file change as a unified diff (Edit, Write over an existing file).
    Diff {
        /// The file changed.
        file_path: PathBuf,
        /// The change as a unified diff.
        unified: String,
        /// Lines added.
        added: usize,
        /// Lines removed.
        removed: usize,
    },
    /// The todo list after TodoWrite.
    Todos(Vec<TodoItem>),
    /// A shell run.
    Shell {
        /// The exit code (None when ended by a signal or still running).
        exit_code: Option<i32>,
        /// Whether the command hit its timeout.
        timed_out: bool,
        /// Whether the output was cut to fit.
        truncated: bool,
        /// The background task's id, when it was started in the background.
        background_task: Option<String>,
    },
    /// A sub-agent that ran in the foreground ended (Agent): what it did, for "Done (7 tool
    /// uses · 12.3k tokens · 8.1s)".
    Agent(SubagentTotals),
}

/// Where a todo is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One item of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    /// Imperative form ("Run the tests").
    pub content: String,
    /// Where the item is.
    pub status: TodoStatus,
    /// Present continuous form shown while in progress ("Running the tests").
    #[serde(rename = "activeForm")]
    pub active_form: String,
}

/// The call's argument as people read it: the file, the command, the pattern, the URL; for
/// another tool its input as JSON, cut at 80 characters.
pub fn call_summary(tool: &str, input: &Value) -> String {
    let field = |name: &str| input.get(name).and_then(Value::as_str).map(str::to_owned);
    let picked = match tool {
        "Bash" => field("command"),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            field("file_path").or_else(|| field("notebook_path"))
        }
        "Grep" | "Glob" => field("pattern"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "Task" | "Agent" => field("description"),
        _ => None,
    };
    picked.unwrap_or_else(|| match input {
        Value::Object(map) if map.is_empty() => String::new(),
        Value::Null => String::new(),
        other => {
            let text = other.to_string();
            match text.char_indices().nth(80) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_lines_name_the_file_or_command() {
        assert_eq!(
            call_summary("Bash", &json!({"command": "ls -la"})),
            "ls -la"
        );
        assert_eq!(
            call_summary(
                "Edit",
                &json!({"file_path": "/p/src/a.rs", "old_string": "x"})
            ),
            "/p/src/a.rs"
        );
        assert_eq!(call_summary("Other", &json!({})), "");
        assert_eq!(call_summary("Other", &json!({"a": 1})), "{\"a\":1}");
    }
}
