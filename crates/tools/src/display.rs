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
        file_path: PathBuf,
        unified: String,
        added: usize,
        removed: usize,
    },
    /// The todo list after TodoWrite.
    Todos(Vec<TodoItem>),
    /// A shell run.
    Shell {
        exit_code: Option<i32>,
        timed_out: bool,
        truncated: bool,
        background_task: Option<String>,
    },
}

/// Where a todo is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// One item of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    /// Imperative form ("Run the tests").
    pub content: String,
    pub status: TodoStatus,
    /// Present continuous form shown while in progress ("Running the tests").
    #[serde(rename = "activeForm")]
    pub active_form: String,
}
