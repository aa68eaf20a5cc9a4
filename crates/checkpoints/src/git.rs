//! Running the real `git` on the shadow repository, cut off from the user's: its own `GIT_DIR`,
//! the project as the work tree, no system or global configuration, no hooks, no signing, and
//! nothing inherited from a `GIT_*` variable of the environment (a `GIT_INDEX_FILE` or
//! `GIT_DIR` set by a hook that started tine must not point these commands at the user's
//! repository).

use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::CheckpointError;

/// The name and address of every snapshot commit.
const IDENTITY: &str = "tine checkpoints";
const EMAIL: &str = "checkpoints@tine.invalid";

/// Settings given on every call, so no configuration file can change what a command does.
const OVERRIDES: &[&str] = &[
    "core.hooksPath=/dev/null",
    "commit.gpgsign=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fsmonitor=false",
    "core.logAllRefUpdates=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "user.name=tine checkpoints",
    "user.email=checkpoints@tine.invalid",
    "advice.addEmbeddedRepo=false",
    "advice.addIgnoredFile=false",
];

/// One shadow repository: its git directory and the work tree it records.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    pub(crate) git_dir: PathBuf,
    pub(crate) work_tree: PathBuf,
    /// The store directory, the `HOME` of every call and what error messages name.
    pub(crate) store: PathBuf,
}

/// What a command printed, when it exited successfully.
pub(crate) type Output = Vec<u8>;

impl Git {
    fn command(&self, args: &[&OsStr]) -> Command {
        let mut cmd = Command::new("git");
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GIT_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_OPTIONAL_LOCKS", "0")
            // A path from the project is a path, never a pathspec pattern (`*`, `:(glob)`).
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", IDENTITY)
            .env("GIT_AUTHOR_EMAIL", EMAIL)
            .env("GIT_COMMITTER_NAME", IDENTITY)
            .env("GIT_COMMITTER_EMAIL", EMAIL)
            .env("HOME", &self.store)
            .env("XDG_CONFIG_HOME", &self.store)
            .env("LC_ALL", "C")
            // Paths printed relative to the work tree's root, whatever the caller's cwd.
            .current_dir(&self.work_tree);
        for o in OVERRIDES {
            cmd.arg("-c").arg(o);
        }
        cmd.args(args);
        cmd
    }

    /// Runs `git ARGS`, feeding `input` on standard input; the standard output on success.
    pub(crate) fn run_with_input(
        &self,
        args: &[&OsStr],
        input: Option<&[u8]>,
    ) -> Result<Output, CheckpointError> {
        let mut cmd = self.command(args);
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(CheckpointError::git_spawn)?;
        if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
            // Written from a thread: a large input and a large output must not deadlock.
            let bytes = bytes.to_vec();
            let writer = std::thread::spawn(move || stdin.write_all(&bytes));
            let out = child
                .wait_with_output()
                .map_err(CheckpointError::git_spawn)?;
            let _ = writer.join();
            return self.check(args, out);
        }
        let out = child
            .wait_with_output()
            .map_err(CheckpointError::git_spawn)?;
        self.check(args, out)
    }

    /// Runs `git ARGS`; the standard output on success.
    pub(crate) fn run(&self, args: &[&str]) -> Result<Output, CheckpointError> {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        self.run_with_input(&args, None)
    }

    /// Runs `git ARGS` and gives its trimmed standard output as text.
    pub(crate) fn text(&self, args: &[&str]) -> Result<String, CheckpointError> {
        let out = self.run(args)?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// Runs `git ARGS`; `None` when it exits unsuccessfully (a ref that does not exist).
    pub(crate) fn try_text(&self, args: &[&str]) -> Result<Option<String>, CheckpointError> {
        let args_os: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let out = self
            .command(&args_os)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(CheckpointError::git_spawn)?;
        Ok(out
            .status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()))
    }

    fn check(&self, args: &[&OsStr], out: std::process::Output) -> Result<Output, CheckpointError> {
        if out.status.success() {
            return Ok(out.stdout);
        }
        let command = args
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        Err(CheckpointError::Git {
            store: self.store.clone(),
            command,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// Splits NUL-separated output into paths.
pub(crate) fn nul_paths(out: &[u8]) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt as _;
    out.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(OsStr::from_bytes(p)))
        .collect()
}

/// Paths as NUL-separated bytes, for `--pathspec-from-file=- --pathspec-file-nul`.
pub(crate) fn nul_joined(paths: &[PathBuf]) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt as _;
    let mut bytes = Vec::new();
    for p in paths {
        bytes.extend_from_slice(p.as_os_str().as_bytes());
        bytes.push(0);
    }
    bytes
}

/// Whether `path` holds a git directory git can open (the store's).
pub(crate) fn looks_like_git_dir(path: &Path) -> bool {
    path.join("HEAD").is_file() && path.join("objects").is_dir() && path.join("refs").is_dir()
}
