//! Workspace trust: the folders a person said they trust, in `$TINE_HOME/trust.json` (0600).
//! A folder is trusted when it or a parent folder is listed, as in Claude Code. The
//! interactive UI asks on the first start in a folder that is not; headless `-p`, the Agent
//! SDK and editors over ACP decide for themselves (the caller chose to run tine there).

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::private_fs;

/// The file's shape.
#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    /// Canonical paths of trusted folders.
    #[serde(default)]
    trusted: Vec<PathBuf>,
}

/// Where the trusted folders are kept.
pub fn trust_file(home: &Path) -> PathBuf {
    home.join("trust.json")
}

fn read(home: &Path) -> TrustFile {
    std::fs::read(trust_file(home))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Whether `dir` (or a folder above it) is trusted. A file that cannot be read trusts
/// nothing.
pub fn is_trusted(home: &Path, dir: &Path) -> bool {
    let dir = canonical(dir);
    read(home)
        .trusted
        .iter()
        .any(|trusted| dir.starts_with(trusted))
}

/// Remembers that `dir` is trusted (written atomically, 0600).
pub fn trust(home: &Path, dir: &Path) -> io::Result<()> {
    let mut file = read(home);
    let dir = canonical(dir);
    if !file.trusted.contains(&dir) {
        file.trusted.push(dir);
    }
    private_fs::create_dir_all(home)?;
    let bytes = serde_json::to_vec_pretty(&file).map_err(io::Error::other)?;
    private_fs::write_atomic(&trust_file(home), &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trusted_folder_trusts_its_subfolders_and_not_its_siblings() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let project = root.path().join("work/project");
        let sibling = root.path().join("work/other");
        for dir in [&project, &sibling] {
            std::fs::create_dir_all(dir.join("sub")).unwrap();
        }
        assert!(!is_trusted(&home, &project));
        trust(&home, &project).unwrap();
        assert!(is_trusted(&home, &project));
        assert!(is_trusted(&home, &project.join("sub")));
        assert!(!is_trusted(&home, &sibling));
        trust(&home, &root.path().join("work")).unwrap();
        assert!(is_trusted(&home, &sibling));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(trust_file(&home))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
