//! Saving memories from several sessions at once without losing any.
//!
//! The extraction forks (and the main agent when asked to remember) save memories with the
//! ordinary Read, Write and Edit tools. Unguarded, two sessions saving at once would lose index
//! lines (a Write of `MEMORY.md` replacing what another process had just renamed into place)
//! and a fork told "modified since read" would spend its few turns re-reading.
//! [`guard_memory_writes`] wraps
//! those three tools so that every Write or Edit whose target resolves inside the memory
//! directory runs under the directory's [`MemoryWriteLock`] (an OS advisory lock, so across
//! processes):
//! - `MEMORY.md`: the content the writer asked for is merged ([`merge_index`]) with the file as
//!   it is now, against the version this writer last read (remembered by content hash when the
//!   wrapped Read or a write saw it), and that merge is what the real Write tool writes. Lines
//!   other sessions added survive, the writer's own changes win, and there is no "modified
//!   since read" for the index: the merge replaces that check, so no turn is spent on it.
//! - topic files: the real tool runs under the lock, so its read-before-write check and its
//!   atomic write (temporary file + rename: never torn) are one step. A file another session
//!   created meanwhile is refused with a message saying so, never silently replaced.
//! - what was written is made 0600 (the real tools give new files 0644).
//!
//! Everything else goes straight to the real tool. The wrappers keep the real tool's name,
//! description and schema, so the tool array sent to the API, part of the prompt-cache key, is
//! byte-identical; the host puts them in the session's tool list, which its forks share.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Deserialize;
use serde_json::{Value, json};
use tine_permissions::{PermissionTarget, ToolVerdict};
use tine_tools::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput, parse_input};
use tine_tools::{ToolProgress, hash_content};

use crate::error::MemoryError;
use crate::memdir::{INDEX_FILE, MemoryWriteLock, WRITE_LOCK_TIMEOUT, merge_index};
use crate::sandbox::MemoryWrites;

/// Versions of `MEMORY.md` remembered by content hash (the base of a later merge).
const REMEMBERED_VERSIONS: usize = 32;

/// `tools` with Read, Write and Edit wrapped for the memory directory `dir` (created if
/// needed); the other tools as they are, in the same order.
pub fn guard_memory_writes(
    tools: &[Arc<dyn Tool>],
    dir: &Path,
) -> Result<Vec<Arc<dyn Tool>>, MemoryError> {
    let shared = Arc::new(Shared {
        writes: MemoryWrites::new(dir)?,
        versions: Mutex::new(VecDeque::new()),
    });
    Ok(tools
        .iter()
        .map(|tool| {
            let kind = match tool.name() {
                "Read" => Kind::Read,
                "Write" => Kind::Write,
                "Edit" => Kind::Edit,
                _ => return Arc::clone(tool),
            };
            Arc::new(MemoryGuardedTool {
                inner: Arc::clone(tool),
                kind,
                shared: Arc::clone(&shared),
            }) as Arc<dyn Tool>
        })
        .collect())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
    Edit,
}

/// What the wrappers of one session share.
struct Shared {
    /// Resolves a call's `file_path` as the sandbox does (symlinks, `..`, case).
    writes: MemoryWrites,
    versions: Mutex<VecDeque<([u8; 32], Arc<str>)>>,
}

/// Where a call's file lands.
enum Target {
    Outside,
    Index,
    Topic(PathBuf),
}

impl Shared {
    fn target(&self, input: &Value, ctx: &ToolContext) -> Target {
        let Some(file_path) = input.get("file_path").and_then(Value::as_str) else {
            return Target::Outside;
        };
        match self.writes.resolve_inside(file_path, &ctx.cwd()) {
            Ok((_, relative)) if relative == Path::new(INDEX_FILE) => Target::Index,
            Ok((resolved, _)) => Target::Topic(resolved),
            Err(_) => Target::Outside,
        }
    }

    fn index_path(&self) -> PathBuf {
        self.writes.dir().join(INDEX_FILE)
    }

    fn remember(&self, text: &str) {
        let hash = hash_content(text.as_bytes());
        let mut versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
        if versions.iter().any(|(h, _)| *h == hash) {
            return;
        }
        if versions.len() == REMEMBERED_VERSIONS {
            versions.pop_front();
        }
        versions.push_back((hash, Arc::from(text)));
    }

    /// The version of the index this context last read or wrote, if remembered.
    fn base(&self, ctx: &ToolContext, path: &Path) -> Option<Arc<str>> {
        let state = ctx.file_state().get(path)?;
        let versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
        versions
            .iter()
            .find(|(hash, _)| *hash == state.content_hash)
            .map(|(_, text)| Arc::clone(text))
    }
}

