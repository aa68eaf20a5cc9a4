//! The settings' status line command (Claude Code's `statusLine`), as the session hands it over
//! in [`SessionInfo::status_line`]: run with `sh -c` in the project, given Claude Code's JSON
//! on its standard input ([`App::status_input`]: the session, the model, the workspace, the
//! cost, the context window, plus tine's `cache` share of the last request), its first line of
//! output shown as the status line with its colours (`sgr`), `padding` columns in.
//!
//! When it runs: once the session is configured, then when the figures change (a request's
//! usage, a turn's end, the mode, the model, thinking), at most every [`MIN_INTERVAL`], and
//! every `refreshInterval` if the settings ask. One run at a time: a change while one runs
//! starts the next in its place (Claude Code cancels the run in flight too). Nothing waits for
//! it: the run is a tokio task, and its end wakes the terminal loop ([`StatusCommand::waker`]),
//! which takes the result in [`App::tick`]; with nothing changing there is no timer at all.
//!
//! The command is the person's (or a trusted project's), but it gets the environment without
//! tine's credentials, as hooks do, plus `COLUMNS` and `LINES`; it runs in its own process
//! group, which is killed after [`TIMEOUT`], when the run is replaced and when tine goes, and
//! dies with tine however it ends (`tine_tools::guard_child`). A run that fails (it could not
//! start, exited non-zero, printed nothing, timed out) leaves tine's own line in place and is
//! logged, never printed.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use ratatui::text::Line;
use serde_json::{Value, json};
use tine_session::{SessionInfo, StatusLineCommand, UsageReport};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::app::App;

/// The shortest time between two runs' starts.
pub(crate) const MIN_INTERVAL: Duration = Duration::from_millis(300);
/// How long a run may take before its process group is killed.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);
/// Most bytes of output read; the rest is drained unread (only the first line is shown).
const MAX_OUTPUT: usize = 64 * 1024;
/// Claude Code's fixed threshold for `exceeds_200k_tokens`, whatever the window.
const EXCEEDS_TOKENS: u64 = 200_000;

/// Why a run shows nothing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    /// The shell could not be started.
    #[error("the status line command could not start: {0}")]
    Spawn(std::io::Error),
    /// Waiting for it failed.
    #[error("waiting for the status line command failed: {0}")]
    Wait(std::io::Error),
    /// It exited unsuccessfully.
    #[error("the status line command failed ({status}): {stderr}")]
    Failed {
        /// How it ended.
        status: ExitStatus,
        /// The start of what it said on stderr.
        stderr: String,
    },
    /// It exited successfully with an empty first line.
    #[error("the status line command printed nothing")]
    NoOutput,
    /// It ran past [`TIMEOUT`] and its group was killed.
    #[error("the status line command ran past {} s and was killed", TIMEOUT.as_secs())]
    Timeout,
    /// There is no tokio runtime to run it on (an app driven without one).
    #[error("no runtime to run the status line command on")]
    NoRuntime,
}

/// A run under way.
struct Running {
    task: JoinHandle<()>,
    result: oneshot::Receiver<Result<String, RunError>>,
}

/// The status line command's state: its settings, when it last ran and whether the figures
/// changed since, the run under way and the line it last printed.
pub(crate) struct StatusCommand {
    command: Option<StatusLineCommand>,
    /// When the figures changed with no run started since (the next run is due).
    changed_at: Option<Instant>,
    last_start: Option<Instant>,
    running: Option<Running>,
    /// The last run's line, as shown; `None` when it failed (tine's line shows).
    line: Option<Line<'static>>,
    /// When the conversation began (`total_duration_ms`).
    started: Option<Instant>,
    /// Whether extended thinking is on (the session's start value, then its changes).
    pub(crate) thinking: bool,
    /// The terminal's size at the last frame (`COLUMNS`, `LINES`).
    size: (u16, u16),
    /// Notified when a run ends.
    done: Arc<Notify>,
}

