//! The rewind of what a session changed: which files go back (a plan), and putting them back.
//!
//! The files the session changed are those that differ between a turn's `before` and `after`
//! snapshots, for every turn from the one rewound to. Each goes back to its content in that
//! turn's `before`; every other file keeps whatever the person did to it. A file the person
//! also changed since (between one turn's `after` and the next one's `before`, or after the
//! last turn) is a conflict: without `force`, nothing at all is written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::CheckpointError;
use crate::git::nul_paths;
use crate::store::{Checkpoints, Snapshot, os};
use crate::write::{self, Content};

/// One prompt's work tree: before its first change, and after its turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnSnapshots {
    /// Before the turn's first tool that could change files.
    pub before: Snapshot,
    /// When the turn ended.
    pub after: Snapshot,
}

/// What a rewind would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindPlan {
    /// The snapshot the files go back to (the `before` of the turn rewound to).
    pub target: Snapshot,
    /// Files written back with their content (and mode) in `target`.
    pub restore: Vec<PathBuf>,
    /// Files the session created since: removed.
    pub remove: Vec<PathBuf>,
    /// Files among `restore` and `remove` the person changed too since the session did.
    pub conflicts: Vec<PathBuf>,
}

impl RewindPlan {
    /// Whether the rewind changes nothing on disk.
    pub fn is_empty(&self) -> bool {
        self.restore.is_empty() && self.remove.is_empty()
    }
}

/// What a rewind did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreReport {
    /// Files written back.
    pub restored: Vec<PathBuf>,
    /// Files removed.
    pub removed: Vec<PathBuf>,
    /// Conflicting files overwritten or removed because the rewind was forced.
    pub overwritten: Vec<PathBuf>,
}

/// A tree entry: its git mode and object.
struct Entry {
    mode: String,
    object: String,
}

impl Checkpoints {
    /// Plans going back to the state before `turns[from]` (`turns` oldest first). Takes a
    /// snapshot of the work tree now, to see what the person changed after the last turn.
    pub fn plan_rewind(
        &self,
        turns: &[TurnSnapshots],
        from: usize,
    ) -> Result<RewindPlan, CheckpointError> {
        let Some(first) = turns.get(from) else {
            return Err(CheckpointError::NoSuchTurn {
                from,
                len: turns.len(),
            });
        };
        let target = first.before.clone();
        let now = self.snapshot()?;
        let tail = &turns[from..];
        let mut session = BTreeSet::new();
        let mut person = BTreeSet::new();
        for (k, turn) in tail.iter().enumerate() {
            session.extend(self.changed(&turn.before, &turn.after)?);
            let next = tail.get(k + 1).map_or(&now, |t| &t.before);
            person.extend(self.changed(&turn.after, next)?);
        }
        // Only what differs from the target now needs writing; a path not recorded then (over
        // the cap) is not known, so it is neither restored nor removed.
        let differs: BTreeSet<PathBuf> = self.changed(&target, &now)?.into_iter().collect();
        let present = self.tree(&target.id)?;
        let mut plan = RewindPlan {
            target,
            restore: Vec::new(),
            remove: Vec::new(),
            conflicts: Vec::new(),
        };
        for path in session.intersection(&differs) {
            if plan.target.skipped.iter().any(|s| path.starts_with(s)) {
                continue;
            }
            if present.contains_key(path) {
                plan.restore.push(path.clone());
            } else {
                plan.remove.push(path.clone());
            }
            if person.contains(path) {
                plan.conflicts.push(path.clone());
            }
        }
        Ok(plan)
    }

