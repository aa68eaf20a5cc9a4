//! tine's own state on disk (`TINE_HOME` and everything below it, the memory directory, the
//! settings files tine writes) is private to the user: directories are created 0700 and files
//! 0600, whatever the umask. Every place that creates such a file or directory goes through
//! here. The user's project files that Write and Edit create are not tine's state: they keep
//! the umask's modes (`builtin/files.rs`).
//!
//! Unix only, like the rest of the crate. What is created gets these modes. What an older tine
//! created with looser ones is tightened at start ([`tighten_dir`], [`tighten_file`]), but only
//! for the paths the host names as tine's own and owned by the user running tine; anything
//! else keeps the mode its owner gave it (a shared `autoMemoryDirectory` may be group-readable
//! on purpose).

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

/// Whether a [`tighten_dir`] or [`tighten_file`] changed anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tightened {
    /// The mode was group or other accessible; it is now owner-only.
    Changed {
        /// The mode before.
        from: u32,
        /// The mode after.
        to: u32,
    },
    /// Already private, missing, of another kind, or not the current user's: left alone.
    Unchanged,
}

/// Makes the directory `dir` 0700 (its owner's bits kept, group and other bits cleared) when
/// it is group or other accessible and owned by the current user. A symbolic link, a missing
/// path or anything that is not a directory is left alone.
pub fn tighten_dir(dir: &Path) -> io::Result<Tightened> {
    tighten(dir, true)
}

/// Makes the regular file `path` 0600 (owner bits kept, group and other cleared) when it is
/// group or other accessible and owned by the current user; like [`tighten_dir`] otherwise.
pub fn tighten_file(path: &Path) -> io::Result<Tightened> {
    tighten(path, false)
}

fn tighten(path: &Path, dir: bool) -> io::Result<Tightened> {
    use std::os::unix::fs::MetadataExt;
    // Not followed: a link in tine's state may lead to what is not tine's.
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Tightened::Unchanged),
        Err(e) => return Err(e),
    };
    let kind_fits = if dir {
        meta.file_type().is_dir()
    } else {
        meta.file_type().is_file()
    };
    let mode = meta.mode() & 0o7777;
    if !kind_fits || meta.uid() != nix::unistd::geteuid().as_raw() || mode & 0o077 == 0 {
        return Ok(Tightened::Unchanged);
    }
    // Owner bits only; setuid, setgid and sticky go too (tine sets none of them).
    let to = mode & 0o700;
    std::fs::set_permissions(path, Permissions::from_mode(to))?;
    Ok(Tightened::Changed { from: mode, to })
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
