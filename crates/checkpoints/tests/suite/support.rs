//! A project and its store in a temporary directory, and the user's own `git`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use tine_checkpoints::{CheckpointConfig, Checkpoints, Snapshot, TurnSnapshots};

pub(crate) struct Fixture {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) project: PathBuf,
    pub(crate) store: PathBuf,
    pub(crate) outside: PathBuf,
    pub(crate) cp: Checkpoints,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        Fixture::with(CheckpointConfig::default())
    }

    pub(crate) fn with(config: CheckpointConfig) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let store = dir.path().join("home/projects/p/checkpoints");
        let cp = Checkpoints::open(&store, &project, config).unwrap();
        Fixture {
            _dir: dir,
            project,
            store,
            outside,
            cp,
        }
    }

    pub(crate) fn write(&self, rel: &str, text: &str) {
        let path = self.project.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub(crate) fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.project.join(rel)).ok()
    }

    pub(crate) fn remove(&self, rel: &str) {
        std::fs::remove_file(self.project.join(rel)).unwrap();
    }

    pub(crate) fn snap(&self) -> Snapshot {
        self.cp.snapshot().unwrap()
    }

    /// One turn: a snapshot, the session's changes, a snapshot.
    pub(crate) fn turn(&self, change: impl FnOnce(&Fixture)) -> TurnSnapshots {
        let before = self.snap();
        change(self);
        TurnSnapshots {
            before,
            after: self.snap(),
        }
    }

    /// Every file of the project, with its content (`.git` included).
    pub(crate) fn files(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        tree_bytes(&self.project)
    }

    /// The shadow repository's object count (loose and packed).
    pub(crate) fn object_count(&self) -> u64 {
        let out = shadow_git(&self.store, &self.project, &["count-objects", "-v"]);
        out.lines()
            .filter_map(|l| {
                let (k, v) = l.split_once(": ")?;
                matches!(k, "count" | "in-pack").then(|| v.parse::<u64>().ok())?
            })
            .sum()
    }
}

/// Every file under `root` (links as their target), by path relative to `root`.
pub(crate) fn tree_bytes(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, target.into_os_string().into_encoded_bytes());
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn clean_git() -> Command {
    let mut cmd = Command::new("git");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["-c", "user.name=Person", "-c", "user.email=p@example.com"])
        .args(["-c", "commit.gpgsign=false"]);
    cmd
}

/// The person's own `git` in their project.
pub(crate) fn user_git(project: &Path, args: &[&str]) -> String {
    let out = clean_git()
        .current_dir(project)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `git` on the shadow repository, to look inside it.
pub(crate) fn shadow_git(store: &Path, project: &Path, args: &[&str]) -> String {
    let out = clean_git()
        .env("GIT_DIR", store.join("git"))
        .env("GIT_WORK_TREE", project)
        .current_dir(project)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn paths(list: &[&str]) -> Vec<PathBuf> {
    list.iter().map(PathBuf::from).collect()
}