impl Default for StatusCommand {
    fn default() -> Self {
        Self {
            command: None,
            changed_at: None,
            last_start: None,
            running: None,
            line: None,
            started: None,
            thinking: false,
            size: (80, 24),
            done: Arc::new(Notify::new()),
        }
    }
}

impl Drop for StatusCommand {
    fn drop(&mut self) {
        self.cancel();
    }
}

impl StatusCommand {
    /// A conversation is in place (`info`): its command (or none), and a first run due. A new
    /// session's clock starts over; the last line stays until the new run replaces it.
    pub(crate) fn configure(&mut self, info: &SessionInfo, new_session: bool, now: Instant) {
        if self.command != info.status_line {
            self.cancel();
            self.line = None;
            self.command = info.status_line.clone();
        }
        if new_session || self.started.is_none() {
            self.started = Some(now);
        }
        self.thinking = info.thinking;
        self.changed(now);
    }

    /// The figures changed: a run is due (at most every [`MIN_INTERVAL`]).
    pub(crate) fn changed(&mut self, now: Instant) {
        if self.command.is_some() && self.changed_at.is_none() {
            self.changed_at = Some(now);
        }
    }

    /// The terminal's size, for the command's `COLUMNS` and `LINES`.
    pub(crate) fn note_size(&mut self, columns: u16, lines: u16) {
        self.size = (columns, lines);
    }

    /// The line to show in place of tine's figures, and the columns before it.
    pub(crate) fn shown(&self) -> Option<(&Line<'static>, u16)> {
        let padding = self.command.as_ref()?.padding;
        self.line.as_ref().map(|line| (line, padding))
    }

    /// Whether a run is under way.
    pub(crate) fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// What the terminal loop waits on besides keys, events and time: a run's end.
    pub(crate) fn waker(&self) -> Arc<Notify> {
        Arc::clone(&self.done)
    }

    /// When the next run is due, if one is: after a change (or at the refresh interval), no
    /// sooner than [`MIN_INTERVAL`] after the last start. A run's end needs no timer.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        let command = self.command.as_ref()?;
        let earliest = self.last_start.map(|t| t + MIN_INTERVAL);
        let wanted = match (self.changed_at, command.refresh_interval, self.last_start) {
            (Some(changed), _, _) => changed,
            (None, Some(every), Some(last)) if !self.is_running() => last + every,
            _ => return None,
        };
        Some(earliest.map_or(wanted, |e| e.max(wanted)))
    }

    /// Takes a finished run's result in; whether the line shown changed.
    pub(crate) fn poll(&mut self) -> bool {
        let Some(running) = &mut self.running else {
            return false;
        };
        let result = match running.result.try_recv() {
            Ok(result) => result,
            Err(oneshot::error::TryRecvError::Empty) => return false,
            Err(oneshot::error::TryRecvError::Closed) => Err(RunError::NoOutput),
        };
        self.running = None;
        let line = match result {
            Ok(text) => {
                let line = crate::sgr::parse_line(&text);
                (line.width() > 0).then_some(line)
            }
            Err(error) => {
                tracing::warn!(%error, "status line command");
                None
            }
        };
        let changed = line != self.line;
        self.line = line;
        changed
    }

    /// Starts a run with `input` on its standard input in `cwd`, in place of any under way.
    pub(crate) fn start(&mut self, input: &Value, cwd: &Path, now: Instant) {
        let Some(command) = self.command.as_ref().map(|c| c.command.clone()) else {
            return;
        };
        self.cancel();
        self.changed_at = None;
        self.last_start = Some(now);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(error = %RunError::NoRuntime, "status line command");
            return;
        };
        let (tx, rx) = oneshot::channel();
        let job = Job {
            command,
            cwd: cwd.to_path_buf(),
            input: input.to_string().into_bytes(),
            size: self.size,
        };
        let done = Arc::clone(&self.done);
        let task = runtime.spawn(async move {
            let result = job.run().await;
            let _ = tx.send(result);
            done.notify_one();
        });
        self.running = Some(Running { task, result: rx });
    }

    /// Stops the run under way (its group is killed as its task is dropped).
    fn cancel(&mut self) {
        if let Some(running) = self.running.take() {
            running.task.abort();
        }
    }
}

