//! The shadow repository of one project: opening it, taking a snapshot of the work tree, and
//! comparing two snapshots.
//!
//! A snapshot is a parentless commit of the work tree's tree. Each is kept reachable by a ref of
//! its own (`refs/tine/snap/<id>`), and the latest by `refs/tine/snapshots`, so git never drops
//! one that a session still needs, and [`Checkpoints::prune`] can free a whole old session by
//! deleting its refs (a chain of parents would keep every older snapshot alive).

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::CheckpointError;
use crate::git::{Git, looks_like_git_dir, nul_joined, nul_paths};

/// The ref of the latest snapshot.
pub(crate) const LATEST: &str = "refs/tine/snapshots";
/// The prefix of each snapshot's own ref.
pub(crate) const SNAP_PREFIX: &str = "refs/tine/snap/";

/// How much the store may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointConfig {
    /// Files bigger than this are not recorded (and are listed in [`Snapshot::skipped`]).
    pub max_file_bytes: u64,
    /// Past this size of the store, [`Checkpoints::prune`] compacts it.
    pub max_bytes: u64,
    /// Sessions older than this many days are forgotten by [`Checkpoints::prune`].
    pub keep_days: u32,
}

impl Default for CheckpointConfig {
    fn default() -> Self {
        CheckpointConfig {
            max_file_bytes: 10 * 1024 * 1024,
            max_bytes: 500 * 1024 * 1024,
            keep_days: 30,
        }
    }
}

/// The state of the work tree at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Snapshot {
    /// The snapshot's commit in the shadow repository.
    pub id: String,
    /// Paths (relative to the project) that were not recorded: files over
    /// [`CheckpointConfig::max_file_bytes`], and nested git repositories.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<PathBuf>,
}

/// The checkpoint store of one project.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    pub(crate) git: Git,
    pub(crate) config: CheckpointConfig,
}

impl Checkpoints {
    /// Opens the store at `store` for the project at `project`, creating it (0700) if it does not
    /// exist. A store git cannot use is [`CheckpointError::Corrupt`].
    pub fn open(
        store: &Path,
        project: &Path,
        config: CheckpointConfig,
    ) -> Result<Checkpoints, CheckpointError> {
        let this = Checkpoints::new(store, project, config)?;
        if this.git.git_dir.exists() {
            this.verify()?;
        } else {
            tine_config::private_fs::create_dir_all(&this.git.git_dir)
                .map_err(CheckpointError::io("create", &this.git.git_dir))?;
            // Owner-only, as everything tine keeps: git makes what it adds later 0600/0700.
            // No template: no sample hooks, no description (nothing runs, nothing to leak).
            this.git
                .run(&["init", "-q", "--shared=0600", "--template="])?;
            // The work tree is given on every call; the project may move.
            this.git.run(&["config", "--unset", "core.worktree"]).ok();
            this.exclude_own_store()?;
        }
        tighten_all(store);
        Ok(this)
    }

    /// Opens a store that must already exist (for a rewind): a missing one is
    /// [`CheckpointError::Missing`], and nothing is created.
    pub fn open_existing(
        store: &Path,
        project: &Path,
        config: CheckpointConfig,
    ) -> Result<Checkpoints, CheckpointError> {
        let this = Checkpoints::new(store, project, config)?;
        if !this.git.git_dir.exists() {
            return Err(CheckpointError::Missing(store.to_path_buf()));
        }
        this.verify()?;
        Ok(this)
    }

    fn new(
        store: &Path,
        project: &Path,
        config: CheckpointConfig,
    ) -> Result<Checkpoints, CheckpointError> {
        let work_tree = project
            .canonicalize()
            .map_err(CheckpointError::io("open the project", project))?;
        Ok(Checkpoints {
            git: Git {
                git_dir: store.join("git"),
                work_tree,
                store: store.to_path_buf(),
            },
            config,
        })
    }

