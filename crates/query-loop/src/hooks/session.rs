//! [`Hooks`]: a session's hooks, ready to run, one method per event. The loop calls
//! PreToolUse and PostToolUse around each tool call and Stop when a turn ends; the host (the
//! session) calls UserPromptSubmit before a turn, SessionStart once at start, SessionEnd at
//! the end, Notification when it needs the user; the compactor calls PreCompact and
//! PostCompact around each compaction. Each builds Claude Code's JSON input
//! (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, plus the event's fields).
//!
//! Context a hook adds (UserPromptSubmit and SessionStart stdout, `additionalContext`) is
//! returned as `<system-reminder>` text for the host to put in the user message: never in the
//! system prompt, whose bytes must not change (the prompt cache).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tine_config::SessionId;

use super::config::HookConfig;
use super::event::HookEvent;
use super::report::HookObserver;
use super::run::{EventRun, HookOutcome, run_hooks, stop_outcome};
use crate::plug::{StopContext, StopHookOutcome, StopHooks};
use crate::transcript::CompactTrigger;

/// Tells the user about a hook: a non-blocking failure, a `systemMessage` (each message names
/// its event).
pub type HookNotifier = Arc<dyn Fn(HookEvent, &str) + Send + Sync>;

/// What UserPromptSubmit hooks decided about a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptVerdict {
    /// Send it, with this context (`<system-reminder>` blocks) before it in the same message.
    Proceed {
        /// What the hooks added.
        context: Vec<String>,
    },
    /// Do not send it (exit 2, `decision: "block"`, `continue: false`); `reason` is for the
    /// user, the model never sees the prompt.
    Refused {
        /// Why, for the user.
        reason: String,
    },
}

/// Why a session started, as SessionStart's `source` and matcher say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStartSource {
    /// A new session.
    Startup,
    /// A resumed session (`-c`, `-r`).
    Resume,
    /// After `/clear`.
    Clear,
    /// After a compaction.
    Compact,
}

impl SessionStartSource {
    /// The source as hooks get it (`startup`, `resume`, `clear`, `compact`).
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStartSource::Startup => "startup",
            SessionStartSource::Resume => "resume",
            SessionStartSource::Clear => "clear",
            SessionStartSource::Compact => "compact",
        }
    }
}

/// What a SubagentStop hook is told about the sub-agent that stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentStop {
    /// Whether the agent is already going on because of a stop hook.
    pub stop_hook_active: bool,
    /// The agent's task id (`a_` + 8 base-36), which names its sidechain transcript.
    pub agent_id: String,
    /// Its type: `fork`, `general-purpose`, `Explore`, `Plan` or a custom agent's name.
    pub agent_type: String,
    /// Its sidechain transcript.
    pub agent_transcript_path: Option<PathBuf>,
    /// The text of its last reply (so a hook need not parse the transcript).
    pub last_assistant_message: Option<String>,
}

/// A session's hooks. Cheap to clone; the loop and the host hold the same one.
#[derive(Clone)]
pub struct Hooks {
    config: Arc<HookConfig>,
    session_id: SessionId,
    transcript_path: PathBuf,
    cwd: PathBuf,
    notify: Option<HookNotifier>,
    observer: Option<HookObserver>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("config", &self.config)
            .field("session_id", &self.session_id)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

impl Hooks {
    /// The hooks of `config` for a session, run in `cwd` with its transcript.
    pub fn new(
        config: HookConfig,
        session_id: SessionId,
        transcript_path: PathBuf,
        cwd: PathBuf,
    ) -> Self {
        Self {
            config: Arc::new(config),
            session_id,
            transcript_path,
            cwd,
            notify: None,
            observer: None,
        }
    }

    /// Where failures and `systemMessage`s go (else they are only logged).
    pub fn with_notifier(mut self, notify: HookNotifier) -> Self {
        self.notify = Some(notify);
        self
    }

    /// Told when each hook starts and when it ends (Claude Code's `--include-hook-events`);
    /// without one, nothing is built for it.
    pub fn with_observer(mut self, observer: HookObserver) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The hooks: the settings' commands and the app's callbacks.
    pub fn config(&self) -> &HookConfig {
        &self.config
    }

    /// The directory hooks run in.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Whether any hook is set for `event` (a host may skip building its input).
    pub fn has(&self, event: HookEvent) -> bool {
        self.config.has(event)
    }

