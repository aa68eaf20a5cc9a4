//! The consolidation lock (seed 001 §16.2.4 ②, `consolidationLock.ts`): `.consolidate-lock`
//! in the memory directory. Its mtime is the last consolidation; its body is the PID of the
//! process that last took it (diagnostics only).
//!
//! Claude Code writes its PID, re-reads it and treats a lock older than an hour or held by a
//! dead PID as stale, so two sessions ending at once can both win. tine's is exact:
//! - An OS advisory lock (`flock`, through std's `File::try_lock`) on the file is held for the
//!   whole dream. The kernel releases it when the process dies, however it dies.
//! - The time gate is checked again under it (on the locked file itself), so a session that
//!   passed the lock-free check just before another's dream finished does not dream again.
//! - The mtime only moves forward on success ([`ConsolidationLock::commit`]). While a dream
//!   runs it keeps the previous consolidation's time, so a dream that fails, is killed or
//!   cancelled, or whose process is SIGKILLed, leaves the next eligible session free to
//!   consolidate. [`ConsolidationLock::rollback`] (and dropping the lock) restores it anyway.
//! - The PID is written without ever showing a fresh mtime: the new body goes into a locked
//!   temporary file whose mtime is set to the previous one, which is then renamed over the
//!   lock. Whoever locked the old inode notices that the path no longer names it and retries.
//!   A missing lock file is created the same way (linked into place, never replacing one).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::MemoryError;

/// The lock file in the memory directory (hidden: the memory forks cannot touch it).
pub(crate) const CONSOLIDATION_LOCK_FILE: &str = ".consolidate-lock";

/// How many times the path may change under an acquirer before it gives up (each change is
/// another process taking the lock, so this is never reached in practice).
const MAX_ATTEMPTS: usize = 16;

/// The last consolidation recorded by a lock file's metadata: its mtime, or none when the file
/// is empty (nothing ever recorded there) or dated at the epoch (created, never committed).
pub fn recorded_consolidation(len: u64, modified: SystemTime) -> Option<SystemTime> {
    (len > 0 && modified > SystemTime::UNIX_EPOCH).then_some(modified)
}

/// How long ago `last` was, as seen at `now` (zero when the clock went backwards).
pub(crate) fn age(last: Option<SystemTime>, now: SystemTime) -> Option<Duration> {
    last.map(|last| now.duration_since(last).unwrap_or(Duration::ZERO))
}

/// The result of [`ConsolidationLock::try_acquire`].
#[derive(Debug)]
pub enum Acquire {
    /// This process consolidates now.
    Acquired(ConsolidationLock),
    /// Another process (or session) is consolidating.
    Held,
    /// Under the lock, the time gate no longer passes: another consolidation just finished.
    Recent {
        /// When the last consolidation finished.
        last: SystemTime,
    },
}

/// The held consolidation lock. Dropping it without [`ConsolidationLock::commit`] rolls back.
#[derive(Debug)]
pub struct ConsolidationLock {
    /// The locked file, which the path names.
    file: File,
    path: PathBuf,
    prior: Option<SystemTime>,
    done: bool,
}

impl ConsolidationLock {
    /// `<dir>/.consolidate-lock`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(CONSOLIDATION_LOCK_FILE)
    }

    /// Takes the lock of memory directory `dir` without waiting, if `due` says the last
    /// consolidation (read from the locked file) is old enough. Blocking: call it off the
    /// async runtime or where a few syscalls are acceptable.
    pub fn try_acquire(
        dir: &Path,
        due: impl Fn(Option<SystemTime>) -> bool,
    ) -> Result<Acquire, MemoryError> {
        let path = Self::path(dir);
        for _ in 0..MAX_ATTEMPTS {
            let file = match OpenOptions::new().read(true).write(true).open(&path) {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    match create_locked(dir, &path)? {
                        Some(file) => {
                            return Ok(Acquire::Acquired(Self {
                                file,
                                path,
                                prior: None,
                                done: false,
                            }));
                        }
                        // Another process created it first: lock that one.
                        None => continue,
                    }
                }
                Err(e) => return Err(MemoryError::io("cannot open the dream lock", &path, e)),
            };
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Ok(Acquire::Held),
                Err(TryLockError::Error(e)) => {
                    return Err(MemoryError::io("cannot lock", &path, e));
                }
            }
            // Locked, but the path may name a newer inode by now (its holder renamed it in).
            if !names_file(&path, &file) {
                continue;
            }
            let meta = file
                .metadata()
                .map_err(|e| MemoryError::io("cannot read the dream lock", &path, e))?;
            let prior = meta
                .modified()
                .ok()
                .and_then(|m| recorded_consolidation(meta.len(), m));
            if !due(prior) {
                return Ok(Acquire::Recent {
                    last: prior.unwrap_or(SystemTime::UNIX_EPOCH),
                });
            }
            let file = replace_locked(dir, &path, prior)?;
            return Ok(Acquire::Acquired(Self {
                file,
                path,
                prior,
                done: false,
            }));
        }
        Ok(Acquire::Held)
    }

    /// The consolidation before this one (what a rollback restores).
    pub fn prior(&self) -> Option<SystemTime> {
        self.prior
    }

    /// The lock file (`<memory>/.consolidate-lock`).
    pub fn file_path(&self) -> &Path {
        &self.path
    }

    /// The dream succeeded: the lock's mtime becomes `now`, the time of this consolidation.
    pub fn commit(mut self, now: SystemTime) -> Result<(), MemoryError> {
        self.done = true;
        self.file
            .set_modified(now)
            .map_err(|e| MemoryError::io("cannot date the dream lock", &self.path, e))
    }

    /// The dream failed or was killed: the mtime stays (is put back to) the previous
    /// consolidation's, so the next eligible session consolidates.
    pub fn rollback(mut self) -> Result<(), MemoryError> {
        self.done = true;
        self.restore()
    }

    fn restore(&self) -> Result<(), MemoryError> {
        self.file
            .set_modified(self.prior.unwrap_or(SystemTime::UNIX_EPOCH))
            .map_err(|e| MemoryError::io("cannot roll back the dream lock", &self.path, e))
    }
}