    fn verify(&self) -> Result<(), CheckpointError> {
        let dir = &self.git.git_dir;
        let usable =
            looks_like_git_dir(dir) && self.git.try_text(&["rev-parse", "--git-dir"])?.is_some();
        if usable {
            Ok(())
        } else {
            Err(self.corrupt(format!("{} is not a git directory", dir.display())))
        }
    }

    /// A store inside the project (a `TINE_HOME` there) must not record itself.
    fn exclude_own_store(&self) -> Result<(), CheckpointError> {
        let store = self.git.store.canonicalize();
        let Some(rel) = store
            .as_deref()
            .ok()
            .and_then(|s| s.strip_prefix(&self.git.work_tree).ok())
        else {
            return Ok(());
        };
        let mut pattern = String::from("/");
        for c in rel.to_string_lossy().chars() {
            if matches!(c, '\\' | '*' | '?' | '[' | ' ' | '!' | '#') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        let file = self.git.git_dir.join("info/exclude");
        tine_config::private_fs::write_atomic(&file, format!("{pattern}/\n").as_bytes())
            .map_err(CheckpointError::io("write", &file))
    }

    pub(crate) fn corrupt(&self, detail: String) -> CheckpointError {
        CheckpointError::Corrupt {
            store: self.git.store.clone(),
            detail,
        }
    }

    /// The project (canonical) whose work tree this store records.
    pub fn project(&self) -> &Path {
        &self.git.work_tree
    }

    /// The store directory.
    pub fn store(&self) -> &Path {
        &self.git.store
    }

    /// Records the work tree as it is now. Only what changed since the last snapshot is read
    /// (the shadow index's stat cache); when nothing did, the last snapshot is returned and no
    /// object is written.
    pub fn snapshot(&self) -> Result<Snapshot, CheckpointError> {
        // Two tine processes in one project share the shadow index: wait out the other's lock.
        let mut tries = 0;
        loop {
            match self.snapshot_once() {
                Err(CheckpointError::Git { stderr, .. })
                    if stderr.contains("index.lock") && tries < 20 =>
                {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                other => return other,
            }
        }
    }

    fn snapshot_once(&self) -> Result<Snapshot, CheckpointError> {
        // `-t` tags each path: `?` untracked, `C` changed, `R` removed (both `-m` and `-d`
        // list a removed file, hence the set).
        let listed = self.git.run(&[
            "ls-files",
            "-z",
            "-t",
            "--others",
            "--modified",
            "--deleted",
            "--exclude-standard",
        ])?;
        let mut add = BTreeSet::new();
        let mut drop = BTreeSet::new();
        let mut skipped = BTreeSet::new();
        for entry in nul_paths(&listed) {
            use std::os::unix::ffi::OsStrExt as _;
            let bytes = entry.as_os_str().as_bytes();
            let (tag, path) = match bytes {
                [tag, b' ', rest @ ..] => (*tag, PathBuf::from(OsStr::from_bytes(rest))),
                _ => continue,
            };
            if tag == b'R' {
                // Gone, or now behind a symbolic link (which `git add` refuses to follow).
                add.remove(&path);
                drop.insert(path);
                continue;
            }
            if drop.contains(&path) {
                continue;
            }
            if behind_link(&self.git.work_tree, &path) {
                drop.insert(path);
                continue;
            }
            match std::fs::symlink_metadata(self.git.work_tree.join(&path)) {
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    drop.insert(path);
                }
                // A nested repository (`sub/`): its files are its own git's business.
                Ok(meta) if meta.is_dir() => {
                    skipped.insert(path);
                }
                Ok(meta) if meta.is_file() && meta.len() > self.config.max_file_bytes => {
                    if tag != b'?' {
                        drop.insert(path.clone());
                    }
                    skipped.insert(path);
                }
                _ => {
                    add.insert(path);
                }
            }
        }
        if !drop.is_empty() {
            let drop: Vec<PathBuf> = drop.into_iter().collect();
            self.git.run_with_input(
                &os(&["update-index", "-z", "--force-remove", "--stdin"]),
                Some(&nul_joined(&drop)),
            )?;
        }
        let add: Vec<PathBuf> = add.into_iter().collect();
        if !add.is_empty() {
            self.git.run_with_input(
                &os(&["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"]),
                Some(&nul_joined(&add)),
            )?;
        }
        let tree = self.git.text(&["write-tree"])?;
        let skipped: Vec<PathBuf> = skipped.into_iter().collect();
        if let Some(latest) = self.latest()?
            && latest.1 == tree
        {
            return Ok(Snapshot {
                id: latest.0,
                skipped,
            });
        }
        let id = self
            .git
            .text(&["commit-tree", &tree, "-m", "tine checkpoint"])?;
        let refs = format!("update {LATEST} {id}\nupdate {SNAP_PREFIX}{id} {id}\n");
        self.git
            .run_with_input(&os(&["update-ref", "--stdin"]), Some(refs.as_bytes()))?;
        tracing::debug!(%id, added = add.len(), "checkpoints: snapshot");
        Ok(Snapshot { id, skipped })
    }

    /// The latest snapshot's commit and tree.
    fn latest(&self) -> Result<Option<(String, String)>, CheckpointError> {
        let commit = format!("{LATEST}^{{commit}}");
        let tree = format!("{LATEST}^{{tree}}");
        let Some(out) = self.git.try_text(&["rev-parse", &commit, &tree, "--"])? else {
            return Ok(None);
        };
        let mut lines = out.lines();
        Ok(match (lines.next(), lines.next()) {
            (Some(commit), Some(tree)) => Some((commit.to_string(), tree.to_string())),
            _ => None,
        })
    }

    /// The paths (relative to the project) that differ between two snapshots: added, modified
    /// or deleted; a moved file is its two paths.
    pub fn changed(&self, from: &Snapshot, to: &Snapshot) -> Result<Vec<PathBuf>, CheckpointError> {
        self.changed_ids(&from.id, &to.id)
    }

    pub(crate) fn changed_ids(
        &self,
        from: &str,
        to: &str,
    ) -> Result<Vec<PathBuf>, CheckpointError> {
        if from == to {
            return Ok(Vec::new());
        }
        self.commit_exists(from)?;
        self.commit_exists(to)?;
        let out = self.git.run(&[
            "diff-tree",
            "-r",
            "--no-renames",
            "--name-only",
            "-z",
            "--no-commit-id",
            from,
            to,
        ])?;
        Ok(nul_paths(&out))
    }

    /// A clear error when `id` is not a snapshot of this store.
    pub(crate) fn commit_exists(&self, id: &str) -> Result<(), CheckpointError> {
        let well_formed = id.len() >= 40 && id.bytes().all(|b| b.is_ascii_hexdigit());
        let found = well_formed
            && self
                .git
                .try_text(&["cat-file", "-e", &format!("{id}^{{commit}}")])?
                .is_some();
        if found {
            Ok(())
        } else {
            Err(self.corrupt(format!("snapshot {id} is not in it")))
        }
    }
}

/// Whether a directory on `path`'s way from `root` is a symbolic link: what lies behind it is
/// not the project's (git refuses to add it).
fn behind_link(root: &Path, path: &Path) -> bool {
    let mut dir = root.to_path_buf();
    let Some(parent) = path.parent() else {
        return false;
    };
    parent.components().any(|c| {
        dir.push(c);
        std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink())
    })
}

pub(crate) fn os<'a>(args: &[&'a str]) -> Vec<&'a OsStr> {
    args.iter().map(|a| OsStr::new(*a)).collect()
}

/// Makes the store and everything in it owner-only (what git or an older tine left looser).
fn tighten_all(dir: &Path) {
    let _ = tine_config::private_fs::tighten_dir(dir);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => tighten_all(&path),
            Ok(kind) if kind.is_file() => {
                let _ = tine_config::private_fs::tighten_file(&path);
            }
            _ => {}
        }
    }
}
