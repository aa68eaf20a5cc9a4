//! No process tine starts outlives it, however tine ends (Linux). Three layers, because each
//! alone leaves a gap:
//!
//! 1. **Parent-death signal.** Every child tine starts (Bash's shell, background shells, hooks,
//!    MCP stdio servers: [`guard_child`]) gets `PR_SET_PDEATHSIG(SIGKILL)`: when tine dies, even
//!    by `kill -9`, the kernel kills that child at once. It is set between `fork` and `exec`
//!    (`pre_exec`, the one `unsafe` block of the crate, below), then the child checks that its
//!    parent is still tine (the signal is not sent for a parent that died before the call).
//!    A launcher process that sets it and execs (as `tine __sandbox` does for Landlock) was
//!    the alternative without `unsafe`; it is not used because it needs the `tine` binary on
//!    every spawn (libraries, tests and MCP servers have none) and costs an exec per command.
//!    The kernel sends the signal when the *thread* that forked exits, not the process: tine
//!    spawns from tokio's worker threads (and the runtime's own thread), which live as long as
//!    the runtime, so this holds; a spawn from a short-lived thread (`spawn_blocking`) would
//!    see its child killed when that thread retires, and must not use [`guard_child`].
//! 2. **A watchdog.** The signal reaches only the direct child: what the shell started
//!    (`server &`, a pipeline) is re-parented to init and runs on. So each recorded session
//!    ([`install_process_records`]) starts, with its first process group, a watchdog (`tine __watchdog`, in its
//!    own group, so Ctrl-C does not reach it) that holds the read end of a pipe from tine. When
//!    the pipe closes (tine is gone, however), it waits for tine to be dead and kills what the
//!    record names ([`watchdog_main`]). A clean exit removes the record first
//!    ([`kill_tool_processes`](crate::kill_tool_processes)): the watchdog then finds nothing.
//! 3. **A reaper at start.** For what the watchdog could not do (it was killed too, the
//!    machine went down mid-way), the next tine of the same `TINE_HOME` reaps the records of
//!    dead sessions ([`install_process_records`]).
//!
//! The record of a session is `$TINE_HOME/run/<pid>.pgids` (0600): its first line is tine's
//! start time (clock ticks since boot, `/proc/<pid>/stat`'s 22nd field), so a pid reused by
//! another process is not taken for the session; then one process group id a line. Every child
//! carries `TINE_SESSION_PID=<pid>:<start>` in its environment ([`SESSION_MARKER_VAR`]), and
//! only what carries the marker of a dead session is killed: a process that carries it, and a
//! recorded group one of whose members still carries it (a group id cannot be reused while the
//! group has a member). An unrelated process that got a recorded id is never touched.

use std::ffi::OsString;
use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ExitCode, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The variable every child of tine carries: `<tine pid>:<tine start time>`.
pub const SESSION_MARKER_VAR: &str = "TINE_SESSION_PID";

/// The hidden subcommand of the watchdog: `tine __watchdog PID START RECORD`.
pub const WATCHDOG_SUBCOMMAND: &str = "__watchdog";

/// This process's pid and start time, and the marker its children carry.
struct Me {
    pid: u32,
    marker: String,
}

fn me() -> &'static Me {
    static ME: OnceLock<Me> = OnceLock::new();
    ME.get_or_init(|| {
        let pid = std::process::id();
        let start = start_time(pid).unwrap_or(0);
        Me {
            pid,
            marker: format!("{pid}:{start}"),
        }
    })
}

/// Where this session records its groups, set by [`install`]; without it nothing is recorded
/// (a library user, a test), and the parent-death signal still applies.
struct Recorder {
    record: PathBuf,
    launcher: PathBuf,
    /// Created with the first group: the record file's handle and the watchdog's pipe.
    started: Mutex<Option<Started>>,
}

struct Started {
    file: std::fs::File,
    /// Held open for tine's whole life: its closing is what wakes the watchdog.
    _watchdog: Option<ChildStdin>,
}

static RECORDER: OnceLock<Recorder> = OnceLock::new();

