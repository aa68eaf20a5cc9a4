//! tine's own state on disk (`TINE_HOME` and everything below it, the memory directory, the
//! settings files tine writes) is private to the user: directories are created 0700 and files
//! 0600, whatever the umask. Every place that creates such a file or directory goes through
//! here. The user's project files that Write and Edit create are not tine's state: they keep
//! the umask's modes (`builtin/files.rs`).
//!
//! Unix only, like the rest of the crate. Only what is created gets these modes: an existing directory keeps the mode its owner gave
//! it (a shared `autoMemoryDirectory` may be group-readable on purpose).

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The mode of the directories tine creates for its own state.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// The mode of the files tine creates for its own state.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// Creates `dir` and its missing ancestors, each new one 0700. Existing ones are untouched.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR_MODE)
        .create(dir)
}

/// Opens `path` for appending (and reading), creating it 0600 if missing. The parent must
/// exist ([`create_dir_all`]).
pub fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(PRIVATE_FILE_MODE)
        .open(path)
}

/// Replaces `path` with `bytes` atomically (a temporary file in the same directory, synced,
/// then renamed over it), so a reader never sees half a file. The result is 0600; missing
/// parents are created 0700.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, bytes, None)
}

/// [`write_atomic`], but an existing file keeps its mode (a user may have chosen it); a new one
/// is 0600.
pub fn write_atomic_keeping_mode(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let existing = std::fs::metadata(path).ok().map(|m| m.permissions());
    replace(path, bytes, existing)
}

/// Sets `path`'s mode to 0600 (for a file another writer created, such as the Write tool).
pub fn restrict_file(path: &Path) -> io::Result<()> {
    std::fs::set_permissions(path, private_file_permissions())
}

fn replace(path: &Path, bytes: &[u8], mode: Option<Permissions>) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    create_dir_all(parent)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".tine-")
        .permissions(private_file_permissions())
        .tempfile_in(parent)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    if let Some(mode) = mode {
        temp.as_file().set_permissions(mode)?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn private_file_permissions() -> Permissions {
    Permissions::from_mode(PRIVATE_FILE_MODE)
}

#[cfg(test)]
#[path = "private_fs_tests.rs"]
mod tests;
