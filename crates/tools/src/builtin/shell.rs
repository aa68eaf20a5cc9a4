//! Running a shell command as its own process group, and collecting its output under a cap.
//! Shared by Bash (foreground) and the background-task registry.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

use crate::sandbox::BashSandbox;

/// Output kept for the model from one command (Claude Code's `BASH_MAX_OUTPUT_LENGTH`).
pub(crate) const MAX_OUTPUT_BYTES: usize = 30_000;

/// tine's own credentials, kept from every process a tool or a hook starts: a command that
/// prints its environment (`env`, `echo $ANTHROPIC_API_KEY`) would hand them to the model and
/// the transcript. The one list of them; add here any credential tine itself reads.
pub const CREDENTIAL_ENV_VARS: &[&str] = &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"];

/// The shell commands run in: bash where present, POSIX sh otherwise.
pub(crate) fn shell_program() -> &'static str {
    if Path::new("/bin/bash").exists() {
        "/bin/bash"
    } else {
        "/bin/sh"
    }
}

/// Starts `script` under the shell in `cwd`, in a new process group whose id is the child's
/// pid, so the whole tree can be killed at once. Stdin is closed (nothing can wait on a
/// prompt); pagers and git prompts are turned off; tine's credentials are removed. With a
/// `sandbox`, the shell is started by its launcher, which restricts itself and then execs the
/// shell (same pid, same group). The shell dies with tine ([`crate::guard_child`]).
pub(crate) fn spawn_shell(
    script: &str,
    cwd: &Path,
    sandbox: Option<&BashSandbox>,
) -> std::io::Result<Child> {
    let mut command = match sandbox {
        None => Command::new(shell_program()),
        Some(sandbox) => {
            let mut command = Command::new(sandbox.launcher());
            command.args(sandbox.launcher_args()).arg(shell_program());
            command
        }
    };
    for name in CREDENTIAL_ENV_VARS {
        command.env_remove(name);
    }
    // `cd x` must land where the permission engine judged it would: below the cwd.
    command.env_remove("CDPATH");
    command
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("TINE", "1")
        .process_group(0)
        .kill_on_drop(false);
    crate::orphans::guard_child(command.as_std_mut());
    command.spawn()
}

/// Kills every process of the group `pgid` (the shell and all it started).
pub(crate) fn kill_group(pgid: Option<u32>) {
    let Some(pgid) = pgid.and_then(|pid| i32::try_from(pid).ok()) else {
        return;
    };
    if let Err(error) = killpg(Pid::from_raw(pgid), Signal::SIGKILL) {
        // ESRCH: the group is already gone, which is what we wanted.
        tracing::debug!(pgid, %error, "killpg");
    }
}

/// The process groups tool commands were started in and that may still have members: every
/// one is killed when tine exits ([`kill_tool_processes`]), so no tool process outlives the
/// session however it ends (a signal, an error, a fork's own background registry).
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Records the group of a command just spawned (its pgid is the child's pid).
pub fn track_group(pgid: Option<u32>) {
    let Some(pgid) = pgid.and_then(|pid| i32::try_from(pid).ok()) else {
        return;
    };
    let mut groups = LIVE_GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    // Forget emptied groups first: once empty, their id may be reused by an unrelated process.
    groups.retain(|&group| group_has_members(group));
    groups.push(pgid);
    // Also on disk, for the watchdog and the next start, should tine be killed outright.
    crate::orphans::record_group(pgid);
}

/// The group's leader (the shell) was reaped: forget the group unless processes it started
/// are still in it (`server &` in a foreground command), which stay tracked until tine exits.
pub(crate) fn forget_group_if_empty(pgid: Option<u32>) {
    let Some(pgid) = pgid.and_then(|pid| i32::try_from(pid).ok()) else {
        return;
    };
    if !group_has_members(pgid) {
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|&group| group != pgid);
    }
}

/// Kills every tracked group (tine is exiting), then removes the session's record of them
/// (nothing is left for the watchdog). Safe to call more than once.
pub fn kill_tool_processes() {
    let groups = std::mem::take(&mut *LIVE_GROUPS.lock().unwrap_or_else(PoisonError::into_inner));
    for pgid in groups {
        kill_group(u32::try_from(pgid).ok());
    }
    crate::orphans::remove_record();
}

/// Signal 0 probes the group: ESRCH means empty; EPERM means the id now belongs to someone else.
fn group_has_members(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None).is_ok()
}

/// Quotes `text` for the shell.
pub(crate) fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A command's output under a cap: the first and the last half of the cap are kept, the
/// middle is dropped and counted (a build's errors are at the end, its cause at the start).
#[derive(Debug, Clone)]
pub(crate) struct CappedOutput {
    cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped_bytes: u64,
    dropped_lines: u64,
    total_bytes: u64,
    total_lines: u64,
}

impl CappedOutput {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            dropped_bytes: 0,
            dropped_lines: 0,
            total_bytes: 0,
            total_lines: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total_bytes += bytes.len() as u64;
        self.total_lines += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        let half = self.cap / 2;
        let room = half.saturating_sub(self.head.len());
        let (into_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(into_head);
        bytes = rest;
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(self.cap - half);
        for byte in self.tail.drain(..excess) {
            self.dropped_bytes += 1;
            if byte == b'\n' {
                self.dropped_lines += 1;
            }
        }
    }

    /// Lines seen so far (newlines counted; a last unterminated line counts too).
    pub(crate) fn lines(&self) -> u64 {
        let unterminated = match self.tail.back().or(self.head.last()) {
            Some(b'\n') | None => 0,
            Some(_) => 1,
        };
        self.total_lines + unterminated
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.total_bytes
    }

    pub(crate) fn is_truncated(&self) -> bool {
        self.dropped_bytes > 0
    }

    /// The kept output as text, with a note where the middle was dropped.
    pub(crate) fn render(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        if self.dropped_bytes == 0 {
            return format!("{head}{tail}");
        }
        format!(
            "{head}\n\n... [output truncated: {} lines ({} bytes) omitted of {} lines] ...\n\n{tail}",
            self.dropped_lines,
            self.dropped_bytes,
            self.lines()
        )
    }
}

/// Output shared between the readers of a child's pipes and whoever reports on it.
pub(crate) type SharedOutput = Arc<Mutex<CappedOutput>>;

/// Appends everything `reader` yields to `output` until end of file.
pub(crate) async fn pump(mut reader: impl AsyncRead + Unpin, output: SharedOutput) {
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) => break,
            Ok(read) => output
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(&chunk[..read]),
            Err(error) => {
                tracing::debug!(%error, "reading command output");
                break;
            }
        }
    }
}
