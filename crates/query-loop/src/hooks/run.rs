//! Running the hooks of one event and reading what they said, as Claude Code does: every
//! matching command at once (JSON on stdin, `sh -c`, its own process group, killed at its
//! timeout); exit 0 passes (stdout may be JSON or, for UserPromptSubmit, SessionStart,
//! PreCompact and PostCompact, context); exit 2 blocks with stderr as the reason; any other exit is a non-blocking error
//! shown to the user. JSON on stdout: `continue`/`stopReason`, `decision` (`block`,
//! `approve`) with `reason`, `systemMessage`, and `hookSpecificOutput` with
//! `permissionDecision` (`allow`, `deny`, `ask`) and `permissionDecisionReason`,
//! `updatedInput`, `additionalContext`.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::config::{HookCommand, HookEvent};
use super::process::{ProcessOutput, RunError, run_shell};
use crate::plug::StopHookOutcome;

/// What a PreToolUse hook decided about the call's permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookPermission {
    /// Skip the prompt (deny and ask rules still apply).
    Allow,
    /// Ask a person even if rules would allow it.
    Ask,
    /// Refuse the call.
    Deny,
}

/// A hook that failed without blocking: shown to the user, never to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookRunFailure {
    /// The command could not be started.
    #[error("{event} hook `{command}` could not start: {error}")]
    Spawn {
        /// The hook event.
        event: &'static str,
        /// The command.
        command: String,
        /// Why it could not start.
        error: String,
    },
    /// The command ran past its timeout.
    #[error(
        "{event} hook `{command}` timed out after {}s and was killed; raise its \"timeout\" in \
         settings if it needs longer",
        timeout.as_secs_f64()
    )]
    Timeout {
        /// The hook event.
        event: &'static str,
        /// The command.
        command: String,
        /// Its timeout.
        timeout: Duration,
    },
    /// The command failed (a non-zero exit other than 2).
    #[error("{event} hook `{command}` failed ({status}): {stderr}")]
    Failed {
        /// The hook event.
        event: &'static str,
        /// The command.
        command: String,
        /// How it exited.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// The command printed JSON tine cannot read.
    #[error("{event} hook `{command}` printed invalid JSON on stdout: {error}")]
    InvalidOutput {
        /// The hook event.
        event: &'static str,
        /// The command.
        command: String,
        /// What is wrong with the output.
        error: String,
    },
}

/// What the hooks of one event said, combined.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookOutcome {
    /// Hooks that ran.
    pub ran: usize,
    /// Blocking reasons (exit 2's stderr, `decision: "block"`'s reason), in settings order.
    pub blocks: Vec<String>,
    /// `"continue": false`: stop the session's work; `stopReason` is for the user.
    pub stop: Option<Option<String>>,
    /// The strongest permission answer (deny over ask over allow) and its reason.
    pub permission: Option<(HookPermission, Option<String>)>,
    /// `updatedInput` (PreToolUse): the call runs with it (the last hook's wins).
    pub updated_input: Option<Value>,
    /// `additionalContext`, and plain stdout of UserPromptSubmit, SessionStart, PreCompact and
    /// PostCompact hooks.
    pub context: Vec<String>,
    /// `systemMessage`s, for the user.
    pub system_messages: Vec<String>,
    /// Non-blocking errors, for the user.
    pub failures: Vec<HookRunFailure>,
}

impl HookOutcome {
    /// The blocking reasons as one text, if any hook blocked.
    pub fn block_reason(&self) -> Option<String> {
        (!self.blocks.is_empty()).then(|| self.blocks.join("\n"))
    }
}

/// The JSON a hook may print on stdout (Claude Code's field names).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HookJsonOutput {
    #[serde(rename = "continue")]
    keep_going: Option<bool>,
    stop_reason: Option<String>,
    decision: Option<String>,
    reason: Option<String>,
    system_message: Option<String>,
    hook_specific_output: Option<HookSpecificOutput>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HookSpecificOutput {
    permission_decision: Option<String>,
    permission_decision_reason: Option<String>,
    updated_input: Option<Value>,
    additional_context: Option<String>,
}

/// Runs `commands` (all of one event) with `input` on stdin, concurrently, and combines what
/// they said. Dropping the future kills the running hooks.
pub(crate) async fn run_commands(
    event: HookEvent,
    commands: &[&HookCommand],
    cwd: &Path,
    input: &Value,
) -> HookOutcome {
    let mut outcome = HookOutcome::default();
    if commands.is_empty() {
        return outcome;
    }
    let stdin = match serde_json::to_vec(input) {
        Ok(bytes) => bytes,
        Err(error) => {
            tracing::error!(%error, event = event.name(), "cannot encode hook input; hooks skipped");
            return outcome;
        }
    };
    let dir = cwd.to_string_lossy().into_owned();
    let env = [
        ("TINE_PROJECT_DIR", dir.as_str()),
        ("CLAUDE_PROJECT_DIR", dir.as_str()),
    ];
    let runs = commands
        .iter()
        .map(|c| run_shell(&c.command, cwd, &env, &stdin, c.timeout));
    let results = futures::future::join_all(runs).await;
    outcome.ran = commands.len();
    for (command, result) in commands.iter().zip(results) {
        judge(
            event,
            &command.command,
            command.timeout,
            result,
            &mut outcome,
        );
    }
    for failure in &outcome.failures {
        tracing::warn!(%failure, "hook failed (not blocking)");
    }
    outcome
}

