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

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use futures::future::BoxFuture;

use super::process::{CommandOutput, RunError, run_shell};
use crate::plug::{StopContext, StopHookOutcome, StopHooks};
use tine_config::SessionId;

/// A hook command's timeout when settings give none (Claude Code's default).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The `hooks` object of a settings file. Only `Stop` is run by this crate; other events are
/// kept verbatim so settings round-trip.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HooksSettings {
    #[serde(rename = "Stop", default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<HookMatcher>,
    #[serde(flatten)]
    pub other_events: BTreeMap<String, serde_json::Value>,
}

/// One matcher group. Stop events have no tool to match, so the matcher is ignored for them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookMatcher {
    #[serde(default)]
    pub matcher: String,
    #[serde(default)]
    pub hooks: Vec<HookSpec>,
}

/// One hook. Only `command` hooks exist today; other types are accepted and skipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum HookSpec {
    Command {
        command: String,
        /// Seconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(other)]
    Unsupported,
}

/// A runnable stop hook command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopHookCommand {
    pub command: String,
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
    pub session_id: SessionId,
    pub transcript_path: PathBuf,
    pub cwd: PathBuf,
    pub hook_event_name: &'static str,
    /// True when the loop is already continuing because of a stop hook: scripts use it to
    /// avoid blocking forever.
    pub stop_hook_active: bool,
}

impl StopHookInput {
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
    pub outcome: StopHookOutcome,
    /// Hooks that failed without blocking (already logged).
    pub failures: Vec<HookFailure>,
    /// `systemMessage` fields hooks printed, for the user.
    pub system_messages: Vec<String>,
}

/// A hook that failed without blocking the stop.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookFailure {
    #[error("stop hook `{command}` could not start: {error}")]
    Spawn { command: String, error: String },
    #[error("stop hook `{command}` timed out after {}s and was killed; raise its \"timeout\" in settings if it needs longer", timeout.as_secs())]
    Timeout { command: String, timeout: Duration },
    #[error("stop hook `{command}` failed ({status}): {stderr}")]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },
    #[error("stop hook `{command}` printed invalid JSON on stdout: {error}")]
    InvalidOutput { command: String, error: String },
}

/// The JSON a hook may print on stdout.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HookJsonOutput {
    #[serde(rename = "continue")]
    keep_going: Option<bool>,
    stop_reason: Option<String>,
    decision: Option<String>,
    reason: Option<String>,
    system_message: Option<String>,
}

/// One hook's verdict.
enum Verdict {
    Pass,
    Block(String),
    Halt(Option<String>),
}

/// Runs every stop hook concurrently and combines their verdicts: any halt wins, then any block
/// (reasons joined in settings order), else [`StopHookOutcome::Continue`]. Dropping the returned
/// future kills the running hooks.
pub async fn run_stop_hooks(commands: &[StopHookCommand], input: &StopHookInput) -> StopHookReport {
    let mut report = StopHookReport {
        outcome: StopHookOutcome::Continue,
        failures: Vec::new(),
        system_messages: Vec::new(),
    };
    if commands.is_empty() {
        return report;
    }
    let stdin = match serde_json::to_vec(input) {
        Ok(bytes) => bytes,
        Err(error) => {
            tracing::error!(%error, "cannot encode stop hook input; hooks skipped");
            return report;
        }
    };
    let cwd = input.cwd.to_string_lossy().into_owned();
    let env = [
        ("TINE_PROJECT_DIR", cwd.as_str()),
        ("CLAUDE_PROJECT_DIR", cwd.as_str()),
    ];
    let runs = commands
        .iter()
        .map(|c| run_shell(&c.command, &input.cwd, &env, &stdin, c.timeout));
    let results = futures::future::join_all(runs).await;

    let mut blocks = Vec::new();
    let mut halt = None;
    for (command, result) in commands.iter().zip(results) {
        match judge(&command.command, command.timeout, result, &mut report) {
            Ok(Verdict::Pass) => {}
            Ok(Verdict::Block(reason)) => blocks.push(reason),
            Ok(Verdict::Halt(reason)) => {
                halt.get_or_insert(reason);
            }
            Err(failure) => {
                tracing::warn!(%failure, "stop hook failed (not blocking)");
                report.failures.push(failure);
            }
        }
    }
    report.outcome = match (halt, blocks.is_empty()) {
        (Some(reason), _) => StopHookOutcome::Halt { reason },
        (None, false) => StopHookOutcome::Block {
            reason: blocks.join("\n\n"),
        },
        (None, true) => StopHookOutcome::Continue,
    };
    report
}

fn judge(
    command: &str,
    timeout: Duration,
    result: Result<CommandOutput, RunError>,
    report: &mut StopHookReport,
) -> Result<Verdict, HookFailure> {
    let output = match result {
        Ok(output) => output,
        Err(RunError::Spawn(error) | RunError::Wait(error)) => {
            return Err(HookFailure::Spawn {
                command: command.to_owned(),
                error: error.to_string(),
            });
        }
        Err(RunError::Timeout) => {
            return Err(HookFailure::Timeout {
                command: command.to_owned(),
                timeout,
            });
        }
    };
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    match output.status.code() {
        Some(0) => parse_stdout(command, &output.stdout, report),
        Some(2) if stderr.is_empty() => Ok(Verdict::Block(format!(
            "Stop hook `{command}` blocked stopping (exit code 2, no reason given)"
        ))),
        Some(2) => Ok(Verdict::Block(stderr)),
        _ => Err(HookFailure::Failed {
            command: command.to_owned(),
            status: output.status.to_string(),
            stderr,
        }),
    }
}

fn parse_stdout(
    command: &str,
    stdout: &[u8],
    report: &mut StopHookReport,
) -> Result<Verdict, HookFailure> {
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim();
    // Plain text output is informational only (Claude Code shows it in verbose mode).
    if !text.starts_with('{') {
        if !text.is_empty() {
            tracing::debug!(command, output = text, "stop hook output");
        }
        return Ok(Verdict::Pass);
    }
    let parsed: HookJsonOutput =
        serde_json::from_str(text).map_err(|e| HookFailure::InvalidOutput {
            command: command.to_owned(),
            error: e.to_string(),
        })?;
    if let Some(message) = parsed.system_message {
        report.system_messages.push(message);
    }
    if parsed.keep_going == Some(false) {
        return Ok(Verdict::Halt(parsed.stop_reason));
    }
    match parsed.decision.as_deref() {
        Some("block") => Ok(Verdict::Block(parsed.reason.unwrap_or_else(|| {
            format!("Stop hook `{command}` blocked stopping (no reason given)")
        }))),
        _ => Ok(Verdict::Pass),
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
    pub commands: Vec<StopHookCommand>,
    pub session_id: SessionId,
    pub transcript_path: PathBuf,
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
