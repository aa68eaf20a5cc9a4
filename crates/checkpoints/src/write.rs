//! Writing and removing project files for a rewind, only ever inside the project: a path is
//! checked lexically (no `..`, not absolute), its existing ancestors are resolved (symbolic
//! links followed) and must stay inside the project, and a file is replaced by a rename in its
//! directory, so a symbolic link at the path itself is replaced, never written through.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::CheckpointError;

/// What a snapshot holds at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Content {
    /// A regular file; `executable` from its git mode (100755).
    File { bytes: Vec<u8>, executable: bool },
    /// A symbolic link with this target.
    Link(Vec<u8>),
}

/// `rel`'s place on disk: its parent resolved inside `project` (the canonical project), and
/// the parent directories still to create.
pub(crate) fn resolve_inside(project: &Path, rel: &Path) -> Result<PathBuf, CheckpointError> {
    let outside = || CheckpointError::OutsideProject {
        path: rel.to_path_buf(),
        project: project.to_path_buf(),
    };
    let lexical_ok =
        !rel.as_os_str().is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
    let (Some(name), true) = (rel.file_name(), lexical_ok) else {
        return Err(outside());
    };
    let parent = rel.parent().unwrap_or(Path::new(""));
    // The deepest ancestor that exists (a dangling link counts: it is resolved below and fails).
    let mut existing = project.join(parent);
    let mut missing = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
            return Err(outside());
        };
        missing.push(name);
        if !existing.pop() {
            return Err(outside());
        }
    }
    let real = existing.canonicalize().map_err(|_| outside())?;
    if !real.starts_with(project) || !real.is_dir() {
        return Err(outside());
    }
    let mut full = real;
    full.extend(missing.iter().rev());
    full.push(name);
    Ok(full)
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces the file at `full` (resolved by [`resolve_inside`]) with `content`: a temporary
/// file beside it, renamed over it. New directories and files take the umask's modes, as git
/// gives them (and, as git's checkout, no fsync per file).
pub(crate) fn write(full: &Path, content: &Content) -> Result<(), CheckpointError> {
    let dir = full.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(dir).map_err(CheckpointError::io("create the directory", dir))?;
    let temp = dir.join(format!(
        ".tine-rewind-{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let made = match content {
        Content::File { bytes, executable } => OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(if *executable { 0o777 } else { 0o666 })
            .open(&temp)
            .and_then(|mut f| f.write_all(bytes)),
        Content::Link(target) => {
            use std::os::unix::ffi::OsStrExt as _;
            std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), &temp)
        }
    };
    let done = made.and_then(|()| std::fs::rename(&temp, full));
    if let Err(e) = done {
        let _ = std::fs::remove_file(&temp);
        return Err(CheckpointError::Io {
            action: "write",
            path: full.to_path_buf(),
            source: e,
        });
    }
    Ok(())
}

/// Removes the file or link at `full`, then the directories it leaves empty, up to `project`.
/// A directory at the path is left alone. Whether something was removed.
pub(crate) fn remove(project: &Path, full: &Path) -> Result<bool, CheckpointError> {
    match std::fs::symlink_metadata(full) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(CheckpointError::Io {
                action: "remove",
                path: full.to_path_buf(),
                source: e,
            });
        }
        Ok(meta) if meta.is_dir() => return Ok(false),
        Ok(_) => {}
    }
    std::fs::remove_file(full).map_err(CheckpointError::io("remove", full))?;
    let mut dir = full.parent();
    while let Some(d) = dir {
        if d == project || !d.starts_with(project) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(true)
}
