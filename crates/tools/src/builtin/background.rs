//! Shell commands started with `run_in_background`: a registry of running and finished tasks
//! whose output can be read later (BashOutput) and which can be killed (KillShell, or all at
//! once when the session ends).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

use crate::sandbox::BashSandbox;

use super::shell::{
    CappedOutput, MAX_OUTPUT_BYTES, forget_group_if_empty, kill_group, spawn_shell, track_group,
};

/// Output a background task keeps before it starts dropping its oldest bytes.
const TASK_LOG_BYTES: usize = 4 * 1024 * 1024;

/// Where a background task is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStatus {
    /// Still running.
    Running,
    /// Exited with this code (None when ended by a signal).
    Exited(Option<i32>),
    /// Killed on request.
    Killed,
    /// Could not be waited on.
    Failed(String),
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskStatus::Running => write!(f, "running"),
            TaskStatus::Exited(Some(code)) => write!(f, "exited with code {code}"),
            TaskStatus::Exited(None) => write!(f, "ended by a signal"),
            TaskStatus::Killed => write!(f, "killed"),
            TaskStatus::Failed(reason) => write!(f, "failed: {reason}"),
        }
    }
}

/// What [`BackgroundTasks::read_new`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskReport {
    /// The task's id (what BashOutput and KillShell take).
    pub id: String,
    /// The command line it runs.
    pub command: String,
    /// Where it is.
    pub status: TaskStatus,
    /// Output since the previous read (capped like a foreground command's).
    pub new_output: String,
    /// Time since it started.
    pub elapsed: Duration,
}

#[derive(Debug)]
struct TaskLog {
    bytes: Vec<u8>,
    /// Bytes dropped from the front (the log is capped).
    base: u64,
    /// Absolute offset up to which the output has been read.
    read_to: u64,
}

#[derive(Debug)]
struct Task {
    command: String,
    pgid: Option<u32>,
    started: Instant,
    log: Arc<Mutex<TaskLog>>,
    status: watch::Sender<TaskStatus>,
}

/// The registry of background shells. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct BackgroundTasks {
    inner: Arc<Mutex<Registry>>,
}

/// A fork starts with no background shells of its own (design.md "One fork").
impl crate::extensions::ContextExtension for BackgroundTasks {
    fn fork(&self) -> Option<Self> {
        None
    }
}

#[derive(Debug, Default)]
struct Registry {
    next_id: u64,
    tasks: BTreeMap<String, Task>,
}

impl Drop for Registry {
    /// The session is gone: nothing can read these tasks any more, so none may outlive it.
    fn drop(&mut self) {
        for task in self.tasks.values() {
            if *task.status.borrow() == TaskStatus::Running {
                kill_group(task.pgid);
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl BackgroundTasks {
    /// Starts `command` in `cwd` in its own process group (under `sandbox`, if any) and
    /// returns its task id.
    pub fn spawn(
        &self,
        command: &str,
        cwd: &Path,
        sandbox: Option<&BashSandbox>,
    ) -> std::io::Result<String> {
        let script = format!("exec 2>&1\n{command}");
        let mut child = spawn_shell(&script, cwd, sandbox)?;
        let pgid = child.id();
        track_group(pgid);
        let log = Arc::new(Mutex::new(TaskLog {
            bytes: Vec::new(),
            base: 0,
            read_to: 0,
        }));
        let (status, _) = watch::channel(TaskStatus::Running);
        let id = {
            let mut registry = lock(&self.inner);
            registry.next_id += 1;
            let id = format!("bash_{}", registry.next_id);
            registry.tasks.insert(
                id.clone(),
                Task {
                    command: command.to_owned(),
                    pgid,
                    started: Instant::now(),
                    log: Arc::clone(&log),
                    status: status.clone(),
                },
            );
            id
        };
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        tokio::spawn(async move {
            let pipes = async {
                let out = async {
                    if let Some(stdout) = stdout {
                        pump_log(stdout, &log).await;
                    }
                };
                let err = async {
                    if let Some(stderr) = stderr {
                        pump_log(stderr, &log).await;
                    }
                };
                tokio::join!(out, err);
            };
            let (_, waited) = tokio::join!(pipes, child.wait());
            forget_group_if_empty(pgid);
            let finished = match waited {
                Ok(exit) => TaskStatus::Exited(exit.code()),
                Err(error) => TaskStatus::Failed(error.to_string()),
            };
            status.send_if_modified(|current| {
                if *current == TaskStatus::Running {
                    *current = finished;
                    true
                } else {
                    false
                }
            });
        });
        Ok(id)
    }

    /// The status and the output since the previous read of task `id`.
    pub fn read_new(&self, id: &str) -> Option<TaskReport> {
        let registry = lock(&self.inner);
        let task = registry.tasks.get(id)?;
        let status = task.status.borrow().clone();
        let mut log = lock(&task.log);
        let start = usize::try_from(log.read_to.saturating_sub(log.base)).unwrap_or(0);
        let mut capped = CappedOutput::new(MAX_OUTPUT_BYTES);
        capped.push(log.bytes.get(start..).unwrap_or_default());
        log.read_to = log.base + log.bytes.len() as u64;
        Some(TaskReport {
            id: id.to_owned(),
            command: task.command.clone(),
            status,
            new_output: capped.render(),
            elapsed: task.started.elapsed(),
        })
    }

    /// The status of task `id`.
    pub fn status(&self, id: &str) -> Option<TaskStatus> {
        lock(&self.inner)
            .tasks
            .get(id)
            .map(|task| task.status.borrow().clone())
    }

    /// Waits until task `id` is no longer running; its final status.
    pub async fn wait(&self, id: &str) -> Option<TaskStatus> {
        let mut receiver = lock(&self.inner).tasks.get(id)?.status.subscribe();
        let status = receiver
            .wait_for(|status| *status != TaskStatus::Running)
            .await
            .ok()?
            .clone();
        Some(status)
    }

    /// Every task: id, command, status.
    pub fn list(&self) -> Vec<(String, String, TaskStatus)> {
        lock(&self.inner)
            .tasks
            .iter()
            .map(|(id, task)| {
                (
                    id.clone(),
                    task.command.clone(),
                    task.status.borrow().clone(),
                )
            })
            .collect()
    }

    /// Kills task `id`'s whole process group. False when there is no such running task.
    pub fn kill(&self, id: &str) -> bool {
        let registry = lock(&self.inner);
        let Some(task) = registry.tasks.get(id) else {
            return false;
        };
        let was_running = task.status.send_if_modified(|current| {
            if *current == TaskStatus::Running {
                *current = TaskStatus::Killed;
                true
            } else {
                false
            }
        });
        if was_running {
            kill_group(task.pgid);
        }
        was_running
    }

    /// Kills every running task (the session is ending).
    pub fn kill_all(&self) {
        let ids: Vec<String> = lock(&self.inner).tasks.keys().cloned().collect();
        for id in ids {
            self.kill(&id);
        }
    }
}

async fn pump_log(mut reader: impl AsyncRead + Unpin, log: &Mutex<TaskLog>) {
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) => break,
            Ok(read) => {
                let mut log = lock(log);
                log.bytes.extend_from_slice(&chunk[..read]);
                let excess = log.bytes.len().saturating_sub(TASK_LOG_BYTES);
                if excess > 0 {
                    log.bytes.drain(..excess);
                    log.base += excess as u64;
                }
            }
            Err(error) => {
                tracing::debug!(%error, "reading background task output");
                break;
            }
        }
    }
}
