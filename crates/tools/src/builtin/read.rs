//! Read: a text file as numbered lines (`N<tab>line`, as Claude Code sends them), recorded in
//! the file-state cache so Edit and Write can later check the model saw what they change.
//! Images, PDFs and notebooks are read by `read_media` and `notebook`.
//!
//! The file is streamed, never loaded whole: lines before `offset` are skipped as they pass,
//! only the lines shown are kept (each cut at [`MAX_LINE_CHARS`]), and the scan goes on past
//! them only up to [`MAX_SCANNED_BYTES`] (to count the lines and hash the file for the
//! file-state cache). FIFOs, sockets and devices are refused before they are opened.
//!
//! With an editor on the context (`editor_files`), a text file is the editor's text (an
//! unsaved buffer included), scanned the same way; the cache records what the model saw.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::time::SystemTime;

use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::files::{is_binary, open_regular, regular_metadata};
use super::input::{FILE_PATH, input_path, str_arg};
use crate::context::ToolContext;
use crate::editor_files::{EditorFs, editor_of, editor_text};
use crate::tool::{Tool, ToolError, ToolFuture, ToolOutput, parse_input};
use tine_permissions::PermissionTarget;

/// Lines shown when no `limit` is given.
pub(crate) const DEFAULT_LINE_LIMIT: usize = 2000;
/// Characters kept of one line.
pub(crate) const MAX_LINE_CHARS: usize = 2000;
/// Files larger than this must be read in parts (`offset`/`limit`).
pub(crate) const MAX_WHOLE_FILE_BYTES: u64 = 256 * 1024;
/// How far the scan goes once the lines to show are read: far enough to count the lines and
/// hash the whole file of any file Edit would handle, not through a multi-gigabyte log.
pub(crate) const MAX_SCANNED_BYTES: u64 = 16 * 1024 * 1024;

/// Bytes of one line kept: enough for [`MAX_LINE_CHARS`] characters of any width.
const KEPT_LINE_BYTES: usize = MAX_LINE_CHARS * 4;
/// The start of the file looked at for a NUL byte (see [`is_binary`]).
const BINARY_PROBE_BYTES: u64 = 8192;
const READ_BUFFER_BYTES: usize = 64 * 1024;

#[derive(Deserialize)]
struct ReadInput {
    file_path: String,
    offset: Option<u64>,
    limit: Option<u64>,
    pages: Option<String>,
}

/// The Read tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTool;

