//! `create_subagent_context` (seed 000 §四, table 4.2): what a fork gets from its parent.
//!
//! | field | default | opt-in |
//! | --- | --- | --- |
//! | file-state cache | cloned | a custom cache |
//! | cancellation | child token (parent cancels child, never the reverse) | share the parent's |
//! | app state | no-op | share the parent's |
//! | content replacements | cloned | a rebuilt state |
//! | permission prompts | become denials | allowed when cancellation is shared |
//! | notifications, tool UI | absent from the type | never |

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tine_api_client::ModelClient;
use tine_config::SessionId;
use tine_query_loop::{ContentReplacementState, PermissionPrompter, SharedReplacements};
use tine_tools::{FileStateCache, Tool, ToolContext};

use crate::side_query::UsageLedger;
use crate::worktree::AgentWorktree;

/// Where app state updates go (token counters, status lines the UI shows).
pub trait AppStateSink: Send + Sync {
    /// Sets `key` to `value`.
    fn set(&self, key: &str, value: Value);
}

/// Drops every update: a background fork must not touch what the user sees.
#[derive(Debug, Default)]
pub struct NoAppState;

impl AppStateSink for NoAppState {
    fn set(&self, _key: &str, _value: Value) {}
}

/// A simple shared store, for hosts and tests.
#[derive(Debug, Default)]
pub struct AppStateStore {
    values: Mutex<BTreeMap<String, Value>>,
}

impl AppStateStore {
    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.values
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }
}

impl AppStateSink for AppStateStore {
    fn set(&self, key: &str, value: Value) {
        self.values
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_owned(), value);
    }
}

/// Shows a notification to the user. Only the parent has one.
pub trait NotificationSink: Send + Sync {
    /// Shows `text`.
    fn notify(&self, text: &str);
}

/// The session a context belongs to (for sidechain transcripts).
#[derive(Debug, Clone)]
pub struct SessionLocation {
    /// `TINE_HOME`.
    pub home: std::path::PathBuf,
    /// The working directory.
    pub cwd: std::path::PathBuf,
    /// The session's id.
    pub session_id: SessionId,
}

/// The main thread's context: everything a fork may be derived from.
#[derive(Clone)]
pub struct ParentContext {
    /// The session's model client.
    pub client: Arc<dyn ModelClient>,
    /// The session's tools (a fork keeps the same array: it is part of the cache key).
    pub tools: Arc<[Arc<dyn Tool>]>,
    /// The session's tool context (file-state cache, cwd, cancellation).
    pub tool_context: ToolContext,
    /// The session a fork belongs to.
    pub session: SessionLocation,
    /// Where app state updates go.
    pub app_state: Arc<dyn AppStateSink>,
    /// Asks a person; a fork gets it only when it shares cancellation.
    pub prompter: Option<Arc<dyn PermissionPrompter>>,
    /// The main thread's replacement decisions (the engine's [`tine_query_loop::QueryEngine::replacements`]).
    /// A fork clones the decisions its [`crate::CacheSafeParams`] template carries, or these.
    pub content_replacements: SharedReplacements,
    /// UI notifications; [`SubagentContext`] has no such field at all.
    pub notifications: Option<Arc<dyn NotificationSink>>,
    /// Where every fork's requests are billed, under the fork's query source (the host's
    /// per-source cost report); `None` records nothing.
    pub ledger: Option<UsageLedger>,
}

impl ParentContext {
    /// A main-thread context with the defaults of a headless host: no app state to update, no
    /// one to ask, fresh replacement decisions, no notifications.
    pub fn new(
        client: Arc<dyn ModelClient>,
        tools: Arc<[Arc<dyn Tool>]>,
        tool_context: ToolContext,
        session: SessionLocation,
    ) -> Self {
        Self {
            client,
            tools,
            tool_context,
            session,
            app_state: Arc::new(NoAppState),
            prompter: None,
            content_replacements: SharedReplacements::default(),
            notifications: None,
            ledger: None,
        }
    }

