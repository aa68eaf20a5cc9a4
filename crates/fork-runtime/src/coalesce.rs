//! [`CoalescingJob`]: a [`BackgroundJob`] whose work never overlaps itself, one run at a time
//! plus a trailing run (two extraction forks would save one memory twice, two Magic Docs forks
//! would edit one file at once). A trigger that comes during a run waits: the latest replaces
//! an earlier one, unless that one is pinned (its messages are about to leave the history).
//! When the run ends, the job runs again for the waiting trigger if it is forced or the work is
//! still due, and reports once for the run and its trailing runs. The work itself, what is due
//! and what one run does, is a [`CoalescedWork`].

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::future::BoxFuture;

use crate::job_outcome::JobOutcome;
use crate::pipeline::{BackgroundJob, JobContext, JobError};

/// The status of the outcome a start reports when a run in progress takes its trigger.
pub const STASHED: &str = "stashed";

/// What a [`CoalescingJob`] runs.
pub trait CoalescedWork: Send + Sync + 'static {
    /// What one run did.
    type Report: Send + 'static;
    /// Why one run failed.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The job's name, for events and logs.
    fn name(&self) -> &str;

    /// Whether a turn concerns the work at all (`false`: nothing starts, nothing waits, and
    /// the turn is not kept for a flush).
    fn concerns(&self, _ctx: &JobContext) -> bool {
        true
    }

    /// Whether `ctx` is due a run: asked when a turn ends with no run in progress, and of a
    /// waiting trigger that is not forced when a run ends.
    fn due(&self, _ctx: &JobContext) -> bool {
        true
    }

    /// Whether the host's flushes (idle, before compaction, exit) run the work for the last
    /// turn; by default they do not.
    fn flushes(&self) -> bool {
        false
    }

    /// Whether a flush of the last turn's `ctx` has something to do (asked of a work that
    /// [`CoalescedWork::flushes`], when no run is in progress).
    fn worth_flushing(&self, _ctx: &JobContext) -> bool {
        true
    }

    /// One run for `ctx`.
    fn run_once<'a>(
        &'a self,
        ctx: &'a JobContext,
    ) -> BoxFuture<'a, Result<Self::Report, Self::Error>>;

    /// The outcome of one start: the reports of its runs, in order, and the last run's error
    /// (when every run failed the job fails with that error instead, and this is not asked).
    fn outcome(&self, reports: Vec<Self::Report>, error: Option<Self::Error>) -> JobOutcome;
}

/// How a trigger waits when a run is in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// A turn ended: its trailing run happens only if the work is still due then.
    Turn,
    /// Runs whether due or not (a flush, a start the pipeline decided on).
    Forced,
    /// Forced, and not replaced by later triggers: its messages are about to leave the history
    /// (compaction).
    Pinned,
}

struct Waiting {
    ctx: JobContext,
    forced: bool,
    pinned: bool,
}

#[derive(Default)]
struct Slot {
    running: bool,
    /// A trigger that came during the run.
    waiting: Option<Waiting>,
    /// The last turn that concerned a work that flushes.
    latest: Option<JobContext>,
}

impl Slot {
    /// Keeps `ctx` for the trailing run: the latest wins, unless a pinned one waits (which
    /// then becomes forced); a forced trigger stays forced.
    fn stash(&mut self, ctx: JobContext, trigger: Trigger) {
        if trigger == Trigger::Pinned {
            self.waiting = Some(Waiting {
                ctx,
                forced: true,
                pinned: true,
            });
            return;
        }
        let forced = trigger == Trigger::Forced;
        match &mut self.waiting {
            Some(waiting) if waiting.pinned => waiting.forced = true,
            Some(waiting) => {
                waiting.forced |= forced;
                waiting.ctx = ctx;
            }
            None => {
                self.waiting = Some(Waiting {
                    ctx,
                    forced,
                    pinned: false,
                });
            }
        }
    }
}

