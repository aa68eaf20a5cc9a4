//! tine-checkpoints: checkpoints of a project's working tree, kept in a shadow git repository
//! of tine's own, and the rewind of what a session changed.
//!
//! The store is the real `git` run with its own `GIT_DIR` (under `TINE_HOME`, 0700) and the
//! project as the work tree, so it follows the project's `.gitignore` and never touches the
//! user's `.git` (not the index, stash, refs, hooks or config); a project that is not a git
//! repository works the same. A snapshot records every file (not only what tine's edit tools
//! wrote), so a rewind also undoes what a shell command created, deleted or moved.
//!
//! Modules, in reading order (private: the items re-exported here are the API):
//! - `error`: [`CheckpointError`], each message saying what to do.
//! - `git`: running `git` on the shadow repository, cut off from the user's configuration.
//! - `store`: [`Checkpoints`] (open, [`Checkpoints::snapshot`], [`Checkpoints::changed`]),
//!   [`CheckpointConfig`], [`Snapshot`].
//! - `rewind`: [`Checkpoints::plan_rewind`] and [`Checkpoints::apply`]: [`TurnSnapshots`],
//!   [`RewindPlan`], [`RestoreReport`].
//! - `write`: writing and removing project files, only inside the project.
//! - `session`: a session's [`SessionCheckpoints`] on disk, and [`Checkpoints::prune`].
//!
//! # Example
//!
//! ```no_run
//! use tine_checkpoints::{CheckpointConfig, Checkpoints, SessionCheckpoints, TurnSnapshots};
//! # fn main() -> Result<(), tine_checkpoints::CheckpointError> {
//! # let (store, project) = (std::path::Path::new("/s"), std::path::Path::new("/p"));
//! let checkpoints = Checkpoints::open(store, project, CheckpointConfig::default())?;
//! let mut record = SessionCheckpoints::new("session-1");
//! record.record_before(1, "uuid-1", "add a parser", checkpoints.snapshot()?);
//! // ... the turn's tools change files ...
//! record.record_after(1, checkpoints.snapshot()?);
//! record.save(store)?;
//!
//! // Later, perhaps in another process: go back to before prompt 1.
//! let turns: Vec<TurnSnapshots> = checkpoints.turns(&record)?;
//! let plan = checkpoints.plan_rewind(&turns, 0)?;
//! let report = checkpoints.apply(&plan, false)?; // Err(Conflicts) if you changed them too
//! # let _ = report;
//! # Ok(()) }
//! ```
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod error;
mod git;
mod rewind;
mod session;
mod store;
mod write;

pub use error::CheckpointError;
pub use rewind::{RestoreReport, RewindPlan, TurnSnapshots};
pub use session::{PromptCheckpoint, PruneReport, SessionCheckpoints};
pub use store::{CheckpointConfig, Checkpoints, Snapshot};