    /// Bills the forks' requests to `ledger`.
    pub fn with_ledger(mut self, ledger: UsageLedger) -> Self {
        self.ledger = Some(ledger);
        self
    }
}

/// What a fork may share with its parent on purpose.
#[derive(Clone, Default)]
pub struct SubagentOverrides {
    /// Use the parent's token itself: the fork's cancellation cancels the parent too (an
    /// interactive sub-agent the user waits on). Permission prompts are then allowed.
    pub share_cancellation: bool,
    /// Let the fork's app-state updates reach the parent's store.
    pub share_app_state: bool,
    /// A file-state cache to use instead of a clone of the parent's.
    pub file_state: Option<Arc<FileStateCache>>,
    /// A content-replacement state to use instead of a clone of the parent's.
    pub content_replacements: Option<ContentReplacementState>,
    /// The fork's own token, instead of a child of the parent context's: a sub-agent runs
    /// under a child of the calling turn's token (cancelling the turn cancels it) that its
    /// task can also cancel alone.
    pub cancellation: Option<tokio_util::sync::CancellationToken>,
    /// The tools the fork may call, instead of the parent's (a typed agent's own list; a
    /// cache-sharing fork never sets it).
    pub tools: Option<Arc<[Arc<dyn Tool>]>>,
    /// A git worktree of its own to work in (`isolation: worktree`): the context's cwd and
    /// its [`AgentWorktree`] extension, which the session's permission checker takes as the
    /// fork's project.
    pub worktree: Option<AgentWorktree>,
}

/// A fork's isolated context. Deliberately has no notification or tool-UI handle.
#[derive(Clone)]
pub struct SubagentContext {
    /// The model client.
    pub client: Arc<dyn ModelClient>,
    /// The tools.
    pub tools: Arc<[Arc<dyn Tool>]>,
    /// The fork's own tool context (a copy of the parent's).
    pub tool_context: ToolContext,
    /// The session it belongs to.
    pub session: SessionLocation,
    /// Where app state updates go (nowhere, for a background fork).
    pub app_state: Arc<dyn AppStateSink>,
    /// Present only when cancellation is shared; otherwise asks become denials.
    pub prompter: Option<Arc<dyn PermissionPrompter>>,
    /// The fork's own copy of the replacement decisions.
    pub content_replacements: ContentReplacementState,
}

impl SubagentContext {
    /// Whether a permission ask in this fork is turned into a denial.
    pub fn avoids_permission_prompts(&self) -> bool {
        self.prompter.is_none()
    }
}

/// Derives a fork's context from its parent's (table 4.2).
pub fn create_subagent_context(
    parent: &ParentContext,
    overrides: &SubagentOverrides,
) -> SubagentContext {
    let mut tool_context = parent.tool_context.fork();
    if let Some(worktree) = &overrides.worktree {
        tool_context.set_cwd(&worktree.cwd);
        tool_context.insert_ext(worktree.clone());
    }
    if let Some(cache) = &overrides.file_state {
        tool_context = tool_context.with_file_state(Arc::clone(cache));
    }
    if overrides.share_cancellation {
        tool_context = tool_context.with_cancellation(parent.tool_context.cancellation().clone());
    } else if let Some(token) = &overrides.cancellation {
        tool_context = tool_context.with_cancellation(token.clone());
    }
    let app_state: Arc<dyn AppStateSink> = if overrides.share_app_state {
        Arc::clone(&parent.app_state)
    } else {
        Arc::new(NoAppState)
    };
    let content_replacements = overrides.content_replacements.clone().unwrap_or_else(|| {
        tine_query_loop::lock_replacements(&parent.content_replacements).clone()
    });
    SubagentContext {
        client: Arc::clone(&parent.client),
        tools: overrides
            .tools
            .clone()
            .unwrap_or_else(|| Arc::clone(&parent.tools)),
        tool_context,
        session: parent.session.clone(),
        app_state,
        prompter: if overrides.share_cancellation {
            parent.prompter.clone()
        } else {
            None
        },
        content_replacements,
    }
}
