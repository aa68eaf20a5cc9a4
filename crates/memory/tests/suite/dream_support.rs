//! What the dream suites share: a clock and filesystem probe that counts what the gates cost,
//! sessions of the project on disk, a lock dated at will, and a dream job on them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tine_config::{SessionId, project_dir};
use tine_memory::{
    Acquire, ConsolidationLock, DreamIo, DreamJob, DreamOptions, FileStamp, ScanThrottle, SystemIo,
};

use super::harness::World;

/// The real filesystem and a clock the test moves, counting every `stat` and directory scan
/// the gates make (they read metadata only through it).
pub(super) struct Probe {
    now: Mutex<SystemTime>,
    stats: AtomicUsize,
    scans: AtomicUsize,
}

impl Probe {
    pub(super) fn at(now: SystemTime) -> Arc<Self> {
        Arc::new(Self {
            now: Mutex::new(now),
            stats: AtomicUsize::new(0),
            scans: AtomicUsize::new(0),
        })
    }

    pub(super) fn advance(&self, by: Duration) {
        *self.now.lock().unwrap() += by;
    }

    pub(super) fn now(&self) -> SystemTime {
        *self.now.lock().unwrap()
    }

    /// (stats, scans) so far.
    pub(super) fn counts(&self) -> (usize, usize) {
        (
            self.stats.load(Ordering::SeqCst),
            self.scans.load(Ordering::SeqCst),
        )
    }
}

impl DreamIo for Probe {
    fn now(&self) -> SystemTime {
        Probe::now(self)
    }

    fn stat(&self, path: &Path) -> std::io::Result<FileStamp> {
        self.stats.fetch_add(1, Ordering::SeqCst);
        SystemIo.stat(path)
    }

    fn scan_dir(&self, dir: &Path) -> std::io::Result<Vec<(String, FileStamp)>> {
        self.scans.fetch_add(1, Ordering::SeqCst);
        SystemIo.scan_dir(dir)
    }
}

/// The project's transcripts directory.
pub(super) fn transcripts(world: &World) -> PathBuf {
    project_dir(&world.home, &world.cwd)
}

/// `n` past sessions of the project, their transcripts last touched at `when`.
pub(super) fn past_sessions(world: &World, n: usize, when: SystemTime) -> Vec<String> {
    let dir = transcripts(world);
    std::fs::create_dir_all(&dir).unwrap();
    (0..n)
        .map(|i| {
            let id = SessionId::new_random().to_string();
            let path = dir.join(format!("{id}.jsonl"));
            std::fs::write(
                &path,
                format!(
                    "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"past session {i}: we switched from Jest to Vitest\"}}}}\n"
                ),
            )
            .unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(when).unwrap();
            id
        })
        .collect()
}

/// Records a consolidation at `when` the way a dream does (lock, commit).
pub(super) fn consolidated_at(mem: &Path, when: SystemTime) {
    match ConsolidationLock::try_acquire(mem, |_| true).unwrap() {
        Acquire::Acquired(lock) => lock.commit(when).unwrap(),
        other => panic!("{other:?}"),
    }
}

/// The lock file's mtime.
pub(super) fn lock_mtime(mem: &Path) -> SystemTime {
    std::fs::metadata(ConsolidationLock::path(mem))
        .unwrap()
        .modified()
        .unwrap()
}

/// A dream job of `world` reading time and metadata through `probe`, with its own throttle.
pub(super) fn dream_job(world: &World, probe: &Arc<Probe>) -> Arc<DreamJob> {
    Arc::new(
        DreamJob::with_io(
            world.memory.clone(),
            DreamOptions::default(),
            Arc::clone(probe) as Arc<dyn DreamIo>,
            ScanThrottle::new(),
        )
        .unwrap(),
    )
}
