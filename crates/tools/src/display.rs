//! What a result carries for UIs besides its text: a diff, the todo list, a shell run.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
