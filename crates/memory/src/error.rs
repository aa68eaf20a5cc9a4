//! The crate's typed errors, with messages a user can act on.

use std::path::PathBuf;

/// Why a memory operation failed.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{context} {}: {source}", .path.display())]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "no memory named `{0}`; run `tine memory list` to see the saved memories and their file names"
    )]
    NotFound(String),
    #[error(
        "`{0}` is not a memory file name: use a name like `project_stack.md` (letters, digits, `_`, `-`, `.`), without directories"
    )]
    InvalidName(String),
    #[error(
        "another tine session has held the memory lock {} for {} s; if no tine is still saving memories, try again",
        .path.display(), .waited.as_secs()
    )]
    Locked {
        path: PathBuf,
        waited: std::time::Duration,
    },
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