const DESCRIPTION: &str = "\
Reads a file: up to 2000 lines from the start unless `offset`/`limit` pick a part (read whole \
files unless they are too long), as `N<tab>line` with line numbers from 1; lines over 2000 \
characters are cut. `file_path` should be absolute (a relative one is taken from the working \
directory).
- Images (PNG, JPEG, GIF, WebP) you see. PDFs are read whole (up to 100 pages) or by `pages` \
(\"1-5\", at most 20). Notebooks (.ipynb) come as their cells with outputs. Directories and \
other binary files are refused (list a directory with Glob or `ls`).
- Reading several possibly useful files at once, in one response, is better than one by one.
- A file must be Read before Edit or Write changes it.";

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
                    "description": "Absolute path of the file"
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "First line to read, for a file too long to read at once"
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How many lines to read, for a file too long to read at once"
                },
                "pages": {
                    "type": "string",
                    "description": "PDF pages (\"1-5\", \"3\"), at most 20"
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
            if let Some(output) = super::read_media::read_special(&path, input.pages, ctx).await {
                return output;
            }
            let offset = usize::try_from(input.offset.unwrap_or(1).max(1)).unwrap_or(usize::MAX);
            let limit = input.limit.map_or(DEFAULT_LINE_LIMIT, |limit| {
                usize::try_from(limit).unwrap_or(usize::MAX)
            });
            let window = Window {
                offset,
                limit,
                ranged: input.offset.is_some() || input.limit.is_some(),
            };
            let from_editor = match editor_of(ctx) {
                Some(editor) => read_editor(&editor, &path, window, ctx).await?,
                None => None,
            };
            let read = match from_editor {
                Some(read) => read,
                None => {
                    let cancel = ctx.cancellation().clone();
                    let task_path = path.clone();
                    blocking(&path, move || read_file(&task_path, window, &cancel)).await?
                }
            };
            if let Some(hash) = read.excerpt.hash {
                ctx.file_state().record_hash(&path, hash, read.mtime);
            }
            if let Some(listener) = ctx.ext::<crate::FileReadListener>()
                && offset == 1
            {
                let head: Vec<&str> = read
                    .excerpt
                    .lines
                    .iter()
                    .take(crate::HEAD_LINES)
                    .map(|(_, line, _)| line.as_str())
                    .collect();
                (listener.0)(&path, &head.join("\n"));
            }
            Ok(render(&read.excerpt, offset))
        })
    }

    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::FileRead {
            path: input_path(input, FILE_PATH, ctx),
        }
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn render_call(&self, input: &Value) -> String {
        let path = str_arg(input, FILE_PATH).unwrap_or("?");
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

/// Which lines to show: `limit` lines from line `offset` (1-based).
#[derive(Debug, Clone, Copy)]
struct Window {
    offset: usize,
    limit: usize,
    /// `offset` or `limit` was given: the file may be larger than [`MAX_WHOLE_FILE_BYTES`].
    ranged: bool,
}

impl Window {
    /// The 0-based index of the first line after the window.
    fn end(&self) -> usize {
        (self.offset - 1).saturating_add(self.limit)
    }

    fn contains(&self, index: usize) -> bool {
        index >= self.offset - 1 && index < self.end()
    }
}

/// A file as Read saw it.
struct FileRead {
    excerpt: Excerpt,
    mtime: Option<SystemTime>,
}

/// What one pass over a file found.
#[derive(Debug, Default)]
struct Excerpt {
    /// The window's lines: number, text (at most [`MAX_LINE_CHARS`] characters), cut short.
    lines: Vec<(usize, String, bool)>,
    /// How many lines the file has, when the scan reached its end.
    total: Option<usize>,
    /// SHA-256 of the whole file, when the scan reached its end.
    hash: Option<[u8; 32]>,
    /// The file has no bytes at all.
    empty: bool,
}

/// Opens `path` (a regular file only) and scans it for `window`.
fn read_file(
    path: &Path,
    window: Window,
    cancel: &CancellationToken,
) -> Result<FileRead, ToolError> {
    let Some((file, metadata)) = open_regular(path)? else {
        return Err(ToolError::NotFound(path.to_path_buf()));
    };
    check_size(path, metadata.len(), window)?;
    let excerpt = scan(file, path, window, cancel)?;
    Ok(FileRead {
        excerpt,
        mtime: metadata.modified().ok(),
    })
}

/// `path` as the editor has it, scanned for `window`; `Ok(None)` when the disk decides (see
/// [`editor_text`]). A directory, FIFO or device on disk is refused before the editor is asked.
async fn read_editor(
    editor: &EditorFs,
    path: &Path,
    window: Window,
    ctx: &ToolContext,
) -> Result<Option<FileRead>, ToolError> {
    let task_path = path.to_path_buf();
    let metadata = blocking(path, move || regular_metadata(&task_path)).await?;
    let Some(text) = editor_text(editor, path, metadata.is_some()).await else {
        return Ok(None);
    };
    check_size(path, text.len() as u64, window)?;
    let cancel = ctx.cancellation().clone();
    let task_path = path.to_path_buf();
    let excerpt = blocking(path, move || {
        scan(text.as_bytes(), &task_path, window, &cancel)
    })
    .await?;
    Ok(Some(FileRead {
        excerpt,
        mtime: metadata.and_then(|metadata| metadata.modified().ok()),
    }))
}

/// Runs `work` (file I/O or a scan) off the runtime's threads.
async fn blocking<T: Send + 'static>(
    path: &Path,
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| ToolError::Failed(format!("reading {}: {error}", path.display())))?
}

/// Refuses a whole read of more than [`MAX_WHOLE_FILE_BYTES`].
fn check_size(path: &Path, len: u64, window: Window) -> Result<(), ToolError> {
    if !window.ranged && len > MAX_WHOLE_FILE_BYTES {
        return Err(ToolError::Failed(format!(
            "{} is {} KB, more than the {} KB that can be read at once; read it in parts with \
             `offset` and `limit`, or search it with Grep",
            path.display(),
            len / 1024,
            MAX_WHOLE_FILE_BYTES / 1024
        )));
    }
    Ok(())
}

