//! `isolation: worktree` (seed 003 §七): a typed agent whose definition asks for it runs in a
//! new git worktree of the session's repository, on a branch of its own made from `HEAD`.
//!
//! Where: `TINE_HOME/worktrees/<agent id>` (created 0700), never under the project: the
//! project's `.tine/` is a protected directory, so a worktree there would make every write of
//! the agent ask. The agent's tool context works there ([`AgentWorktree`] as an extension, its
//! cwd the worktree's copy of the session's directory), and the session's permission checker
//! takes that directory as the agent's project: its writes inside the worktree follow the
//! normal project rules, a write back into the main checkout is an outside-project write.
//!
//! When the agent ends, [`AgentWorktree::finish`] removes the worktree and its branch if
//! nothing changed (a clean status and `HEAD` where it started), and otherwise keeps both and
//! says where they are, for the agent's report to its parent. A worktree whose agent's task is
//! dropped midway (its call interrupted) is finished the same way by [`WorktreeGuard`].
//! Creation is serialized by the caller (two agents: two worktrees, two branches).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use tine_tools::{CREDENTIAL_ENV_VARS, ContextExtension};

/// The only isolation tine knows (Claude Code's `remote` needs its cloud).
pub const WORKTREE_ISOLATION: &str = "worktree";

/// A sub-agent's own checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentWorktree {
    /// The worktree's top directory.
    pub root: PathBuf,
    /// Where the agent works: the worktree's copy of the session's directory (the root when
    /// the session runs at the repository's top, or that directory is not in `HEAD`).
    pub cwd: PathBuf,
    /// The branch the worktree is on (`tine-agent-<agent id>`).
    pub branch: String,
    /// The main checkout's top directory (the repository the worktree belongs to).
    pub repository: PathBuf,
    /// The commit it was made from.
    pub base: String,
}

impl ContextExtension for AgentWorktree {
    /// What the agent's context carries; anything derived from it works in the same place.
    fn fork(&self) -> Option<Self> {
        Some(self.clone())
    }
}

/// Why no worktree could be made (the Agent call's error result: the model reads it).
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// The session's directory is not in a git repository.
    #[error(
        "this agent runs with `isolation: worktree`, which needs a git repository, but {} is \
         not in one ({reason}); run it without isolation or from a git checkout",
        .cwd.display()
    )]
    NotARepository {
        /// The session's directory.
        cwd: PathBuf,
        /// What git said.
        reason: String,
    },
    /// The repository has no commit to make a worktree from.
    #[error(
        "this agent runs with `isolation: worktree`, but the repository at {} has no commit \
         yet to check out; commit once first",
        .repository.display()
    )]
    NoCommit {
        /// The repository's top directory.
        repository: PathBuf,
    },
    /// The definition asks for an isolation tine does not have.
    #[error("this agent asks for `isolation: {0}`; tine supports only `isolation: worktree`")]
    Unsupported(String),
    /// Git or the file system failed.
    #[error("could not create the agent's worktree: {0}")]
    Create(String),
}

/// What became of a worktree when its agent ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorktreeOutcome {
    /// Nothing changed: the worktree and its branch are gone.
    Removed,
    /// The agent changed something: the worktree and its branch stay.
    Kept {
        /// The worktree's directory.
        path: PathBuf,
        /// Its branch.
        branch: String,
    },
}

impl WorktreeOutcome {
    /// The line the parent reads after the agent's report.
    pub fn report_line(&self) -> String {
        match self {
            WorktreeOutcome::Removed => {
                "(The agent's worktree had no changes and was removed.)".to_owned()
            }
            WorktreeOutcome::Kept { path, branch } => format!(
                "The agent worked in an isolated git worktree; its changes are kept there: \
                 worktree {}, branch {branch}. The main checkout is unchanged: merge or \
                 cherry-pick the branch to take them, or remove it with `git worktree remove` \
                 and `git branch -D`.",
                path.display()
            ),
        }
    }
}

/// Checks that `cwd` is in a git repository with a commit; returns its top directory and
/// `HEAD`. Cheap, so the Agent call can refuse before a task is registered.
pub async fn repository_of(cwd: &Path) -> Result<(PathBuf, String), WorktreeError> {
    let top = git(cwd, ["rev-parse", "--show-toplevel"])
        .await
        .map_err(|reason| WorktreeError::NotARepository {
            cwd: cwd.to_path_buf(),
            reason,
        })?;
    let top = PathBuf::from(top);
    let base = git(&top, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
        .await
        .map_err(|_| WorktreeError::NoCommit {
            repository: top.clone(),
        })?;
    Ok((top, base))
}

/// Makes agent `agent_id`'s worktree under `dir` (created 0700 if missing) on a new branch
/// from `HEAD` of the repository `cwd` is in.
pub async fn create_worktree(
    cwd: &Path,
    dir: &Path,
    agent_id: &str,
) -> Result<AgentWorktree, WorktreeError> {
    let (repository, base) = repository_of(cwd).await?;
    let owned_dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || tine_config::private_fs::create_dir_all(&owned_dir))
        .await
        .map_err(|e| WorktreeError::Create(e.to_string()))?
        .map_err(|e| WorktreeError::Create(format!("{}: {e}", dir.display())))?;
    let root = dir.join(agent_id);
    let branch = format!("tine-agent-{agent_id}");
    git(
        &repository,
        [
            OsStr::new("worktree"),
            OsStr::new("add"),
            OsStr::new("--quiet"),
            OsStr::new("-b"),
            OsStr::new(&branch),
            root.as_os_str(),
            OsStr::new(&base),
        ],
    )
    .await
    .map_err(WorktreeError::Create)?;
    // The same place in the worktree as the session's directory is in the main checkout.
    let real_cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let real_top = std::fs::canonicalize(&repository).unwrap_or_else(|_| repository.clone());
    let cwd = real_cwd
        .strip_prefix(&real_top)
        .ok()
        .map(|below| root.join(below))
        .filter(|dir| dir.is_dir())
        .unwrap_or_else(|| root.clone());
    tracing::debug!(root = %root.display(), %branch, "agent worktree created");
    Ok(AgentWorktree {
        root,
        cwd,
        branch,
        repository,
        base,
    })
}

