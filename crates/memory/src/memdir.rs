//! The memory directory: where it is, whether auto memory is on, the `MEMORY.md` index loaded
//! into the context once per session, atomic writes into it, the lock every writer of the
//! directory holds ([`MemoryWriteLock`]), and the merge that keeps concurrent index updates
//! lossless ([`merge_index`]).
//!
//! Where: `TINE_MEMORY_DIR`, else the `autoMemoryDirectory` setting (user, local, flag or
//! managed settings; never project settings, which a cloned repository controls), else
//! `$TINE_HOME/projects/<project folder of the git root, else cwd>/memory/`. The directory and
//! its files are private (0700 / 0600, `tine_config::private_fs`).

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tine_config::LoadedSettings;
use tine_config::{Adoption, adopt_legacy_project_dir, project_dir};
use tine_query_loop::find_repo_root;

use tine_config::private_fs;

use crate::error::MemoryError;

/// The index file in the memory directory.
pub const INDEX_FILE: &str = "MEMORY.md";
/// Lines of `MEMORY.md` loaded into the context.
pub const MAX_INDEX_LINES: usize = 200;
/// Bytes of `MEMORY.md` loaded into the context.
pub const MAX_INDEX_BYTES: usize = 25_000;
/// Longest index line (`- [Title](file.md) — hook`), in characters.
pub const MAX_INDEX_LINE_CHARS: usize = 150;
/// The lock file every writer of the directory holds (hidden: the forks cannot touch it).
pub(crate) const WRITE_LOCK_FILE: &str = ".write-lock";
/// How long a writer waits for [`MemoryWriteLock`] before giving up with an error.
pub(crate) const WRITE_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// The environment variables memory reads, taken once so tests never touch the real process
/// environment.
#[derive(Debug, Clone, Default)]
pub struct MemoryEnv {
    /// `TINE_MEMORY_DIR`: the memory directory, overriding everything else.
    pub memory_dir: Option<OsString>,
    /// `TINE_DISABLE_AUTO_MEMORY`: any value but empty, `0`, `false`, `no` or `off` turns auto
    /// memory off.
    pub disable_auto_memory: Option<OsString>,
    /// `HOME`, for `~/` in `autoMemoryDirectory`.
    pub home: Option<OsString>,
}

impl MemoryEnv {
    /// From a lookup of one variable (a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Self {
        Self {
            memory_dir: lookup("TINE_MEMORY_DIR"),
            disable_auto_memory: lookup("TINE_DISABLE_AUTO_MEMORY"),
            home: lookup("HOME"),
        }
    }

    /// From the process environment (for `main`).
    pub fn from_process() -> Self {
        Self::from_lookup(|key| std::env::var_os(key))
    }

    fn disabled(&self) -> bool {
        self.disable_auto_memory.as_ref().is_some_and(|v| {
            let v = v.to_string_lossy().trim().to_ascii_lowercase();
            !matches!(v.as_str(), "" | "0" | "false" | "no" | "off")
        })
    }
}

/// Where the memory directory's location came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirSource {
    /// `TINE_MEMORY_DIR`.
    Env,
    /// `autoMemoryDirectory` from this settings source (`userSettings`, ...).
    Setting(String),
    /// `$TINE_HOME/projects/<project>/memory`.
    Default,
}

/// An enabled memory directory. It may not exist yet; [`MemoryDir::ensure`] creates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryDir {
    path: PathBuf,
    source: DirSource,
}

/// Whether auto memory is on and, when it is, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryResolution {
    /// On, in this directory.
    Enabled(MemoryDir),
    /// Off, and why (for `tine memory path` and logs).
    Disabled(String),
}

impl MemoryResolution {
    /// The directory when auto memory is on.
    pub fn dir(&self) -> Option<&MemoryDir> {
        match self {
            Self::Enabled(dir) => Some(dir),
            Self::Disabled(_) => None,
        }
    }
}

