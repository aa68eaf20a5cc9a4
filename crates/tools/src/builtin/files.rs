//! File helpers shared by Read, Write, Edit and NotebookEdit: opening regular files only (never
//! a FIFO or a device), loading a file with its mtime, binary detection, atomic replacement
//! preserving the mode (and recorded in the file-state cache), what Edit and Write change (the
//! editor's text when the context has an editor, see `editor_files`), and unified diffs.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{Read as _, Write as _};
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use similar::{ChangeTag, TextDiff};

use crate::display::ToolDisplay;
use crate::editor_files::{editor_of, editor_text};
use crate::tool::ToolError;

/// A file as loaded from disk.
#[derive(Debug)]
pub(crate) struct LoadedFile {
    /// The path written to (symlinks resolved, so a rename replaces the target, not the link).
    pub real_path: PathBuf,
    pub bytes: Vec<u8>,
    pub mtime: Option<SystemTime>,
    pub permissions: std::fs::Permissions,
}

/// Loads `path`, or `Ok(None)` when it does not exist. A directory, a FIFO or a device is an
/// error (see [`open_regular`]).
pub(crate) async fn load(path: &Path) -> Result<Option<LoadedFile>, ToolError> {
    let owned = path.to_path_buf();
    tokio::task::spawn_blocking(move || load_blocking(&owned))
        .await
        .map_err(|error| ToolError::Failed(format!("reading {}: {error}", path.display())))?
}

fn load_blocking(path: &Path) -> Result<Option<LoadedFile>, ToolError> {
    let Some((mut file, metadata)) = open_regular(path)? else {
        return Ok(None);
    };
    let real_path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|error| ToolError::io("cannot read", path, error))?;
    Ok(Some(LoadedFile {
        real_path,
        bytes,
        mtime: metadata.modified().ok(),
        permissions: metadata.permissions(),
    }))
}

/// Opens `path` for reading if it is a regular file (symlinks followed), with its metadata;
/// `Ok(None)` when it does not exist. A FIFO, socket or device is refused before it is opened:
/// opening a FIFO waits for a writer forever, and `/dev/zero` never ends.
pub(crate) fn open_regular(path: &Path) -> Result<Option<(File, Metadata)>, ToolError> {
    if regular_metadata(path)?.is_none() {
        return Ok(None);
    }
    let mut options = OpenOptions::new();
    options.read(true);
    // Non-blocking: were the path swapped for a FIFO since the check, opening it must not wait
    // (the check below then refuses it). Reads of a regular file are unaffected.
    #[cfg(unix)]
    options.custom_flags(nix::libc::O_NONBLOCK);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(ToolError::io("cannot open", path, error)),
    };
    let metadata = file
        .metadata()
        .map_err(|error| ToolError::io("cannot inspect", path, error))?;
    check_regular(path, &metadata)?;
    Ok(Some((file, metadata)))
}

/// The metadata of `path` if it is a regular file (symlinks followed); `Ok(None)` when it does
/// not exist, an error for a directory, a FIFO, a socket or a device.
pub(crate) fn regular_metadata(path: &Path) -> Result<Option<Metadata>, ToolError> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(ToolError::io("cannot inspect", path, error)),
    };
    check_regular(path, &metadata)?;
    Ok(Some(metadata))
}

fn check_regular(path: &Path, metadata: &Metadata) -> Result<(), ToolError> {
    if metadata.is_dir() {
        return Err(ToolError::IsDirectory(path.to_path_buf()));
    }
    if metadata.is_file() {
        return Ok(());
    }
    Err(ToolError::Failed(format!(
        "{} is {}, not a regular file; only regular files can be read or edited (use Bash for \
         anything else)",
        path.display(),
        special_kind(&metadata.file_type())
    )))
}

/// What kind of special file this is, for messages.
fn special_kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    let _ = file_type;
    "a special file"
}

/// The mtime of `path` now (after a write).
pub(crate) async fn mtime(path: &Path) -> Option<SystemTime> {
    tokio::fs::metadata(path).await.ok()?.modified().ok()
}

/// Extensions of files that are never text.
const BINARY_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tiff", "pdf", "zip", "gz", "tgz", "bz2",
    "xz", "zst", "7z", "rar", "tar", "jar", "war", "class", "exe", "dll", "so", "dylib", "a", "o",
    "obj", "lib", "bin", "wasm", "pyc", "mp3", "mp4", "mov", "avi", "mkv", "wav", "flac", "ogg",
    "ttf", "otf", "woff", "woff2", "sqlite", "db",
];

/// Whether a file looks binary: a known binary extension, or a NUL byte in its first 8 KiB.
pub(crate) fn is_binary(path: &Path, bytes: &[u8]) -> bool {
    let by_extension = path
        .extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| BINARY_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()));
    by_extension || bytes.iter().take(8192).any(|&b| b == 0)
}

/// Replaces `path` with `content` atomically: a temporary file in the same directory, then a
/// rename, so a reader never sees half a file. The previous mode is kept (new files get 0644).
pub(crate) async fn write_atomic(
    path: &Path,
    content: Vec<u8>,
    permissions: Option<std::fs::Permissions>,
) -> Result<(), ToolError> {
    let path = path.to_path_buf();
    let task_path = path.clone();
    tokio::task::spawn_blocking(move || write_atomic_blocking(&task_path, &content, permissions))
        .await
        .map_err(|error| ToolError::Failed(format!("writing {}: {error}", path.display())))?
}

