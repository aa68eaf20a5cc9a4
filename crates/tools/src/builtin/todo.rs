//! TodoWrite: the model's own task list for the session, replaced whole on every call.

use std::sync::{Arc, Mutex, PoisonError};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::display::{TodoItem, TodoStatus, ToolDisplay};
use crate::extensions::ContextExtension;
use crate::tool::{Tool, ToolFuture, ToolOutput, parse_input};
use tine_permissions::PermissionTarget;

/// The session's todo list, shared by clones.
#[derive(Debug, Clone, Default)]
pub struct TodoList(Arc<Mutex<Vec<TodoItem>>>);

impl TodoList {
    /// The current items.
    pub fn items(&self) -> Vec<TodoItem> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the list; returns the previous one.
    pub fn replace(&self, items: Vec<TodoItem>) -> Vec<TodoItem> {
        std::mem::replace(
            &mut *self.0.lock().unwrap_or_else(PoisonError::into_inner),
            items,
        )
    }
}

/// A fork keeps its own list (design.md "One fork").
impl ContextExtension for TodoList {
    fn fork(&self) -> Option<Self> {
        None
    }
}

#[derive(Deserialize)]
struct TodoWriteInput {
    todos: Vec<TodoItem>,
}

/// The TodoWrite tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TodoWriteTool;

const DESCRIPTION: &str = "\
Creates and updates the session's todo list, which shows the user your progress. Use it for \
tasks of 3 or more steps or several tasks at once (add them when the instructions come), not \
for a single trivial task or a conversation. Mark a task in_progress before starting it, one \
at a time, and completed as soon as it is fully done (not while tests fail or work is \
partial), adding follow-ups you find. Each todo has `content` (\"Run the tests\"), \
`activeForm` (\"Running the tests\") and `status`. Every call replaces the whole list.";

impl Tool for TodoWriteTool {
    fn name(&self) -> &str {
        "TodoWrite"
    }

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The updated todo list",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "minLength": 1},
                            "status": {
                                "type": "string",
                                "enum": ["pending", "in_progress", "completed"]
                            },
                            "activeForm": {"type": "string", "minLength": 1}
                        },
                        "required": ["content", "status", "activeForm"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: TodoWriteInput = parse_input(input)?;
            let done = input
                .todos
                .iter()
                .filter(|todo| todo.status == TodoStatus::Completed)
                .count();
            let total = input.todos.len();
            ctx.ext_or_default::<TodoList>()
                .replace(input.todos.clone());
            Ok(ToolOutput::text(
                "Todos have been modified successfully. Ensure that you continue to use the todo \
                 list to track your progress. Please proceed with the current tasks if applicable",
            )
            .with_summary(format!("{done} of {total} todos completed"))
            .with_display(ToolDisplay::Todos(input.todos)))
        })
    }

    fn permission_target(&self, _input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Other { content: None }
    }

    /// It changes only the session's own list, never the user's files.
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        false
    }

    fn render_call(&self, input: &Value) -> String {
        let count = input
            .get("todos")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        format!("Update todos ({count} items)")
    }
}
