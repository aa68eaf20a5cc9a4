//! What the handle and the session's task share: the session's token, the turns waiting and
//! the one running (each with its token, a child of the session's), and the [`Live`] state of
//! the conversation in place, which the handle acts on at once (answers, the mode, tasks) and
//! the task replaces when another conversation takes its place (`Op::Clear`, `Op::Resume`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tine_fork_runtime::TaskRegistry;
use tine_memory::AutoMemory;
use tine_tools::BackgroundTasks;
use tokio_util::sync::CancellationToken;

use crate::assemble::Assembled;
use crate::elicitation::Elicitations;
use crate::permission::Permissions;
use crate::protocol::OpId;
use crate::stuck::{RunningTurn, StuckQuestions};
use crate::tasks::Stoppable;

/// The turns waiting and the one running, each with its turn's token.
#[derive(Default)]
pub(crate) struct Turns {
    pub running: Option<(OpId, CancellationToken)>,
    pub queued: VecDeque<(OpId, CancellationToken)>,
}

/// The conversation in place, as the handle acts on it.
pub(crate) struct Live {
    pub permissions: Arc<Permissions>,
    /// Background agents and their notifications.
    pub tasks: TaskRegistry,
    /// Open questions about a stuck model.
    pub stuck: Arc<StuckQuestions>,
    /// MCP servers' open questions to the person (interactive sessions with servers).
    pub elicitations: Option<Arc<Elicitations>>,
    /// What `Op::StopTask` can stop.
    pub stoppable: Stoppable,
}

impl Live {
    pub(crate) fn of(assembled: &Assembled) -> Arc<Self> {
        let shells = assembled
            .engine
            .config()
            .tool_context
            .as_ref()
            .map(|context| (*context.ext_or_default::<BackgroundTasks>()).clone());
        Arc::new(Self {
            permissions: Arc::clone(&assembled.permissions),
            tasks: assembled.tasks.clone(),
            stuck: Arc::default(),
            elicitations: assembled.mcp.as_ref().and_then(|m| m.elicitations.clone()),
            stoppable: Stoppable {
                tasks: assembled.tasks.clone(),
                shells,
                dream: assembled.memory.as_ref().and_then(AutoMemory::dream_job),
            },
        })
    }
}

pub(crate) struct Shared {
    /// The session's token: cancelling it ends the running turn, every fork and background
    /// job. Each turn runs on a child of it.
    pub token: CancellationToken,
    turns: Mutex<Turns>,
    next_op: AtomicU64,
    /// Set by `Finish` and `Shutdown`: nothing more is accepted.
    pub closing: AtomicBool,
    live: Mutex<Arc<Live>>,
}

impl Shared {
    pub(crate) fn new(token: CancellationToken, live: Arc<Live>) -> Self {
        Self {
            token,
            turns: Mutex::default(),
            next_op: AtomicU64::new(1),
            closing: AtomicBool::new(false),
            live: Mutex::new(live),
        }
    }

    pub(crate) fn turns(&self) -> MutexGuard<'_, Turns> {
        self.turns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn next_op(&self) -> OpId {
        OpId(self.next_op.fetch_add(1, Ordering::Relaxed))
    }

    pub(crate) fn live(&self) -> Arc<Live> {
        Arc::clone(&self.live.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub(crate) fn set_live(&self, live: Arc<Live>) {
        *self.live.lock().unwrap_or_else(PoisonError::into_inner) = live;
    }

    /// Stops the running turn (its request, its tools, its open questions), or, when none
    /// runs yet, the next one about to start. Never background work.
    pub(crate) fn interrupt(&self, live: &Live) {
        {
            let turns = self.turns();
            if let Some((_, token)) = &turns.running {
                token.cancel();
            } else if let Some((_, token)) = turns.queued.front() {
                token.cancel();
            }
        }
        // An MCP server's question belongs to the call being interrupted.
        if let Some(elicitations) = &live.elicitations {
            elicitations.withdraw_all();
        }
    }

    /// Interrupts the running turn and every queued one.
    pub(crate) fn cancel_turns(&self) {
        let turns = self.turns();
        for (_, token) in turns.running.iter().chain(turns.queued.iter()) {
            token.cancel();
        }
    }
}

impl RunningTurn for Shared {
    fn running_token(&self) -> Option<CancellationToken> {
        self.turns()
            .running
            .as_ref()
            .map(|(_, token)| token.clone())
    }
}
