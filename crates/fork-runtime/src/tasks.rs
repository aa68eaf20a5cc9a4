//! The session's task registry (seed 003 §七, "Task 系统"): every sub-agent is a task with an
//! id of a type prefix and 8 random base-36 characters (`a_k2p9x7qm`; 36^8 ≈ 2.8e12, drawn
//! when the task starts, so nobody can guess it ahead), a state, and an output file under
//! `TINE_HOME/tasks/`. The file is created fresh: opened without following a symlink and
//! refused if anything already exists at its path, in a directory that is tine's own (0700,
//! not a symlink), so a link planted there cannot make tine write somewhere else.
//!
//! A finished background task leaves a [`TaskNotification`] that the session delivers to the
//! model as a user message (`-p` waits for them, within its drain bound).

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tine_api_client::Usage;
use tine_tools::{ContextExtension, SubagentActivity};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// What kind of work a task is (its id's prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// A background shell command.
    Shell,
    /// A sub-agent.
    Agent,
    /// A memory consolidation.
    Dream,
}

impl TaskKind {
    /// The id's prefix: `b`, `a` or `d`.
    pub fn prefix(self) -> char {
        match self {
            TaskKind::Shell => 'b',
            TaskKind::Agent => 'a',
            TaskKind::Dream => 'd',
        }
    }
}

/// A fresh id: the kind's prefix, `_`, 8 random base-36 characters (lower case, so a
/// double-click in a terminal selects it whole).
pub(crate) fn new_task_id(kind: TaskKind) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n = uuid::Uuid::new_v4().as_u128();
    let mut id = String::with_capacity(10);
    id.push(kind.prefix());
    id.push('_');
    for _ in 0..8 {
        id.push(char::from(DIGITS[(n % 36) as usize]));
        n /= 36;
    }
    id
}

/// Where a task is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    /// Still running.
    Running,
    /// Finished.
    Completed,
    /// Failed, and why.
    Failed(String),
    /// Stopped on request.
    Cancelled,
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskState::Running => write!(f, "running"),
            TaskState::Completed => write!(f, "completed"),
            TaskState::Failed(_) => write!(f, "failed"),
            TaskState::Cancelled => write!(f, "cancelled"),
        }
    }
}

/// Why a task could not be registered or found.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The task output directory is not safe to write in.
    #[error(
        "cannot use {} for task output: {reason}; remove it (tine creates the directory itself, 0700)",
        .dir.display()
    )]
    UnsafeDirectory {
        /// The directory.
        dir: PathBuf,
        /// Why it is not safe.
        reason: String,
    },
    /// Something already exists where the output file would go.
    #[error(
        "refusing to write task output to {}: something already exists there (a planted link?); the task was not started",
        .path.display()
    )]
    OutputExists {
        /// The output file's path.
        path: PathBuf,
    },
    /// The output file could not be created.
    #[error("cannot create the task output file {}: {source}", .path.display())]
    Io {
        /// The output file's path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// No task has this id.
    #[error("no task with id `{id}`; {known}")]
    Unknown {
        /// The id asked for.
        id: String,
        /// The ids there are, as a sentence.
        known: String,
    },
}

/// A task's output file: created by the registry, appended to by the task.
#[derive(Clone)]
pub struct TaskOutput {
    path: PathBuf,
    file: Arc<Mutex<std::fs::File>>,
}

impl TaskOutput {
    /// The output file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `text` (a failure is logged: the output file is for reading along).
    pub fn append(&self, text: &str) {
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(error) = file.write_all(text.as_bytes()) {
            tracing::warn!(%error, path = %self.path.display(), "cannot write task output");
        }
    }
}

/// What a finished background task tells the model.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskNotification {
    /// The task's id.
    pub task_id: String,
    /// What the task was started for.
    pub description: String,
    /// How it ended.
    pub state: TaskState,
    /// The agent's final report (or why it stopped).
    pub result: String,
    /// Where its full output is.
    pub output_file: PathBuf,
    /// What it used.
    pub usage: Usage,
    /// What it cost, in US dollars.
    pub cost_usd: f64,
}

impl TaskNotification {
    /// The user message the model reads.
    pub fn message(&self) -> String {
        let summary = match &self.state {
            TaskState::Completed => format!("Agent \"{}\" completed", self.description),
            TaskState::Failed(why) => format!("Agent \"{}\" failed: {why}", self.description),
            TaskState::Cancelled => format!("Agent \"{}\" was stopped", self.description),
            TaskState::Running => format!("Agent \"{}\" is running", self.description),
        };
        format!(
            "<task-notification>\n<task-id>{}</task-id>\n<status>{}</status>\n<summary>{summary}</summary>\n<result>{}</result>\n<output-file>{}</output-file>\n</task-notification>",
            self.task_id,
            self.state,
            self.result,
            self.output_file.display()
        )
    }
}

