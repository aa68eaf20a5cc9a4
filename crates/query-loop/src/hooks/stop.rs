//! Stop hooks: commands from settings that run when the model ends a turn without tool calls,
//! in Claude Code's shape, so existing hook scripts work unchanged.
//!
//! ```json
//! {"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 60}]}]}}
//! ```
//!
//! Each command gets [`StopHookInput`] as JSON on stdin. It blocks the stop (the model is told
//! the reason and keeps working) by exiting with code 2 (stderr is the reason) or by printing
//! `{"decision": "block", "reason": "..."}`; it halts the session with `{"continue": false,
//! "stopReason": "..."}`. Any other failure is reported and does not block.
//!
//! This is the older, Stop-only surface (serde shapes for callers that read a `hooks` value
//! themselves, `run_stop_hooks` for a list of commands); it runs on the one hook runner
//! (`run.rs`) that [`super::Hooks`] uses for every event.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use futures::future::BoxFuture;

use super::config::{HookCommand, HookEvent, Matcher};
use super::run::{HookOutcome, HookRunFailure, run_commands, stop_outcome};
use crate::plug::{StopContext, StopHookOutcome, StopHooks};
use tine_config::SessionId;

pub use super::config::DEFAULT_HOOK_TIMEOUT;

/// The `hooks` object of a settings file. Only `Stop` is run by this crate; other events are
/// kept verbatim so settings round-trip.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HooksSettings {
    /// `Stop` matcher groups.
    #[serde(rename = "Stop", default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<HookMatcher>,
    /// Every other event, kept as written.
    #[serde(flatten)]
    pub other_events: BTreeMap<String, serde_json::Value>,
}

/// One matcher group. Stop events have no tool to match, so the matcher is ignored for them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookMatcher {
    /// The matcher as written.
    #[serde(default)]
    pub matcher: String,
    /// The group's hooks.
    #[serde(default)]
    pub hooks: Vec<HookSpec>,
}

/// One hook. Only `command` hooks exist today; other types are accepted and skipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum HookSpec {
    /// A shell command.
    Command {
        /// The command.
        command: String,
        /// Seconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    /// Another hook type (skipped).
    #[serde(other)]
    Unsupported,
}

/// A runnable stop hook command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopHookCommand {
    /// The shell command.
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
}

impl HooksSettings {
    /// Reads the `hooks` object of a settings file.
    pub fn from_value(hooks: &serde_json::Value) -> Result<Self, serde_json::Error> {
        Self::deserialize(hooks)
    }

    /// Appends another source's hooks (user, then project, then local settings).
    pub fn merge(&mut self, other: HooksSettings) {
        self.stop.extend(other.stop);
        for (event, value) in other.other_events {
            self.other_events.entry(event).or_insert(value);
        }
    }

    /// The Stop commands in settings order, duplicates (same command text) removed.
    pub fn stop_commands(&self) -> Vec<StopHookCommand> {
        let mut commands: Vec<StopHookCommand> = Vec::new();
        for spec in self.stop.iter().flat_map(|m| &m.hooks) {
            match spec {
                HookSpec::Command { command, timeout } => {
                    if commands.iter().any(|c| &c.command == command) {
                        continue;
                    }
                    commands.push(StopHookCommand {
                        command: command.clone(),
                        timeout: timeout.map_or(DEFAULT_HOOK_TIMEOUT, Duration::from_secs),
                    });
                }
                HookSpec::Unsupported => {
                    tracing::debug!("skipping a Stop hook of an unsupported type");
                }
            }
        }
        commands
    }
}

/// What a stop hook reads on stdin (Claude Code's field names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StopHookInput {
    /// The session's id.
    pub session_id: SessionId,
    /// The session's transcript.
    pub transcript_path: PathBuf,
    /// The working directory.
    pub cwd: PathBuf,
    /// `Stop` (or `SubagentStop`).
    pub hook_event_name: &'static str,
    /// True when the loop is already continuing because of a stop hook: scripts use it to
    /// avoid blocking forever.
    pub stop_hook_active: bool,
}

impl StopHookInput {
    /// The input for a session's Stop hooks.
    pub fn new(
        session_id: SessionId,
        transcript_path: PathBuf,
        cwd: PathBuf,
        stop_hook_active: bool,
    ) -> Self {
        Self {
            session_id,
            transcript_path,
            cwd,
            hook_event_name: "Stop",
            stop_hook_active,
        }
    }
}

/// The outcome plus everything worth showing the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopHookReport {
    /// What the hooks decided.
    pub outcome: StopHookOutcome,
    /// Hooks that failed without blocking (already logged).
    pub failures: Vec<HookFailure>,
    /// `systemMessage` fields hooks printed, for the user.
    pub system_messages: Vec<String>,
}

/// A hook that failed without blocking (the same type for every event).
pub type HookFailure = HookRunFailure;

/// Runs every stop hook concurrently (through the one hook runner) and combines their
/// verdicts: any halt wins, then any block (reasons joined in settings order), else
/// [`StopHookOutcome::Continue`]. Dropping the returned future kills the running hooks.
pub async fn run_stop_hooks(commands: &[StopHookCommand], input: &StopHookInput) -> StopHookReport {
    let commands: Vec<HookCommand> = commands
        .iter()
        .map(|c| HookCommand {
            event: HookEvent::Stop,
            matcher: Matcher::All,
            matcher_text: String::new(),
            command: c.command.clone(),
            timeout: c.timeout,
            origin: String::new(),
        })
        .collect();
    let chosen: Vec<&HookCommand> = commands.iter().collect();
    let value = match serde_json::to_value(input) {
        Ok(value) => value,
        Err(error) => {
            tracing::error!(%error, "cannot encode stop hook input; hooks skipped");
            serde_json::Value::Null
        }
    };
    let outcome = if value.is_null() {
        HookOutcome::default()
    } else {
        run_commands(HookEvent::Stop, &chosen, &input.cwd, &value).await
    };
    StopHookReport {
        failures: outcome.failures.clone(),
        system_messages: outcome.system_messages.clone(),
        outcome: stop_outcome(outcome),
    }
}

/// The Stop commands of a whole settings object (`{"hooks": {...}, ...}`); none when it has no
/// `hooks` key.
pub fn stop_commands_from_settings(
    settings: &serde_json::Value,
) -> Result<Vec<StopHookCommand>, serde_json::Error> {
    match settings.get("hooks") {
        Some(hooks) => Ok(HooksSettings::from_value(hooks)?.stop_commands()),
        None => Ok(Vec::new()),
    }
}

/// The user's Stop hook commands from settings, run as Claude Code runs them.
#[derive(Debug, Clone)]
pub struct CommandStopHooks {
    /// The commands, in order.
    pub commands: Vec<StopHookCommand>,
    /// The session's id.
    pub session_id: SessionId,
    /// The session's transcript.
    pub transcript_path: PathBuf,
    /// The directory the commands run in.
    pub cwd: PathBuf,
}

impl StopHooks for CommandStopHooks {
    fn on_stop<'a>(&'a self, ctx: StopContext<'a>) -> BoxFuture<'a, StopHookOutcome> {
        Box::pin(async move {
            if self.commands.is_empty() {
                return StopHookOutcome::Continue;
            }
            let input = StopHookInput::new(
                self.session_id.clone(),
                self.transcript_path.clone(),
                self.cwd.clone(),
                ctx.stop_hook_active,
            );
            let report = run_stop_hooks(&self.commands, &input).await;
            for failure in &report.failures {
                tracing::warn!(%failure, "stop hook failed");
            }
            report.outcome
        })
    }
}