/// One pass over `reader`: refuses binary content, skips to the window, keeps its lines, then
/// goes on (hashing and counting) until the end or [`MAX_SCANNED_BYTES`].
fn scan(
    mut reader: impl Read,
    path: &Path,
    window: Window,
    cancel: &CancellationToken,
) -> Result<Excerpt, ToolError> {
    let io_error = |error| ToolError::io("cannot read", path, error);
    let mut probe = Vec::new();
    (&mut reader)
        .take(BINARY_PROBE_BYTES)
        .read_to_end(&mut probe)
        .map_err(io_error)?;
    if is_binary(path, &probe) {
        return Err(ToolError::BinaryFile(path.to_path_buf()));
    }
    let mut input = BufReader::with_capacity(READ_BUFFER_BYTES, probe.as_slice().chain(reader));
    let mut excerpt = Excerpt::default();
    let mut hasher = Sha256::new();
    let mut scanned: u64 = 0;
    // The line being read: its 0-based index, the bytes kept of it, how many it has so far.
    let mut index = 0usize;
    let mut kept: Vec<u8> = Vec::new();
    let mut line_bytes = 0usize;
    let complete = loop {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let chunk = input.fill_buf().map_err(io_error)?;
        if chunk.is_empty() {
            break true;
        }
        if index >= window.end() && scanned >= MAX_SCANNED_BYTES {
            break false;
        }
        hasher.update(chunk);
        let len = chunk.len();
        let mut rest = chunk;
        while !rest.is_empty() {
            let newline = rest.iter().position(|&b| b == b'\n');
            let piece = &rest[..newline.unwrap_or(rest.len())];
            if window.contains(index) && kept.len() < KEPT_LINE_BYTES {
                let room = KEPT_LINE_BYTES - kept.len();
                kept.extend_from_slice(&piece[..piece.len().min(room)]);
            }
            line_bytes += piece.len();
            let Some(at) = newline else { break };
            if window.contains(index) {
                excerpt.lines.push(finish_line(index, &kept, line_bytes));
            }
            kept.clear();
            line_bytes = 0;
            index += 1;
            rest = &rest[at + 1..];
        }
        input.consume(len);
        scanned += len as u64;
    };
    if complete {
        if line_bytes > 0 {
            // A last line without a newline.
            if window.contains(index) {
                excerpt.lines.push(finish_line(index, &kept, line_bytes));
            }
            index += 1;
        }
        excerpt.total = Some(index);
        excerpt.hash = Some(hasher.finalize().into());
        excerpt.empty = scanned == 0;
    }
    Ok(excerpt)
}

/// Line `index` from its kept bytes (of `line_bytes` in all): a CR before the newline dropped,
/// invalid UTF-8 replaced, cut at [`MAX_LINE_CHARS`] characters.
fn finish_line(index: usize, kept: &[u8], line_bytes: usize) -> (usize, String, bool) {
    let whole = kept.len() == line_bytes;
    let bytes = match kept.strip_suffix(b"\r") {
        Some(stripped) if whole => stripped,
        _ => kept,
    };
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => (index + 1, text[..cut].to_owned(), true),
        None => (index + 1, text.into_owned(), !whole),
    }
}

/// The model's view of an excerpt: `N<tab>line` for each line, then what remains.
fn render(excerpt: &Excerpt, offset: usize) -> ToolOutput {
    if excerpt.empty {
        return ToolOutput::text(
            "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
        )
        .with_summary("Read 0 lines (empty file)");
    }
    if excerpt.lines.is_empty()
        && let Some(total) = excerpt.total
    {
        return ToolOutput::text(format!(
            "<system-reminder>Warning: the file has only {total} lines, fewer than the offset \
             {offset}.</system-reminder>"
        ))
        .with_summary("Read 0 lines (offset past the end)");
    }
    let mut out = String::new();
    for (number, line, cut) in &excerpt.lines {
        out.push_str(&number.to_string());
        out.push('\t');
        out.push_str(line);
        if *cut {
            out.push_str("... [line truncated]");
        }
        out.push('\n');
    }
    let shown = excerpt.lines.len();
    let last = offset - 1 + shown;
    match excerpt.total {
        Some(total) if last < total => out.push_str(&format!(
            "\n... ({} more lines; continue with offset={})\n",
            total - last,
            last + 1
        )),
        Some(_) => {}
        None => out.push_str(&format!(
            "\n... (more lines follow; continue with offset={})\n",
            last + 1
        )),
    }
    let lines = if shown == 1 { "line" } else { "lines" };
    ToolOutput::text(out).with_summary(format!("Read {shown} {lines}"))
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
