//! The user's command hooks in the session (Claude Code's shape, read by
//! `tine_query_loop::hooks`), and the hooks an app registers ([`AppHooks`]: the Agent SDK's
//! callbacks, run beside the settings' hooks). One [`Hooks`] value serves everything: the loop runs
//! PreToolUse / PostToolUse around each call, the stop-hook pipeline runs Stop, the permission
//! checker runs Notification when it asks a person, compaction runs PreCompact; the session's
//! task runs the rest through [`SessionHooks`]: SessionStart once (its context joins the first
//! prompt of the session), UserPromptSubmit before each prompt (before recall: a refused
//! prompt costs no request), SessionEnd at shutdown. What a hook says to the user (a failure,
//! a `systemMessage`) is a [`Notice`]; with `--include-hook-events` each hook run is a
//! [`SessionEvent::Hook`] when it starts and when it ends.

use std::path::PathBuf;
use std::sync::Arc;

use crate::emit::Emitter;
use crate::error::StartError;
use crate::protocol::SessionEndReason;
use tine_config::SessionId;
use tine_query_loop::StopHooks;
use tine_query_loop::hooks::{
    HookCallbacks, HookConfig, HookEvent, Hooks, PromptVerdict, SessionStartSource,
    callback_hooks_from_json,
};

use crate::protocol::{Notice, SessionEvent};

/// Hooks an app registers (the Agent SDK's `initialize` request), for
/// [`crate::SessionOptions::hook_callbacks`]: they run beside the settings' hooks, for the same
/// events, and the app answers each through `callbacks`.
#[derive(Clone)]
pub struct AppHooks {
    /// The request's `"hooks"` as sent: `{"PreToolUse": [{"matcher": "Bash",
    /// "hookCallbackIds": ["hook_0"], "timeout": 30}], ...}` (`null`: none).
    pub hooks: serde_json::Value,
    /// Calls the app's callbacks (the `hook_callback` control request).
    pub callbacks: Arc<dyn HookCallbacks>,
}

impl std::fmt::Debug for AppHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppHooks")
            .field("hooks", &self.hooks)
            .finish_non_exhaustive()
    }
}

/// The settings' hooks and the app's: both run. A malformed app hooks value refuses the start
/// (a hook may be a guard); events tine does not run are notices.
pub(crate) fn with_app_hooks(
    config: HookConfig,
    app: Option<&AppHooks>,
    notices: &mut Vec<Notice>,
) -> Result<HookConfig, StartError> {
    let Some(app) = app else {
        return Ok(config);
    };
    let (callbacks, warnings) =
        callback_hooks_from_json(&app.hooks).map_err(StartError::AppHooks)?;
    notices.extend(warnings.into_iter().map(Notice::warning));
    Ok(config.with_callbacks(callbacks, Arc::clone(&app.callbacks)))
}

/// Notification's message when the prompt has waited (Claude Code's "Claude is waiting for
/// your input").
pub(crate) const IDLE_MESSAGE: &str = "tine is waiting for your input";

/// The session's hooks (none when settings set none).
#[derive(Clone, Default)]
pub(crate) struct SessionHooks {
    hooks: Option<Hooks>,
}

impl SessionHooks {
    /// The hooks of `config` for session `session_id`; what they tell the user goes to
    /// `events` as notices, and with `report_runs` each run as [`SessionEvent::Hook`].
    pub(crate) fn new(
        config: HookConfig,
        session_id: SessionId,
        transcript_path: PathBuf,
        cwd: PathBuf,
        events: Emitter,
        report_runs: bool,
    ) -> Self {
        if config.is_empty() {
            return Self::default();
        }
        let notices = events.clone();
        let mut hooks = Hooks::new(config, session_id, transcript_path, cwd).with_notifier(
            Arc::new(move |_event, message| {
                let _ = notices.emit(SessionEvent::Notice(Notice::warning(message)));
            }),
        );
        if report_runs {
            hooks = hooks.with_observer(Arc::new(move |run| {
                let _ = events.emit(SessionEvent::Hook(run));
            }));
        }
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