/// Decides whether auto memory is on and where its directory is.
///
/// `tine_home` is `TINE_HOME` (default `~/.tine`); `cwd` the session's (canonical) working
/// directory. The project is the git root above `cwd`, or `cwd` itself outside a repository.
pub fn resolve_memory_dir(
    env: &MemoryEnv,
    settings: &LoadedSettings,
    tine_home: &Path,
    cwd: &Path,
) -> MemoryResolution {
    if env.disabled() {
        return MemoryResolution::Disabled("TINE_DISABLE_AUTO_MEMORY is set".to_owned());
    }
    if settings.auto_memory_enabled() == Some(false) {
        return MemoryResolution::Disabled("autoMemoryEnabled is false in settings".to_owned());
    }
    if let Some(dir) = env.memory_dir.as_ref().filter(|d| !d.is_empty()) {
        let path = PathBuf::from(dir);
        let path = if path.is_absolute() {
            path
        } else {
            cwd.join(path)
        };
        return MemoryResolution::Enabled(MemoryDir::new(path, DirSource::Env));
    }
    if let Some((dir, source)) = settings.auto_memory_directory() {
        match expand_setting_path(&dir, env.home.as_deref()) {
            Some(path) => {
                return MemoryResolution::Enabled(MemoryDir::new(
                    path,
                    DirSource::Setting(source.as_str().to_owned()),
                ));
            }
            None => tracing::warn!(
                dir = %dir.display(),
                %source,
                "autoMemoryDirectory must be absolute or start with ~/; using the default"
            ),
        }
    }
    let project = memory_project(cwd);
    // The folder of an older version (named by the sanitized path alone) is adopted first.
    match adopt_legacy_project_dir(tine_home, &project) {
        Ok(Adoption::Nothing) => {}
        Ok(adoption) => tracing::info!(?adoption, "adopted an older project folder"),
        Err(error) => tracing::warn!(
            %error,
            project = %project.display(),
            "cannot adopt the project folder of an older version"
        ),
    }
    MemoryResolution::Enabled(MemoryDir::new(
        default_memory_dir(tine_home, cwd),
        DirSource::Default,
    ))
}

/// The project memory belongs to: the git root above `cwd`, else `cwd`.
fn memory_project(cwd: &Path) -> PathBuf {
    find_repo_root(cwd).unwrap_or_else(|| cwd.to_path_buf())
}

/// `$TINE_HOME/projects/<project folder of the git root, else cwd>/memory`, the same folder
/// naming as transcripts (`tine_config::project_dir`).
pub fn default_memory_dir(tine_home: &Path, cwd: &Path) -> PathBuf {
    project_dir(tine_home, &memory_project(cwd)).join("memory")
}

fn expand_setting_path(dir: &Path, home: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if dir.is_absolute() {
        return Some(dir.to_path_buf());
    }
    let rest = dir.strip_prefix("~").ok()?;
    home.filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(rest))
}

impl MemoryDir {
    /// A memory directory at `path`, chosen by `source`.
    pub fn new(path: PathBuf, source: DirSource) -> Self {
        Self { path, source }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What chose it (the default, a setting, an environment variable).
    pub fn source(&self) -> &DirSource {
        &self.source
    }

    /// `MEMORY.md`'s path.
    pub fn index_path(&self) -> PathBuf {
        self.path.join(INDEX_FILE)
    }

    /// Creates the directory if needed (new directories 0700).
    pub fn ensure(&self) -> Result<(), MemoryError> {
        private_fs::create_dir_all(&self.path)
            .map_err(|e| MemoryError::io("cannot create the memory directory", &self.path, e))
    }

    /// The index as it goes into the context at session start: the first
    /// [`MAX_INDEX_LINES`] lines and at most [`MAX_INDEX_BYTES`] bytes, with a visible note
    /// when cut. Call it once per session and keep the string, so the prompt bytes stay stable
    /// (and forks keep hitting the cache) even when extraction rewrites `MEMORY.md` mid-session.
    pub fn load_index_for_context(&self) -> IndexForContext {
        let index_path = self.index_path();
        let text = match std::fs::read(&index_path) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                tracing::warn!(path = %index_path.display(), error = %e, "cannot read MEMORY.md");
                None
            }
        };
        let (index, truncated) = match text.as_deref().map(str::trim_end) {
            Some(t) if !t.is_empty() => {
                let (kept, truncated) = truncate_index(t);
                (Some(kept), truncated)
            }
            _ => (None, None),
        };
        IndexForContext {
            dir: self.path.clone(),
            index,
            truncated,
        }
    }

    /// Writes `content` to `name` inside the directory atomically (temp file + rename). Hold
    /// the directory's write lock (`.write-lock`) around a read-modify-write.
    pub fn write_file(&self, name: &str, content: &str) -> Result<PathBuf, MemoryError> {
        check_file_name(name)?;
        self.ensure()?;
        let path = self.path.join(name);
        write_atomic(&path, content.as_bytes())?;
        Ok(path)
    }
}