/// Makes `command` a child that dies with tine: it carries the session marker and gets
/// `PR_SET_PDEATHSIG(SIGKILL)` before it execs. Call it on the thread that spawns (see the
/// module doc about threads).
pub fn guard_child(command: &mut std::process::Command) {
    let me = me();
    command.env(SESSION_MARKER_VAR, &me.marker);
    #[cfg(target_os = "linux")]
    {
        let parent = me.pid;
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed: it makes two system calls (prctl, getppid),
        // allocates nothing and takes no lock; its error is built from a raw errno.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(move || {
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
                    .map_err(|errno| std::io::Error::from_raw_os_error(errno as i32))?;
                // tine died before the call: the signal will never come, so do not run.
                if u32::try_from(nix::unistd::getppid().as_raw()).ok() != Some(parent) {
                    return Err(std::io::Error::from_raw_os_error(
                        nix::errno::Errno::ESRCH as i32,
                    ));
                }
                Ok(())
            });
        }
    }
}

/// Turns the records on for this process: reaps what dead sessions of `home` left, then
/// remembers where this session's record goes and which program is the watchdog (`launcher
/// __watchdog ...`, the `tine` binary). Call once, at start, before any tool runs. Errors are
/// logged, never fatal: a session without records still has the parent-death signal.
pub fn install_process_records(home: &Path, launcher: PathBuf) {
    let run = home.join("run");
    reap_dead_sessions(&run);
    let record = run.join(format!("{}.pgids", me().pid));
    let _ = RECORDER.set(Recorder {
        record,
        launcher,
        started: Mutex::new(None),
    });
}

/// Adds `pgid` to this session's record (starting the record and the watchdog with the first).
pub(crate) fn record_group(pgid: i32) {
    let Some(recorder) = RECORDER.get() else {
        return;
    };
    let mut started = recorder
        .started
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if started.is_none() {
        match start_record(recorder) {
            Ok(fresh) => *started = Some(fresh),
            Err(error) => {
                tracing::warn!(record = %recorder.record.display(), %error, "cannot record tool processes");
                return;
            }
        }
    }
    if let Some(started) = started.as_mut()
        && let Err(error) = writeln!(started.file, "{pgid}")
    {
        tracing::warn!(%error, "cannot record a tool process group");
    }
}

fn start_record(recorder: &Recorder) -> std::io::Result<Started> {
    if let Some(dir) = recorder.record.parent() {
        tine_config::private_fs::create_dir_all(dir)?;
    }
    let mut file = tine_config::private_fs::open_append(&recorder.record)?;
    let start = me().marker.split_once(':').map_or("0", |(_, start)| start);
    writeln!(file, "{start}")?;
    let watchdog = std::process::Command::new(&recorder.launcher)
        .arg(WATCHDOG_SUBCOMMAND)
        .arg(me().pid.to_string())
        .arg(start)
        .arg(&recorder.record)
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    let watchdog = match watchdog {
        Ok(mut child) => child.stdin.take(),
        Err(error) => {
            // The next start's reaper still covers this session.
            tracing::warn!(launcher = %recorder.launcher.display(), %error, "cannot start the process watchdog");
            None
        }
    };
    Ok(Started {
        file,
        _watchdog: watchdog,
    })
}

/// Removes this session's record (tine is exiting and killed its groups itself).
pub(crate) fn remove_record() {
    let Some(recorder) = RECORDER.get() else {
        return;
    };
    let started = recorder
        .started
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if started.is_some()
        && let Err(error) = std::fs::remove_file(&recorder.record)
    {
        tracing::debug!(%error, "removing the process record");
    }
}

/// `tine __watchdog PID START RECORD`: waits for standard input to close, then for the
/// session `PID` (started at `START`) to be dead, then kills what `RECORD` names and removes
/// it. A record already gone (a clean exit) means nothing to do.
pub fn watchdog_main(args: &[OsString]) -> ExitCode {
    let [pid, start, record] = args else {
        return ExitCode::from(2);
    };
    let (Some(pid), Some(start)) = (
        pid.to_str().and_then(|p| p.parse::<u32>().ok()),
        start.to_str().and_then(|s| s.parse::<u64>().ok()),
    ) else {
        return ExitCode::from(2);
    };
    let mut sink = [0u8; 64];
    // Nothing is ever written: this returns at end of file, or on an error, once tine is gone.
    while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
    while alive(pid, start) {
        std::thread::sleep(Duration::from_millis(10));
    }
    reap_record(Path::new(record));
    ExitCode::SUCCESS
}