/// One task as callers see it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSnapshot {
    /// The task's id.
    pub id: String,
    /// What kind of work it is.
    pub kind: TaskKind,
    /// What it was started for.
    pub description: String,
    /// Where it is.
    pub state: TaskState,
    /// Where its output goes.
    pub output_file: PathBuf,
    /// The final report, once it ended.
    pub result: Option<String>,
    /// Whether it runs in the background (the model is told when it ends).
    pub background: bool,
    /// An agent's totals and latest calls so far (`None` until its first reply).
    pub activity: Option<SubagentActivity>,
}

struct Entry {
    snapshot: TaskSnapshot,
    cancel: CancellationToken,
}

type IdSource = Box<dyn Fn(TaskKind) -> String + Send + Sync>;

struct Inner {
    dir: PathBuf,
    ids: IdSource,
    tasks: Mutex<BTreeMap<String, Entry>>,
    notifications: Mutex<VecDeque<TaskNotification>>,
    changed: Notify,
}

/// The session's tasks. Cloning shares it; forks see the same registry (a child's TaskOutput
/// reads the session's tasks).
#[derive(Clone)]
pub struct TaskRegistry {
    inner: Arc<Inner>,
}

impl fmt::Debug for TaskRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskRegistry")
            .field("dir", &self.inner.dir)
            .field("tasks", &self.lock().len())
            .finish()
    }
}

impl ContextExtension for TaskRegistry {
    fn fork(&self) -> Option<Self> {
        Some(self.clone())
    }
}

