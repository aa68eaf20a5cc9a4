//! A snapshot of the repository's state at session start (branch, main branch, short status,
//! recent commits), taken with `git` subprocesses under a timeout. Absent outside a repository,
//! without git, or when git is too slow.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// Longest `git status --short` kept, in characters.
pub const MAX_GIT_STATUS_CHARS: usize = 2000;

/// The repository's state when the session began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSnapshot {
    /// `None` on a detached HEAD.
    pub branch: Option<String>,
    /// A guess: `origin/HEAD`, else a local `main` or `master`.
    pub main_branch: Option<String>,
    /// `git status --short`, at most [`MAX_GIT_STATUS_CHARS`] characters.
    pub status: String,
    /// Whether `status` was cut.
    pub status_truncated: bool,
    /// `git log --oneline -n 5`, newest first.
    pub recent_commits: Vec<String>,
}

/// Takes the snapshot in `cwd`; each git call is bounded by `timeout`. `None` when git cannot
/// tell us the status (not a repository, git missing, or too slow).
pub(crate) async fn git_snapshot(cwd: &Path, timeout: Duration) -> Option<GitSnapshot> {
    let (branch, origin_head, local_mains, status, log) = tokio::join!(
        git(cwd, timeout, &["branch", "--show-current"]),
        git(
            cwd,
            timeout,
            &[
                "symbolic-ref",
                "--quiet",
                "--short",
                "refs/remotes/origin/HEAD"
            ]
        ),
        git(
            cwd,
            timeout,
            &[
                "for-each-ref",
                "--format=%(refname:short)",
                "refs/heads/main",
                "refs/heads/master"
            ]
        ),
        git(cwd, timeout, &["status", "--short"]),
        git(cwd, timeout, &["log", "--oneline", "-n", "5"]),
    );
    // Status is the one part we cannot do without.
    let status = status?;
    let main_branch = origin_head
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.strip_prefix("origin/").unwrap_or(s).to_owned())
        .or_else(|| {
            local_mains
                .as_deref()
                .and_then(|s| s.lines().next())
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        });
    let (status, status_truncated) = cap_chars(status.trim_end(), MAX_GIT_STATUS_CHARS);
    Some(GitSnapshot {
        branch: branch
            .map(|b| b.trim().to_owned())
            .filter(|b| !b.is_empty()),
        main_branch,
        status,
        status_truncated,
        recent_commits: log
            .map(|l| l.lines().map(str::to_owned).collect())
            .unwrap_or_default(),
    })
}

fn cap_chars(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((cut, _)) => (text[..cut].to_owned(), true),
        None => (text.to_owned(), false),
    }
}

/// Runs `git <args>` in `cwd`; stdout on success, `None` on any failure or timeout.
async fn git(cwd: &Path, timeout: Duration, args: &[&str]) -> Option<String> {
    let mut cmd = tokio::process::Command::new("git");
    // No optional locks: the snapshot must never contend with the user's own git commands.
    cmd.arg("--no-optional-locks")
        .args(args)
        .current_dir(cwd)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(timeout, cmd.output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => {
            tracing::debug!(?args, %error, "git unavailable; no git snapshot");
            return None;
        }
        Err(_) => {
            tracing::warn!(
                ?args,
                ?timeout,
                "git took too long; skipped in the session context"
            );
            return None;
        }
    };
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::cap_chars;

    #[test]
    fn cap_counts_characters_not_bytes() {
        assert_eq!(cap_chars("héllo", 2), ("hé".to_owned(), true));
        assert_eq!(cap_chars("hé", 2), ("hé".to_owned(), false));
    }
}
