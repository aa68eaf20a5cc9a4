//! What can go wrong with checkpoints, each saying what to do about it.

use std::io;
use std::path::{Path, PathBuf};

/// An error of the checkpoint store or of a rewind.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The `git` binary could not be run.
    #[error("could not run git ({0}); install git; checkpoints need it")]
    GitMissing(#[source] io::Error),
    /// The store exists but git cannot use it, or a snapshot it should hold is gone.
    #[error(
        "the checkpoint store {} is damaged ({detail}); remove {} to start the checkpoints over",
        store.display(), store.display()
    )]
    Corrupt {
        /// The store directory.
        store: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A rewind was asked of a project that has no checkpoint store.
    #[error(
        "there are no checkpoints at {} (it was removed, or no prompt of this project changed files yet); nothing was rewound",
        .0.display()
    )]
    Missing(PathBuf),
    /// A git command failed.
    #[error("git {command} failed in the checkpoint store {}: {stderr}", store.display())]
    Git {
        /// The store directory.
        store: PathBuf,
        /// The command's arguments.
        command: String,
        /// What git said.
        stderr: String,
    },
    /// Files that both the session and the person changed: nothing was written.
    #[error(
        "nothing was rewound: {} changed since by both the session and you: {}; rewind with force to overwrite them",
        if .0.len() == 1 { "this file was" } else { "these files were" },
        list(.0)
    )]
    Conflicts(Vec<PathBuf>),
    /// A path that leads outside the project (`..`, absolute, or through a symbolic link).
    #[error(
        "{} leads outside the project {}; checkpoints never write outside it",
        path.display(), project.display()
    )]
    OutsideProject {
        /// The path, relative to the project.
        path: PathBuf,
        /// The project.
        project: PathBuf,
    },
    /// The turn to go back to is not in the list.
    #[error("there is no turn {from} to rewind to: the session has {len} checkpointed prompt(s)")]
    NoSuchTurn {
        /// The index asked for.
        from: usize,
        /// How many turns there are.
        len: usize,
    },
    /// A session id that cannot be a file name.
    #[error("{0:?} is not a session id (letters, digits, `-` and `_` only)")]
    BadSessionId(String),
    /// A session record that is not readable JSON.
    #[error(
        "the checkpoint record {} is not readable ({detail}); remove it to forget that session's checkpoints",
        path.display()
    )]
    BadRecord {
        /// The record's file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// Reading or writing a file failed.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being done ("write", "remove", ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

impl CheckpointError {
    pub(crate) fn git_spawn(e: io::Error) -> Self {
        CheckpointError::GitMissing(e)
    }

    pub(crate) fn io(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| CheckpointError::Io {
            action,
            path,
            source,
        }
    }
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