    /// Runs `event`'s hooks (commands and callbacks) whose matcher takes `target`, with
    /// `fields` added to the common input; tells the user about failures and system messages.
    pub async fn run(
        &self,
        event: HookEvent,
        target: Option<&str>,
        fields: Map<String, Value>,
    ) -> HookOutcome {
        let hooks = self.config.matched(event, target);
        if hooks.is_empty() {
            return HookOutcome::default();
        }
        let mut input = Map::new();
        input.insert("session_id".into(), json!(self.session_id.to_string()));
        input.insert("transcript_path".into(), json!(self.transcript_path));
        input.insert("cwd".into(), json!(self.cwd));
        input.insert("hook_event_name".into(), json!(event.name()));
        input.extend(fields);
        let input = Value::Object(input);
        // Only an observer reads the name.
        let hook_name = match target {
            _ if self.observer.is_none() => String::new(),
            Some(target) if !target.is_empty() => format!("{}:{target}", event.name()),
            _ => event.name().to_owned(),
        };
        let run = EventRun {
            event,
            hook_name: &hook_name,
            cwd: &self.cwd,
            input: &input,
            observer: self.observer.as_ref(),
        };
        let outcome = run_hooks(run, &hooks).await;
        if let Some(notify) = &self.notify {
            for failure in &outcome.failures {
                notify(event, &failure.to_string());
            }
            for message in &outcome.system_messages {
                notify(event, &format!("{} hook: {message}", event.name()));
            }
        }
        outcome
    }

    /// Before a tool call, before its permission check. The loop reads `blocks`, `permission`,
    /// `updated_input` and `stop`.
    pub async fn pre_tool_use(&self, tool: &str, input: &Value, tool_use_id: &str) -> HookOutcome {
        let fields = fields([
            ("tool_name", json!(tool)),
            ("tool_input", input.clone()),
            ("tool_use_id", json!(tool_use_id)),
        ]);
        self.run(HookEvent::PreToolUse, Some(tool), fields).await
    }

    /// After a tool call ran; `response` is what it returned.
    pub async fn post_tool_use(
        &self,
        tool: &str,
        input: &Value,
        response: Value,
        tool_use_id: &str,
    ) -> HookOutcome {
        let fields = fields([
            ("tool_name", json!(tool)),
            ("tool_input", input.clone()),
            ("tool_response", response),
            ("tool_use_id", json!(tool_use_id)),
        ]);
        self.run(HookEvent::PostToolUse, Some(tool), fields).await
    }

    /// Before a prompt is sent: refused, or sent with the context the hooks added.
    pub async fn user_prompt_submit(&self, prompt: &str) -> PromptVerdict {
        let fields = fields([("prompt", json!(prompt))]);
        let outcome = self.run(HookEvent::UserPromptSubmit, None, fields).await;
        if let Some(reason) = outcome.block_reason() {
            return PromptVerdict::Refused { reason };
        }
        if let Some(reason) = outcome.stop {
            return PromptVerdict::Refused {
                reason: reason.unwrap_or_else(|| {
                    "a UserPromptSubmit hook stopped the session (\"continue\": false)".to_owned()
                }),
            };
        }
        PromptVerdict::Proceed {
            context: reminders(HookEvent::UserPromptSubmit, &outcome.context),
        }
    }

    /// Once when the session starts (or resumes): the context its hooks add, for the first
    /// user message of this run.
    pub async fn session_start(&self, source: SessionStartSource) -> Vec<String> {
        let fields = fields([("source", json!(source.as_str()))]);
        let outcome = self
            .run(HookEvent::SessionStart, Some(source.as_str()), fields)
            .await;
        reminders(HookEvent::SessionStart, &outcome.context)
    }

    /// When the session ends (`reason`: `clear`, `logout`, `prompt_input_exit`, `other`).
    /// Nothing it says can change anything.
    pub async fn session_end(&self, reason: &str) {
        let fields = fields([("reason", json!(reason))]);
        self.run(HookEvent::SessionEnd, Some(reason), fields).await;
    }

    /// When tine needs the user (`notification_type`: `permission_prompt`, `idle_prompt`).
    pub async fn notification(&self, message: &str, notification_type: &str) {
        let fields = fields([
            ("message", json!(message)),
            ("notification_type", json!(notification_type)),
        ]);
        self.run(HookEvent::Notification, Some(notification_type), fields)
            .await;
    }