/// Checks a memory file name: `[A-Za-z0-9_.-]`, not hidden, ending in `.md`, no directories.
pub(crate) fn check_file_name(name: &str) -> Result<(), MemoryError> {
    let ok = !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('.')
        && name.ends_with(".md")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(MemoryError::InvalidName(name.to_owned()))
    }
}

/// How the index was cut for the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexTruncation {
    /// Lines of the whole index.
    pub total_lines: usize,
    /// Bytes of the whole index.
    pub total_bytes: usize,
    /// Lines kept.
    pub kept_lines: usize,
}

/// `MEMORY.md` as loaded for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexForContext {
    /// The memory directory.
    pub dir: PathBuf,
    /// The kept part of the index; `None` when there is no index (or it is empty).
    pub index: Option<String>,
    /// How the index was cut, when it was.
    pub truncated: Option<IndexTruncation>,
}

impl IndexForContext {
    /// The text appended once to the session's context: where memory lives, how to save one,
    /// and the index.
    pub fn render(&self) -> String {
        let dir = self.dir.display();
        let mut out = String::new();
        // Sent with every request of the session: each fact once, the long path once.
        out.push_str("# Auto memory\n\n");
        out.push_str(&format!(
            "Your persistent memory, `{dir}`, holds what past sessions learned about the user \
             and this project: a Markdown file per memory, with frontmatter (`name`, \
             `description`, `type`: user, feedback, project or reference) and a line `- \
             [Title](file.md) — hook` in its {INDEX_FILE}. When the user asks you to remember \
             something, save it there yourself; other memories are saved in the background. \
             Memories may be out of date: check them against the code before relying on \
             them.\n\n"
        ));
        match &self.index {
            None => out.push_str(&format!("{INDEX_FILE} is empty: no memories saved yet.\n")),
            Some(index) => {
                out.push_str(&format!("Contents of {INDEX_FILE}:\n\n"));
                out.push_str(index);
                out.push('\n');
                if let Some(t) = &self.truncated {
                    out.push_str(&format!(
                        "\n> NOTE: {INDEX_FILE} was cut for the context: {} of {} lines shown \
                         (limit {MAX_INDEX_LINES} lines / {MAX_INDEX_BYTES} bytes; the file has \
                         {} bytes). Read the file for the rest, and keep the index short: one \
                         line of under {MAX_INDEX_LINE_CHARS} characters per memory.\n",
                        t.kept_lines, t.total_lines, t.total_bytes
                    ));
                }
            }
        }
        out
    }
}

/// The first [`MAX_INDEX_LINES`] lines, then only whole lines within [`MAX_INDEX_BYTES`].
fn truncate_index(text: &str) -> (String, Option<IndexTruncation>) {
    let total_lines = text.lines().count();
    let mut kept = String::new();
    let mut kept_lines = 0;
    for line in text.lines().take(MAX_INDEX_LINES) {
        let extra = line.len() + usize::from(kept_lines > 0);
        if kept.len() + extra > MAX_INDEX_BYTES {
            if kept_lines == 0 {
                // One enormous first line: keep its beginning, cut at a char boundary.
                let mut end = MAX_INDEX_BYTES.min(line.len());
                while !line.is_char_boundary(end) {
                    end -= 1;
                }
                kept.push_str(&line[..end]);
                kept_lines = 1;
            }
            break;
        }
        if kept_lines > 0 {
            kept.push('\n');
        }
        kept.push_str(line);
        kept_lines += 1;
    }
    let cut = kept_lines < total_lines || kept.len() < text.len();
    let truncation = cut.then_some(IndexTruncation {
        total_lines,
        total_bytes: text.len(),
        kept_lines,
    });
    (kept, truncation)
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader never sees half a file. The file is 0600, new directories 0700.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), MemoryError> {
    private_fs::write_atomic(path, bytes).map_err(|e| MemoryError::io("cannot write", path, e))
}

