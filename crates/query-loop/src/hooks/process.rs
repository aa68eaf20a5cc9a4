//! Running one hook command: `sh -c` in its own process group, JSON on stdin, output captured
//! (bounded), a timeout after which the whole group is killed. Dropping the future (the turn was
//! cancelled) kills the group too.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// Most bytes kept of a hook's stdout or stderr; the rest is read and dropped so the hook never
/// blocks on a full pipe.
const MAX_CAPTURE: usize = 1 << 20;

/// What a hook command did.
#[derive(Debug)]
pub(crate) struct ProcessOutput {
    /// How it exited.
    pub(crate) status: ExitStatus,
    /// What it printed on stdout.
    pub(crate) stdout: Vec<u8>,
    /// What it printed on stderr.
    pub(crate) stderr: Vec<u8>,
}

/// Why a hook command gave no output.
#[derive(Debug)]
pub(crate) enum RunError {
    /// The shell could not be started.
    Spawn(std::io::Error),
    /// Waiting for it failed.
    Wait(std::io::Error),
    /// It ran past its timeout and was killed.
    Timeout,
}

/// Runs `command` with `sh -c` in `cwd` (its own process group, tine's credentials removed
/// from its environment), `stdin` on its standard input, killed with its group after
/// `timeout` or when the future is dropped. Every hook event runs through here.
pub(crate) async fn run_shell(
    command: &str,
    cwd: &Path,
    env: &[(&str, &str)],
    stdin: &[u8],
    timeout: Duration,
) -> Result<ProcessOutput, RunError> {
    let mut cmd = tokio::process::Command::new("sh");
    // Hooks are the user's scripts, but a project's settings can name them too: they get the
    // environment without tine's own credentials, as tools do.
    for name in tine_tools::CREDENTIAL_ENV_VARS {
        cmd.env_remove(name);
    }
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Own process group, so a timeout also kills what the shell started.
    #[cfg(unix)]
    cmd.process_group(0);
    // Dies with tine, even after `kill -9`; its group is recorded for the watchdog.
    #[cfg(unix)]
    tine_tools::guard_child(cmd.as_std_mut());
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    #[cfg(unix)]
    tine_tools::track_tool_process_group(child.id());
    let mut group = GroupKiller(child.id());

    let stdin_pipe = child.stdin.take();
    let stdout_pipe = child.stdout.take();
    let stderr_pipe = child.stderr.take();
    let work = async {
        let feed = async move {
            if let Some(mut pipe) = stdin_pipe {
                // A hook that ignores its input may exit before reading it: not an error.
                let _ = pipe.write_all(stdin).await;
            }
        };
        let (_, stdout, stderr, status) = tokio::join!(
            feed,
            read_capped(stdout_pipe),
            read_capped(stderr_pipe),
            child.wait()
        );
        (stdout, stderr, status)
    };
    let result = tokio::time::timeout(timeout, work).await;
    match result {
        Ok((stdout, stderr, status)) => {
            group.disarm();
            Ok(ProcessOutput {
                status: status.map_err(RunError::Wait)?,
                stdout,
                stderr,
            })
        }
        Err(_elapsed) => {
            group.kill();
            let _ = child.wait().await;
            Err(RunError::Timeout)
        }
    }
}

async fn read_capped(pipe: Option<impl AsyncRead + Unpin>) -> Vec<u8> {
    let mut kept = Vec::new();
    let Some(mut pipe) = pipe else { return kept };
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = MAX_CAPTURE.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// Kills the hook's process group when dropped unless disarmed.
struct GroupKiller(Option<u32>);

impl GroupKiller {
    fn disarm(&mut self) {
        self.0 = None;
    }

    fn kill(&mut self) {
        if let Some(pid) = self.0.take() {
            kill_group(pid);
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(unix)]
fn kill_group(pid: u32) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Ok(raw) = i32::try_from(pid)
        && let Err(error) = killpg(Pid::from_raw(raw), Signal::SIGKILL)
    {
        tracing::debug!(pid, %error, "hook process group already gone");
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {
    // kill_on_drop(true) on the child covers the shell itself.
}
