//! The file-state cache: what this session last read of each file (content hash, mtime, when),
//! so Edit and Write can refuse a file the model never saw, or one that changed on disk since.
//!
//! It is an LRU of [`FILE_STATE_CAPACITY`] files. `Clone` gives an independent copy, which is
//! what a fork gets (seed 000 §四): a fork may read and edit without touching the parent's view.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use lru::LruCache;
use sha2::{Digest, Sha256};

/// How many files the cache remembers before it forgets the least recently used.
pub const FILE_STATE_CAPACITY: usize = 100;

/// What the cache knows about one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    /// SHA-256 of the whole file's bytes as last read or written by a tool.
    pub content_hash: [u8; 32],
    /// The file's modification time at that moment (None where the platform has none).
    pub mtime: Option<SystemTime>,
    /// When the tool read (or wrote) it.
    pub read_at: SystemTime,
}

/// Why a write to a file is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Staleness {
    /// The file was never read in this session.
    #[error("{} has not been read yet; read it first before writing to it", .0.display())]
    NeverRead(PathBuf),
    /// The file changed on disk after it was read.
    #[error("{} was modified since read — read it again before writing to it", .0.display())]
    ModifiedSinceRead(PathBuf),
}

/// The per-session cache. Methods take `&self` so one cache is shared by every tool call of a
/// session (behind an `Arc` in [`crate::ToolContext`]); `Clone` copies the contents.
#[derive(Debug)]
pub struct FileStateCache {
    entries: Mutex<LruCache<PathBuf, FileState>>,
}

impl FileStateCache {
    /// An empty cache of [`FILE_STATE_CAPACITY`] files.
    pub fn new() -> Self {
        Self::with_capacity(FILE_STATE_CAPACITY)
    }

    /// An empty cache of `capacity` files (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        Self {
            entries: Mutex::new(LruCache::new(capacity)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, LruCache<PathBuf, FileState>> {
        // A panic while holding this lock cannot leave the map half-updated (single calls).
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that a tool read (or wrote) `path` whose full contents are `content`.
    pub fn record(&self, path: &Path, content: &[u8], mtime: Option<SystemTime>) {
        self.record_hash(path, hash_content(content), mtime);
    }

    /// [`Self::record`] for a tool that hashed the whole file ([`hash_content`]) as it streamed
    /// it, without holding it.
    pub fn record_hash(&self, path: &Path, content_hash: [u8; 32], mtime: Option<SystemTime>) {
        let state = FileState {
            content_hash,
            mtime,
            read_at: SystemTime::now(),
        };
        self.lock().put(path.to_path_buf(), state);
    }

    /// What the cache knows about `path`, without refreshing its place in the LRU order.
    pub fn get(&self, path: &Path) -> Option<FileState> {
        self.lock().peek(path).cloned()
    }

    /// Whether `path` is remembered.
    pub fn contains(&self, path: &Path) -> bool {
        self.lock().contains(path)
    }

    /// Forgets `path`.
    pub fn forget(&self, path: &Path) {
        self.lock().pop(path);
    }

    /// How many files are remembered.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every remembered path, most recently used first.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.lock().iter().map(|(path, _)| path.clone()).collect()
    }

    /// Checks that `path`, whose current contents on disk are `content` with `mtime`, is the
    /// file the model last saw. The bytes decide, not the mtime: a `touch` or a checkout of the
    /// same content stays fresh, and a change within the filesystem's mtime granularity does not.
    pub fn check_fresh(
        &self,
        path: &Path,
        content: &[u8],
        mtime: Option<SystemTime>,
    ) -> Result<(), Staleness> {
        let mut entries = self.lock();
        let Some(state) = entries.get_mut(path) else {
            return Err(Staleness::NeverRead(path.to_path_buf()));
        };
        if state.content_hash == hash_content(content) {
            state.mtime = mtime;
            return Ok(());
        }
        Err(Staleness::ModifiedSinceRead(path.to_path_buf()))
    }
}

impl Default for FileStateCache {
    fn default() -> Self {
        Self::new()
    }
}

impl Clone for FileStateCache {
    /// An independent copy: later reads in either copy are invisible to the other.
    fn clone(&self) -> Self {
        Self {
            entries: Mutex::new(self.lock().clone()),
        }
    }
}

/// SHA-256 of `content`.
pub fn hash_content(content: &[u8]) -> [u8; 32] {
    Sha256::digest(content).into()
}
