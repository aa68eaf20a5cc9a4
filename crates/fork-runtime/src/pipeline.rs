//! The stop-hook pipeline (seed 003 §十): when a main-thread turn ends with no tool calls,
//! save the turn's [`CacheSafeParams`], start every registered [`BackgroundJob`] on its own task
//! without blocking input, then run the user's stop hooks. Forks and sub-agents never reach it
//! (their loops run without stop hooks).
//!
//! A job may batch its work: [`BackgroundJob::should_run`] lets it decline a turn (no task, no
//! event) and keep what it needs, and [`StopHookPipeline::flush`] starts the deferred work of
//! every job now. Hosts flush when the session goes idle, before compaction drops history, and
//! at exit; headless `-p` flushes, then drains pending jobs before exiting.
//!
//! Stopping a job: its token ([`JobContext::cancel`]) is cancelled, and a job that honours it
//! returns within [`CANCEL_GRACE`] (with what it has, or an error); a job still running then is
//! aborted: its own task drops its future (a fork inside it cancels its tools as it goes), so
//! nothing of it runs or writes once [`StopHookPipeline::drain`] has returned. Either way the
//! job reports `Cancelled`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use tine_query_loop::hooks::StopHookOutcome;
use tine_query_loop::{StopContext, StopHooks};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::cache_safe::{CacheSafeParams, CacheSafeSlot};
use crate::job_outcome::JobOutcome;
use crate::subagent::ParentContext;

/// Default bound on how long `-p` waits for background jobs before cancelling them.
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a cancelled job has to stop on its own before it is aborted.
pub const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// What a background job gets: the turn's cache-safe params, the parent to fork from, and a
/// token cancelled when the session ends or the drain times out.
#[derive(Clone)]
pub struct JobContext {
    /// The turn's request as sent: what a fork must match to read its cache.
    pub cache_safe: Arc<CacheSafeParams>,
    /// The session to fork from.
    pub parent: Arc<ParentContext>,
    /// Cancelled when the session ends or the drain times out.
    pub cancel: CancellationToken,
}

/// Why a job failed (logged and shown; never reaches the loop).
pub type JobError = Box<dyn std::error::Error + Send + Sync>;

/// Work started after main-thread turns (memory extraction, auto dream, ...).
pub trait BackgroundJob: Send + Sync {
    /// The job's name, for events and logs.
    fn name(&self) -> &str;

    /// Asked at every turn end: whether to start [`BackgroundJob::run`] for this turn. A job
    /// that batches keeps what it needs from `ctx` and answers `false` (no task is spawned and
    /// no event is emitted); its [`BackgroundJob::flush`] then runs what it deferred.
    fn should_run(&self, _ctx: &JobContext) -> bool {
        true
    }

    /// The job's work for one turn, run on its own task.
    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>>;

    /// The work deferred by `should_run`, to run now (the session went idle, compaction is
    /// about to drop history, the process is exiting), or `None` when nothing waits.
    fn flush(&self) -> Option<BoxFuture<'static, Result<JobOutcome, JobError>>> {
        None
    }
}

/// A type whose background work is another job's (a domain type around a
/// [`CoalescingJob`](crate::CoalescingJob)): it is the [`BackgroundJob`] that job is.
pub trait WrapsJob: Send + Sync {
    /// The job doing the work.
    fn job(&self) -> &dyn BackgroundJob;
}

impl<T: WrapsJob> BackgroundJob for T {
    fn name(&self) -> &str {
        self.job().name()
    }

    fn should_run(&self, ctx: &JobContext) -> bool {
        self.job().should_run(ctx)
    }

    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        self.job().run(ctx)
    }

    fn flush(&self) -> Option<BoxFuture<'static, Result<JobOutcome, JobError>>> {
        self.job().flush()
    }
}

/// Background work as the UI sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum BackgroundEvent {
    /// A job started.
    Started {
        /// The job's name.
        job: String,
    },
    /// A job finished.
    Finished {
        /// The job's name.
        job: String,
        /// What it did.
        outcome: JobOutcome,
    },
    /// A job failed.
    Failed {
        /// The job's name.
        job: String,
        /// Why.
        error: String,
    },
    /// A job was cancelled (the session ended, or the drain timed out).
    Cancelled {
        /// The job's name.
        job: String,
    },
}

