//! The memory forks' `can_use_tool` (seed 000 §七, `createAutoMemCanUseTool`), as the fork
//! runtime's one [`ForkPolicy`] set up for memory: Read, Grep, Glob and read-only Bash judged by
//! the permission engine as the main session judges them, with the memory directory counted as
//! one of the project's directories; Write and Edit only for files whose resolved path lies
//! inside the memory directory ([`MemoryWrites`]); everything else refused with a reason the
//! model can read.
//!
//! A fork has no one to ask, so whatever the engine would ask about (a read outside the
//! project's directories, through a link or by a shell command, a path known only at run
//! time, an ask rule) is refused. Every path is resolved by the engine's one resolver
//! ([`resolve_write_path`]); this module has no resolver of its own.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;
use tine_fork_runtime::{ForkPolicy, ForkScope, Refusals, WritablePaths, resolve_write_path};
use tine_permissions::{PermissionContext, resolve_path};
use tine_query_loop::PermissionOutcome;
use tine_tools::{Tool, ToolContext};

use crate::error::MemoryError;

/// Where a memory write may land: a Markdown file with a plain name inside the memory
/// directory, once links are followed.
#[derive(Debug, Clone)]
pub(crate) struct MemoryWrites {
    /// The memory directory, resolved (a symlinked directory is followed).
    dir: PathBuf,
}

impl MemoryWrites {
    /// Creates the memory directory if needed and resolves it.
    pub(crate) fn new(memory_dir: &Path) -> Result<Self, MemoryError> {
        tine_config::private_fs::create_dir_all(memory_dir)
            .map_err(|e| MemoryError::io("cannot create the memory directory", memory_dir, e))?;
        let absolute = std::path::absolute(memory_dir)
            .map_err(|e| MemoryError::io("cannot resolve the memory directory", memory_dir, e))?;
        Ok(Self {
            dir: resolve_path(&absolute),
        })
    }

    /// The resolved memory directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether `file_path` (resolved against `cwd` as the tools resolve it) is a file inside
    /// the memory directory, whatever its name. Used to notice the main agent writing memory.
    pub(crate) fn is_inside(&self, file_path: &str, cwd: &Path) -> bool {
        self.resolve_inside(file_path, cwd).is_ok()
    }

    /// Where `file_path` really leads and its part inside the memory directory, or why it is
    /// not inside.
    pub(crate) fn resolve_inside(
        &self,
        file_path: &str,
        cwd: &Path,
    ) -> Result<(PathBuf, PathBuf), String> {
        let resolved = resolve_write_path(file_path, cwd)?;
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

impl WritablePaths for MemoryWrites {
    fn check(&self, file_path: &str, cwd: &Path) -> Result<PathBuf, String> {
        let (resolved, relative) = self.resolve_inside(file_path, cwd)?;
        check_relative_name(&relative)?;
        Ok(resolved)
    }
}

/// The sandbox of the extraction (and dream) forks.
#[derive(Clone)]
pub struct MemorySandbox {
    writes: MemoryWrites,
    /// The session's project the forks read in (its directories, home and deny/ask rules).
    project: ForkScope,
    /// Directories the forks may also read but never write (the dream's transcripts),
    /// resolved.
    readable: Vec<PathBuf>,
    policy: ForkPolicy,
}

impl std::fmt::Debug for MemorySandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemorySandbox")
            .field("dir", &self.writes.dir)
            .field("project", &self.project)
            .field("readable", &self.readable)
            .finish_non_exhaustive()
    }
}