fn lock(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One run at a time of `W`, plus a trailing run. Clones share the work and its slot.
pub struct CoalescingJob<W> {
    work: Arc<W>,
    slot: Arc<Mutex<Slot>>,
}

impl<W> Clone for CoalescingJob<W> {
    fn clone(&self) -> Self {
        Self {
            work: Arc::clone(&self.work),
            slot: Arc::clone(&self.slot),
        }
    }
}

impl<W: CoalescedWork> CoalescingJob<W> {
    /// A job running `work`, idle.
    pub fn new(work: W) -> Self {
        Self {
            work: Arc::new(work),
            slot: Arc::default(),
        }
    }

    /// The work the job runs.
    pub fn work(&self) -> &W {
        &self.work
    }

    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        lock(&self.slot).running
    }

    /// Starts a run of `ctx` and its trailing runs; when a run is in progress, `ctx` waits
    /// for it as `trigger` says and the returned future reports [`STASHED`] at once.
    pub fn start(
        &self,
        ctx: JobContext,
        trigger: Trigger,
    ) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        {
            let mut slot = lock(&self.slot);
            if slot.running {
                slot.stash(ctx, trigger);
                return Box::pin(async { Ok(JobOutcome::not_run(STASHED)) });
            }
            slot.running = true;
        }
        let work = Arc::clone(&self.work);
        let slot = Arc::clone(&self.slot);
        // Made before the future, so dropping it unpolled also clears `running`.
        let guard = RunningGuard {
            slot: Arc::clone(&slot),
            armed: true,
        };
        Box::pin(async move {
            let mut guard = guard;
            let mut ctx = ctx;
            let mut reports = Vec::new();
            let mut last_error = None;
            loop {
                match work.run_once(&ctx).await {
                    Ok(report) => reports.push(report),
                    Err(error) => {
                        tracing::warn!(job = work.name(), %error, "background run failed");
                        last_error = Some(error);
                    }
                }
                // Take the waiting trigger and clear `running` under one lock, so a trigger is
                // never lost between the two.
                let mut slot = lock(&slot);
                let next = slot.waiting.take().filter(|w| w.forced || work.due(&w.ctx));
                match next {
                    Some(next) => ctx = next.ctx,
                    None => {
                        slot.running = false;
                        guard.armed = false;
                        break;
                    }
                }
            }
            match (reports.is_empty(), last_error) {
                (true, Some(error)) => Err(Box::new(error) as JobError),
                (_, error) => Ok(work.outcome(reports, error)),
            }
        })
    }
}

impl<W: CoalescedWork> BackgroundJob for CoalescingJob<W> {
    fn name(&self) -> &str {
        self.work.name()
    }

    /// Keeps `ctx` for a flush (of a work that flushes); during a run it waits for the
    /// trailing run instead, else the work says whether it is due.
    fn should_run(&self, ctx: &JobContext) -> bool {
        if !self.work.concerns(ctx) {
            return false;
        }
        {
            let mut slot = lock(&self.slot);
            if self.work.flushes() {
                slot.latest = Some(ctx.clone());
            }
            if slot.running {
                slot.stash(ctx.clone(), Trigger::Turn);
                return false;
            }
        }
        self.work.due(ctx)
    }

    /// Runs now, due or not (the pipeline calls it when `should_run` said so).
    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        self.start(ctx, Trigger::Forced)
    }

    /// Runs what the last turn left, when the work says a flush of it has something to do;
    /// during a run, the running task (which the pipeline tracks) takes it as its trailing run.
    fn flush(&self) -> Option<BoxFuture<'static, Result<JobOutcome, JobError>>> {
        let ctx = {
            let mut slot = lock(&self.slot);
            let ctx = slot.latest.clone()?;
            if slot.running {
                slot.stash(ctx, Trigger::Forced);
                return None;
            }
            ctx
        };
        if !self.work.worth_flushing(&ctx) {
            return None;
        }
        Some(self.start(ctx, Trigger::Pinned))
    }
}

/// Clears `running` (and the waiting trigger) when a run is dropped midway (the session was
/// cancelled).
struct RunningGuard {
    slot: Arc<Mutex<Slot>>,
    armed: bool,
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        if self.armed {
            let mut slot = lock(&self.slot);
            slot.running = false;
            slot.waiting = None;
        }
    }
}

#[cfg(test)]
#[path = "coalesce_tests.rs"]
mod tests;