/// What draining found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Jobs that finished before the deadline.
    pub finished: usize,
    /// Still running at the deadline, then cancelled (all of them stopped before `drain`
    /// returned).
    pub cancelled: usize,
    /// Of the cancelled, those that ignored their token for [`CANCEL_GRACE`] and were aborted.
    pub aborted: usize,
}

struct Running {
    job: String,
    handle: JoinHandle<Stopped>,
}

/// How a job's task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    /// The job's future returned (done, failed, or stopped on its token).
    Ended,
    /// It ignored its token for [`CANCEL_GRACE`] and was dropped.
    Dropped,
}

/// The pipeline, installed as the main thread's [`StopHooks`].
pub struct StopHookPipeline {
    slot: CacheSafeSlot,
    jobs: Vec<Arc<dyn BackgroundJob>>,
    user_hooks: Option<Arc<dyn StopHooks>>,
    parent: Arc<ParentContext>,
    events: Option<mpsc::UnboundedSender<BackgroundEvent>>,
    cancel: CancellationToken,
    running: Mutex<Vec<Running>>,
}

impl StopHookPipeline {
    /// A pipeline forking from `parent`, saving each turn's request in `slot`.
    pub fn new(parent: Arc<ParentContext>, slot: CacheSafeSlot) -> Self {
        Self {
            slot,
            jobs: Vec::new(),
            user_hooks: None,
            parent,
            events: None,
            cancel: CancellationToken::new(),
            running: Mutex::new(Vec::new()),
        }
    }

    /// Registers a job started after every turn.
    pub fn with_job(mut self, job: Arc<dyn BackgroundJob>) -> Self {
        self.jobs.push(job);
        self
    }

    /// The user's stop hooks, run after the jobs are started.
    pub fn with_user_hooks(mut self, hooks: Arc<dyn StopHooks>) -> Self {
        self.user_hooks = Some(hooks);
        self
    }

    /// Where job events go.
    pub fn with_events(mut self, events: mpsc::UnboundedSender<BackgroundEvent>) -> Self {
        self.events = Some(events);
        self
    }

    /// Where each turn's cache-safe params are saved.
    pub fn slot(&self) -> &CacheSafeSlot {
        &self.slot
    }