impl Drop for ConsolidationLock {
    fn drop(&mut self) {
        if !self.done
            && let Err(error) = self.restore()
        {
            tracing::warn!(%error, "dream lock rollback failed");
        }
    }
}

/// Whether `path` names the same inode as the open `file`.
#[cfg(unix)]
fn names_file(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn names_file(path: &Path, _file: &File) -> bool {
    path.exists()
}

/// A new lock body (this PID) in a locked temporary file of `dir`, dated `mtime`.
fn locked_body(
    dir: &Path,
    mtime: Option<SystemTime>,
) -> Result<tempfile::NamedTempFile, MemoryError> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".consolidate-lock.")
        .tempfile_in(dir)
        .map_err(|e| MemoryError::io("cannot create the dream lock in", dir, e))?;
    let io = |e| MemoryError::io("cannot write the dream lock in", dir, e);
    // Nobody else knows this inode yet: the lock is free.
    tmp.as_file().try_lock().map_err(|e| match e {
        TryLockError::Error(e) => io(e),
        TryLockError::WouldBlock => io(std::io::Error::other("a fresh file is locked")),
    })?;
    writeln!(tmp.as_file_mut(), "{}", std::process::id()).map_err(io)?;
    tmp.as_file()
        .set_modified(mtime.unwrap_or(SystemTime::UNIX_EPOCH))
        .map_err(io)?;
    Ok(tmp)
}

/// Creates the missing lock file, locked, with this PID and no recorded consolidation.
/// `None` when another process created it first.
fn create_locked(dir: &Path, path: &Path) -> Result<Option<File>, MemoryError> {
    tine_config::private_fs::create_dir_all(dir)
        .map_err(|e| MemoryError::io("cannot create the memory directory", dir, e))?;
    let tmp = locked_body(dir, None)?;
    match tmp.persist_noclobber(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
        Err(e) => Err(MemoryError::io(
            "cannot create the dream lock",
            path,
            e.error,
        )),
    }
}

/// Puts a new locked body (this PID, dated `prior`) in place of the locked lock file; the
/// caller drops the old one afterwards.
fn replace_locked(dir: &Path, path: &Path, prior: Option<SystemTime>) -> Result<File, MemoryError> {
    locked_body(dir, prior)?
        .persist(path)
        .map_err(|e| MemoryError::io("cannot replace the dream lock", path, e.error))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due_always(_: Option<SystemTime>) -> bool {
        true
    }

    #[test]
    fn a_held_lock_is_refused_and_a_dropped_one_rolls_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let Acquire::Acquired(first) = ConsolidationLock::try_acquire(dir, due_always).unwrap()
        else {
            panic!("the first acquire must win");
        };
        assert_eq!(first.prior(), None);
        let body = std::fs::read_to_string(ConsolidationLock::path(dir)).unwrap();
        assert_eq!(body.trim(), std::process::id().to_string());
        assert!(matches!(
            ConsolidationLock::try_acquire(dir, due_always).unwrap(),
            Acquire::Held
        ));
        drop(first);
        let meta = std::fs::metadata(ConsolidationLock::path(dir)).unwrap();
        assert_eq!(
            recorded_consolidation(meta.len(), meta.modified().unwrap()),
            None
        );

        let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let Acquire::Acquired(second) = ConsolidationLock::try_acquire(dir, due_always).unwrap()
        else {
            panic!("released");
        };
        second.commit(when).unwrap();
        let meta = std::fs::metadata(ConsolidationLock::path(dir)).unwrap();
        assert_eq!(meta.modified().unwrap(), when);

        // Under the lock the gate is asked about the committed time, and may refuse.
        match ConsolidationLock::try_acquire(dir, |last| last != Some(when)).unwrap() {
            Acquire::Recent { last } => assert_eq!(last, when),
            other => panic!("{other:?}"),
        }
        let Acquire::Acquired(third) = ConsolidationLock::try_acquire(dir, due_always).unwrap()
        else {
            panic!("free again");
        };
        assert_eq!(third.prior(), Some(when));
        // Taking it did not move the mtime; rolling back keeps it.
        let meta = std::fs::metadata(ConsolidationLock::path(dir)).unwrap();
        assert_eq!(meta.modified().unwrap(), when);
        third.rollback().unwrap();
        let meta = std::fs::metadata(ConsolidationLock::path(dir)).unwrap();
        assert_eq!(meta.modified().unwrap(), when);
        let leftovers: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != CONSOLIDATION_LOCK_FILE)
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn an_empty_or_epoch_lock_records_nothing() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(5);
        assert_eq!(recorded_consolidation(0, t), None);
        assert_eq!(recorded_consolidation(6, SystemTime::UNIX_EPOCH), None);
        assert_eq!(recorded_consolidation(6, t), Some(t));
        assert_eq!(
            age(Some(t + Duration::from_secs(9)), t),
            Some(Duration::ZERO)
        );
    }
}