/// Reaps the record of every dead session under `run`.
fn reap_dead_sessions(run: &Path) {
    let Ok(entries) = std::fs::read_dir(run) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(pid) = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".pgids"))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let Some(start) = read_record(&path).map(|(start, _)| start) else {
            continue;
        };
        if !alive(pid, start) {
            reap_record(&path);
        }
    }
}

/// A record's start time and groups.
fn read_record(path: &Path) -> Option<(u64, Vec<i32>)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let start = lines.next()?.trim().parse().ok()?;
    Some((start, lines.filter_map(|l| l.trim().parse().ok()).collect()))
}

/// Kills what the record at `path` names (see the module doc for what qualifies), then
/// removes it. Its session must be dead.
fn reap_record(path: &Path) {
    let Some(pid) = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .and_then(|pid| pid.parse::<u32>().ok())
    else {
        return;
    };
    if let Some((start, groups)) = read_record(path) {
        let marker = format!("{SESSION_MARKER_VAR}={pid}:{start}");
        // Again while something was found: a process may fork while the scan runs.
        for _ in 0..5 {
            let marked = marked_processes(marker.as_bytes());
            if marked.is_empty() {
                break;
            }
            for &(process, group) in &marked {
                if groups.contains(&group) {
                    let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
                }
                let _ = kill(Pid::from_raw(process), Signal::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    if let Err(error) = std::fs::remove_file(path) {
        tracing::debug!(%error, "removing a dead session's record");
    }
}

/// The running processes (pid, process group) whose environment holds `marker` as an entry.
fn marked_processes(marker: &[u8]) -> Vec<(i32, i32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        // Another user's process cannot be read, and could not be ours.
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !environ.split(|&b| b == 0).any(|entry| entry == marker) {
            continue;
        }
        if let Some(stat) = Stat::read(pid)
            && stat.state != 'Z'
        {
            found.push((pid, stat.pgrp));
        }
    }
    found
}

/// The fields of `/proc/<pid>/stat` used here.
struct Stat {
    state: char,
    pgrp: i32,
    start: u64,
}

impl Stat {
    fn read(pid: i32) -> Option<Self> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid pgrp ...`: comm may hold spaces and parentheses.
        let (_, rest) = text.rsplit_once(')')?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(Self {
            state: fields.first()?.chars().next()?,
            pgrp: fields.get(2)?.parse().ok()?,
            // Field 22 of the line; the 20th after the command name.
            start: fields.get(19)?.parse().ok()?,
        })
    }
}

fn start_time(pid: u32) -> Option<u64> {
    Stat::read(i32::try_from(pid).ok()?).map(|stat| stat.start)
}

/// Whether the process `pid` started at `start` still runs (a zombie does not).
fn alive(pid: u32, start: u64) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    Stat::read(pid).is_some_and(|stat| stat.state != 'Z' && stat.start == start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_wrong_start_time_is_not() {
        let pid = std::process::id();
        let start = start_time(pid).unwrap();
        assert!(alive(pid, start));
        assert!(!alive(pid, start + 1));
    }

    #[test]
    fn reaping_kills_only_what_carries_the_dead_sessions_marker() {
        let dir = tempfile::tempdir().unwrap();
        // A "dead session": a pid that cannot be running (start time 1 never matches).
        let record = dir.path().join("4194300.pgids");
        let spawn = |marker: &str| {
            std::process::Command::new("sleep")
                .arg("317")
                .env(SESSION_MARKER_VAR, marker)
                .process_group(0)
                .spawn()
                .unwrap()
        };
        let mut ours = spawn("4194300:1");
        let mut other = spawn("4194300:2");
        let ours_group = i32::try_from(ours.id()).unwrap();
        let other_group = i32::try_from(other.id()).unwrap();
        std::fs::write(&record, format!("1\n{ours_group}\n{other_group}\n")).unwrap();
        reap_dead_sessions(dir.path());
        let status = ours.wait().unwrap();
        assert!(!status.success(), "the marked process was killed");
        assert!(other.try_wait().unwrap().is_none(), "the other one runs on");
        assert!(!record.exists(), "the record is gone");
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
