//! Read: a text file as numbered lines (`cat -n` style), recorded in the file-state cache so
//! Edit and Write can later check the model saw what they change.

use serde::Deserialize;
use serde_json::{Value, json};

use super::files::{input_path, is_binary, load};
use crate::context::ToolContext;
use crate::tool::{Tool, ToolError, ToolFuture, ToolOutput, parse_input};
use crate::verdict::PermissionTarget;

/// Lines shown when no `limit` is given.
pub const DEFAULT_LINE_LIMIT: usize = 2000;
/// Characters kept of one line.
pub const MAX_LINE_CHARS: usize = 2000;
/// Files larger than this must be read in parts (`offset`/`limit`).
pub const MAX_WHOLE_FILE_BYTES: u64 = 256 * 1024;

#[derive(Deserialize)]
struct ReadInput {
    file_path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

/// The Read tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTool;

const DESCRIPTION: &str = "\
Reads a file from the local filesystem. You can access any file directly with this tool.

Usage:
- The file_path parameter should be an absolute path (a relative one is taken from the current \
working directory).
- By default, it reads up to 2000 lines from the beginning of the file.
- You can optionally give a line offset and limit (handy for long files), but it is recommended \
to read the whole file by not providing them.
- Lines longer than 2000 characters are truncated.
- Results are returned like `cat -n`, with line numbers starting at 1.
- It reads text files only; it refuses directories (use Glob or `ls` through Bash) and binary \
files.
- You can call several tools in one response; it is better to speculatively read several \
potentially useful files at once.
- A file must be read with this tool before it is changed with Edit or Write.";

impl Tool for ReadTool {
    fn name(&self) -> &str {
        "Read"
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
                    "description": "The absolute path to the file to read"
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "The line number to start reading from. Only provide if the file is too large to read at once"
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The number of lines to read. Only provide if the file is too large to read at once."
                }
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: ReadInput = parse_input(input)?;
            let path = ctx.resolve_path(&input.file_path);
            let Some(file) = load(&path).await? else {
                return Err(ToolError::NotFound(path));
            };
            if is_binary(&path, &file.bytes) {
                return Err(ToolError::BinaryFile(path));
            }
            let ranged = input.offset.is_some() || input.limit.is_some();
            if !ranged && file.bytes.len() as u64 > MAX_WHOLE_FILE_BYTES {
                return Err(ToolError::Failed(format!(
                    "{} is {} KB, more than the {} KB that can be read at once; read it in parts \
                     with `offset` and `limit`, or search it with Grep",
                    path.display(),
                    file.bytes.len() / 1024,
                    MAX_WHOLE_FILE_BYTES / 1024
                )));
            }
            ctx.file_state().record(&path, &file.bytes, file.mtime);
            let text = String::from_utf8_lossy(&file.bytes);
            let offset = usize::try_from(input.offset.unwrap_or(1).max(1)).unwrap_or(usize::MAX);
            let limit = input.limit.map_or(DEFAULT_LINE_LIMIT, |limit| {
                usize::try_from(limit).unwrap_or(usize::MAX)
            });
            Ok(render(&text, offset, limit))
        })
    }

    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::FileRead {
            path: input_path(input, ctx),
        }
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn render_call(&self, input: &Value) -> String {
        let path = input
            .get("file_path")
            .and_then(Value::as_str)
            .unwrap_or("?");
        match (
            input.get("offset").and_then(Value::as_u64),
            input.get("limit").and_then(Value::as_u64),
        ) {
            (None, None) => format!("Read({path})"),
            (offset, limit) => format!(
                "Read({path}, lines {}..+{})",
                offset.unwrap_or(1),
                limit.unwrap_or(DEFAULT_LINE_LIMIT as u64)
            ),
        }
    }
}

/// Lines `offset..offset + limit` (1-based) of `text`, numbered.
fn render(text: &str, offset: usize, limit: usize) -> ToolOutput {
    if text.is_empty() {
        return ToolOutput::text(
            "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
        )
        .with_summary("Read 0 lines (empty file)");
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    let total = body.split('\n').count();
    if offset > total {
        return ToolOutput::text(format!(
            "<system-reminder>Warning: the file has only {total} lines, fewer than the offset \
             {offset}.</system-reminder>"
        ))
        .with_summary("Read 0 lines (offset past the end)");
    }
    let mut out = String::new();
    let mut shown = 0;
    for (index, line) in body.split('\n').enumerate().skip(offset - 1).take(limit) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let number = index + 1;
        match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => out.push_str(&format!(
                "{number:>6}\t{}... [line truncated]\n",
                &line[..cut]
            )),
            None => out.push_str(&format!("{number:>6}\t{line}\n")),
        }
        shown += 1;
    }
    let last = offset - 1 + shown;
    if last < total {
        out.push_str(&format!(
            "\n... ({} more lines; continue with offset={})\n",
            total - last,
            last + 1
        ));
    }
    let lines = if shown == 1 { "line" } else { "lines" };
    ToolOutput::text(out).with_summary(format!("Read {shown} {lines}"))
}
