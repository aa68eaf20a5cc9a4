//! [`DreamTask`] (seed 003 §十, `DreamTask`): a running dream as a UI sees it — its phase
//! (`starting`, then `updating` at the first Write or Edit), the sessions it reviews, the
//! memory files it touched, a line per assistant turn — and [`DreamTask::kill`], which aborts
//! the fork; the dream then rolls its lock back.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use serde_json::{Value, json};
use tine_api_client::{ContentBlock, Message, MessageContent, Role};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Where a dream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DreamPhase {
    /// Reading: the directory, the index, the transcripts.
    Starting,
    /// The fork has called Write or Edit at least once.
    Updating,
}

impl DreamPhase {
    /// The phase's name, for UIs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Updating => "updating",
        }
    }
}

/// How a dream ended, or that it has not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DreamStatus {
    /// Still running.
    Running,
    /// Its lock now carries this consolidation's time.
    Completed {
        /// What it did, in one line.
        summary: String,
    },
    /// Killed from the UI or cancelled with the session; the lock was rolled back.
    Killed,
    /// The fork failed; the lock was rolled back.
    Failed {
        /// Why it failed.
        error: String,
    },
}

/// One assistant turn of the dream, summarized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DreamTurn {
    /// The start of the turn's text.
    pub text: String,
    /// The tools it called, in order.
    pub tools: Vec<String>,
}

/// A snapshot of a dream's progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DreamTaskState {
    /// The task's id (`d` and a number).
    pub id: String,
    /// Where the dream is.
    pub phase: DreamPhase,
    /// Sessions since the last consolidation, given to the fork to review.
    pub sessions_reviewing: usize,
    /// Memory files the fork wrote or edited (relative to the memory directory), in order.
    pub files_touched: Vec<String>,
    /// The fork's turns so far.
    pub turns: Vec<DreamTurn>,
    /// The consolidation before this one: what a kill rolls the lock back to.
    pub prior_mtime: Option<SystemTime>,
    /// How it ended, or that it has not.
    pub status: DreamStatus,
}

impl DreamTaskState {
    /// The state for stream-json and logs.
    pub fn to_json(&self) -> Value {
        let status = match &self.status {
            DreamStatus::Running => "running",
            DreamStatus::Completed { .. } => "completed",
            DreamStatus::Killed => "killed",
            DreamStatus::Failed { .. } => "failed",
        };
        json!({
            "task_id": self.id,
            "phase": self.phase.as_str(),
            "status": status,
            "sessions_reviewing": self.sessions_reviewing,
            "files_touched": self.files_touched,
            "turns": self.turns.len(),
        })
    }
}

/// A running (or finished) dream. Clones share it.
#[derive(Clone)]
pub struct DreamTask {
    inner: Arc<TaskInner>,
}

struct TaskInner {
    cancel: CancellationToken,
    state: watch::Sender<DreamTaskState>,
    listener: Mutex<Option<Listener>>,
}

type Listener = Arc<dyn Fn(&DreamTaskState) + Send + Sync>;

impl std::fmt::Debug for DreamTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DreamTask").field(&self.state()).finish()
    }
}

impl DreamTask {
    pub(crate) fn new(
        sessions_reviewing: usize,
        prior_mtime: Option<SystemTime>,
        cancel: CancellationToken,
    ) -> Self {
        let id = format!("dream-{:08x}", uuid_like());
        let (state, _) = watch::channel(DreamTaskState {
            id,
            phase: DreamPhase::Starting,
            sessions_reviewing,
            files_touched: Vec::new(),
            turns: Vec::new(),
            prior_mtime,
            status: DreamStatus::Running,
        });
        Self {
            inner: Arc::new(TaskInner {
                cancel,
                state,
                listener: Mutex::new(None),
            }),
        }
    }

    /// The task's id.
    pub fn id(&self) -> String {
        self.inner.state.borrow().id.clone()
    }

    /// The current state.
    pub fn state(&self) -> DreamTaskState {
        self.inner.state.borrow().clone()
    }

    /// Every change of the state, for a tasks panel.
    pub fn subscribe(&self) -> watch::Receiver<DreamTaskState> {
        self.inner.state.subscribe()
    }

    /// Aborts the dream (the fork's loop stops, running tools are killed); the dream rolls its
    /// lock back, so the next eligible session consolidates.
    pub fn kill(&self) {
        self.inner.cancel.cancel();
    }

    /// Whether the dream is still running.
    pub fn is_running(&self) -> bool {
        self.inner.state.borrow().status == DreamStatus::Running
    }

    pub(crate) fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Calls `listener` with the state after every change.
    pub(crate) fn set_listener(&self, listener: Listener) {
        *self
            .inner
            .listener
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(listener);
    }

    fn update(&self, change: impl FnOnce(&mut DreamTaskState)) {
        self.inner.state.send_modify(change);
        let listener = self
            .inner
            .listener
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(listener) = listener {
            listener(&self.state());
        }
    }

    pub(crate) fn finish(&self, status: DreamStatus) {
        self.update(|s| s.status = status);
    }

    /// Watches every message the fork adds: an assistant turn is summarized, and its Write
    /// and Edit calls on files inside the memory directory (`relative` says which, and as
    /// what name) move the phase to `updating` and are counted as touched.
    pub(crate) fn observe(&self, message: &Message, relative: &dyn Fn(&str) -> Option<String>) {
        if message.role != Role::Assistant {
            return;
        }
        let MessageContent::Blocks(blocks) = &message.content else {
            return;
        };
        let mut turn = DreamTurn {
            text: String::new(),
            tools: Vec::new(),
        };
        let mut touched = Vec::new();
        for block in blocks {
            match block {
                ContentBlock::Text(text) if turn.text.is_empty() => {
                    turn.text = text.text.chars().take(120).collect();
                }
                ContentBlock::ToolUse(call) => {
                    turn.tools.push(call.name.clone());
                    if matches!(call.name.as_str(), "Write" | "Edit")
                        && let Some(name) = call
                            .input
                            .get("file_path")
                            .and_then(Value::as_str)
                            .and_then(relative)
                    {
                        touched.push(name);
                    }
                }
                _ => {}
            }
        }
        self.update(|s| {
            if !touched.is_empty() {
                s.phase = DreamPhase::Updating;
            }
            for name in touched {
                if !s.files_touched.contains(&name) {
                    s.files_touched.push(name);
                }
            }
            s.turns.push(turn);
        });
    }
}

/// A short random id (no need for a full UUID in a task id).
fn uuid_like() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish() as u32
}
