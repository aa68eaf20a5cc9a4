//! The memory forks' `can_use_tool` (seed 000 §七, `createAutoMemCanUseTool`): Read, Grep and
//! Glob allowed; Bash only when the bash analysis says the command only reads; Write and Edit
//! only for files that, once `..`, symlinks and case are resolved, lie inside the memory
//! directory; everything else denied with a reason the model can read.
//!
//! The tool array itself is never filtered: it is part of the prompt-cache key, so a forbidden
//! tool stays listed and is refused here, at call time.

use std::path::{Component, Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::Value;
use tine_query_loop::{CanUseTool, PermissionOutcome};
use tine_tools::{Tool, ToolContext, is_read_only_command};

use crate::error::MemoryError;

/// The sandbox of the extraction (and dream) forks.
#[derive(Debug, Clone)]
pub struct MemorySandbox {
    /// The memory directory, canonicalized (a symlinked directory is resolved too).
    dir: PathBuf,
}

impl MemorySandbox {
    /// Creates the memory directory if needed and canonicalizes it.
    pub fn new(memory_dir: &Path) -> Result<Self, MemoryError> {
        tine_tools::private_fs::create_dir_all(memory_dir)
            .map_err(|e| MemoryError::io("cannot create the memory directory", memory_dir, e))?;
        let dir = std::fs::canonicalize(memory_dir)
            .map_err(|e| MemoryError::io("cannot resolve the memory directory", memory_dir, e))?;
        Ok(Self { dir })
    }

    /// The canonical memory directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The decision for one call, without the async wrapper.
    pub fn decide(&self, tool: &str, input: &Value, ctx: &ToolContext) -> PermissionOutcome {
        let allow = PermissionOutcome::Allow {
            updated_input: None,
        };
        match tool {
            "Read" | "Grep" | "Glob" => allow,
            "Bash" => {
                let command = input.get("command").and_then(Value::as_str).unwrap_or("");
                if is_read_only_command(command) {
                    allow
                } else {
                    deny(format!(
                        "The memory extraction agent may run only read-only shell commands \
                         (ls, cat, grep, find, ...); `{}` is not read-only. Use Write or Edit \
                         on files in {} instead.",
                        truncate(command, 120),
                        self.dir.display()
                    ))
                }
            }
            "Write" | "Edit" => {
                let path = input.get("file_path").and_then(Value::as_str).unwrap_or("");
                match self.check_write_path(path, &ctx.cwd()) {
                    Ok(_) => allow,
                    Err(why) => deny(format!(
                        "{tool} refused: {why}. The memory extraction agent may write only \
                         Markdown files inside the memory directory {} (for example {}/project_stack.md).",
                        self.dir.display(),
                        self.dir.display()
                    )),
                }
            }
            other => deny(format!(
                "The memory extraction agent may use only Read, Grep, Glob, read-only Bash, and \
                 Write/Edit inside {}; `{other}` is not available to it.",
                self.dir.display()
            )),
        }
    }

    /// Whether a Write/Edit of `file_path` (as the tool would resolve it against `cwd`) lands
    /// inside the memory directory. Returns the resolved path, or why not.
    pub fn check_write_path(&self, file_path: &str, cwd: &Path) -> Result<PathBuf, String> {
        let (resolved, relative) = self.resolve_inside(file_path, cwd)?;
        check_relative_name(&relative)?;
        Ok(resolved)
    }

    /// Whether `file_path` (resolved against `cwd` as the tools resolve it) is a file inside
    /// the memory directory, whatever its name. Used to notice the main agent writing memory.
    pub fn is_inside(&self, file_path: &str, cwd: &Path) -> bool {
        self.resolve_inside(file_path, cwd).is_ok()
    }

    /// The resolved path of `file_path` and its part inside the memory directory, or why it is
    /// not inside.
    pub(crate) fn resolve_inside(
        &self,
        file_path: &str,
        cwd: &Path,
    ) -> Result<(PathBuf, PathBuf), String> {
        if file_path.is_empty() {
            return Err("the file_path is empty".to_owned());
        }
        if file_path.chars().any(char::is_control) {
            return Err("the file_path contains control characters (a NUL byte?)".to_owned());
        }
        // The same lexical resolution the Write and Edit tools apply (`ToolContext::resolve_path`).
        let requested = Path::new(file_path);
        let lexical = if requested.is_absolute() {
            tine_tools::context::normalize(requested)
        } else {
            tine_tools::context::normalize(&cwd.join(requested))
        };
        let resolved = resolve_existing_prefix(&lexical)?;
        let relative = self.relative_inside(&resolved).ok_or_else(|| {
            format!(
                "`{}` resolves to {}, which is outside the memory directory",
                file_path,
                resolved.display()
            )
        })?;
        Ok((resolved, relative))
    }

    /// `path` relative to the memory directory when inside it (the directory itself excluded).
    fn relative_inside(&self, path: &Path) -> Option<PathBuf> {
        if let Ok(rel) = path.strip_prefix(&self.dir) {
            return (!rel.as_os_str().is_empty()).then(|| rel.to_path_buf());
        }
        // Case-insensitive filesystems: an existing ancestor that is the memory directory's
        // own inode is the directory, whatever the case it was spelled in.
        same_file_ancestor(path, &self.dir)
    }
}

fn deny(reason: String) -> PermissionOutcome {
    PermissionOutcome::Deny { reason }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// Canonicalizes the deepest existing ancestor of `path` (following symlinks, as the kernel
/// will when the tool writes) and appends the rest, which is lexically clean.
fn resolve_existing_prefix(path: &Path) -> Result<PathBuf, String> {
    let mut existing = path.to_path_buf();
    let mut tail: Vec<std::ffi::OsString> = Vec::new();
    // `symlink_metadata`: a dangling symlink exists too, and canonicalizing it fails below.
    while existing.symlink_metadata().is_err() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                tail.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return Err(format!("cannot resolve {}", path.display())),
        }
    }
    let mut resolved = std::fs::canonicalize(&existing).map_err(|e| {
        format!(
            "cannot resolve {} ({e}; a symlink pointing nowhere?)",
            existing.display()
        )
    })?;
    for name in tail.into_iter().rev() {
        resolved.push(name);
    }
    Ok(resolved)
}

