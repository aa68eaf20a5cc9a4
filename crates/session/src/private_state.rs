//! Tightening tine's own state an older tine left readable (0755/0644) to 0700/0600: only
//! paths under `TINE_HOME` that this run uses, never project files; a failure is logged.

use std::path::{Path, PathBuf};

use tine_config::private_fs;

/// Tightens tine's own state under `home` (TINE_HOME) that this run uses: `home` itself and
/// every directory from it down to each of `dirs`, to 0700; each of `files` to 0600. Only
/// paths under `home`, owned by the user and group or other accessible, are changed
/// (`private_fs::tighten_dir`); a failure is logged, never fatal.
pub(crate) fn tighten_own_state(home: &Path, dirs: &[PathBuf], files: &[PathBuf]) {
    let mut chain = vec![home.to_path_buf()];
    for dir in dirs {
        let Ok(rel) = dir.strip_prefix(home) else {
            continue;
        };
        let mut current = home.to_path_buf();
        for part in rel.components() {
            current.push(part);
            if !chain.contains(&current) {
                chain.push(current.clone());
            }
        }
    }
    for dir in &chain {
        report_tightened(dir, private_fs::tighten_dir(dir));
    }
    for file in files.iter().filter(|f| f.starts_with(home)) {
        report_tightened(file, private_fs::tighten_file(file));
    }
}

/// The memory directory, its subdirectories and its files, when it lies under TINE_HOME
/// (the default place). A directory the user chose elsewhere (`autoMemoryDirectory`) keeps
/// its modes: it may be shared on purpose.
pub(crate) fn tighten_memory_dir(home: &Path, dir: &Path) {
    if !dir.starts_with(home) {
        return;
    }
    let mut dirs = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), 0)];
    while let Some((current, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            // `file_type` does not follow links: a link's target is not tine's to change.
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && depth < 4 => {
                    dirs.push(entry.path());
                    pending.push((entry.path(), depth + 1));
                }
                Ok(kind) if kind.is_file() => files.push(entry.path()),
                _ => {}
            }
        }
    }
    tighten_own_state(home, &dirs, &files);
}

fn report_tightened(path: &Path, result: std::io::Result<private_fs::Tightened>) {
    match result {
        Ok(private_fs::Tightened::Changed { from, to }) => tracing::info!(
            path = %path.display(),
            "made tine's own state private: mode {from:o} -> {to:o}"
        ),
        Ok(private_fs::Tightened::Unchanged) => {}
        Err(error) => tracing::warn!(path = %path.display(), %error, "cannot tighten the mode"),
    }
}
