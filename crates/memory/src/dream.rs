//! Auto dream (seed 001 §16.2.4 ②, seed 003 §十): extraction captures, dream keeps memory
//! good. A [`BackgroundJob`] of the stop-hook pipeline that, once the gates of
//! [`crate::dream_gate`] pass and it holds the [`crate::ConsolidationLock`], forks an agent on
//! the parent's prompt cache to merge duplicates, drop what is contradicted or stale, make
//! relative dates absolute and keep the index short.
//!
//! - The fork: `run_forked_agent` on the turn's cache-safe params (its first request reads the
//!   parent's cached prefix), the memory sandbox, no transcript, [`crate::DREAM_MAX_TURNS`], and its
//!   own prompt cached (unlike extraction's one-request fork, a dream makes many requests).
//! - Progress: a [`DreamTask`] per dream; [`DreamJob::kill`] aborts it.
//! - The end: on success, emptied memory files are removed, the index loses exact duplicate
//!   lines and lines linking files that are gone ([`crate::dream_tidy`]), and the lock is dated
//!   now ("improved N memories"). A failed, killed or cancelled dream rolls the lock back. The
//!   job reports a [`DreamRun`].

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::future::BoxFuture;
use tine_api_client::{ContentBlock, Message};
use tine_config::project_dir;
use tine_fork_runtime::{
    BackgroundJob, ForkError, ForkParams, JobContext, JobError, JobOutcome, OnMessage,
    run_forked_agent,
};
use tine_permissions::PermissionContext;
use tine_query_loop::utc_date;
use tine_query_loop::{CanUseTool, Terminal};

use crate::consolidation_lock::ConsolidationLock;
use crate::dream_gate::{DreamIo, DreamOptions, GateOutcome, Gates, Ready, ScanThrottle, SystemIo};
use crate::dream_prompt::{DreamPromptInput, build_dream_prompt};
use crate::dream_run::{DreamRun, improved};
use crate::dream_task::{DreamStatus, DreamTask, DreamTaskState};
use crate::dream_tidy::{changed_since, tidy_after};
use crate::error::MemoryError;
use crate::fork_changes::{billed_equivalent_input, snapshot};
use crate::memdir::MemoryDir;
use crate::sandbox::MemorySandbox;

/// The job's name in pipeline events (the cli prints its events as `dream` lines).
pub const DREAM_JOB: &str = "auto_dream";

/// Why a dream could not run.
#[derive(Debug, thiserror::Error)]
pub enum DreamError {
    /// The dream's fork could not run.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// Reading or writing the memory directory failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The task reading or writing files panicked or was cancelled.
    #[error("the dream's file task failed: {0}")]
    Join(String),
    /// Another session holds the consolidation lock.
    #[error(
        "another tine session is consolidating this memory now{}; try again when it is done",
        .pid.as_ref().map(|p| format!(" (PID {p})")).unwrap_or_default()
    )]
    Locked {
        /// The holder's process id, when the lock says.
        pid: Option<String>,
    },
    /// The dream failed; its lock was rolled back.
    #[error("the dream failed, its lock was rolled back: {0}")]
    Failed(String),
}

/// Called with the task's state whenever it changes (`tine memory dream` prints it).
pub type OnDreamProgress = Arc<dyn Fn(&DreamTaskState) + Send + Sync>;

struct Inner {
    dir: MemoryDir,
    sandbox: Arc<MemorySandbox>,
    options: DreamOptions,
    io: Arc<dyn DreamIo>,
    throttle: ScanThrottle,
    on_progress: Mutex<Option<OnDreamProgress>>,
    state: Mutex<JobState>,
}

#[derive(Default)]
struct JobState {
    /// The lock and sessions `should_run` got, for the `run` that follows.
    armed: Option<Box<Ready>>,
    /// The running (or last) dream.
    task: Option<DreamTask>,
}

