//! The user's command hooks in the session (Claude Code's shape, read by
//! `tine_query_loop::hooks`). One [`Hooks`] value serves everything: the loop runs
//! PreToolUse / PostToolUse around each call, the stop-hook pipeline runs Stop, the permission
//! checker runs Notification when it asks a person, compaction runs PreCompact; the session's
//! task runs the rest through [`SessionHooks`]: SessionStart once (its context joins the first
//! prompt of the session), UserPromptSubmit before each prompt (before recall: a refused
//! prompt costs no request), SessionEnd at shutdown. What a hook says to the user (a failure,
//! a `systemMessage`) is a [`Notice`].

use std::path::PathBuf;
use std::sync::Arc;

use crate::emit::Emitter;
use crate::protocol::SessionEndReason;
use tine_config::SessionId;
use tine_query_loop::StopHooks;
use tine_query_loop::hooks::{HookConfig, HookEvent, Hooks, PromptVerdict, SessionStartSource};

use crate::protocol::{Notice, SessionEvent};

/// Notification's message when the prompt has waited (Claude Code's "Claude is waiting for
/// your input").
pub const IDLE_MESSAGE: &str = "tine is waiting for your input";

/// The session's hooks (none when settings set none).
#[derive(Clone, Default)]
pub(crate) struct SessionHooks {
    hooks: Option<Hooks>,
}

impl SessionHooks {
    /// The hooks of `config` for session `session_id`; what they tell the user goes to
    /// `events` as notices.
    pub(crate) fn new(
        config: HookConfig,
        session_id: SessionId,
        transcript_path: PathBuf,
        cwd: PathBuf,
        events: Emitter,
    ) -> Self {
        if config.is_empty() {
            return Self::default();
        }
        let hooks = Hooks::new(config, session_id, transcript_path, cwd).with_notifier(Arc::new(
            move |_event, message| {
                let _ = events.emit(SessionEvent::Notice(Notice::warning(message)));
            },
        ));
        Self { hooks: Some(hooks) }
    }

    /// For the loop (tool hooks) and the permission checker (Notification).
    pub(crate) fn hooks(&self) -> Option<Hooks> {
        self.hooks.clone()
    }

    /// For the stop-hook pipeline, when a Stop hook is set.
    pub(crate) fn stop_hooks(&self) -> Option<Arc<dyn StopHooks>> {
        self.hooks
            .as_ref()
            .filter(|h| h.has(HookEvent::Stop))
            .map(|h| Arc::new(h.clone()) as Arc<dyn StopHooks>)
    }

    fn with(&self, event: HookEvent) -> Option<&Hooks> {
        self.hooks.as_ref().filter(|h| h.has(event))
    }

    /// SessionStart: the context its hooks add, for the session's first prompt.
    pub(crate) async fn session_start(&self, resumed: bool, cleared: bool) -> Vec<String> {
        let Some(hooks) = self.with(HookEvent::SessionStart) else {
            return Vec::new();
        };
        let source = if resumed {
            SessionStartSource::Resume
        } else if cleared {
            SessionStartSource::Clear
        } else {
            SessionStartSource::Startup
        };
        hooks.session_start(source).await
    }

    /// UserPromptSubmit: refused, or sent with the context the hooks added.
    pub(crate) async fn user_prompt_submit(&self, prompt: &str) -> PromptVerdict {
        match self.with(HookEvent::UserPromptSubmit) {
            Some(hooks) => hooks.user_prompt_submit(prompt).await,
            None => PromptVerdict::Proceed {
                context: Vec::new(),
            },
        }
    }

    /// Notification `idle_prompt` (the prompt has waited since the last turn ended), on its
    /// own task: a slow hook holds nothing up.
    pub(crate) fn idle_prompt(&self) {
        if let Some(hooks) = self.with(HookEvent::Notification) {
            let hooks = hooks.clone();
            tokio::spawn(async move { hooks.notification(IDLE_MESSAGE, "idle_prompt").await });
        }
    }

    /// SessionEnd.
    pub(crate) async fn session_end(&self, reason: SessionEndReason) {
        if let Some(hooks) = self.with(HookEvent::SessionEnd) {
            hooks.session_end(reason.as_str()).await;
        }
    }
}