/// Read, Write or Edit, guarded for the memory directory.
struct MemoryGuardedTool {
    inner: Arc<dyn Tool>,
    kind: Kind,
    shared: Arc<Shared>,
}

impl Tool for MemoryGuardedTool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[&str] {
        self.inner.aliases()
    }

    fn description(&self) -> String {
        self.inner.description()
    }

    fn input_schema(&self) -> Value {
        self.inner.input_schema()
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let target = self.shared.target(&input, ctx);
            match (self.kind, target) {
                (_, Target::Outside) => self.inner.call(input, ctx).await,
                (Kind::Read, Target::Index) => {
                    let output = self.inner.call(input.clone(), ctx).await?;
                    self.remember_read(&input, ctx).await;
                    Ok(output)
                }
                (Kind::Read, Target::Topic(_)) => self.inner.call(input, ctx).await,
                (Kind::Write, Target::Index) => {
                    let WriteInput { file_path, content } = parse_input(input)?;
                    let _lock = self.lock().await?;
                    self.update_index(&file_path, Requested::Content(content), ctx)
                        .await
                }
                (Kind::Edit, Target::Index) => {
                    let edit: EditInput = parse_input(input)?;
                    if edit.old_string == edit.new_string {
                        return Err(ToolError::NoChange);
                    }
                    let _lock = self.lock().await?;
                    self.update_index(&edit.file_path.clone(), Requested::Edit(edit), ctx)
                        .await
                }
                (Kind::Write | Kind::Edit, Target::Topic(path)) => {
                    let _lock = self.lock().await?;
                    self.write_topic(input, ctx, &path).await
                }
            }
        })
    }

    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        self.inner.permission_target(input, ctx)
    }

    fn check_permissions(&self, input: &Value, ctx: &ToolContext) -> ToolVerdict {
        self.inner.check_permissions(input, ctx)
    }

    fn is_read_only(&self, input: &Value) -> bool {
        self.inner.is_read_only(input)
    }

    fn is_destructive(&self, input: &Value) -> bool {
        self.inner.is_destructive(input)
    }

    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.inner.is_concurrency_safe(input)
    }

    fn render_call(&self, input: &Value) -> String {
        self.inner.render_call(input)
    }

    fn render_progress(&self, progress: &ToolProgress) -> String {
        self.inner.render_progress(progress)
    }

    fn render_result(&self, output: &ToolOutput) -> String {
        self.inner.render_result(output)
    }
}

#[derive(Deserialize)]
struct PathInput {
    file_path: String,
}

#[derive(Deserialize)]
struct WriteInput {
    file_path: String,
    content: String,
}

#[derive(Deserialize)]
struct EditInput {
    file_path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

impl MemoryGuardedTool {
    /// After a Read of the index: remember the version read (the disk bytes, if they are the
    /// ones the Read recorded), as the base of this reader's next merge.
    async fn remember_read(&self, input: &Value, ctx: &ToolContext) {
        let Ok(PathInput { file_path }) = serde_json::from_value(input.clone()) else {
            return;
        };
        let path = ctx.resolve_path(&file_path);
        let Some(state) = ctx.file_state().get(&path) else {
            return;
        };
        let index = self.shared.index_path();
        let Ok(Ok(bytes)) = tokio::task::spawn_blocking(move || std::fs::read(index)).await else {
            return;
        };
        if hash_content(&bytes) == state.content_hash {
            self.shared.remember(&String::from_utf8_lossy(&bytes));
        }
    }

    /// The directory's write lock, waited for off the runtime.
    async fn lock(&self) -> Result<MemoryWriteLock, ToolError> {
        let dir = self.shared.writes.dir().to_path_buf();
        blocking(move || MemoryWriteLock::acquire(&dir, WRITE_LOCK_TIMEOUT))
            .await?
            .map_err(|e| ToolError::Failed(e.to_string()))
    }