impl MemorySandbox {
    /// Creates the memory directory if needed and resolves it. Until
    /// [`MemorySandbox::for_project`] says otherwise, the project is the fork's working
    /// directory and `~` is `$HOME`.
    pub fn new(memory_dir: &Path) -> Result<Self, MemoryError> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let project = ForkScope::working_directory().with_home(home);
        Ok(Self::build(
            MemoryWrites::new(memory_dir)?,
            project,
            Vec::new(),
        ))
    }

    /// [`MemorySandbox::new`], then [`MemorySandbox::for_project`] when `project` is given.
    pub fn scoped(
        memory_dir: &Path,
        project: Option<&PermissionContext>,
    ) -> Result<Self, MemoryError> {
        let sandbox = Self::new(memory_dir)?;
        Ok(match project {
            Some(project) => sandbox.for_project(project),
            None => sandbox,
        })
    }

    fn build(writes: MemoryWrites, project: ForkScope, readable: Vec<PathBuf>) -> Self {
        let scope = readable.iter().fold(
            project.clone().with_root(writes.dir.clone()),
            |scope, dir| scope.with_root(dir.clone()),
        );
        let refusals = MemoryRefusals {
            dir: writes.dir.clone(),
            reads_transcripts: !readable.is_empty(),
        };
        let policy = ForkPolicy::judged_in(scope, refusals)
            .only_tools(&["Read", "Grep", "Glob", "Bash", "Write", "Edit"])
            .read_only()
            .owns_writes(writes.clone());
        Self {
            writes,
            project,
            readable,
            policy,
        }
    }

    /// Reads are judged against the session's project: its working directory, additional
    /// directories and home, and its deny and ask rules.
    pub fn for_project(self, permissions: &PermissionContext) -> Self {
        Self::build(self.writes, ForkScope::project(permissions), self.readable)
    }

    /// The forks may also read inside `dir` (resolved), never write there: the dream reads
    /// the project's transcripts.
    pub fn with_readable(mut self, dir: &Path) -> Self {
        let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        self.readable.push(resolve_path(&absolute));
        Self::build(self.writes, self.project, self.readable)
    }

    /// The resolved memory directory.
    pub fn dir(&self) -> &Path {
        &self.writes.dir
    }

    /// The forks' `can_use_tool`.
    pub fn policy(&self) -> &ForkPolicy {
        &self.policy
    }

    /// The decision for one call, without the async wrapper.
    pub fn decide(&self, tool: &dyn Tool, input: &Value, ctx: &ToolContext) -> PermissionOutcome {
        // Judged by the engine, the memory policy always decides; failing that, a refusal.
        self.policy
            .decide(tool, input, ctx)
            .unwrap_or_else(|| PermissionOutcome::Deny {
                reason: MemoryRefusals::only(&self.writes.dir, tool.name()),
            })
    }

    /// Whether a Write/Edit of `file_path` (as the tool would resolve it against `cwd`) lands
    /// inside the memory directory. Returns the resolved path, or why not.
    pub fn check_write_path(&self, file_path: &str, cwd: &Path) -> Result<PathBuf, String> {
        self.writes.check(file_path, cwd)
    }

    /// Whether `file_path` (resolved against `cwd` as the tools resolve it) is a file inside
    /// the memory directory, whatever its name. Used to notice the main agent writing memory.
    pub fn is_inside(&self, file_path: &str, cwd: &Path) -> bool {
        self.writes.is_inside(file_path, cwd)
    }

    /// Where a memory write may land.
    pub(crate) fn writes(&self) -> &MemoryWrites {
        &self.writes
    }
}

/// How the memory forks' refusals read.
struct MemoryRefusals {
    dir: PathBuf,
    /// The dream: the project's transcripts are readable too.
    reads_transcripts: bool,
}

impl MemoryRefusals {
    fn only(dir: &Path, tool: &str) -> String {
        format!(
            "The memory agent may use only Read, Grep, Glob, read-only Bash, and \
             Write/Edit inside {}; `{tool}` is not available to it.",
            dir.display()
        )
    }
}

impl Refusals for MemoryRefusals {
    fn tool_not_allowed(&self, tool: &dyn Tool, _input: &Value) -> String {
        Self::only(&self.dir, tool.name())
    }

    /// `is_read_only` is also false for a background shell, which would outlive the fork's
    /// last turn.
    fn not_read_only(&self, _tool: &dyn Tool, input: &Value) -> String {
        let command = input.get("command").and_then(Value::as_str).unwrap_or("");
        format!(
            "The memory agent may run only read-only shell commands \
             (ls, cat, grep, find, ...) in the foreground; `{}` is not read-only. \
             Use Write or Edit on files in {} instead.",
            truncate(command, 120),
            self.dir.display()
        )
    }

    fn write_refused(&self, tool: &dyn Tool, _file_path: &str, why: &str) -> String {
        format!(
            "{} refused: {why}. The memory agent may write only \
             Markdown files inside the memory directory {} (for example {}/project_stack.md).",
            tool.name(),
            self.dir.display(),
            self.dir.display()
        )
    }

    fn judged(&self, tool: &dyn Tool, message: &str, context: &PermissionContext) -> String {
        let dirs: Vec<String> = std::iter::once(&context.cwd)
            .chain(&context.additional_directories)
            .map(|d| d.display().to_string())
            .collect();
        let which = if self.reads_transcripts {
            "the project's directories, the memory directory and the transcripts"
        } else {
            "the project's directories and the memory directory"
        };
        format!(
            "{} refused: {message}. The memory agent may read only inside {} ({which}) \
             and cannot ask for more; save what the conversation itself shows.",
            tool.name(),
            dirs.join(", ")
        )
    }
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

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