/// Every component of the part inside the memory directory must be a plain ASCII name:
/// Unicode look-alikes of `/` and `.` (fullwidth solidus, division slash, one-dot leader...)
/// would otherwise make names that read as a path escape, and hidden files (the consolidation
/// lock) are not the fork's to touch.
fn check_relative_name(relative: &Path) -> Result<(), String> {
    let components: Vec<_> = relative.components().collect();
    for (i, component) in components.iter().enumerate() {
        let Component::Normal(name) = component else {
            return Err(format!("`{}` is not a plain path", relative.display()));
        };
        let Some(name) = name.to_str() else {
            return Err("the file name is not valid UTF-8".to_owned());
        };
        if let Some(c) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        {
            return Err(format!(
                "the name `{name}` contains `{c}` (U+{:04X}); use only ASCII letters, digits, `_`, `-` and `.`",
                u32::from(c)
            ));
        }
        if name.starts_with('.') {
            return Err(format!("`{name}` is a hidden name"));
        }
        if i + 1 == components.len() && !name.ends_with(".md") {
            return Err(format!("`{name}` is not a Markdown (.md) file"));
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file_ancestor(path: &Path, dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let target = std::fs::metadata(dir).ok()?;
    let mut rel: Vec<&std::ffi::OsStr> = Vec::new();
    let mut current = path;
    loop {
        if let Ok(meta) = std::fs::metadata(current)
            && meta.dev() == target.dev()
            && meta.ino() == target.ino()
        {
            if rel.is_empty() {
                return None;
            }
            return Some(rel.iter().rev().collect());
        }
        rel.push(current.file_name()?);
        current = current.parent()?;
    }
}

#[cfg(not(unix))]
fn same_file_ancestor(_path: &Path, _dir: &Path) -> Option<PathBuf> {
    None
}

impl CanUseTool for MemorySandbox {
    fn check<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome> {
        let outcome = self.decide(tool.name(), input, ctx);
        if let PermissionOutcome::Deny { reason } = &outcome {
            tracing::debug!(tool = tool.name(), %reason, "memory sandbox denied a call");
        }
        Box::pin(async move { outcome })
    }
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
