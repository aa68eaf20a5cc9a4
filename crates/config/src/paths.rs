//! Where tine keeps a session's files: the home directory (`TINE_HOME`, default `~/.tine`),
//! the per-project directory named after the working directory, and the transcript paths inside
//! it (design.md, "Files on disk").
//!
//! A project's folder is `<sanitized path>-<hash of the full path>`: the readable part alone
//! collides (`/x/my-app` and `/x/my_app` both sanitize to `-x-my-app`), the hash keeps every
//! path apart. Folders of older versions (the sanitized path alone) are adopted by
//! [`adopt_legacy_project_dir`] (module `legacy`).
//!
//! Nothing here reads the process environment implicitly: [`tine_home`] takes a lookup function
//! so tests never touch the real home; [`tine_home_from_env`] is the one-line wrapper for `main`.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

mod legacy;

pub use legacy::{Adoption, adopt_legacy_project_dir, recorded_cwd, recorded_in};

/// Longest sanitized name kept whole; longer ones are cut here and get a hash suffix.
pub(crate) const MAX_SANITIZED_LEN: usize = 200;

/// Hex digits of the path hash in a project folder's name (48 bits).
pub(crate) const PROJECT_HASH_LEN: usize = 12;

/// Longest accepted session or agent id (ids become file names).
const MAX_ID_LEN: usize = 128;

/// Errors locating tine's files.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathsError {
    /// Neither `TINE_HOME` nor `HOME` is set.
    #[error("cannot locate tine's home directory: set TINE_HOME or HOME")]
    NoHome,
    /// An identifier that would not be a safe file name.
    #[error(
        "invalid {what} {id:?}: use 1 to {MAX_ID_LEN} characters from A-Z, a-z, 0-9, '-' and '_'"
    )]
    InvalidId {
        /// What the identifier names (a session, an agent).
        what: &'static str,
        /// The identifier as given.
        id: String,
    },
}

/// tine's home directory: `TINE_HOME` when set and non-empty, else `$HOME/.tine`.
///
/// `lookup` reads one environment variable (pass `|k| std::env::var_os(k)` in `main`, a map in
/// tests).
pub fn tine_home(lookup: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, PathsError> {
    let non_empty = |key: &str| lookup(key).filter(|v| !v.is_empty());
    if let Some(home) = non_empty("TINE_HOME") {
        return Ok(PathBuf::from(home));
    }
    non_empty("HOME")
        .map(|home| PathBuf::from(home).join(".tine"))
        .ok_or(PathsError::NoHome)
}

/// [`tine_home`] over the real process environment.
pub fn tine_home_from_env() -> Result<PathBuf, PathsError> {
    tine_home(|key| std::env::var_os(key))
}

/// A path turned into a readable directory name: every character outside `[A-Za-z0-9]` becomes
/// `-`. Names over 200 characters are cut and get `-` plus 8 hex digits of
/// the SHA-256 of the original path bytes. Not collision-free (`/a-b` and `/a_b` agree): this
/// is the folder name of older versions, and the readable prefix of [`project_dir_name`].
pub fn sanitize_path(path: &Path) -> String {
    let sanitized = sanitized_chars(path);
    if sanitized.len() <= MAX_SANITIZED_LEN {
        return sanitized;
    }
    // Every char is ASCII after the map, so byte slicing is char slicing.
    format!("{}-{}", &sanitized[..MAX_SANITIZED_LEN], path_hash(path, 8))
}

fn sanitized_chars(path: &Path) -> String {
    path.as_os_str()
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The first `len` hex digits of the SHA-256 of the path's bytes.
fn path_hash(path: &Path, len: usize) -> String {
    let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
    let mut hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex.truncate(len);
    hex
}

/// The name of a path's project folder: the sanitized path (at most 200
/// characters) for people, then `-` and 12 hex digits of the SHA-256 of the
/// whole path, always, so two paths that sanitize alike still get their own folders.
pub fn project_dir_name(path: &Path) -> String {
    let mut readable = sanitized_chars(path);
    readable.truncate(MAX_SANITIZED_LEN);
    format!("{readable}-{}", path_hash(path, PROJECT_HASH_LEN))
}

/// `<home>/projects/<project_dir_name(cwd)>`: transcripts of sessions started in `cwd` (and,
/// for a git root, its memory).
///
/// Pass the canonical working directory, so `/repo` and `/repo/.` share a project.
pub fn project_dir(home: &Path, cwd: &Path) -> PathBuf {
    home.join("projects").join(project_dir_name(cwd))
}

/// `<home>/projects/<sanitize_path(cwd)>`: where older versions kept `cwd`'s project.
pub fn legacy_project_dir(home: &Path, cwd: &Path) -> PathBuf {
    home.join("projects").join(sanitize_path(cwd))
}

/// `<project>/<session>.jsonl`: the main transcript of a session.
pub fn transcript_path(home: &Path, cwd: &Path, session: &SessionId) -> PathBuf {
    project_dir(home, cwd).join(format!("{session}.jsonl"))
}

/// `<project>/<session>/subagents/agent-<id>.jsonl`: a sub-agent's sidechain transcript.
pub fn subagent_transcript_path(
    home: &Path,
    cwd: &Path,
    session: &SessionId,
    agent_id: &str,
) -> Result<PathBuf, PathsError> {
    validate_id("agent id", agent_id)?;
    Ok(project_dir(home, cwd)
        .join(session.as_str())
        .join("subagents")
        .join(format!("agent-{agent_id}.jsonl")))
}

/// A session id. Ids become file names, so only `[A-Za-z0-9_-]` is accepted: `--resume
/// ../../x` cannot escape the project directory.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId(String);

impl SessionId {
    /// A fresh random (UUID v4) session id.
    pub fn new_random() -> Self {
        Self(uuid::Uuid::new_v4().to_string())
    }

    /// Validates an id given by a user (`--resume ID`) or read from disk.
    pub fn parse(id: &str) -> Result<Self, PathsError> {
        validate_id("session id", id)?;
        Ok(Self(id.to_owned()))
    }

    /// The identifier as a string (the transcript's file stem).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for SessionId {
    type Err = PathsError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<String> for SessionId {
    type Error = PathsError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        validate_id("session id", &s)?;
        Ok(Self(s))
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> String {
        id.0
    }
}

fn validate_id(what: &'static str, id: &str) -> Result<(), PathsError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(PathsError::InvalidId {
            what,
            id: id.chars().take(MAX_ID_LEN + 8).collect(),
        })
    }
}

#[cfg(test)]
#[path = "paths_tests.rs"]
mod tests;