    /// Before a compaction: what the hooks ask the summary to keep (plain stdout or
    /// `additionalContext`), in settings order. `custom_instructions` is the user's focus
    /// (`/compact FOCUS`); the matcher is matched against the trigger.
    pub async fn pre_compact(
        &self,
        trigger: CompactTrigger,
        custom_instructions: Option<&str>,
    ) -> Vec<String> {
        let fields = fields([
            ("trigger", json!(hook_trigger(trigger))),
            (
                "custom_instructions",
                json!(custom_instructions.unwrap_or("")),
            ),
        ]);
        self.compaction_hooks(HookEvent::PreCompact, trigger, fields)
            .await
    }

    /// After a compaction: what the hooks add to the new history after the summary.
    pub async fn post_compact(&self, trigger: CompactTrigger, summary: &str) -> Vec<String> {
        let fields = fields([
            ("trigger", json!(hook_trigger(trigger))),
            ("compact_summary", json!(summary)),
        ]);
        self.compaction_hooks(HookEvent::PostCompact, trigger, fields)
            .await
    }

    /// A compaction event's hooks. Nothing they say stops the compaction: as in Claude Code,
    /// a block (exit 2) is only shown to the user, like a failure.
    async fn compaction_hooks(
        &self,
        event: HookEvent,
        trigger: CompactTrigger,
        fields: Map<String, Value>,
    ) -> Vec<String> {
        let outcome = self.run(event, Some(hook_trigger(trigger)), fields).await;
        if let Some(notify) = &self.notify {
            for reason in &outcome.blocks {
                notify(
                    event,
                    &format!("{} hook (the compaction goes on): {reason}", event.name()),
                );
            }
        }
        outcome.context
    }

    /// When a sub-agent ends its work (as Stop, for the sub-agent's loop), with what Claude
    /// Code's `SubagentStopHookInput` carries besides the common fields: `stop_hook_active`,
    /// `agent_id`, `agent_type` (also what the matcher is matched against),
    /// `agent_transcript_path` and `last_assistant_message`.
    pub async fn subagent_stop(&self, stop: &SubagentStop) -> StopHookOutcome {
        let fields = fields([
            ("stop_hook_active", json!(stop.stop_hook_active)),
            ("agent_id", json!(stop.agent_id)),
            ("agent_type", json!(stop.agent_type)),
            ("agent_transcript_path", json!(stop.agent_transcript_path)),
            ("last_assistant_message", json!(stop.last_assistant_message)),
        ]);
        let outcome = self
            .run(HookEvent::SubagentStop, Some(&stop.agent_type), fields)
            .await;
        stop_outcome(outcome)
    }

    /// These hooks run in `cwd` (and say so in their input): a sub-agent working in a
    /// worktree of its own.
    pub fn in_dir(&self, cwd: PathBuf) -> Self {
        Self {
            cwd,
            ..self.clone()
        }
    }

    /// When the main thread's model ends a turn with no tool calls.
    pub async fn stop(&self, stop_hook_active: bool) -> StopHookOutcome {
        let fields = fields([("stop_hook_active", json!(stop_hook_active))]);
        stop_outcome(self.run(HookEvent::Stop, None, fields).await)
    }
}

impl StopHooks for Hooks {
    fn on_stop<'a>(&'a self, ctx: StopContext<'a>) -> BoxFuture<'a, StopHookOutcome> {
        Box::pin(self.stop(ctx.stop_hook_active))
    }
}

/// The trigger as compaction hooks get it and match it: a reactive compaction ("prompt is
/// too long") is `auto`, as in Claude Code.
fn hook_trigger(trigger: CompactTrigger) -> &'static str {
    match trigger {
        CompactTrigger::Manual => "manual",
        CompactTrigger::Auto | CompactTrigger::Reactive => "auto",
    }
}

fn fields<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Hook context as the model reads it: one `<system-reminder>` per piece.
pub fn reminders(event: HookEvent, context: &[String]) -> Vec<String> {
    context
        .iter()
        .map(|text| {
            format!(
                "<system-reminder>\n{} hook additional context: {}\n</system-reminder>",
                event.name(),
                text.trim()
            )
        })
        .collect()
}