impl AgentWorktree {
    /// Whether the agent changed anything: a file changed, added or deleted (untracked ones
    /// count), or a commit made. When that cannot be told, it counts as changed: nothing is
    /// ever removed that might hold work.
    pub async fn has_changes(&self) -> bool {
        let status = git(
            &self.root,
            ["status", "--porcelain", "--untracked-files=all"],
        )
        .await;
        let head = git(&self.root, ["rev-parse", "HEAD"]).await;
        match (status, head) {
            (Ok(status), Ok(head)) => !status.trim().is_empty() || head != self.base,
            _ => true,
        }
    }

    /// Removes the worktree and its branch when nothing changed, else keeps them.
    pub async fn finish(&self) -> WorktreeOutcome {
        if self.has_changes().await {
            return self.kept();
        }
        let removed = git(
            &self.repository,
            [
                OsStr::new("worktree"),
                OsStr::new("remove"),
                OsStr::new("--force"),
                self.root.as_os_str(),
            ],
        )
        .await;
        if let Err(error) = removed {
            tracing::warn!(%error, root = %self.root.display(), "could not remove a worktree");
            return self.kept();
        }
        if let Err(error) = git(&self.repository, ["branch", "-D", self.branch.as_str()]).await {
            tracing::warn!(%error, branch = %self.branch, "could not delete a worktree's branch");
        }
        WorktreeOutcome::Removed
    }

    fn kept(&self) -> WorktreeOutcome {
        WorktreeOutcome::Kept {
            path: self.root.clone(),
            branch: self.branch.clone(),
        }
    }

    /// What the agent is told before its task: where it works and what becomes of it.
    pub fn notice(&self, main_checkout: &Path) -> String {
        format!(
            "<system-reminder>\nYou are working in an isolated git worktree at {} (on branch \
             {}, made from commit {} of the repository at {}). Make every change there: it is \
             your project, with the same files at the same relative paths as the main \
             checkout, whose directory {} you must not change. When you finish, the worktree \
             and branch are kept if you changed anything (commits included), and removed \
             otherwise; say in your report what you changed.\n</system-reminder>",
            self.cwd.display(),
            self.branch,
            short(&self.base),
            self.repository.display(),
            main_checkout.display()
        )
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// Finishes a worktree whose agent's task was dropped before it could (its call was
/// interrupted): on a thread of its own, since `Drop` cannot wait.
pub struct WorktreeGuard(Option<AgentWorktree>);

impl WorktreeGuard {
    /// Guards `worktree` until [`WorktreeGuard::finish`].
    pub fn new(worktree: AgentWorktree) -> Self {
        Self(Some(worktree))
    }

    /// The guarded worktree.
    pub fn worktree(&self) -> Option<&AgentWorktree> {
        self.0.as_ref()
    }

    /// Finishes the worktree now.
    pub async fn finish(mut self) -> Option<WorktreeOutcome> {
        let worktree = self.0.take()?;
        Some(worktree.finish().await)
    }
}

impl Drop for WorktreeGuard {
    fn drop(&mut self) {
        let Some(worktree) = self.0.take() else {
            return;
        };
        let finished = std::thread::Builder::new()
            .name("tine-worktree".to_owned())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                match runtime {
                    Ok(runtime) => {
                        let outcome = runtime.block_on(worktree.finish());
                        tracing::debug!(?outcome, "worktree of a dropped agent finished");
                    }
                    Err(error) => tracing::warn!(%error, "could not finish a worktree"),
                }
            });
        if let Err(error) = finished {
            tracing::warn!(%error, "could not finish a worktree");
        }
    }
}

/// Runs `git -C dir args…` with no credentials and no prompts; its trimmed stdout, or what
/// it said on failure.
async fn git<I, S>(dir: &Path, args: I) -> Result<String, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = tokio::process::Command::new("git");
    command.arg("-C").arg(dir).args(args);
    // `-C` says which repository; an inherited GIT_DIR (a git hook's) must not.
    for name in CREDENTIAL_ENV_VARS
        .iter()
        .chain(&["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"])
    {
        command.env_remove(name);
    }
    command
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output: Output = command
        .output()
        .await
        .map_err(|e| format!("could not run git: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("git failed")
            .trim()
            .to_owned())
    }
}
