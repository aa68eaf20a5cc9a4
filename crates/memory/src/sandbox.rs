//! The memory forks' `can_use_tool` (seed 000 §七, `createAutoMemCanUseTool`): Read, Grep,
//! Glob and read-only Bash judged by the permission engine (`tine_permissions`) as the
//! main session judges them, with the memory directory counted as one of the project's
//! directories; Write and Edit only for files whose resolved path lies inside the memory
//! directory; everything else denied with a reason the model can read.
//!
//! A fork has no one to ask, so whatever the engine would ask about (a read outside the
//! project's directories, through a link or by a shell command, a path known only at run
//! time, an ask rule) is refused. Every path is resolved by the engine's one resolver
//! ([`resolve_path`]); this module has no resolver of its own.
//!
//! The tool array itself is never filtered: it is part of the prompt-cache key, so a forbidden
//! tool stays listed and is refused here, at call time.

use std::path::{Component, Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::Value;
use tine_permissions::{
    PermissionContext, PermissionDecision, PermissionMode, PermissionQuery, RuleBehavior,
    SourcedRule, resolve_path,
};
use tine_query_loop::{CanUseTool, PermissionOutcome};
use tine_tools::{Tool, ToolContext};

use crate::error::MemoryError;

/// The sandbox of the extraction (and dream) forks.
#[derive(Debug, Clone)]
pub struct MemorySandbox {
    /// The memory directory, resolved (a symlinked directory is followed).
    dir: PathBuf,
    project: ProjectScope,
    /// Directories the forks may also read but never write (the dream's transcripts),
    /// resolved.
    readable: Vec<PathBuf>,
}

/// Where the forks may read besides the memory directory, and the user's rules that still
/// apply to them.
#[derive(Debug, Clone, Default)]
struct ProjectScope {
    /// The project's working directory; `None`: the fork's own cwd at each call.
    cwd: Option<PathBuf>,
    additional_directories: Vec<PathBuf>,
    /// Where `~` leads in shell commands (unknown: a `~` path is refused).
    home: Option<PathBuf>,
    /// The session's deny and ask rules (an ask is a denial here). Allow rules are not
    /// carried: a fork reads only the project and the memory directory.
    rules: Vec<SourcedRule>,
}

impl MemorySandbox {
    /// Creates the memory directory if needed and resolves it. Until
    /// [`MemorySandbox::for_project`] says otherwise, the project is the fork's working
    /// directory and `~` is `$HOME`.
    pub fn new(memory_dir: &Path) -> Result<Self, MemoryError> {
        tine_config::private_fs::create_dir_all(memory_dir)
            .map_err(|e| MemoryError::io("cannot create the memory directory", memory_dir, e))?;
        let absolute = std::path::absolute(memory_dir)
            .map_err(|e| MemoryError::io("cannot resolve the memory directory", memory_dir, e))?;
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        Ok(Self {
            dir: resolve_path(&absolute),
            project: ProjectScope {
                home,
                ..ProjectScope::default()
            },
            readable: Vec::new(),
        })
    }

    /// Reads are judged against the session's project: its working directory, additional
    /// directories and home, and its deny and ask rules.
    pub fn for_project(mut self, permissions: &PermissionContext) -> Self {
        self.project = ProjectScope {
            cwd: Some(permissions.cwd.clone()),
            additional_directories: permissions.additional_directories.clone(),
            home: permissions.home.clone(),
            rules: permissions
                .rules()
                .iter()
                .filter(|r| r.behavior != RuleBehavior::Allow)
                .cloned()
                .collect(),
        };
        self
    }

    /// The forks may also read inside `dir` (resolved), never write there: the dream reads
    /// the project's transcripts.
    pub fn with_readable(mut self, dir: &Path) -> Self {
        let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        self.readable.push(resolve_path(&absolute));
        self
    }

    /// The resolved memory directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The decision for one call, without the async wrapper.
    pub fn decide(&self, tool: &dyn Tool, input: &Value, ctx: &ToolContext) -> PermissionOutcome {
        let allow = PermissionOutcome::Allow {
            updated_input: None,
        };
        match tool.name() {
            "Read" | "Grep" | "Glob" => self.judge_read(tool, input, ctx),
            "Bash" => {
                let command = input.get("command").and_then(Value::as_str).unwrap_or("");
                // `is_read_only` is also false for a background shell, which would outlive
                // the fork's last turn.
                if tool.is_read_only(input) {
                    self.judge_read(tool, input, ctx)
                } else {
                    deny(format!(
                        "The memory agent may run only read-only shell commands \
                         (ls, cat, grep, find, ...) in the foreground; `{}` is not read-only. \
                         Use Write or Edit on files in {} instead.",
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
                        "{} refused: {why}. The memory agent may write only \
                         Markdown files inside the memory directory {} (for example {}/project_stack.md).",
                        tool.name(),
                        self.dir.display(),
                        self.dir.display()
                    )),
                }
            }
            other => deny(format!(
                "The memory agent may use only Read, Grep, Glob, read-only Bash, and \
                 Write/Edit inside {}; `{other}` is not available to it.",
                self.dir.display()
            )),
        }
    }

    /// A reading call, as the permission engine decides it for the project plus the memory
    /// directory; what it would ask about is refused.
    fn judge_read(&self, tool: &dyn Tool, input: &Value, ctx: &ToolContext) -> PermissionOutcome {
        let permissions = self.read_permissions(ctx);
        let target = tool.permission_target(input, ctx);
        let verdict = tool.check_permissions(input, ctx);
        let request = PermissionQuery {
            tool: tool.name(),
            target: &target,
            verdict: &verdict,
            is_read_only: tool.is_read_only(input),
        };
        match permissions.decide(&request) {
            PermissionDecision::Allow { .. } => PermissionOutcome::Allow {
                updated_input: None,
            },
            PermissionDecision::Ask { message, .. } | PermissionDecision::Deny { message, .. } => {
                let dirs: Vec<String> = std::iter::once(&permissions.cwd)
                    .chain(&permissions.additional_directories)
                    .map(|d| d.display().to_string())
                    .collect();
                let which = if self.readable.is_empty() {
                    "the project's directories and the memory directory"
                } else {
                    "the project's directories, the memory directory and the transcripts"
                };
                deny(format!(
                    "{} refused: {message}. The memory agent may read only inside {} ({which}) \
                     and cannot ask for more; save what the conversation itself shows.",
                    tool.name(),
                    dirs.join(", ")
                ))
            }
        }
    }

    /// The engine's context for the forks' reads: the project's directories and the memory
    /// directory, the session's deny and ask rules, no allow rule.
    fn read_permissions(&self, ctx: &ToolContext) -> PermissionContext {
        let cwd = self.project.cwd.clone().unwrap_or_else(|| ctx.cwd());
        let mut permissions = PermissionContext::new(PermissionMode::Default, cwd);
        permissions.additional_directories = self.project.additional_directories.clone();
        permissions.additional_directories.push(self.dir.clone());
        permissions
            .additional_directories
            .extend(self.readable.iter().cloned());
        permissions.home = self.project.home.clone();
        for rule in &self.project.rules {
            permissions.add_rule(rule.clone());
        }
        permissions
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

    /// Where `file_path` really leads and its part inside the memory directory, or why it is
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
        // The path the Write and Edit tools open (`ToolContext::resolve_path`: `..` taken
        // lexically), then where the kernel takes it.
        let lexical = tine_permissions::normalize(&cwd.join(file_path));
        let resolved = resolve_path(&lexical);
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
        let outcome = self.decide(tool, input, ctx);
        if let PermissionOutcome::Deny { reason } = &outcome {
            tracing::debug!(tool = tool.name(), %reason, "memory sandbox denied a call");
        }
        Box::pin(async move { outcome })
    }
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
