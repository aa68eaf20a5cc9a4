//! The crate's typed errors, with messages a user can act on.

use std::path::PathBuf;

/// Why a memory operation failed.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// A file operation failed.
    #[error("{context} {}: {source}", .path.display())]
    Io {
        /// What was being done (`cannot read`, `cannot write`).
        context: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// No memory has this name.
    #[error(
        "no memory named `{0}`; run `tine memory list` to see the saved memories and their file names"
    )]
    NotFound(String),
    /// The name is not a memory file name.
    #[error(
        "`{0}` is not a memory file name: use a name like `project_stack.md` (letters, digits, `_`, `-`, `.`), without directories"
    )]
    InvalidName(String),
    /// Another session held the memory lock too long.
    #[error(
        "another tine session has held the memory lock {} for {} s; if no tine is still saving memories, try again",
        .path.display(), .waited.as_secs()
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// How long this session waited.
        waited: std::time::Duration,
    },
    /// Anything else, described.
    #[error("{0}")]
    Invalid(String),
}

impl MemoryError {
    pub(crate) fn io(
        context: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            context,
            path: path.into(),
            source,
        }
    }
}
