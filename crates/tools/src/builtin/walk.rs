//! The directory walk behind Glob and Grep: ripgrep's `ignore` crate, honouring `.gitignore`,
//! `.ignore` and global git excludes (even outside a git repository), including hidden files
//! but never descending into version-control directories; walked in parallel on a blocking
//! thread, stopped by the call's token. Also what the two share around it: the search root,
//! the permission target and the one-line rendering of a call.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use ignore::{DirEntry, WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use crate::tool::ToolError;

/// Directories never searched, whatever the ignore files say.
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".jj", ".bzr"];

/// A walk builder over `root` with the tools' standard settings.
pub(crate) fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| {
            !(entry.file_type().is_some_and(|kind| kind.is_dir())
                && entry
                    .file_name()
                    .to_str()
                    .is_some_and(|name| VCS_DIRS.contains(&name)))
        });
    builder
}

/// The files and directories under `root` as Glob and Grep see them (ignore files honoured,
/// version-control directories skipped), relative to `root` with `/` between components,
/// each with whether it is a directory; at most `limit`, in walk order (names sorted within a
/// directory). It reads the disk: call it off the runtime's threads. The `@` file picker's
/// index.
pub fn project_paths(root: &Path, limit: usize) -> Vec<(String, bool)> {
    let mut builder = walker(root);
    builder.sort_by_file_name(|a, b| a.cmp(b));
    builder
        .build()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let relative = entry.path().strip_prefix(root).ok()?;
            if relative.as_os_str().is_empty() {
                return None;
            }
            let text = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            Some((text, entry.file_type().is_some_and(|kind| kind.is_dir())))
        })
        .take(limit)
        .collect()
}

/// What a visitor of [`collect_parallel`] does with one entry: `Some` keeps a finding.
pub(crate) type EntryVisitor<'s, T> = Box<dyn FnMut(DirEntry) -> Option<T> + Send + 's>;

/// Walks `walk` on the parallel walker, handing every entry it could read to a visitor (one
/// per thread, made by `visitor`), and gathers what the visitors keep, in no order. A cancelled
/// token stops the walk.
pub(crate) fn collect_parallel<'s, T: Send + 's>(
    walk: &WalkBuilder,
    cancel: &CancellationToken,
    mut visitor: impl FnMut() -> EntryVisitor<'s, T>,
) -> Vec<T> {
    let found = Arc::new(Mutex::new(Vec::new()));
    walk.build_parallel().run(|| {
        let found = Arc::clone(&found);
        let cancel = cancel.clone();
        let mut visit = visitor();
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if let Some(finding) = visit(entry) {
                found
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(finding);
            }
            WalkState::Continue
        })
    });
    std::mem::take(&mut *found.lock().unwrap_or_else(PoisonError::into_inner))
}

/// When `entry` was last modified (the epoch when that cannot be read).
pub(crate) fn modified(entry: &DirEntry) -> SystemTime {
    entry
        .metadata()
        .ok()
        .and_then(|metadata| metadata.modified().ok())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Runs a search on a blocking thread (it walks the disk) with the call's token, which it
/// checks as it goes; a search that was cancelled is `Cancelled`, whatever it found.
pub(crate) async fn search_blocking<T: Send + 'static>(
    ctx: &crate::ToolContext,
    search: impl FnOnce(&CancellationToken) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let cancel = ctx.cancellation().clone();
    let found = tokio::task::spawn_blocking(move || search(&cancel))
        .await
        .map_err(|error| ToolError::Failed(format!("the search failed: {error}")))??;
    if ctx.cancellation().is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    Ok(found)
}

/// The directory or file a search starts from: the input's `path` (or the cwd), which must
/// exist.
pub(crate) fn search_root(
    path: Option<&str>,
    ctx: &crate::ToolContext,
) -> Result<PathBuf, ToolError> {
    let root = match path {
        Some(path) if !path.is_empty() => ctx.resolve_path(path),
        _ => ctx.cwd(),
    };
    if !root.exists() {
        return Err(ToolError::Failed(format!(
            "Path does not exist: {}; check it with Glob or give an absolute path",
            root.display()
        )));
    }
    Ok(root)
}

/// `path` as shown to the model: relative to the cwd when inside it, absolute otherwise.
pub(crate) fn display_path(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// `Name(pattern)`, or `Name(pattern in path)` with a `path`: a search call in one line.
pub(crate) fn render_search(name: &str, pattern: &str, input: &serde_json::Value) -> String {
    match super::input::str_arg(input, "path") {
        Some(path) => format!("{name}({pattern} in {path})"),
        None => format!("{name}({pattern})"),
    }
}

/// What a search (Glob, Grep) reads: its `path`, or the cwd without one.
pub(crate) fn search_target(
    input: &serde_json::Value,
    ctx: &crate::context::ToolContext,
) -> tine_permissions::PermissionTarget {
    let path = super::input::str_arg(input, "path");
    tine_permissions::PermissionTarget::FileRead {
        path: path.map_or_else(|| ctx.cwd(), |path| ctx.resolve_path(path)),
    }
}