/// The auto-dream job. Register one per main-thread session on its `StopHookPipeline`.
#[derive(Clone)]
pub struct DreamJob {
    inner: Arc<Inner>,
}

impl DreamJob {
    /// A job for `dir` (created if needed) on the real clock and filesystem, with the
    /// process's scan throttle.
    pub fn new(dir: MemoryDir, options: DreamOptions) -> Result<Self, MemoryError> {
        let throttle = ScanThrottle::process(dir.path());
        Self::with_io(dir, options, Arc::new(SystemIo), throttle)
    }

    /// A job whose gates read time and metadata through `io` and scan under `throttle`.
    pub fn with_io(
        dir: MemoryDir,
        options: DreamOptions,
        io: Arc<dyn DreamIo>,
        throttle: ScanThrottle,
    ) -> Result<Self, MemoryError> {
        Self::build(dir, options, io, throttle, None)
    }

    /// Like [`DreamJob::new`], with the fork's reads judged against the session's project
    /// ([`MemorySandbox::for_project`]: its directories, home and deny/ask rules) instead of
    /// the fork's working directory. Either way the fork may also read, never write, the
    /// project's transcripts.
    pub fn for_project(
        dir: MemoryDir,
        options: DreamOptions,
        project: &PermissionContext,
    ) -> Result<Self, MemoryError> {
        let throttle = ScanThrottle::process(dir.path());
        Self::for_project_with_io(dir, options, project, Arc::new(SystemIo), throttle)
    }

    /// [`DreamJob::for_project`] with the gates' time and metadata read through `io`.
    pub fn for_project_with_io(
        dir: MemoryDir,
        options: DreamOptions,
        project: &PermissionContext,
        io: Arc<dyn DreamIo>,
        throttle: ScanThrottle,
    ) -> Result<Self, MemoryError> {
        Self::build(dir, options, io, throttle, Some(project))
    }

    fn build(
        dir: MemoryDir,
        options: DreamOptions,
        io: Arc<dyn DreamIo>,
        throttle: ScanThrottle,
        project: Option<&PermissionContext>,
    ) -> Result<Self, MemoryError> {
        let sandbox = Arc::new(MemorySandbox::scoped(dir.path(), project)?);
        Ok(Self {
            inner: Arc::new(Inner {
                dir,
                sandbox,
                options,
                io,
                throttle,
                on_progress: Mutex::new(None),
                state: Mutex::new(JobState::default()),
            }),
        })
    }

    /// Calls `on_progress` with every change of the next dreams' state.
    pub fn on_progress(&self, on_progress: OnDreamProgress) {
        *self
            .inner
            .on_progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(on_progress);
    }

    /// The options the job runs with.
    pub fn options(&self) -> DreamOptions {
        self.inner.options
    }

    /// The running dream, or the last one.
    pub fn task(&self) -> Option<DreamTask> {
        self.inner.lock().task.clone()
    }

    /// Kills the running dream `task_id` (the TUI's tasks panel). False when no such dream
    /// is running.
    pub fn kill(&self, task_id: &str) -> bool {
        match self.task() {
            Some(task) if task.id() == task_id && task.is_running() => {
                task.kill();
                true
            }
            _ => false,
        }
    }

    /// The gates for `ctx`'s session, cheapest first (holding the lock when they all pass).
    pub fn gate(&self, ctx: &JobContext) -> Result<GateOutcome, MemoryError> {
        self.inner.gates(ctx, |gates| gates.check())
    }

    /// Dreams now for `ctx`, ignoring the time and session gates but still taking the lock
    /// (`tine memory dream`).
    pub async fn dream_now(&self, ctx: JobContext) -> Result<DreamRun, DreamError> {
        let (outcome, holder) = {
            let inner = Arc::clone(&self.inner);
            let ctx = ctx.clone();
            blocking(move || {
                let outcome = inner.gates(&ctx, |gates| gates.force());
                // The holder's PID, for the message (the body is only diagnostics).
                let holder = std::fs::read_to_string(ConsolidationLock::path(inner.sandbox.dir()))
                    .ok()
                    .map(|body| body.trim().to_owned())
                    .filter(|pid| !pid.is_empty());
                (outcome, holder)
            })
            .await?
        };
        match outcome? {
            GateOutcome::Ready(ready) => self.inner.dream(ctx, *ready).await,
            GateOutcome::Locked | GateOutcome::Recent => Err(DreamError::Locked { pid: holder }),
            other => Err(DreamError::Failed(other.describe())),
        }
    }
}

