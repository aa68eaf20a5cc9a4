//! The working directory a transcript recorded, and adopting the project folders of older
//! versions.
//!
//! Older versions named a project's folder after the sanitized path alone, so paths that
//! sanitize alike (`/x/my-app`, `/x/my_app`) shared one folder, sessions and memory both.
//! [`adopt_legacy_project_dir`] moves what belongs to one path into its new folder:
//! - when the old folder holds no session of another directory (by the `cwd` its transcripts
//!   recorded), it is renamed whole, memory included: the common case, one rename;
//! - when it does, only this directory's sessions move (each `<id>.jsonl` with its `<id>/`
//!   folder of sidechains); the rest stays, memory included, since nothing on disk says whose
//!   memory it is.

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{legacy_project_dir, project_dir};

/// Lines tried for a `cwd` (the first one has it unless it was torn).
const CWD_MAX_LINES: usize = 8;
/// Longest line parsed for its `cwd`; longer ones (a huge first prompt) are skipped.
const CWD_MAX_LINE_BYTES: u64 = 4 << 20;

/// The working directory recorded in a transcript: the `cwd` of its first record that has one.
/// `None` when the file cannot be read or holds no such record in its first lines.
pub fn recorded_cwd(transcript: &Path) -> Option<PathBuf> {
    #[derive(Deserialize)]
    struct Envelope {
        cwd: Option<String>,
    }
    let file = std::fs::File::open(transcript).ok()?;
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    for _ in 0..CWD_MAX_LINES {
        line.clear();
        let read = (&mut reader)
            .take(CWD_MAX_LINE_BYTES)
            .read_until(b'\n', &mut line)
            .ok()?;
        if read == 0 {
            return None;
        }
        if line.last() != Some(&b'\n') && read as u64 == CWD_MAX_LINE_BYTES {
            skip_rest_of_line(&mut reader)?;
            continue;
        }
        if let Ok(Envelope { cwd: Some(cwd) }) = serde_json::from_slice(&line)
            && !cwd.is_empty()
        {
            return Some(PathBuf::from(cwd));
        }
    }
    None
}

/// Whether `transcript` recorded `cwd` as its working directory. The writer records the path
/// lossily as UTF-8, so the comparison is too.
pub fn recorded_in(transcript: &Path, cwd: &Path) -> bool {
    recorded_cwd(transcript).is_some_and(|recorded| same_path(&recorded, cwd))
}

fn same_path(recorded: &Path, cwd: &Path) -> bool {
    recorded.as_os_str().to_string_lossy() == cwd.as_os_str().to_string_lossy()
}

fn skip_rest_of_line(reader: &mut impl BufRead) -> Option<()> {
    loop {
        let buf = reader.fill_buf().ok()?;
        if buf.is_empty() {
            return Some(());
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(end) => {
                reader.consume(end + 1);
                return Some(());
            }
            None => {
                let len = buf.len();
                reader.consume(len);
            }
        }
    }
}

/// What [`adopt_legacy_project_dir`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Adoption {
    /// No old folder, or nothing in it belongs to this path.
    Nothing,
    /// The old folder held nothing of another directory: renamed whole into the new one.
    Renamed {
        /// The old folder.
        from: PathBuf,
        /// The new folder it became.
        to: PathBuf,
    },
    /// The old folder is shared with other directories: this path's sessions moved, `left`
    /// other sessions (and any memory) stayed.
    Moved {
        /// The old folder.
        from: PathBuf,
        /// The new folder the sessions moved to.
        to: PathBuf,
        /// How many sessions moved.
        sessions: usize,
        /// How many other sessions stayed in the old folder.
        left: usize,
    },
}

/// Moves what older versions kept for `path` (canonical) in `<home>/projects/<sanitized path>`
/// into `path`'s own folder (see the module's doc). Idempotent and safe to run from several
/// processes at once: nothing is overwritten, and a file another process moved first is
/// skipped.
pub fn adopt_legacy_project_dir(home: &Path, path: &Path) -> std::io::Result<Adoption> {
    let legacy = legacy_project_dir(home, path);
    let new = project_dir(home, path);
    if legacy == new {
        return Ok(Adoption::Nothing);
    }
    match std::fs::symlink_metadata(&legacy) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Ok(Adoption::Nothing),
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Adoption::Nothing),
        Err(e) => return Err(e),
    }
    let mut mine = Vec::new();
    let mut others = 0;
    let mut unknown = 0;
    for transcript in transcripts_in(&legacy)? {
        match recorded_cwd(&transcript) {
            Some(recorded) if same_path(&recorded, path) => mine.push(transcript),
            Some(_) => others += 1,
            None => unknown += 1,
        }
    }
    if others == 0 && !new.exists() {
        match std::fs::rename(&legacy, &new) {
            Ok(()) => {
                return Ok(Adoption::Renamed {
                    from: legacy,
                    to: new,
                });
            }
            // Another process adopted it first.
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Adoption::Nothing),
            // The new folder appeared meanwhile: move the sessions one by one.
            Err(_) => {}
        }
    }
    if mine.is_empty() {
        return Ok(Adoption::Nothing);
    }
    crate::private_fs::create_dir_all(&new)?;
    let mut sessions = 0;
    for transcript in mine {
        let (Some(name), Some(stem)) = (transcript.file_name(), transcript.file_stem()) else {
            continue;
        };
        if move_without_overwriting(&transcript, &new.join(name))? {
            sessions += 1;
            let sidechains = legacy.join(stem);
            if sidechains.is_dir() {
                move_without_overwriting(&sidechains, &new.join(stem))?;
            }
        }
    }
    Ok(Adoption::Moved {
        from: legacy,
        to: new,
        sessions,
        left: others + unknown,
    })
}

/// `<dir>/*.jsonl`, regular files only.
fn transcripts_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Renames `from` to `to` unless `to` exists. `Ok(false)` when nothing moved (the target
/// exists, or another process moved the source first).
fn move_without_overwriting(from: &Path, to: &Path) -> std::io::Result<bool> {
    if to.symlink_metadata().is_ok() {
        return Ok(false);
    }
    match std::fs::rename(from, to) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}