/// One run's inputs.
struct Job {
    command: String,
    cwd: PathBuf,
    input: Vec<u8>,
    size: (u16, u16),
}

impl Job {
    /// Runs the command; its first line of output (escapes kept for `sgr`).
    async fn run(self) -> Result<String, RunError> {
        let mut cmd = tokio::process::Command::new("sh");
        // A project's settings can name the command: it gets no credentials of tine's.
        for name in tine_tools::CREDENTIAL_ENV_VARS {
            cmd.env_remove(name);
        }
        cmd.arg("-c")
            .arg(&self.command)
            .current_dir(&self.cwd)
            // Its output is captured, so it cannot ask the terminal its size (Claude Code's).
            .env("COLUMNS", self.size.0.to_string())
            .env("LINES", self.size.1.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        {
            // Its own group, so a timeout kills what the shell started too.
            cmd.process_group(0);
            // Dies with tine, even after `kill -9`; its group is recorded for the watchdog.
            tine_tools::guard_child(cmd.as_std_mut());
        }
        let mut child = cmd.spawn().map_err(RunError::Spawn)?;
        #[cfg(unix)]
        tine_tools::track_tool_process_group(child.id());
        let mut group = GroupKiller(child.id());
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let input = self.input;
        let work = async {
            let feed = async move {
                if let Some(mut pipe) = stdin {
                    // A command that ignores its input may exit before reading it.
                    let _ = pipe.write_all(&input).await;
                }
            };
            let (_, out, err, status) =
                tokio::join!(feed, read_capped(stdout), read_capped(stderr), child.wait());
            (out, err, status)
        };
        let Ok((out, err, status)) = tokio::time::timeout(TIMEOUT, work).await else {
            group.kill();
            let _ = child.wait().await;
            return Err(RunError::Timeout);
        };
        group.disarm();
        let status = status.map_err(RunError::Wait)?;
        if !status.success() {
            let stderr = String::from_utf8_lossy(&err);
            return Err(RunError::Failed {
                status,
                stderr: stderr.chars().take(200).collect(),
            });
        }
        let first = out.split(|b| *b == b'\n').next().unwrap_or_default();
        let line = String::from_utf8_lossy(first).trim_end().to_owned();
        if line.is_empty() {
            return Err(RunError::NoOutput);
        }
        Ok(line)
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
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// Kills the run's process group when dropped (the run was replaced, tine is leaving) unless
/// disarmed.
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
        tracing::debug!(pid, %error, "status line process group already gone");
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {
    // kill_on_drop(true) on the child covers the shell itself.
}

/// Claude Code's short name of a model: `claude-opus-4-1-20250805` is "Opus 4.1",
/// `claude-3-5-haiku-20241022` "Haiku 3.5", a `[1m]` model's gets "(1M context)"; a model of
/// no known family keeps its id.
pub(crate) fn display_name(model: &str) -> String {
    let (base, long) = match model.len().checked_sub(4) {
        Some(cut) if model.is_char_boundary(cut) && model[cut..].eq_ignore_ascii_case("[1m]") => {
            (&model[..cut], true)
        }
        _ => (model, false),
    };
    let Some(at) = base.find("claude-") else {
        return model.to_owned();
    };
    let parts: Vec<&str> = base[at + "claude-".len()..].split('-').collect();
    let family = parts.iter().find_map(|p| match *p {
        "opus" => Some("Opus"),
        "sonnet" => Some("Sonnet"),
        "haiku" => Some("Haiku"),
        _ => None,
    });
    let Some(family) = family else {
        return model.to_owned();
    };
    // Version numbers are short; a date (`20250805`) or a tag (`v1:0`) is not one.
    let version: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    let mut name = family.to_owned();
    if !version.is_empty() {
        name.push(' ');
        name.push_str(&version.join("."));
    }
    if long {
        name.push_str(" (1M context)");
    }
    name
}

impl App {
    /// The JSON a status line command reads, in Claude Code's shape (its fields that tine has
    /// no value for are left out: `session_name`, `effort`, `rate_limits`, `vim`, `pr`, ...),
    /// with tine's own `cache.last_request_read_share`: how much of the last request's prompt
    /// was read from the cache (0 to 1; `null` before a request).
    pub(crate) fn status_input(&self, now: Instant) -> Value {
        let Some(info) = &self.info else {
            return Value::Null;
        };
        let model = if self.status.model.is_empty() {
            info.model.as_str()
        } else {
            self.status.model.as_str()
        };
        let usage = self.usage.as_ref();
        let window = usage
            .map(|u| u.context_window)
            .filter(|w| *w > 0)
            .unwrap_or(info.context_window);
        let last = usage.and_then(|u| u.last_request);
        let input_tokens = last.map_or(0, |u| u.total_input_tokens());
        let used = last
            .filter(|_| window > 0)
            .map(|_| input_tokens as f64 * 100.0 / window as f64);
        let elapsed = self
            .status_command
            .started
            .map_or(Duration::ZERO, |t| now.saturating_duration_since(t));
        let cwd = info.cwd.display().to_string();
        json!({
            "hook_event_name": "Status",
            "session_id": info.session_id.to_string(),
            "transcript_path": info.transcript_path,
            "cwd": cwd,
            "model": {"id": model, "display_name": display_name(model)},
            "workspace": {
                "current_dir": cwd,
                // tine's working directory does not move: the project is where it started.
                "project_dir": cwd,
                "added_dirs": info.added_dirs,
            },
            "version": env!("CARGO_PKG_VERSION"),
            "output_style": {"name": info.output_style},
            "cost": {
                "total_cost_usd": self.status.cost_usd,
                "total_duration_ms": millis(elapsed),
                "total_api_duration_ms": usage.map_or(0, |u| millis(u.api_duration)),
                "total_lines_added": usage.map_or(0, |u| u.lines_added),
                "total_lines_removed": usage.map_or(0, |u| u.lines_removed),
            },
            "context_window": {
                "total_input_tokens": input_tokens,
                "total_output_tokens": last.map_or(0, |u| u.output_tokens),
                "context_window_size": window,
                "used_percentage": used,
                "remaining_percentage": used.map(|u| (100.0 - u).max(0.0)),
                "current_usage": last.map(|u| json!({
                    "input_tokens": u.input_tokens,
                    "output_tokens": u.output_tokens,
                    "cache_creation_input_tokens": u.cache_creation_input_tokens,
                    "cache_read_input_tokens": u.cache_read_input_tokens,
                })),
            },
            "exceeds_200k_tokens": last.is_some_and(|u| u.total_tokens() > EXCEEDS_TOKENS),
            "thinking": {"enabled": self.status_command.thinking},
            "cache": {
                "last_request_read_share": usage.and_then(|u| u.cache_read_share),
            },
        })
    }

    /// A run is due, or one ended: start it, take its line in. Whether the screen changes.
    pub(crate) fn tick_status_command(&mut self, now: Instant) -> bool {
        let changed = self.status_command.poll();
        if self.status_command.deadline().is_some_and(|due| now >= due)
            && let Some(info) = &self.info
        {
            let input = self.status_input(now);
            let cwd = info.cwd.clone();
            self.status_command.start(&input, &cwd, now);
        }
        changed
    }

    /// Wakes whoever waits on it when a status line command's run ends: the terminal loop
    /// then calls [`App::tick`], which takes the line in (no polling while it runs).
    pub(crate) fn status_command_waker(&self) -> Arc<Notify> {
        self.status_command.waker()
    }

    /// The figures a status line command shows changed.
    pub(crate) fn status_figures_changed(&mut self, usage: Option<UsageReport>) {
        if let Some(usage) = usage {
            self.usage = Some(usage);
        }
        self.status_command.changed(Instant::now());
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[path = "status_command_tests.rs"]
mod tests;