    /// Jobs started and not yet finished.
    pub fn pending(&self) -> usize {
        self.lock()
            .iter()
            .filter(|r| !r.handle.is_finished())
            .count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn emit(&self, event: BackgroundEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event);
        }
    }

    /// Saves the params and starts the jobs that want this turn (the first half of `on_stop`,
    /// public for hosts that end turns without the loop, like the SDK-style headless path).
    pub fn turn_ended(&self, params: CacheSafeParams) {
        let cache_safe = self.slot.save(params);
        for job in &self.jobs {
            let ctx = JobContext {
                cache_safe: Arc::clone(&cache_safe),
                parent: Arc::clone(&self.parent),
                cancel: self.cancel.child_token(),
            };
            if !job.should_run(&ctx) {
                continue;
            }
            let cancel = ctx.cancel.clone();
            let future = job.run(ctx);
            self.spawn(job.name(), future, cancel);
        }
    }

    /// Starts the deferred work of every job now: call it when the session goes idle, before
    /// compaction replaces the history, and before [`StopHookPipeline::drain`] at exit (so a
    /// one-turn `-p` run still does what a batching job put off). Returns how many started.
    pub fn flush(&self) -> usize {
        let mut started = 0;
        for job in &self.jobs {
            if let Some(future) = job.flush() {
                self.spawn(job.name(), future, self.cancel.child_token());
                started += 1;
            }
        }
        started
    }

    /// Runs `future` on its own task, tracked for `drain`, with its events.
    fn spawn(
        &self,
        name: &str,
        future: BoxFuture<'static, Result<JobOutcome, JobError>>,
        cancel: CancellationToken,
    ) {
        let mut running = self.lock();
        running.retain(|r| !r.handle.is_finished());
        let events = self.events.clone();
        let job_name = name.to_owned();
        self.emit(BackgroundEvent::Started {
            job: name.to_owned(),
        });
        let handle = tokio::spawn(async move {
            // A job's own task: a panic or error ends here, never in the loop. The job sees its
            // token; one still running CANCEL_GRACE after it was cancelled is dropped here (at
            // its next await), so the task always ends and says how.
            let outcome = tokio::select! {
                biased;
                result = future => Some(result),
                () = async {
                    cancel.cancelled().await;
                    tokio::time::sleep(CANCEL_GRACE).await;
                } => None,
            };
            let (event, stopped) = match outcome {
                // Stopped on its token: cancelled, whatever it returned with (a killed dream,
                // an extraction with half its memories).
                Some(_) if cancel.is_cancelled() => {
                    (BackgroundEvent::Cancelled { job: job_name }, Stopped::Ended)
                }
                Some(Ok(outcome)) => (
                    BackgroundEvent::Finished {
                        job: job_name,
                        outcome,
                    },
                    Stopped::Ended,
                ),
                Some(Err(error)) => {
                    tracing::warn!(job = %job_name, %error, "background job failed");
                    (
                        BackgroundEvent::Failed {
                            job: job_name,
                            error: error.to_string(),
                        },
                        Stopped::Ended,
                    )
                }
                None => {
                    tracing::warn!(job = %job_name, "background job ignored its cancellation; dropped");
                    (
                        BackgroundEvent::Cancelled { job: job_name },
                        Stopped::Dropped,
                    )
                }
            };
            if let Some(tx) = events {
                let _ = tx.send(event);
            }
            stopped
        });
        running.push(Running {
            job: name.to_owned(),
            handle,
        });
    }

    /// Waits for pending jobs up to `timeout`, then cancels the rest: their tokens first, and
    /// after [`CANCEL_GRACE`] those still running are aborted. Every job has stopped when this
    /// returns.
    pub async fn drain(&self, timeout: Duration) -> DrainReport {
        let running: Vec<Running> = std::mem::take(&mut *self.lock());
        let mut report = DrainReport::default();
        let deadline = tokio::time::Instant::now() + timeout;
        let mut late = Vec::new();
        for mut r in running {
            match tokio::time::timeout_at(deadline, &mut r.handle).await {
                Ok(joined) => {
                    self.report_panic(&r.job, joined.map(|_| ()));
                    report.finished += 1;
                }
                Err(_) => late.push(r),
            }
        }
        if late.is_empty() {
            return report;
        }
        self.cancel.cancel();
        for r in late {
            report.cancelled += 1;
            // Each task ends within CANCEL_GRACE of the token (it drops a job that ignores it).
            match r.handle.await {
                Ok(Stopped::Dropped) => report.aborted += 1,
                joined => self.report_panic(&r.job, joined.map(|_| ())),
            }
        }
        report
    }

    fn report_panic(&self, job: &str, joined: Result<(), tokio::task::JoinError>) {
        if let Err(error) = joined {
            tracing::warn!(job = %job, %error, "background job panicked");
            self.emit(BackgroundEvent::Failed {
                job: job.to_owned(),
                error: format!("panicked: {error}"),
            });
        }
    }

    /// Cancels every running job now (Ctrl-C): a job honouring its token stops with what it
    /// has; one that ignores it is dropped after [`CANCEL_GRACE`]. Each reports `Cancelled`.
    pub fn cancel_all(&self) {
        self.cancel.cancel();
    }
}

impl StopHooks for StopHookPipeline {
    fn on_stop<'a>(&'a self, ctx: StopContext<'a>) -> BoxFuture<'a, StopHookOutcome> {
        Box::pin(async move {
            if !ctx.stop_hook_active {
                self.turn_ended(CacheSafeParams {
                    template: ctx.template.clone(),
                    messages: Arc::from(ctx.messages.to_vec()),
                });
            }
            match &self.user_hooks {
                Some(hooks) => hooks.on_stop(ctx).await,
                None => StopHookOutcome::Continue,
            }
        })
    }
}