/// Writes `content` to `target` as [`write_atomic`] does, then records it in the file-state
/// cache under `path` (the path the model named), so the next edit finds it fresh.
pub(crate) async fn write_recorded(
    ctx: &crate::ToolContext,
    path: &Path,
    target: &Path,
    content: &str,
    permissions: Option<std::fs::Permissions>,
) -> Result<(), ToolError> {
    write_atomic(target, content.as_bytes().to_vec(), permissions).await?;
    ctx.file_state()
        .record(path, content.as_bytes(), mtime(target).await);
    Ok(())
}

/// A file Edit or Write is about to change, as the model would see it now.
#[derive(Debug)]
pub(crate) struct CurrentFile {
    /// Its whole content: the editor's text when the context has an editor that has it, the
    /// disk's bytes otherwise.
    pub bytes: Vec<u8>,
    /// The disk file's mtime (None when only the editor has the file).
    pub mtime: Option<SystemTime>,
    /// Where a disk write goes (see [`LoadedFile::real_path`]).
    pub real_path: PathBuf,
    /// The disk file's mode, kept by a disk write.
    pub permissions: Option<std::fs::Permissions>,
}

/// `path` as Edit and Write change it, or `Ok(None)` when it is missing: through the context's
/// editor when there is one (see [`crate::editor_files`] for when the disk decides), else from
/// disk. A directory, a FIFO or a device is an error either way.
pub(crate) async fn load_current(
    ctx: &crate::ToolContext,
    path: &Path,
) -> Result<Option<CurrentFile>, ToolError> {
    let disk = load(path).await?;
    if let Some(editor) = editor_of(ctx)
        && let Some(text) = editor_text(&editor, path, disk.is_some()).await
    {
        return Ok(Some(CurrentFile {
            bytes: text.into_bytes(),
            mtime: disk.as_ref().and_then(|file| file.mtime),
            real_path: disk
                .as_ref()
                .map_or_else(|| path.to_path_buf(), |file| file.real_path.clone()),
            permissions: disk.map(|file| file.permissions),
        }));
    }
    Ok(disk.map(|file| CurrentFile {
        bytes: file.bytes,
        mtime: file.mtime,
        real_path: file.real_path,
        permissions: Some(file.permissions),
    }))
}

/// Makes `content` the whole of `path` (the path the model named) and records it in the
/// file-state cache: through the context's editor when there is one (its error is the tool's),
/// else atomically on disk at `target` as [`write_recorded`] does.
pub(crate) async fn store(
    ctx: &crate::ToolContext,
    path: &Path,
    target: &Path,
    content: &str,
    permissions: Option<std::fs::Permissions>,
) -> Result<(), ToolError> {
    let Some(editor) = editor_of(ctx) else {
        return write_recorded(ctx, path, target, content, permissions).await;
    };
    editor
        .0
        .write_text(path, content)
        .await
        .map_err(|message| {
            ToolError::Failed(format!(
                "the editor could not write {}: {message}",
                path.display()
            ))
        })?;
    ctx.file_state()
        .record(path, content.as_bytes(), mtime(path).await);
    Ok(())
}

fn write_atomic_blocking(
    path: &Path,
    content: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> Result<(), ToolError> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent)
        .map_err(|error| ToolError::io("cannot create the directory", parent, error))?;
    let mut temp = tempfile::Builder::new()
        .prefix(".tine-write-")
        .tempfile_in(parent)
        .map_err(|error| ToolError::io("cannot create a temporary file in", parent, error))?;
    temp.write_all(content)
        .and_then(|()| temp.flush())
        .map_err(|error| ToolError::io("cannot write", temp.path().to_path_buf(), error))?;
    let permissions = permissions.unwrap_or_else(|| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::Permissions::from_mode(0o644)
    });
    std::fs::set_permissions(temp.path(), permissions).map_err(|error| {
        ToolError::io("cannot set the mode of", temp.path().to_path_buf(), error)
    })?;
    temp.persist(path)
        .map_err(|error| ToolError::io("cannot replace", path, error.error))?;
    Ok(())
}

/// A unified diff of `before` → `after` for UIs, with counts of added and removed lines.
pub(crate) fn diff(path: &Path, before: &str, after: &str) -> ToolDisplay {
    let text_diff = TextDiff::from_lines(before, after);
    let (mut added, mut removed) = (0, 0);
    for change in text_diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let name = path.display().to_string();
    let unified = text_diff
        .unified_diff()
        .context_radius(3)
        .header(&name, &name)
        .to_string();
    ToolDisplay::Diff {
        file_path: path.to_path_buf(),
        unified,
        added,
        removed,
    }
}

/// "Added 3 lines, removed 1 line" for a diff display.
pub(crate) fn diff_summary(display: &ToolDisplay) -> String {
    let plural = |n: usize| if n == 1 { "line" } else { "lines" };
    match display {
        ToolDisplay::Diff { added, removed, .. } => format!(
            "Added {added} {}, removed {removed} {}",
            plural(*added),
            plural(*removed)
        ),
        ToolDisplay::None
        | ToolDisplay::Todos(_)
        | ToolDisplay::Shell { .. }
        | ToolDisplay::Agent(_) => String::new(),
    }
}

/// The result of Edit or Write changing `path` from `before` to `after`: the model's sentence,
/// and the diff with its summary for UIs.
pub(crate) fn updated_output(path: &Path, before: &str, after: &str) -> crate::tool::ToolOutput {
    let display = diff(path, before, after);
    crate::tool::ToolOutput::text(format!("The file {} has been updated.", path.display()))
        .with_summary(diff_summary(&display))
        .with_display(display)
}
