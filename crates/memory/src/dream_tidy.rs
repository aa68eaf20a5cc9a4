//! The dream's tidy-up after a successful fork, under the memory write lock: the memory
//! files changed since the last consolidation (for the prompt), the emptied topic files
//! removed, and the index's exact duplicate lines and lines linking a missing file dropped.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use crate::error::MemoryError;
use crate::fork_changes::{diff, snapshot};
use crate::memdir::{INDEX_FILE, MemoryWriteLock, WRITE_LOCK_TIMEOUT, index_link};

/// Memory files (not the index) modified after `last`, newest first.
pub(crate) fn changed_since(dir: &Path, last: Option<SystemTime>) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(SystemTime, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let meta = e.metadata().ok()?;
            let modified = meta.modified().ok()?;
            (meta.is_file()
                && name.ends_with(".md")
                && name != INDEX_FILE
                && !name.starts_with('.')
                && last.is_none_or(|last| modified > last))
            .then_some((modified, name))
        })
        .collect();
    out.sort_by(|a, b| b.cmp(a));
    out.into_iter().map(|(_, name)| name).collect()
}

/// What the tidy-up after a successful fork did.
pub(crate) struct Tidy {
    /// Topic files changed (removed ones included).
    pub files: Vec<String>,
    /// Topic files the fork emptied, now removed.
    pub removed: Vec<String>,
    /// Whether `MEMORY.md` changed.
    pub index_updated: bool,
    /// Index lines dropped.
    pub index_lines_dropped: usize,
}

/// Under the memory write lock: removes the topic files the fork emptied, then drops exact
/// duplicate index lines and lines linking a file that does not exist.
pub(crate) fn tidy_after(
    dir: &Path,
    before: &BTreeMap<String, [u8; 32]>,
) -> Result<Tidy, MemoryError> {
    let _lock = MemoryWriteLock::acquire(dir, WRITE_LOCK_TIMEOUT)?;
    let changed = diff(before, &snapshot(dir));
    let mut removed = Vec::new();
    for name in changed.iter().filter(|n| *n != INDEX_FILE) {
        let path = dir.join(name);
        let empty = std::fs::read(&path).is_ok_and(|b| b.iter().all(u8::is_ascii_whitespace));
        if empty {
            std::fs::remove_file(&path)
                .map_err(|e| MemoryError::io("cannot remove the emptied memory", &path, e))?;
            removed.push(name.clone());
        }
    }
    let index_lines_dropped = tidy_index(dir)?;
    let after = snapshot(dir);
    let index_updated = before.get(INDEX_FILE) != after.get(INDEX_FILE);
    let files = changed.into_iter().filter(|n| n != INDEX_FILE).collect();
    Ok(Tidy {
        files,
        removed,
        index_updated,
        index_lines_dropped,
    })
}

/// Drops exact duplicate lines of `MEMORY.md` and lines linking a missing file; returns how
/// many. The caller holds the write lock.
fn tidy_index(dir: &Path) -> Result<usize, MemoryError> {
    let path = dir.join(INDEX_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(MemoryError::io("cannot read", path, e)),
    };
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<&str> = Vec::new();
    let mut dropped = 0;
    for line in text.lines() {
        let key = line.trim_end();
        let blank = key.trim().is_empty();
        let dead = index_link(key).is_some_and(|link| {
            !link.contains("://") && !dir.join(link.split('#').next().unwrap_or(link)).is_file()
        });
        if !blank && (dead || !seen.insert(key)) {
            dropped += 1;
            continue;
        }
        kept.push(line);
    }
    if dropped > 0 {
        let mut out = kept.join("\n");
        out.push('\n');
        crate::memdir::write_atomic(&path, out.as_bytes())?;
    }
    Ok(dropped)
}