    /// Write or Edit of `MEMORY.md`, under the lock: the requested content merged with the file
    /// as it is now, written by the real Write tool.
    async fn update_index(
        &self,
        file_path: &str,
        requested: Requested,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let path = ctx.resolve_path(file_path);
        let index = self.shared.index_path();
        let current = {
            let index = index.clone();
            blocking(move || read_if_exists(&index)).await??
        };
        let base = self.shared.base(ctx, &path);
        let theirs = current.as_ref().map_or("", |(text, _)| text.as_str());
        let merged = match requested {
            Requested::Content(content) => merge_index(base.as_deref(), &content, theirs),
            Requested::Edit(edit) => {
                if current.is_none() && !edit.old_string.is_empty() {
                    return Err(ToolError::NotFound(path));
                }
                edit_index(&edit, base.as_deref(), theirs, &path)?
            }
        };
        // The lock is held: the file is as read, so the real tool's freshness check is told
        // so, and its write (temporary file + rename) is the merge.
        if let Some((text, mtime)) = &current {
            ctx.file_state().record(&path, text.as_bytes(), *mtime);
        }
        let write = self
            .writer()
            .call(json!({"file_path": file_path, "content": merged.text}), ctx)
            .await?;
        self.shared.remember(&merged.text);
        restrict(&index).await;
        Ok(match merged.kept_from_disk {
            0 => write,
            n => {
                let mut write = write;
                write.content.push_str(&format!(
                    "\n(Merged: {n} line(s) that other sessions saved since you read {INDEX_FILE} \
                     were kept.)"
                ));
                write
            }
        })
    }

    /// The real Write tool: the wrapped one for Write; for an Edit of the index, the built-in.
    fn writer(&self) -> Arc<dyn Tool> {
        match self.kind {
            Kind::Write => Arc::clone(&self.inner),
            Kind::Read | Kind::Edit => Arc::new(tine_tools::WriteTool),
        }
    }

    /// Write or Edit of a topic file, under the lock.
    async fn write_topic(
        &self,
        input: Value,
        ctx: &ToolContext,
        resolved: &Path,
    ) -> Result<ToolOutput, ToolError> {
        if self.kind == Kind::Write
            && let Some(file_path) = input.get("file_path").and_then(Value::as_str)
        {
            let path = ctx.resolve_path(file_path);
            let exists = tokio::fs::symlink_metadata(resolved).await.is_ok();
            if exists && !ctx.file_state().contains(&path) {
                return Err(ToolError::Failed(format!(
                    "{} already exists (another session may have just saved it). Read it, then \
                     Write or Edit it to merge your memory into it, or save under another name",
                    path.display()
                )));
            }
        }
        let output = self.inner.call(input, ctx).await?;
        restrict(resolved).await;
        Ok(output)
    }
}

enum Requested {
    Content(String),
    Edit(EditInput),
}

/// An Edit of the index: applied to the file as it is now when `old_string` is there, else to
/// the version the writer read and merged; an `old_string` found in neither is the usual error.
fn edit_index(
    edit: &EditInput,
    base: Option<&str>,
    theirs: &str,
    path: &Path,
) -> Result<crate::memdir::IndexMerge, ToolError> {
    if edit.old_string.is_empty() {
        // "Create the index": another session may have created it first; keep both.
        return Ok(merge_index(base, &edit.new_string, theirs));
    }
    match replace(theirs, edit, path) {
        Ok(text) => Ok(crate::memdir::IndexMerge {
            text,
            kept_from_disk: 0,
        }),
        Err(not_there) => match base.map(|base| (base, replace(base, edit, path))) {
            Some((base, Ok(ours))) => Ok(merge_index(Some(base), &ours, theirs)),
            _ => Err(not_there),
        },
    }
}

fn replace(text: &str, edit: &EditInput, path: &Path) -> Result<String, ToolError> {
    match text.matches(&edit.old_string).count() {
        0 => Err(ToolError::OldStringNotFound(path.to_path_buf())),
        1 => Ok(text.replacen(&edit.old_string, &edit.new_string, 1)),
        _ if edit.replace_all => Ok(text.replace(&edit.old_string, &edit.new_string)),
        count => Err(ToolError::OldStringAmbiguous {
            path: path.to_path_buf(),
            count,
        }),
    }
}

type Current = Option<(String, Option<std::time::SystemTime>)>;

fn read_if_exists(path: &Path) -> Result<Current, ToolError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let mtime = std::fs::metadata(path).ok().and_then(|m| m.modified().ok());
            Ok(Some((String::from_utf8_lossy(&bytes).into_owned(), mtime)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ToolError::io("cannot read", path, e)),
    }
}

/// Makes a written memory file private; a failure is logged (the write itself succeeded).
async fn restrict(path: &Path) {
    let owned = path.to_path_buf();
    let result = tokio::task::spawn_blocking(move || {
        if owned.is_file() {
            tine_config::private_fs::restrict_file(&owned)
        } else {
            Ok(())
        }
    })
    .await;
    if let Ok(Err(error)) = result {
        tracing::warn!(path = %path.display(), %error, "cannot make a memory file private");
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::Failed(format!("a memory write task failed: {e}")))
}

#[cfg(test)]
#[path = "write_guard_tests.rs"]
mod tests;
