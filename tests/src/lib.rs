//! tine-e2e: support for the end-to-end tests of the built `tine` binary against `tine-mock`.
//!
//! The tests themselves live in `crates/cli/tests/` (`all.rs` + `suite/*.rs`): only a package's
//! own integration tests get `CARGO_BIN_EXE_tine`, the path of a freshly built binary, which is
//! what makes `cargo test --workspace` reliable from a clean checkout. This crate holds what
//! they share: a scratch [`Project`] (its own `TINE_HOME` and `HOME`, so no user settings leak
//! in), a [`TineRun`] command builder with a clean environment, the parsed [`RunOutput`], and
//! transcript reading. The mock runs in-process (`tine_mock_api::MockServer`).
//!
//! Modules: everything is in this file, in that order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;
use tokio::process::{Child, Command};

pub use tine_mock_api;

/// A scratch project: a working directory and a separate tine home, both deleted on drop.
pub struct Project {
    root: TempDir,
    cwd: PathBuf,
    home: PathBuf,
}

impl Project {
    pub fn new() -> Self {
        Self::in_root(tempfile::tempdir().expect("temp dir"))
    }

    /// A project under `parent` instead of the temporary directory (the Bash sandbox lets
    /// commands write to the temporary directory, so its tests need a project elsewhere).
    pub fn new_in(parent: &Path) -> Self {
        std::fs::create_dir_all(parent).unwrap();
        Self::in_root(tempfile::tempdir_in(parent).expect("temp dir"))
    }

    fn in_root(root: TempDir) -> Self {
        let cwd = root.path().join("project");
        let home = root.path().join("home");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        // Canonical, as tine stores it (the transcript directory is named after it).
        let cwd = std::fs::canonicalize(cwd).unwrap();
        let home = std::fs::canonicalize(home).unwrap();
        Self { root, cwd, home }
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// `TINE_HOME` (also `HOME`, so `~/.tine` and `~` rules resolve inside the sandbox).
    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn root(&self) -> &Path {
        self.root.path()
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

    /// Marks the project's folder trusted, as a person's "Yes" to the UI's trust question
    /// would (`$TINE_HOME/trust.json`).
    pub fn trust(&self) {
        let folder = std::fs::canonicalize(self.cwd()).unwrap();
        let file = serde_json::json!({ "trusted": [folder] });
        std::fs::create_dir_all(self.home()).unwrap();
        std::fs::write(self.home().join("trust.json"), file.to_string()).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.cwd.join(rel)).unwrap()
    }

    /// The project's transcript directory under the home (tine's own naming).
    pub fn transcripts_dir(&self) -> PathBuf {
        tine_config::project_dir(&self.home, &self.cwd)
    }

    /// The transcript of `session_id`, one JSON value per line (torn lines skipped).
    pub fn transcript(&self, session_id: &str) -> Vec<Value> {
        let path = self.transcripts_dir().join(format!("{session_id}.jsonl"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Default for Project {
    fn default() -> Self {
        Self::new()
    }
}

/// One `tine` invocation, built up like a `Command` with a clean environment.
pub struct TineRun {
    command: Command,
    stdin: Option<String>,
}

impl TineRun {
    /// `bin` (the tests pass `env!("CARGO_BIN_EXE_tine")`) in `project`, talking to `base_url`
    /// with a dummy key.
    pub fn new(bin: &str, project: &Project, base_url: &str) -> Self {
        let mut command = Command::new(bin);
        command
            .current_dir(project.cwd())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", project.home())
            .env("TINE_HOME", project.home())
            .env(
                "TINE_MANAGED_SETTINGS",
                project.root().join("no-managed.json"),
            )
            // Auto memory forks after every turn; tests that want it turn it back on.
            .env("TINE_DISABLE_AUTO_MEMORY", "1")
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", base_url)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        Self {
            command,
            stdin: None,
        }
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.command.args(args);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.command.env_remove(key);
        self
    }

    /// Feeds `text` on standard input.
    pub fn stdin(mut self, text: impl Into<String>) -> Self {
        self.stdin = Some(text.into());
        self.command.stdin(Stdio::piped());
        self
    }

    /// Gives the process a pipe for standard input that [`TineRun::spawn`] leaves open: the
    /// test writes to the child's `stdin` as the run goes on, and closes it to end the input.
    pub fn stdin_open(mut self) -> Self {
        self.command.stdin(Stdio::piped());
        self
    }

    /// Starts the process (for tests that signal or kill it mid-run).
    pub fn spawn(mut self) -> Child {
        let mut child = self.command.spawn().expect("spawning tine");
        if let Some(text) = self.stdin.take() {
            let mut stdin = child.stdin.take().unwrap();
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let _ = stdin.write_all(text.as_bytes()).await;
            });
        }
        child
    }

    /// Runs to completion (bounded: a hung tine fails the test instead of hanging it).
    pub async fn run(self) -> RunOutput {
        let child = self.spawn();
        let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
            .await
            .expect("tine did not finish within 120 s")
            .expect("waiting for tine");
        RunOutput {
            status: output.status,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// What a finished run printed.
#[derive(Debug)]
pub struct RunOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl RunOutput {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Asserts exit 0, showing stderr otherwise.
    pub fn assert_success(&self) -> &Self {
        assert!(
            self.status.success(),
            "tine failed ({:?})\nstdout:\n{}\nstderr:\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    /// `--output-format json`: the one object on stdout.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// `--output-format stream-json`: one object per line.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {l}"))
            })
            .collect()
    }
}

/// The request bodies the mock saw, as JSON, in order.
pub fn request_bodies(server: &tine_mock_api::MockServer) -> Vec<Value> {
    server
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/v1/messages"))
        .filter_map(|r| r.json())
        .collect()
}

/// The `role: user`/`assistant` messages of a transcript, in order.
pub fn transcript_messages(records: &[Value]) -> Vec<Value> {
    records
        .iter()
        .filter(|r| matches!(r["type"].as_str(), Some("user" | "assistant")))
        .map(|r| r["message"].clone())
        .collect()
}

/// tine-mcp's stdio test server (`tine-mcp-test-server`) beside the `tine` binary at `tine`. A
/// workspace build makes it (tine-mcp's own tests need it); a build of one package alone does
/// not, so it is built here, into the same target directory and profile.
pub fn mcp_test_server(tine: &Path) -> PathBuf {
    let bin_dir = tine.parent().expect("tine's directory");
    let binary = bin_dir.join("tine-mcp-test-server");
    if binary.exists() {
        return binary;
    }
    let target_dir = bin_dir.parent().expect("the target directory");
    let profile = bin_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("debug");
    let mut build = std::process::Command::new(env!("CARGO"));
    build.args([
        "build",
        "-p",
        "tine-mcp",
        "--features",
        "test-server",
        "--bin",
        "tine-mcp-test-server",
        "--target-dir",
    ]);
    build.arg(target_dir);
    match profile {
        "debug" => {}
        "release" => {
            build.arg("--release");
        }
        other => {
            build.args(["--profile", other]);
        }
    }
    let status = build.status().expect("running cargo build");
    assert!(
        status.success() && binary.exists(),
        "could not build {}: run `cargo build -p tine-mcp --features test-server --bin \
         tine-mcp-test-server`",
        binary.display()
    );
    binary
}
