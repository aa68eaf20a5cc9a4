//! Write: creates a file or replaces one the model has read and that has not changed since;
//! through the editor when the context has one (`editor_files`).

use serde::Deserialize;
use serde_json::{Value, json};

use super::files::{load_current, store, updated_output};
use super::input::{FILE_PATH, file_write_target, render_by};
use crate::context::ToolContext;
use crate::tool::{Tool, ToolFuture, ToolOutput, parse_input};
use tine_permissions::PermissionTarget;

#[derive(Deserialize)]
struct WriteInput {
    file_path: String,
    content: String,
}

/// The Write tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteTool;

const DESCRIPTION: &str = "\
Writes a file, replacing any file at that path; missing parent directories are created. An \
existing file must be Read first (the write fails if it was not, or changed since). Prefer Edit \
for changing existing files; create new files, documentation above all, only when the task \
needs them.";

impl Tool for WriteTool {
    fn name(&self) -> &str {
        "Write"
    }

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "Absolute path of the file"
                },
                "content": {
                    "type": "string",
                    "description": "The whole new content"
                }
            },
            "required": ["file_path", "content"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: WriteInput = parse_input(input)?;
            let path = ctx.resolve_path(&input.file_path);
            let existing = load_current(ctx, &path).await?;
            if let Some(file) = &existing {
                ctx.file_state()
                    .check_fresh(&path, &file.bytes, file.mtime)?;
            }
            let target = existing
                .as_ref()
                .map_or_else(|| path.clone(), |file| file.real_path.clone());
            let permissions = existing.as_ref().and_then(|file| file.permissions.clone());
            store(ctx, &path, &target, &input.content, permissions).await?;

            let lines = input.content.lines().count();
            match existing {
                None => Ok(ToolOutput::text(format!(
                    "File created successfully at: {}",
                    path.display()
                ))
                .with_summary(format!("Wrote {lines} lines to {}", path.display()))),
                Some(file) => {
                    let before = String::from_utf8_lossy(&file.bytes);
                    Ok(updated_output(&path, &before, &input.content))
                }
            }
        })
    }

    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        file_write_target(input, FILE_PATH, ctx)
    }

    /// It may replace a whole file.
    fn is_destructive(&self, _input: &Value) -> bool {
        true
    }

    fn render_call(&self, input: &Value) -> String {
        render_by("Write", input, FILE_PATH)
    }
}
