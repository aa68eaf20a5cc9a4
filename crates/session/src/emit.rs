//! Where the session's events go: the front end's channel, each [`Event`] named by the op it
//! answers. The task sets the running turn's op ([`Emitter::set_current`]); what is sent while
//! it runs, from the task or from the turn's tools and questions on other tasks, names it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc;

use crate::protocol::{Event, OpId, QuestionId, SessionEvent};

/// Sends events to the front end (cheap to clone; every clone names the same running op).
#[derive(Clone)]
pub(crate) struct Emitter {
    tx: mpsc::UnboundedSender<Event>,
    current: Arc<Mutex<Option<OpId>>>,
    /// One numbering for every question the session asks (permission requests, stuck
    /// models, elicitations), so an answer names exactly one.
    questions: Arc<AtomicU64>,
    /// Set once `ShutdownComplete` is sent: nothing follows it.
    ended: Arc<AtomicBool>,
}

impl Emitter {
    pub(crate) fn new(tx: mpsc::UnboundedSender<Event>) -> Self {
        Self {
            tx,
            current: Arc::default(),
            questions: Arc::default(),
            ended: Arc::default(),
        }
    }

    /// A fresh question id.
    pub(crate) fn next_question(&self) -> QuestionId {
        QuestionId(self.questions.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// The op whose turn runs (`None`: none).
    pub(crate) fn set_current(&self, id: Option<OpId>) {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = id;
    }

    fn current(&self) -> Option<OpId> {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `msg`, naming the running turn's op if one runs. Returns whether a front end still
    /// listens (one that dropped its receiver no longer does; the session goes on).
    pub(crate) fn emit(&self, msg: SessionEvent) -> bool {
        self.send(self.current(), msg)
    }

    /// `msg` answering op `id`.
    pub(crate) fn emit_for(&self, id: OpId, msg: SessionEvent) -> bool {
        self.send(Some(id), msg)
    }

    /// `msg`, belonging to no op (background jobs, tasks, start-up).
    pub(crate) fn emit_free(&self, msg: SessionEvent) -> bool {
        self.send(None, msg)
    }

    /// The session has ended: what a straggler (a shell's watcher) would still say is
    /// dropped, so `ShutdownComplete` stays the last event.
    pub(crate) fn end(&self) {
        self.ended.store(true, Ordering::SeqCst);
    }

    fn send(&self, id: Option<OpId>, msg: SessionEvent) -> bool {
        if self.ended.load(Ordering::SeqCst) {
            return false;
        }
        self.tx.send(Event { id, msg }).is_ok()
    }
}