/// One hook's result into `outcome`.
pub(crate) fn judge(
    event: HookEvent,
    command: &str,
    timeout: Duration,
    result: Result<ProcessOutput, RunError>,
    outcome: &mut HookOutcome,
) {
    let name = event.name();
    let output = match result {
        Ok(output) => output,
        Err(RunError::Spawn(error) | RunError::Wait(error)) => {
            outcome.failures.push(HookRunFailure::Spawn {
                event: name,
                command: command.to_owned(),
                error: error.to_string(),
            });
            return;
        }
        Err(RunError::Timeout) => {
            outcome.failures.push(HookRunFailure::Timeout {
                event: name,
                command: command.to_owned(),
                timeout,
            });
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    match output.status.code() {
        Some(0) => parse_stdout(event, command, &output.stdout, outcome),
        Some(2) => outcome.blocks.push(if stderr.is_empty() {
            format!("{name} hook `{command}` blocked this (exit code 2, no reason given)")
        } else {
            stderr
        }),
        _ => outcome.failures.push(HookRunFailure::Failed {
            event: name,
            command: command.to_owned(),
            status: output.status.to_string(),
            stderr,
        }),
    }
}

fn parse_stdout(event: HookEvent, command: &str, stdout: &[u8], outcome: &mut HookOutcome) {
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim();
    if !text.starts_with('{') {
        match event {
            // Claude Code adds these two events' plain output to the context; a compaction
            // hook's plain output is what it asks the summary (PreCompact) or the new history
            // (PostCompact) to hold.
            HookEvent::UserPromptSubmit
            | HookEvent::SessionStart
            | HookEvent::PreCompact
            | HookEvent::PostCompact
                if !text.is_empty() =>
            {
                outcome.context.push(text.to_owned());
            }
            _ if !text.is_empty() => {
                tracing::debug!(event = event.name(), command, output = text, "hook output");
            }
            _ => {}
        }
        return;
    }
    let parsed: HookJsonOutput = match serde_json::from_str(text) {
        Ok(parsed) => parsed,
        Err(error) => {
            outcome.failures.push(HookRunFailure::InvalidOutput {
                event: event.name(),
                command: command.to_owned(),
                error: error.to_string(),
            });
            return;
        }
    };
    if let Some(message) = parsed.system_message {
        outcome.system_messages.push(message);
    }
    if parsed.keep_going == Some(false) && outcome.stop.is_none() {
        outcome.stop = Some(parsed.stop_reason);
    }
    let reason = parsed.reason;
    match parsed.decision.as_deref() {
        Some("block") => outcome.blocks.push(reason.clone().unwrap_or_else(|| {
            format!(
                "{} hook `{command}` blocked this (no reason given)",
                event.name()
            )
        })),
        // The older spelling of a PreToolUse allow.
        Some("approve") if event == HookEvent::PreToolUse => {
            permit(outcome, HookPermission::Allow, reason.clone());
        }
        _ => {}
    }
    let Some(specific) = parsed.hook_specific_output else {
        return;
    };
    if let Some(context) = specific.additional_context.filter(|c| !c.trim().is_empty()) {
        outcome.context.push(context);
    }
    if event != HookEvent::PreToolUse {
        return;
    }
    if let Some(input) = specific.updated_input.filter(Value::is_object) {
        outcome.updated_input = Some(input);
    }
    let why = specific.permission_decision_reason.or(reason);
    match specific.permission_decision.as_deref() {
        None => {}
        Some("allow") => permit(outcome, HookPermission::Allow, why),
        Some("ask") => permit(outcome, HookPermission::Ask, why),
        Some("deny") => permit(outcome, HookPermission::Deny, why),
        // An answer tine does not know is a denial (fail closed).
        Some(other) => permit(
            outcome,
            HookPermission::Deny,
            Some(format!(
                "PreToolUse hook `{command}` answered permissionDecision `{other}`, which tine \
                 does not know (use allow, deny or ask); the call is refused"
            )),
        ),
    }
}

/// Keeps the strongest answer: deny over ask over allow.
fn permit(outcome: &mut HookOutcome, answer: HookPermission, reason: Option<String>) {
    match &outcome.permission {
        Some((current, _)) if *current >= answer => {}
        _ => outcome.permission = Some((answer, reason)),
    }
}

/// A halt wins over a block; blocks are joined in settings order.
pub(crate) fn stop_outcome(outcome: HookOutcome) -> StopHookOutcome {
    if let Some(reason) = outcome.stop {
        return StopHookOutcome::Halt { reason };
    }
    match outcome.blocks.is_empty() {
        true => StopHookOutcome::Continue,
        false => StopHookOutcome::Block {
            reason: outcome.blocks.join("\n\n"),
        },
    }
}
