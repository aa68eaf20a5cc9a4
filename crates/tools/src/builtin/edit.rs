//! Edit: exact string replacement in a file the model has read, returning a unified diff. The
//! file is the editor's when the context has one (`editor_files`): its text is changed and
//! written back through it.

use serde::Deserialize;
use serde_json::{Value, json};

use super::files::{diff, diff_summary, is_binary, load_current, store, updated_output};
use super::input::{FILE_PATH, file_write_target, render_by};
use crate::context::ToolContext;
use crate::tool::{Tool, ToolError, ToolFuture, ToolOutput, parse_input};
use tine_permissions::PermissionTarget;

#[derive(Deserialize)]
struct EditInput {
    file_path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

/// The Edit tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditTool;

const DESCRIPTION: &str = "\
Replaces exact text in a file. Read the file first in this conversation: the edit fails if it \
was not read or changed since.
- Copy `old_string` from Read's output with its exact indentation, without the line-number \
prefix (spaces, number, tab).
- `old_string` must be unique in the file: add surrounding lines until it is, or set \
`replace_all` to change every occurrence (renaming a variable, say).
- An empty `old_string` creates a new file holding `new_string`. Prefer editing existing files \
to creating new ones.";

impl Tool for EditTool {
    fn name(&self) -> &str {
        "Edit"
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
                "old_string": {
                    "type": "string",
                    "description": "The text to replace"
                },
                "new_string": {
                    "type": "string",
                    "description": "The replacement (different from old_string)"
                },
                "replace_all": {
                    "type": "boolean",
                    "default": false,
                    "description": "Replace every occurrence"
                }
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: EditInput = parse_input(input)?;
            if input.old_string == input.new_string {
                return Err(ToolError::NoChange);
            }
            let path = ctx.resolve_path(&input.file_path);
            let Some(file) = load_current(ctx, &path).await? else {
                if input.old_string.is_empty() {
                    return create(&path, &input.new_string, ctx).await;
                }
                return Err(ToolError::NotFound(path));
            };
            if is_binary(&path, &file.bytes) {
                return Err(ToolError::BinaryFile(path));
            }
            ctx.file_state()
                .check_fresh(&path, &file.bytes, file.mtime)?;
            let before = String::from_utf8_lossy(&file.bytes).into_owned();

            let after = if input.old_string.is_empty() {
                if !before.trim().is_empty() {
                    return Err(ToolError::Failed(format!(
                        "`old_string` is empty but {} already has content; give the text to \
                         replace, or use Write to replace the whole file",
                        path.display()
                    )));
                }
                input.new_string.clone()
            } else {
                replace(&path, &before, &input)?
            };

            store(ctx, &path, &file.real_path, &after, file.permissions).await?;
            Ok(updated_output(&path, &before, &after))
        })
    }

    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        file_write_target(input, FILE_PATH, ctx)
    }

    fn render_call(&self, input: &Value) -> String {
        render_by("Edit", input, FILE_PATH)
    }
}

/// `before` with the input's replacement applied, or why it cannot be. A file with CRLF line
/// ends still matches an `old_string` written with plain `\n` (models rarely send `\r`).
fn replace(path: &std::path::Path, before: &str, input: &EditInput) -> Result<String, ToolError> {
    let mut old = input.old_string.clone();
    let mut new = input.new_string.clone();
    let mut count = before.matches(&old).count();
    if count == 0 && before.contains("\r\n") && old.contains('\n') && !old.contains('\r') {
        old = old.replace('\n', "\r\n");
        new = new.replace('\n', "\r\n");
        count = before.matches(&old).count();
    }
    match count {
        0 => Err(ToolError::OldStringNotFound(path.to_path_buf())),
        1 => Ok(before.replacen(&old, &new, 1)),
        _ if input.replace_all => Ok(before.replace(&old, &new)),
        count => Err(ToolError::OldStringAmbiguous {
            path: path.to_path_buf(),
            count,
        }),
    }
}

async fn create(
    path: &std::path::Path,
    content: &str,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    store(ctx, path, path, content, None).await?;
    let display = diff(path, "", content);
    Ok(
        ToolOutput::text(format!("File created successfully at: {}", path.display()))
            .with_summary(diff_summary(&display))
            .with_display(display),
    )
}