    /// Carries out `plan`. With conflicts and no `force`, writes nothing and returns
    /// [`CheckpointError::Conflicts`]. Every path and every file's content is checked before the
    /// first write, so a damaged store or a path leading outside the project writes nothing.
    pub fn apply(&self, plan: &RewindPlan, force: bool) -> Result<RestoreReport, CheckpointError> {
        if !plan.conflicts.is_empty() && !force {
            return Err(CheckpointError::Conflicts(plan.conflicts.clone()));
        }
        self.commit_exists(&plan.target.id)?;
        let project = self.git.work_tree.clone();
        let removals = plan
            .remove
            .iter()
            .map(|p| Ok((p, write::resolve_inside(&project, p)?)))
            .collect::<Result<Vec<_>, CheckpointError>>()?;
        let tree = self.tree(&plan.target.id)?;
        let mut wanted = Vec::new();
        for path in &plan.restore {
            let full = write::resolve_inside(&project, path)?;
            let Some(entry) = tree.get(path) else {
                return Err(self.corrupt(format!(
                    "{} is not in snapshot {}",
                    path.display(),
                    plan.target.id
                )));
            };
            wanted.push((path, full, entry));
        }
        let objects: Vec<&str> = wanted.iter().map(|(_, _, e)| e.object.as_str()).collect();
        let blobs = self.read_blobs(&objects)?;
        let mut report = RestoreReport::default();
        for (path, full) in removals {
            if write::remove(&project, &full)? {
                report.removed.push(path.clone());
            }
        }
        for ((path, full, entry), bytes) in wanted.into_iter().zip(blobs) {
            let content = match entry.mode.as_str() {
                "120000" => Content::Link(bytes),
                mode => Content::File {
                    bytes,
                    executable: mode == "100755",
                },
            };
            write::write(&full, &content)?;
            report.restored.push(path.clone());
        }
        report.overwritten = plan.conflicts.clone();
        tracing::info!(
            restored = report.restored.len(),
            removed = report.removed.len(),
            forced = report.overwritten.len(),
            "checkpoints: rewound"
        );
        Ok(report)
    }

    /// Every file of a snapshot, with its mode and object.
    fn tree(&self, id: &str) -> Result<BTreeMap<PathBuf, Entry>, CheckpointError> {
        self.commit_exists(id)?;
        let out = self.git.run(&["ls-tree", "-r", "-z", "--full-tree", id])?;
        let mut entries = BTreeMap::new();
        for line in nul_paths(&out) {
            use std::os::unix::ffi::OsStrExt as _;
            let bytes = line.as_os_str().as_bytes();
            // "<mode> <type> <object>\t<path>"
            let Some(tab) = bytes.iter().position(|b| *b == b'\t') else {
                continue;
            };
            let head = String::from_utf8_lossy(&bytes[..tab]);
            let mut parts = head.split(' ');
            let (Some(mode), Some("blob"), Some(object)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue; // a submodule's commit: not ours to restore
            };
            entries.insert(
                PathBuf::from(std::ffi::OsStr::from_bytes(&bytes[tab + 1..])),
                Entry {
                    mode: mode.to_string(),
                    object: object.to_string(),
                },
            );
        }
        Ok(entries)
    }

    /// The contents of these blobs, in order; a missing one means the store is damaged.
    fn read_blobs(&self, objects: &[&str]) -> Result<Vec<Vec<u8>>, CheckpointError> {
        if objects.is_empty() {
            return Ok(Vec::new());
        }
        let input: String = objects.iter().map(|o| format!("{o}\n")).collect();
        let out = self
            .git
            .run_with_input(&os(&["cat-file", "--batch"]), Some(input.as_bytes()))?;
        let mut rest = out.as_slice();
        let mut blobs = Vec::with_capacity(objects.len());
        for object in objects {
            let damaged = || self.corrupt(format!("object {object} cannot be read"));
            let nl = rest.iter().position(|b| *b == b'\n').ok_or_else(damaged)?;
            let header = String::from_utf8_lossy(&rest[..nl]).to_string();
            let mut parts = header.split(' ');
            let (Some(_), Some("blob"), Some(size)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(damaged());
            };
            let size: usize = size.parse().map_err(|_| damaged())?;
            let body = rest.get(nl + 1..nl + 1 + size).ok_or_else(damaged)?;
            blobs.push(body.to_vec());
            rest = rest.get(nl + 2 + size..).unwrap_or_default();
        }
        Ok(blobs)
    }
}
