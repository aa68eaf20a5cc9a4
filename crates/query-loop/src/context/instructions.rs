//! Discovery of instruction files: the user's `$TINE_HOME/AGENTS.md`, then from the repository
//! root down to the working directory, in each directory `AGENTS.md`, `CLAUDE.md` and
//! `CLAUDE.local.md`. Reads are bounded; the same file reached twice (a `CLAUDE.md` symlinked to
//! `AGENTS.md` is common) is included once.

use std::collections::HashSet;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Most bytes read from one instruction file; the rest is replaced by a note.
pub const MAX_INSTRUCTION_FILE_BYTES: usize = 40 * 1024;

/// File names read in each directory, in this order, with who they come from.
const PROJECT_FILES: [(&str, InstructionSource); 3] = [
    ("AGENTS.md", InstructionSource::Project),
    ("CLAUDE.md", InstructionSource::Project),
    ("CLAUDE.local.md", InstructionSource::Local),
];

/// Where an instruction file comes from; decides how it is labelled for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstructionSource {
    /// `$TINE_HOME/AGENTS.md`: the user's instructions for every project.
    User,
    /// Checked into the codebase.
    Project,
    /// `CLAUDE.local.md`: the user's private instructions for this project.
    Local,
}

impl InstructionSource {
    /// How the source is named in the rendered context.
    pub fn label(self) -> &'static str {
        match self {
            Self::User => "user's private global instructions for all projects",
            Self::Project => "project instructions, checked into the codebase",
            Self::Local => "user's private project instructions, not checked in",
        }
    }
}

/// One instruction file as read at session start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// The file.
    pub path: PathBuf,
    /// Whose it is (the user's, the project's, a local one).
    pub source: InstructionSource,
    /// Its text (imports resolved).
    pub content: String,
    /// The file was longer than [`MAX_INSTRUCTION_FILE_BYTES`] and `content` is its beginning.
    pub truncated: bool,
}

/// The nearest ancestor of `cwd` (itself included) holding a `.git` entry (a directory, or a
/// file for worktrees and submodules).
pub fn find_repo_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .map(Path::to_path_buf)
}

/// Instruction files in the order they are given to the model: user first, then from the
/// repository root (or `cwd` alone outside a repository) down to `cwd`.
pub fn discover_instruction_files(home: &Path, cwd: &Path) -> Vec<InstructionFile> {
    let root = find_repo_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    let mut dirs: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(&root))
        .collect();
    dirs.reverse();

    let mut candidates = vec![(home.join("AGENTS.md"), InstructionSource::User)];
    for dir in dirs {
        for (name, source) in PROJECT_FILES {
            candidates.push((dir.join(name), source));
        }
    }

    let mut seen = HashSet::new();
    let mut files = Vec::new();
    for (path, source) in candidates {
        let Some((content, truncated)) = read_bounded(&path) else {
            continue;
        };
        let identity = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.insert(identity) || content.trim().is_empty() {
            continue;
        }
        files.push(InstructionFile {
            path,
            source,
            content,
            truncated,
        });
    }
    files
}

/// The first [`MAX_INSTRUCTION_FILE_BYTES`] of a regular file, cut at a character boundary;
/// `None` when there is no readable regular file (a FIFO named AGENTS.md must not hang us).
fn read_bounded(path: &Path) -> Option<(String, bool)> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "cannot read instruction file; skipped");
            return None;
        }
    };
    let mut bytes = Vec::new();
    let cap = MAX_INSTRUCTION_FILE_BYTES as u64 + 1;
    if let Err(error) = file.take(cap).read_to_end(&mut bytes) {
        tracing::warn!(path = %path.display(), %error, "cannot read instruction file; skipped");
        return None;
    }
    let truncated = bytes.len() > MAX_INSTRUCTION_FILE_BYTES;
    bytes.truncate(MAX_INSTRUCTION_FILE_BYTES);
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let valid = err.utf8_error().valid_up_to();
            let incomplete_tail = err.utf8_error().error_len().is_none();
            let mut bytes = err.into_bytes();
            if truncated && incomplete_tail {
                // Only the cut split a character: drop the partial character.
                bytes.truncate(valid);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    Some((text, truncated))
}
