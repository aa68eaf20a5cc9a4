//! The background events a pipeline sent, and waiting for what happens on another task.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tine_fork_runtime::{BackgroundEvent, JobOutcome};
use tokio::sync::mpsc;

/// Every [`BackgroundEvent`] sent so far, in order. Reading it takes what the channel holds,
/// so an event sent before the read is in it (no forwarder task to wait for).
#[derive(Clone)]
pub struct EventTally {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    rx: mpsc::UnboundedReceiver<BackgroundEvent>,
    seen: Vec<BackgroundEvent>,
}

impl EventTally {
    /// A tally and the sender to give the pipeline (`StopHookPipeline::with_events`).
    pub fn new() -> (Self, mpsc::UnboundedSender<BackgroundEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let inner = Inner {
            rx,
            seen: Vec::new(),
        };
        (
            Self {
                inner: Arc::new(Mutex::new(inner)),
            },
            tx,
        )
    }

    /// Every event so far.
    pub fn all(&self) -> Vec<BackgroundEvent> {
        let mut inner = self.inner.lock().unwrap();
        while let Ok(event) = inner.rx.try_recv() {
            inner.seen.push(event);
        }
        inner.seen.clone()
    }

    /// Whether any event so far matches.
    pub fn any(&self, matches: impl Fn(&BackgroundEvent) -> bool) -> bool {
        self.all().iter().any(matches)
    }

    /// The events of `job`.
    pub fn of(&self, job: &str) -> Vec<BackgroundEvent> {
        self.all()
            .into_iter()
            .filter(|e| job_of(e) == job)
            .collect()
    }

    /// The outcomes `job` finished with; a failure of any job panics (with its error).
    pub fn outcomes(&self, job: &str) -> Vec<JobOutcome> {
        self.all()
            .into_iter()
            .filter_map(|e| match e {
                BackgroundEvent::Finished { job: j, outcome } if j == job => Some(outcome),
                BackgroundEvent::Failed { job, error } => panic!("{job} failed: {error}"),
                _ => None,
            })
            .collect()
    }

    /// The names of the jobs reported cancelled.
    pub fn cancelled(&self) -> Vec<String> {
        self.all()
            .into_iter()
            .filter_map(|e| match e {
                BackgroundEvent::Cancelled { job } => Some(job),
                _ => None,
            })
            .collect()
    }
}

/// The job an event is about.
pub fn job_of(event: &BackgroundEvent) -> &str {
    match event {
        BackgroundEvent::Started { job }
        | BackgroundEvent::Finished { job, .. }
        | BackgroundEvent::Failed { job, .. }
        | BackgroundEvent::Cancelled { job } => job,
    }
}

/// Polls `done` every 10 ms until it holds; panics after 10 s with `what`.
pub async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..1_000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}