impl TaskRegistry {
    /// Tasks whose output goes to `dir` (`TINE_HOME/tasks`).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self::with_ids(dir, new_task_id)
    }

    /// The same, with ids from `ids` (tests plant a file at a known task's path).
    pub fn with_ids(
        dir: impl Into<PathBuf>,
        ids: impl Fn(TaskKind) -> String + Send + Sync + 'static,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                dir: dir.into(),
                ids: Box::new(ids),
                tasks: Mutex::new(BTreeMap::new()),
                notifications: Mutex::new(VecDeque::new()),
                changed: Notify::new(),
            }),
        }
    }

    /// `TINE_HOME/tasks`.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Entry>> {
        self.inner
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn queue(&self) -> MutexGuard<'_, VecDeque<TaskNotification>> {
        self.inner
            .notifications
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A new running task with its output file; `cancel` is what stopping it cancels.
    pub fn register(
        &self,
        kind: TaskKind,
        description: &str,
        background: bool,
        cancel: CancellationToken,
    ) -> Result<(String, TaskOutput), TaskError> {
        let id = (self.inner.ids)(kind);
        let output = create_output_file(&self.inner.dir, &id)?;
        let snapshot = TaskSnapshot {
            id: id.clone(),
            kind,
            description: description.to_owned(),
            state: TaskState::Running,
            output_file: output.path().to_path_buf(),
            result: None,
            background,
            activity: None,
        };
        self.lock().insert(id.clone(), Entry { snapshot, cancel });
        self.inner.changed.notify_waiters();
        Ok((id, output))
    }

    /// Marks a foreground task as sent to the background: its end leaves a notification.
    pub fn set_background(&self, id: &str) {
        if let Some(entry) = self.lock().get_mut(id) {
            entry.snapshot.background = true;
        }
    }

    /// Sends running foreground task `id` to the background (Ctrl+B in the TUI): the call
    /// waiting for it returns at once ([`TaskRegistry::until_backgrounded`]) and its end
    /// leaves a notification. False when it is not a running foreground task.
    pub fn send_to_background(&self, id: &str) -> bool {
        let moved = match self.lock().get_mut(id) {
            Some(entry)
                if !entry.snapshot.background && entry.snapshot.state == TaskState::Running =>
            {
                entry.snapshot.background = true;
                true
            }
            _ => false,
        };
        if moved {
            self.inner.changed.notify_waiters();
        }
        moved
    }

    /// Sends every running foreground agent to the background; returns how many.
    pub fn send_agents_to_background(&self) -> usize {
        let foreground: Vec<String> = self
            .list()
            .into_iter()
            .filter(|t| t.kind == TaskKind::Agent && !t.background)
            .map(|t| t.id)
            .collect();
        foreground
            .iter()
            .filter(|id| self.send_to_background(id))
            .count()
    }

    /// Resolves once task `id` runs in the background (never for a task that is not known).
    pub async fn until_backgrounded(&self, id: &str) {
        loop {
            let changed = self.inner.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.get(id).is_some_and(|t| t.background) {
                return;
            }
            changed.await;
        }
    }

    /// What running task `id` has done so far (an agent's latest reply): a tasks panel hears
    /// of it ([`TaskRegistry::next_change`]).
    pub fn set_activity(&self, id: &str, activity: SubagentActivity) {
        let changed = match self.lock().get_mut(id) {
            Some(entry) if entry.snapshot.state == TaskState::Running => {
                entry.snapshot.activity = Some(activity);
                true
            }
            _ => false,
        };
        if changed {
            self.inner.changed.notify_waiters();
        }
    }

    /// The task ended. A background task's end is queued as a notification for the model.
    pub fn finish(&self, id: &str, state: TaskState, result: String, usage: Usage, cost_usd: f64) {
        let notification = {
            let mut tasks = self.lock();
            let Some(entry) = tasks.get_mut(id) else {
                return;
            };
            entry.snapshot.state = state.clone();
            entry.snapshot.result = Some(result.clone());
            entry.snapshot.background.then(|| TaskNotification {
                task_id: id.to_owned(),
                description: entry.snapshot.description.clone(),
                state,
                result,
                output_file: entry.snapshot.output_file.clone(),
                usage,
                cost_usd,
            })
        };
        if let Some(notification) = notification {
            self.queue().push_back(notification);
        }
        self.inner.changed.notify_waiters();
    }

    /// The task `id`, if there is one.
    pub fn get(&self, id: &str) -> Option<TaskSnapshot> {
        self.lock().get(id).map(|e| e.snapshot.clone())
    }

    /// Every task, by id.
    pub fn list(&self) -> Vec<TaskSnapshot> {
        self.lock().values().map(|e| e.snapshot.clone()).collect()
    }

    /// Cancels a running task (TaskStop); its end is reported as it comes.
    pub fn stop(&self, id: &str) -> Result<TaskSnapshot, TaskError> {
        let tasks = self.lock();
        match tasks.get(id) {
            Some(entry) => {
                entry.cancel.cancel();
                Ok(entry.snapshot.clone())
            }
            None => Err(TaskError::Unknown {
                id: id.to_owned(),
                known: known_ids(&tasks),
            }),
        }
    }

    /// Waits until a task appeared or changed (its state, its activity, sent to the
    /// background) since `seen` (which it updates: id → the task as last returned), and
    /// returns those tasks, for a tasks panel.
    pub async fn next_change(
        &self,
        seen: &mut std::collections::HashMap<String, TaskSnapshot>,
    ) -> Vec<TaskSnapshot> {
        loop {
            let changed = self.inner.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let fresh: Vec<TaskSnapshot> = self
                .list()
                .into_iter()
                .filter(|task| seen.get(&task.id) != Some(task))
                .collect();
            if !fresh.is_empty() {
                for task in &fresh {
                    seen.insert(task.id.clone(), task.clone());
                }
                return fresh;
            }
            changed.await;
        }
    }

    /// Background tasks still running.
    pub fn running_in_background(&self) -> usize {
        self.lock()
            .values()
            .filter(|e| e.snapshot.background && e.snapshot.state == TaskState::Running)
            .count()
    }

    /// The notifications queued so far.
    pub fn take_notifications(&self) -> Vec<TaskNotification> {
        self.queue().drain(..).collect()
    }

    /// Waits until a notification is queued (then returns all that are) or no background task
    /// is left running (`None` when nothing is queued either). Past `deadline` the running
    /// ones are cancelled, and what they report is returned as they stop.
    pub async fn next_notifications(
        &self,
        deadline: tokio::time::Instant,
    ) -> Option<Vec<TaskNotification>> {
        let mut cancelled = false;
        loop {
            let changed = self.inner.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let queued = self.take_notifications();
            if !queued.is_empty() {
                return Some(queued);
            }
            if self.running_in_background() == 0 {
                return None;
            }
            if cancelled {
                changed.await;
                continue;
            }
            tokio::select! {
                () = &mut changed => {}
                () = tokio::time::sleep_until(deadline) => {
                    tracing::warn!("background agents still running at the drain bound; stopping them");
                    self.cancel_background();
                    cancelled = true;
                }
            }
        }
    }

    /// Cancels every running background task.
    pub fn cancel_background(&self) {
        for entry in self.lock().values() {
            if entry.snapshot.background && entry.snapshot.state == TaskState::Running {
                entry.cancel.cancel();
            }
        }
    }
}

