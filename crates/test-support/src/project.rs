//! A scratch project: a tine home and a project directory under one temporary root.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// `root/home` (`TINE_HOME`) and `root/project` (the cwd), canonical as tine stores them
/// (transcript folders are named after the cwd); all deleted on drop.
pub struct ScratchProject {
    _root: TempDir,
    root: PathBuf,
    home: PathBuf,
    cwd: PathBuf,
}

impl ScratchProject {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        let cwd = root.join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        Self {
            _root: dir,
            root,
            home,
            cwd,
        }
    }

    /// The temporary root holding both (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Writes `rel` under the project, creating directories.
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let path = self.cwd.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, content).unwrap();
        path
    }

    /// Files under `dir`, relative, sorted (hidden ones included).
    pub fn files_under(dir: &Path) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if e.file_type().unwrap().is_dir() {
                    walk(root, &p, out);
                } else {
                    out.push(p.strip_prefix(root).unwrap().display().to_string());
                }
            }
        }
        let mut out = Vec::new();
        walk(dir, dir, &mut out);
        out.sort();
        out
    }
}

impl Default for ScratchProject {
    fn default() -> Self {
        Self::new()
    }
}