/// The advisory lock (`flock`) on [`WRITE_LOCK_FILE`] that every writer of a memory directory
/// holds around its read-modify-write: the memory tools of every session and process, and
/// [`crate::save_memory`]. Released on drop, and by the kernel if the process dies, so a crash
/// never leaves it held. Blocking: call it off the async runtime.
#[derive(Debug)]
pub(crate) struct MemoryWriteLock {
    _file: File,
}

impl MemoryWriteLock {
    /// Waits up to `timeout` for the lock of the memory directory `dir` (created if needed).
    pub(crate) fn acquire(dir: &Path, timeout: Duration) -> Result<Self, MemoryError> {
        private_fs::create_dir_all(dir)
            .map_err(|e| MemoryError::io("cannot create the memory directory", dir, e))?;
        let path = dir.join(WRITE_LOCK_FILE);
        let file = private_fs::open_append(&path)
            .map_err(|e| MemoryError::io("cannot open the memory lock", &path, e))?;
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self { _file: file }),
                Err(TryLockError::WouldBlock) if started.elapsed() < timeout => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(16));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(MemoryError::Locked {
                        path,
                        waited: started.elapsed(),
                    });
                }
                Err(TryLockError::Error(e)) => {
                    return Err(MemoryError::io("cannot lock", path, e));
                }
            }
        }
    }
}

/// An index update merged with what other writers saved meanwhile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexMerge {
    /// The new `MEMORY.md`.
    pub text: String,
    /// Lines other writers added since `base` that were kept.
    pub kept_from_disk: usize,
}

/// Merges one writer's new `MEMORY.md` (`ours`, made from `base`, what it last read) with the
/// file as it is now (`theirs`), line by line, so that concurrent updates lose nothing:
/// - our lines are kept in our order, except a line we left as it was in `base` that is gone
///   from `theirs` (another writer removed or changed it);
/// - lines we removed from `base` stay removed;
/// - lines others added since `base` follow ours, except one linking a topic file one of ours
///   already links (we updated that memory's line: ours wins).
///
/// With no `base` (the writer never read the file) nothing counts as removed: a union.
pub(crate) fn merge_index(base: Option<&str>, ours: &str, theirs: &str) -> IndexMerge {
    let base: HashSet<&str> = base.map(|b| b.lines().collect()).unwrap_or_default();
    let ours_lines: HashSet<&str> = ours.lines().collect();
    let theirs_lines: HashSet<&str> = theirs.lines().collect();
    let blank = |line: &str| line.trim().is_empty();
    let mut out: Vec<&str> = ours
        .lines()
        .filter(|line| blank(line) || !base.contains(line) || theirs_lines.contains(line))
        .collect();
    while out.last().is_some_and(|line| blank(line)) {
        out.pop();
    }
    let mut linked: HashSet<&str> = out.iter().filter_map(|line| index_link(line)).collect();
    let mut kept_from_disk = 0;
    for line in theirs.lines() {
        if blank(line) || base.contains(line) || ours_lines.contains(line) {
            continue;
        }
        if let Some(link) = index_link(line)
            && !linked.insert(link)
        {
            continue;
        }
        out.push(line);
        kept_from_disk += 1;
    }
    let mut text = out.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    IndexMerge {
        text,
        kept_from_disk,
    }
}

/// The topic file an index line links: `file.md` in `- [Title](file.md) — hook`.
pub(crate) fn index_link(line: &str) -> Option<&str> {
    let start = line.find("](")? + 2;
    let len = line[start..].find(')')?;
    Some(&line[start..start + len]).filter(|link| !link.is_empty())
}

#[cfg(test)]
#[path = "memdir_tests.rs"]
mod tests;