fn known_ids(tasks: &BTreeMap<String, Entry>) -> String {
    if tasks.is_empty() {
        "there are no tasks".to_owned()
    } else {
        let ids: Vec<&str> = tasks.keys().map(String::as_str).collect();
        format!("known ids: {}", ids.join(", "))
    }
}

/// `dir/<id>.output`, created new: the directory must be tine's own (a real directory, not a
/// symlink, owner-only), and the file is opened with `O_CREAT | O_EXCL | O_NOFOLLOW`, so an
/// existing file or link at the path is refused rather than followed or truncated.
fn create_output_file(dir: &Path, id: &str) -> Result<TaskOutput, TaskError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};

    let unsafe_dir = |reason: String| TaskError::UnsafeDirectory {
        dir: dir.to_path_buf(),
        reason,
    };
    match std::fs::symlink_metadata(dir) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            tine_config::private_fs::create_dir_all(dir).map_err(|source| TaskError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        Err(error) => return Err(unsafe_dir(error.to_string())),
        Ok(_) => {}
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| unsafe_dir(e.to_string()))?;
    if meta.file_type().is_symlink() {
        return Err(unsafe_dir("it is a symbolic link".to_owned()));
    }
    if !meta.is_dir() {
        return Err(unsafe_dir("it is not a directory".to_owned()));
    }
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(unsafe_dir("another user owns it".to_owned()));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| unsafe_dir(format!("cannot make it owner-only: {e}")))?;
    }
    let path = dir.join(format!("{id}.output"));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .mode(0o600)
        .open(&path)
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::AlreadyExists => TaskError::OutputExists { path: path.clone() },
            _ => TaskError::Io {
                path: path.clone(),
                source,
            },
        })?;
    Ok(TaskOutput {
        path,
        file: Arc::new(Mutex::new(file)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_a_prefix_and_eight_base36_characters() {
        let id = new_task_id(TaskKind::Agent);
        assert_eq!(id.len(), 10);
        assert!(id.starts_with("a_"));
        assert!(
            id[2..]
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        );
        assert_ne!(id, new_task_id(TaskKind::Agent));
        assert!(new_task_id(TaskKind::Shell).starts_with("b_"));
    }

    #[tokio::test]
    async fn a_foreground_agent_sent_to_the_background_releases_its_call_and_reports() {
        let dir = tempfile::tempdir().unwrap();
        let registry = TaskRegistry::new(dir.path().join("tasks"));
        let (id, _output) = registry
            .register(TaskKind::Agent, "survey", false, CancellationToken::new())
            .unwrap();
        let waiting = tokio::spawn({
            let (registry, id) = (registry.clone(), id.clone());
            async move { registry.until_backgrounded(&id).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "a foreground call waits");
        assert_eq!(registry.send_agents_to_background(), 1);
        waiting.await.unwrap();
        assert_eq!(registry.send_agents_to_background(), 0, "once");
        registry.finish(
            &id,
            TaskState::Completed,
            "done".into(),
            Usage::default(),
            0.0,
        );
        let notes = registry.take_notifications();
        assert_eq!(notes.len(), 1, "its end is reported as a background task's");
        assert_eq!(notes[0].task_id, id);
    }

    #[tokio::test]
    async fn a_panel_hears_of_an_agents_activity_until_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let registry = TaskRegistry::new(dir.path().join("tasks"));
        let (id, _output) = registry
            .register(TaskKind::Agent, "survey", true, CancellationToken::new())
            .unwrap();
        let mut seen = std::collections::HashMap::new();
        let first = registry.next_change(&mut seen).await;
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].activity, None);
        let activity = SubagentActivity {
            totals: tine_tools::SubagentTotals {
                tool_uses: 1,
                ..Default::default()
            },
            recent: Vec::new(),
        };
        registry.set_activity(&id, activity.clone());
        let changed = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            registry.next_change(&mut seen),
        )
        .await
        .expect("an activity is a change");
        assert_eq!(changed[0].activity.as_ref(), Some(&activity));
        registry.finish(
            &id,
            TaskState::Completed,
            "done".into(),
            Usage::default(),
            0.0,
        );
        registry.set_activity(&id, SubagentActivity::default());
        let ended = registry.get(&id).unwrap();
        assert_eq!(
            ended.activity,
            Some(activity),
            "an ended task keeps its last"
        );
    }
}