impl BackgroundJob for DreamJob {
    fn name(&self) -> &str {
        DREAM_JOB
    }

    /// The gates, cheapest first: almost always one `stat`. When they all pass the lock is
    /// held from here until the dream ends.
    fn should_run(&self, ctx: &JobContext) -> bool {
        if !self.inner.options.enabled {
            return false;
        }
        if self.task().is_some_and(|t| t.is_running()) {
            return false;
        }
        match self.gate(ctx) {
            Ok(GateOutcome::Ready(ready)) => {
                self.inner.lock().armed = Some(ready);
                true
            }
            Ok(other) => {
                tracing::debug!(gate = %other.describe(), "no dream this turn");
                false
            }
            Err(error) => {
                tracing::warn!(%error, "the dream gates could not be checked");
                false
            }
        }
    }

    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        let inner = Arc::clone(&self.inner);
        let armed = inner.lock().armed.take();
        Box::pin(async move {
            let Some(ready) = armed else {
                return Ok(JobOutcome::not_run("not_due"));
            };
            let run = inner.dream(ctx, *ready).await.map_err(Box::new)?;
            match &run.task.status {
                DreamStatus::Failed { error } => {
                    Err(Box::new(DreamError::Failed(error.clone())) as JobError)
                }
                DreamStatus::Completed { .. } | DreamStatus::Killed | DreamStatus::Running => {
                    Ok(JobOutcome::new(run.summary(), run))
                }
            }
        })
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, JobState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn gates<T>(&self, ctx: &JobContext, f: impl FnOnce(&Gates<'_>) -> T) -> T {
        let session = &ctx.parent.session;
        let transcripts = project_dir(&session.home, &session.cwd);
        f(&Gates {
            dir: self.sandbox.dir(),
            transcripts: &transcripts,
            current_session: session.session_id.as_str(),
            options: &self.options,
            io: self.io.as_ref(),
            throttle: &self.throttle,
        })
    }

    /// One dream under `ready`'s lock: the fork, then the tidy-up and the commit on success,
    /// the rollback otherwise (also when this future is dropped midway: the lock's drop).
    async fn dream(&self, ctx: JobContext, ready: Ready) -> Result<DreamRun, DreamError> {
        let task = DreamTask::new(
            ready.sessions.len(),
            ready.lock.prior(),
            ctx.cancel.child_token(),
        );
        let listener = self
            .on_progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(listener) = listener {
            task.set_listener(listener);
        }
        self.lock().task = Some(task.clone());
        // Whatever way this ends (an error, or the future dropped by a cancelled pipeline),
        // the task does not stay "running"; the lock rolls back on its own drop.
        let _ended = EndTask(task.clone());
        let result = self.dream_under_lock(ctx, ready, &task).await;
        if let Err(error) = &result {
            task.finish(DreamStatus::Failed {
                error: error.to_string(),
            });
        }
        result
    }

    async fn dream_under_lock(
        &self,
        ctx: JobContext,
        ready: Ready,
        task: &DreamTask,
    ) -> Result<DreamRun, DreamError> {
        let Ready { lock, sessions } = ready;
        let dir = self.sandbox.dir().to_path_buf();
        let session = &ctx.parent.session;
        let transcripts = project_dir(&session.home, &session.cwd);

        let (before, changed) = {
            let dir = dir.clone();
            let last = lock.prior();
            blocking(move || (snapshot(&dir), changed_since(&dir, last))).await?
        };
        let prompt = build_dream_prompt(&DreamPromptInput {
            dir: &dir,
            transcripts: &transcripts,
            sessions: &sessions,
            changed: &changed,
            today: &utc_date(self.io.now()),
            max_turns: self.options.max_turns,
        });
        // Killing the task cancels the fork's loop (its context derives from this token).
        let mut parent = (*ctx.parent).clone();
        parent.tool_context = parent
            .tool_context
            .clone()
            .with_cancellation(task.cancellation().clone());
        let watcher = task.clone();
        // This dream may also read (never write) the transcripts it reviews.
        let sandbox = Arc::new(self.sandbox.as_ref().clone().with_readable(&transcripts));
        let can_use_tool: Arc<dyn CanUseTool> = Arc::new(sandbox.policy().clone());
        let cwd = parent.tool_context.cwd();
        let on_message: OnMessage = Arc::new(move |message: &Message| {
            watcher.observe(message, &|file_path: &str| {
                let resolved = sandbox.check_write_path(file_path, &cwd).ok()?;
                let relative = resolved.strip_prefix(sandbox.dir()).ok()?;
                Some(relative.to_string_lossy().replace('\\', "/"))
            });
        });
        let mut params = ForkParams::new(
            Arc::clone(&ctx.cache_safe),
            vec![Message::user(vec![ContentBlock::text(prompt)])],
            can_use_tool,
            DREAM_JOB,
        );
        params.max_turns = Some(self.options.max_turns);
        params.skip_transcript = true;
        // Many requests: caching its own prompt pays for itself from the second one.
        params.skip_cache_write = false;
        // Never set: it would change the thinking budget and so the cache key (seed 000 §5.1).
        params.max_output_tokens = None;
        params.on_message = Some(on_message);
        let result = match run_forked_agent(&parent, params).await {
            Ok(result) => result,
            Err(error) => {
                lock.rollback()?;
                return Err(error.into());
            }
        };
        let mut run = DreamRun {
            task: task.state(),
            sessions,
            files: Vec::new(),
            removed: Vec::new(),
            index_updated: false,
            index_lines_dropped: 0,
            usage: result.usage,
            first_request_usage: result.first_request_usage,
            cost_usd: result.cost_usd,
            requests: result.requests,
            terminal: result.terminal.describe(),
        };
        let status = match &result.terminal {
            Terminal::Aborted => Some(DreamStatus::Killed),
            _ => result
                .unfinished()
                .map(|error| DreamStatus::Failed { error }),
        };
        if let Some(status) = status {
            tracing::info!(terminal = %run.terminal, "dream did not finish; lock rolled back");
            lock.rollback()?;
            task.finish(status);
            run.task = task.state();
            return Ok(run);
        }

        let tidy = blocking(move || tidy_after(&dir, &before)).await?;
        let tidy = match tidy {
            Ok(tidy) => tidy,
            Err(error) => {
                lock.rollback()?;
                return Err(error.into());
            }
        };
        lock.commit(self.io.now())?;
        run.files = tidy.files;
        run.removed = tidy.removed;
        run.index_updated = tidy.index_updated;
        run.index_lines_dropped = tidy.index_lines_dropped;
        task.finish(DreamStatus::Completed {
            summary: improved(&run.files, run.index_updated),
        });
        run.task = task.state();
        tracing::info!(
            dir = %self.dir.path().display(),
            improved = run.files.len(),
            requests = run.requests,
            cache_read = run.first_request_usage.map_or(0, |u| u.cache_read_input_tokens),
            billed_equivalent = billed_equivalent_input(&run.usage),
            "dream finished"
        );
        Ok(run)
    }
}

/// Marks its task killed if it is still running when dropped.
struct EndTask(DreamTask);

impl Drop for EndTask {
    fn drop(&mut self) {
        if self.0.is_running() {
            self.0.finish(DreamStatus::Killed);
        }
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, DreamError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| DreamError::Join(e.to_string()))
}
