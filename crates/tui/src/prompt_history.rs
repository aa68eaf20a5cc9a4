//! The prompt box's history on disk: `$TINE_HOME/history.jsonl`, one line per submitted prompt
//! (`{"display": ..., "project": ..., "timestamp": ms}`, as Claude Code's `history.jsonl`), the
//! file 0600 like the rest of tine's state. Up/Down offer this project's prompts, oldest first.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tine_config::private_fs;

/// Prompts offered by Up/Down at most.
const MAX_ENTRIES: usize = 1000;

/// The history file of `home`.
pub(crate) fn history_path(home: &Path) -> PathBuf {
    home.join("history.jsonl")
}

/// This project's prompts, oldest first (at most [`MAX_ENTRIES`]); a missing or damaged file
/// gives what could be read.
pub(crate) fn load(path: &Path, project: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let project = project.to_string_lossy();
    let mut prompts: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|v| v.get("project").and_then(Value::as_str) == Some(project.as_ref()))
        .filter_map(|v| v.get("display").and_then(Value::as_str).map(str::to_owned))
        .collect();
    if prompts.len() > MAX_ENTRIES {
        prompts.drain(..prompts.len() - MAX_ENTRIES);
    }
    prompts
}

/// Appends `prompt` for `project`. Failing is logged, never shown: history is a convenience.
pub(crate) fn append(path: &Path, project: &Path, prompt: &str) {
    if prompt.trim().is_empty() {
        return;
    }
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default();
    let line = json!({
        "display": prompt,
        "project": project.to_string_lossy(),
        "timestamp": timestamp,
    });
    let written = path
        .parent()
        .map_or(Ok(()), private_fs::create_dir_all)
        .and_then(|()| private_fs::open_append(path))
        .and_then(|mut file| writeln!(file, "{line}"));
    if let Err(error) = written {
        tracing::warn!(path = %path.display(), %error, "cannot write the prompt history");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_come_back_per_project_in_order_and_the_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = history_path(dir.path());
        append(&path, Path::new("/a"), "first");
        append(&path, Path::new("/b"), "elsewhere");
        append(&path, Path::new("/a"), "second\nline");
        append(&path, Path::new("/a"), "  ");
        assert_eq!(load(&path, Path::new("/a")), ["first", "second\nline"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
