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
Performs exact string replacements in files.

Usage:
- You must use your Read tool at least once in the conversation before editing. This tool will \
error if you attempt an edit without reading the file, or if the file changed since you read it.
- When editing text from Read tool output, preserve the exact indentation (tabs/spaces) as it \
appears AFTER the line number prefix. The line number prefix format is: spaces + line number + \
tab; everything after that tab is the actual file content. Never include any part of the line \
number prefix in old_string or new_string.
- ALWAYS prefer editing existing files in the codebase. NEVER write new files unless explicitly \
required.
- The edit will FAIL if `old_string` is not unique in the file. Either provide a larger string \
with more surrounding context to make it unique or use `replace_all` to change every instance \
of `old_string`.
- Use `replace_all` for replacing and renaming strings across the file, for instance to rename \
a variable.
- An empty `old_string` creates a new file containing `new_string`.";

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
                    "description": "The absolute path to the file to modify"
                },
                "old_string": {
                    "type": "string",
                    "description": "The text to replace"
                },
                "new_string": {
                    "type": "string",
                    "description": "The text to replace it with (must be different from old_string)"
                },
                "replace_all": {
                    "type": "boolean",
                    "default": false,
                    "description": "Replace all occurences of old_string (default false)"
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
