//! A session's checkpoints on disk (`<store>/sessions/<session-id>.json`, 0600, replaced
//! atomically), so a rewind from another process (`tine rewind N`, the SDK's `rewind_files`)
//! finds each prompt's snapshots; and the pruning of old sessions.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::CheckpointError;
use crate::rewind::TurnSnapshots;
use crate::store::{Checkpoints, SNAP_PREFIX, Snapshot, os};

/// How much of a prompt's text a record keeps.
const TEXT_CHARS: usize = 200;

/// One prompt's checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptCheckpoint {
    /// The prompt's number in the session, from 1.
    pub prompt: usize,
    /// The user message's uuid in the transcript.
    pub uuid: String,
    /// The prompt's text (its first 200 characters).
    pub text: String,
    /// When the checkpoint was taken, in unix seconds.
    pub at: u64,
    /// The work tree before the prompt's first change.
    pub before: Snapshot,
    /// The work tree when the prompt's turn ended (none while it runs, or if it never ended).
    pub after: Option<Snapshot>,
}

/// A session's checkpoints, oldest prompt first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionCheckpoints {
    /// The session's id.
    pub session: String,
    /// The prompts that changed files (a prompt that only read has none).
    pub prompts: Vec<PromptCheckpoint>,
}

/// What [`Checkpoints::prune`] dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PruneReport {
    /// The sessions forgotten.
    pub sessions: Vec<String>,
    /// How many snapshots were let go.
    pub snapshots: usize,
    /// Whether the store was compacted (`git gc`) for being over its size bound.
    pub compacted: bool,
}

fn record_path(store: &Path, session: &str) -> Result<PathBuf, CheckpointError> {
    let valid = !session.is_empty()
        && session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !valid {
        return Err(CheckpointError::BadSessionId(session.to_string()));
    }
    Ok(store.join("sessions").join(format!("{session}.json")))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl SessionCheckpoints {
    /// An empty record for `session`.
    pub fn new(session: &str) -> SessionCheckpoints {
        SessionCheckpoints {
            session: session.to_string(),
            prompts: Vec::new(),
        }
    }

    /// The record of `session` in `store`; `None` if the session has none.
    pub fn load(
        store: &Path,
        session: &str,
    ) -> Result<Option<SessionCheckpoints>, CheckpointError> {
        let path = record_path(store, session)?;
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(CheckpointError::Io {
                    action: "read",
                    path,
                    source: e,
                });
            }
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| CheckpointError::BadRecord {
                path,
                detail: e.to_string(),
            })
    }

    /// Writes the record to `store` (0600, atomically).
    pub fn save(&self, store: &Path) -> Result<(), CheckpointError> {
        let path = record_path(store, &self.session)?;
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| CheckpointError::BadRecord {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        tine_config::private_fs::write_atomic(&path, &bytes)
            .map_err(CheckpointError::io("write", &path))
    }

    /// Records prompt `prompt`'s checkpoint before its first change (replacing one recorded
    /// for the same prompt number).
    pub fn record_before(&mut self, prompt: usize, uuid: &str, text: &str, snapshot: Snapshot) {
        self.prompts.retain(|p| p.prompt != prompt);
        self.prompts.push(PromptCheckpoint {
            prompt,
            uuid: uuid.to_string(),
            text: text.chars().take(TEXT_CHARS).collect(),
            at: unix_now(),
            before: snapshot,
            after: None,
        });
        self.prompts.sort_by_key(|p| p.prompt);
    }

    /// Records the work tree at the end of prompt `prompt`'s turn; `false` if that prompt has no
    /// checkpoint.
    pub fn record_after(&mut self, prompt: usize, snapshot: Snapshot) -> bool {
        match self.prompts.iter_mut().find(|p| p.prompt == prompt) {
            Some(p) => {
                p.after = Some(snapshot);
                true
            }
            None => false,
        }
    }

    /// The index in [`SessionCheckpoints::prompts`] (and in [`Checkpoints::turns`]) of the
    /// checkpoint of prompt number `prompt`.
    pub fn index_of_prompt(&self, prompt: usize) -> Option<usize> {
        self.prompts.iter().position(|p| p.prompt == prompt)
    }

    /// The index of the checkpoint of the user message `uuid`.
    pub fn index_of_uuid(&self, uuid: &str) -> Option<usize> {
        self.prompts.iter().position(|p| p.uuid == uuid)
    }
}

