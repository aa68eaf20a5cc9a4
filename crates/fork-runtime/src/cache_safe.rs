//! `CacheSafeParams` (seed 000 §三): the five parts of the prompt-cache key a fork must share
//! with its parent, and the per-session slot the stop-hook pipeline saves them into.

use std::sync::{Arc, Mutex, PoisonError};

use tine_api_client::Message;
use tine_query_loop::RequestTemplate;

/// What a fork needs to send a request whose prefix is its parent's, byte for byte.
///
/// There is no separate user context: the session's (instruction files, environment, date, git
/// status, the memory index) is the first block of its first user message, put there once by
/// the engine and frozen in the transcript, so it is inside `messages` and a fork sends it
/// unchanged.
#[derive(Debug, Clone)]
pub struct CacheSafeParams {
    /// System prompt bytes, the exact serialized tool array, model and thinking config: the
    /// template every main-thread request of the session was built from.
    pub template: RequestTemplate,
    /// The parent's whole conversation, its user context first and its final reply last.
    pub messages: Arc<[Message]>,
}

/// The session's slot: written when a main-thread turn ends, cleared when one starts, read by
/// the background jobs of that turn. One per session, never a process global, so two sessions
/// in one process never see each other's.
#[derive(Debug, Clone, Default)]
pub struct CacheSafeSlot {
    inner: Arc<Mutex<Option<Arc<CacheSafeParams>>>>,
}

impl CacheSafeSlot {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }

    /// Saves `params` as the latest turn's and returns them shared.
    pub fn save(&self, params: CacheSafeParams) -> Arc<CacheSafeParams> {
        let params = Arc::new(params);
        *self.lock() = Some(Arc::clone(&params));
        params
    }

    /// The params of the last completed turn, if no turn has started since.
    pub fn get(&self) -> Option<Arc<CacheSafeParams>> {
        self.lock().clone()
    }

    /// A turn starts: what was saved no longer describes the conversation.
    pub fn clear(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<CacheSafeParams>>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
