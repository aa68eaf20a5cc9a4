//! Glob: files whose path matches a glob pattern, newest first, capped; `.gitignore` is
//! respected.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::input::str_arg;
use super::walk::{
    collect_parallel, display_path, modified, render_search, search_blocking, search_root,
    search_target, walker,
};
use crate::context::ToolContext;
use crate::tool::{Tool, ToolError, ToolFuture, ToolOutput, parse_input};
use tine_permissions::PermissionTarget;

/// At most this many paths are returned.
pub(crate) const MAX_GLOB_RESULTS: usize = 100;

#[derive(Deserialize)]
struct GlobInput {
    pattern: String,
    path: Option<String>,
}

/// The Glob tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobTool;

const DESCRIPTION: &str = "\
Finds files by name pattern (\"**/*.js\", \"src/**/*.ts\"; `*` does not cross `/`, `**` does), \
at any codebase size. Returns up to 100 paths relative to the working directory, newest first; \
files ignored by .gitignore are skipped.";

impl Tool for GlobTool {
    fn name(&self) -> &str {
        "Glob"
    }

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "The glob pattern"
                },
                "path": {
                    "type": "string",
                    "description": "Directory to search; leave it out (not \"null\") for the working directory"
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: GlobInput = parse_input(input)?;
            let root = search_root(input.path.as_deref(), ctx)?;
            if !root.is_dir() {
                return Err(ToolError::Failed(format!(
                    "{} is not a directory; `path` must be the directory to search in",
                    root.display()
                )));
            }
            let (base, pattern) = split_literal_prefix(&root, &input.pattern);
            if base == Path::new("/") && Path::new(&input.pattern).is_absolute() {
                // A missing directory in an absolute pattern would otherwise walk the whole disk.
                return Err(ToolError::Failed(format!(
                    "no directory of `{}` exists; give an existing directory in `path` and a \
                     relative pattern",
                    input.pattern
                )));
            }
            let matcher = GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .map_err(|error| {
                    ToolError::InvalidInput(format!("`pattern` is not a valid glob: {error}"))
                })?
                .compile_matcher();
            let found =
                search_blocking(ctx, move |cancel| Ok(find(&base, &matcher, cancel))).await?;
            Ok(render(found, &ctx.cwd()))
        })
    }

    /// Where the walk starts: the `path` (or cwd) with the pattern's leading literal
    /// directories, since `/etc/*` or `link/*` walks there, not the cwd.
    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        let target = search_target(input, ctx);
        match (&target, input.get("pattern").and_then(Value::as_str)) {
            (PermissionTarget::FileRead { path }, Some(pattern)) => PermissionTarget::FileRead {
                path: split_literal_prefix(path, pattern).0,
            },
            _ => target,
        }
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn render_call(&self, input: &Value) -> String {
        render_search("Glob", str_arg(input, "pattern").unwrap_or("?"), input)
    }
}

fn has_glob_meta(text: &str) -> bool {
    text.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// Moves the pattern's leading literal directories into the walk's root (`src/**/*.rs` walks
/// `src` only), and turns an absolute pattern into a root plus a relative one.
fn split_literal_prefix(root: &Path, pattern: &str) -> (PathBuf, String) {
    let mut base = if Path::new(pattern).is_absolute() {
        PathBuf::from("/")
    } else {
        root.to_path_buf()
    };
    let parts: Vec<&str> = pattern.split('/').filter(|part| !part.is_empty()).collect();
    let mut taken = 0;
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        if has_glob_meta(part) || *part == ".." || *part == "." {
            break;
        }
        let next = base.join(part);
        if !next.is_dir() {
            break;
        }
        base = next;
        taken += 1;
    }
    (base, parts[taken..].join("/"))
}

fn find(
    base: &Path,
    matcher: &GlobMatcher,
    cancel: &CancellationToken,
) -> Vec<(PathBuf, SystemTime)> {
    let mut found = collect_parallel(&walker(base), cancel, || {
        Box::new(move |entry| {
            if entry.file_type().is_some_and(|kind| kind.is_dir()) {
                return None;
            }
            let relative = entry.path().strip_prefix(base).unwrap_or(entry.path());
            if !matcher.is_match(relative) {
                return None;
            }
            let mtime = modified(&entry);
            Some((entry.into_path(), mtime))
        })
    });
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    found
}

fn render(found: Vec<(PathBuf, SystemTime)>, cwd: &Path) -> ToolOutput {
    if found.is_empty() {
        return ToolOutput::text("No files found").with_summary("Found 0 files");
    }
    let total = found.len();
    let mut text: Vec<String> = found
        .iter()
        .take(MAX_GLOB_RESULTS)
        .map(|(path, _)| display_path(path, cwd))
        .collect();
    if total > MAX_GLOB_RESULTS {
        text.push(format!(
            "(Results are truncated: showing the {MAX_GLOB_RESULTS} newest of {total} files. \
             Consider using a more specific path or pattern.)"
        ));
    }
    let files = if total == 1 { "file" } else { "files" };
    ToolOutput::text(text.join("\n")).with_summary(format!("Found {total} {files}"))
}