impl Checkpoints {
    /// A session's prompts as turns for [`Checkpoints::plan_rewind`]. A turn that never ended
    /// counts as ending where the next one began, or, for the last, at the work tree now (a
    /// snapshot is taken), so what it changed is still rewound.
    pub fn turns(
        &self,
        record: &SessionCheckpoints,
    ) -> Result<Vec<TurnSnapshots>, CheckpointError> {
        let mut turns = Vec::with_capacity(record.prompts.len());
        for (k, p) in record.prompts.iter().enumerate() {
            let after = match (&p.after, record.prompts.get(k + 1)) {
                (Some(after), _) => after.clone(),
                (None, Some(next)) => next.before.clone(),
                (None, None) => self.snapshot()?,
            };
            turns.push(TurnSnapshots {
                before: p.before.clone(),
                after,
            });
        }
        Ok(turns)
    }

    /// Forgets sessions whose record is older than `keep_days`, with the snapshots only they
    /// needed (and snapshots no session recorded, once older than `keep_days`), then compacts
    /// the store with `git gc` if it is over `max_bytes`.
    pub fn prune(&self, keep_days: u32, max_bytes: u64) -> Result<PruneReport, CheckpointError> {
        let store = self.git.store.clone();
        let cutoff = SystemTime::now()
            .checked_sub(Duration::from_secs(u64::from(keep_days) * 86_400))
            .unwrap_or(UNIX_EPOCH);
        let mut report = PruneReport::default();
        let mut kept = BTreeSet::new();
        let mut dropped = BTreeSet::new();
        let dir = store.join("sessions");
        let listing = match std::fs::read_dir(&dir) {
            Ok(listing) => listing.flatten().collect::<Vec<_>>(),
            Err(_) => Vec::new(),
        };
        for entry in listing {
            let path = entry.path();
            let Some(id) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
            else {
                continue;
            };
            let modified = entry.metadata().and_then(|m| m.modified()).ok();
            let old = modified.is_some_and(|m| m < cutoff);
            // A record that cannot be read keeps every snapshot (it may be a newer format).
            let record = match SessionCheckpoints::load(&store, id) {
                Ok(record) => record,
                Err(e) if !old => {
                    tracing::warn!(error = %e, "checkpoints: prune keeps every snapshot");
                    return Ok(report);
                }
                Err(_) => None,
            };
            let ids = record
                .into_iter()
                .flat_map(|r| r.prompts)
                .flat_map(|p| std::iter::once(p.before.id).chain(p.after.map(|a| a.id)));
            if old {
                dropped.extend(ids);
                std::fs::remove_file(&path).map_err(CheckpointError::io("remove", &path))?;
                report.sessions.push(id.to_string());
            } else {
                kept.extend(ids);
            }
        }
        let cutoff_secs = cutoff.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let refs = self.git.text(&[
            "for-each-ref",
            "--format=%(refname) %(committerdate:unix)",
            SNAP_PREFIX,
        ])?;
        let mut deletes = String::new();
        for line in refs.lines() {
            let mut parts = line.split(' ');
            let (Some(name), Some(when)) = (parts.next(), parts.next()) else {
                continue;
            };
            let id = name.trim_start_matches(SNAP_PREFIX);
            // A snapshot no session recorded (its session never saved) goes once it is old.
            let orphan_and_old = when.parse::<u64>().is_ok_and(|w| w < cutoff_secs);
            if (dropped.contains(id) || orphan_and_old) && !kept.contains(id) {
                deletes.push_str(&format!("delete {name}\n"));
                report.snapshots += 1;
            }
        }
        if !deletes.is_empty() {
            self.git
                .run_with_input(&os(&["update-ref", "--stdin"]), Some(deletes.as_bytes()))?;
        }
        if dir_size(&self.git.git_dir) > max_bytes {
            // Not `--prune=now`: another tine in this project may be between writing a
            // snapshot's objects and its ref; an hour covers that, and what prune let go
            // is older than `keep_days`.
            self.git.run(&["gc", "-q", "--prune=1.hour.ago"])?;
            report.compacted = true;
        }
        Ok(report)
    }
}

/// The bytes of every file under `dir`.
pub(crate) fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(entry.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}
