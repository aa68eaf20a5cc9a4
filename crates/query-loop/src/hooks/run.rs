//! Running the hooks of one event and reading what they said, as Claude Code does: every
//! matching hook at once, settings' commands and an app's callbacks alike. A command gets the
//! JSON input on stdin (`sh -c`, its own process group, killed at its timeout); exit 0 passes
//! (stdout may be JSON or, for UserPromptSubmit, SessionStart, PreCompact and PostCompact,
//! context); exit 2 blocks with stderr as the reason; any other exit is a non-blocking error
//! shown to the user. A callback gets the same input and answers JSON; one that fails or
//! passes its timeout is a non-blocking error. The JSON of either is read by one parser:
//! `continue`/`stopReason`, `decision` (`block`, `approve`) with `reason`, `systemMessage`,
//! and `hookSpecificOutput` with `permissionDecision` (`allow`, `deny`, `ask`) and
//! `permissionDecisionReason`, `updatedInput`, `additionalContext`.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::callback::CallbackHook;
use super::config::MatchedHook;
use super::event::HookEvent;
use super::process::{ProcessOutput, RunError, run_shell};
use super::report::{HookHandler, HookObserver, HookRunEnd, HookRunOutcome, RunReporter};
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
    /// An app's hook callback did not answer within its timeout.
    #[error(
        "{event} hook callback `{callback_id}` did not answer within {}s and counts as failed; \
         the app sets its matcher's \"timeout\"",
        timeout.as_secs_f64()
    )]
    CallbackTimeout {
        /// The hook event.
        event: &'static str,
        /// The app's id for the callback.
        callback_id: String,
        /// Its timeout.
        timeout: Duration,
    },
    /// An app's hook callback failed, or answered what tine cannot read.
    #[error("{event} hook callback `{callback_id}` failed: {error}")]
    CallbackFailed {
        /// The hook event.
        event: &'static str,
        /// The app's id for the callback.
        callback_id: String,
        /// What went wrong.
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

    /// Adds what a later hook (in settings order) said, as if it had been read after these.
    fn merge(&mut self, later: HookOutcome) {
        self.ran += later.ran;
        self.blocks.extend(later.blocks);
        if self.stop.is_none() {
            self.stop = later.stop;
        }
        if let Some((answer, reason)) = later.permission {
            permit(self, answer, reason);
        }
        if later.updated_input.is_some() {
            self.updated_input = later.updated_input;
        }
        self.context.extend(later.context);
        self.system_messages.extend(later.system_messages);
        self.failures.extend(later.failures);
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

/// One event's hooks: what they are told and where they run.
pub(crate) struct EventRun<'a> {
    /// The event.
    pub(crate) event: HookEvent,
    /// Claude Code's `hook_name` of this run (`PreToolUse:Bash`), for the observer.
    pub(crate) hook_name: &'a str,
    /// Where commands run.
    pub(crate) cwd: &'a Path,
    /// The input every hook gets.
    pub(crate) input: &'a Value,
    /// Told when each hook starts and ends, if anyone listens.
    pub(crate) observer: Option<&'a HookObserver>,
}

/// Why a callback gave no answer.
enum CallbackError {
    Timeout,
    Failed(String),
}

/// Runs `hooks` (all of one event), concurrently, and combines what they said in their order.
/// Dropping the future kills the running commands and drops the callbacks' futures.
pub(crate) async fn run_hooks(run: EventRun<'_>, hooks: &[MatchedHook<'_>]) -> HookOutcome {
    let mut outcome = HookOutcome::default();
    if hooks.is_empty() {
        return outcome;
    }
    let stdin = match serde_json::to_vec(run.input) {
        Ok(bytes) => bytes,
        Err(error) => {
            tracing::error!(%error, event = run.event.name(), "cannot encode hook input; hooks skipped");
            return outcome;
        }
    };
    let dir = run.cwd.to_string_lossy().into_owned();
    let env = [
        ("TINE_PROJECT_DIR", dir.as_str()),
        ("CLAUDE_PROJECT_DIR", dir.as_str()),
    ];
    let runs = hooks.iter().map(|hook| run_one(&run, *hook, &stdin, &env));
    for one in futures::future::join_all(runs).await {
        outcome.merge(one);
    }
    for failure in &outcome.failures {
        tracing::warn!(%failure, "hook failed (not blocking)");
    }
    outcome
}

/// One hook: run, reported to the observer, read.
async fn run_one(
    run: &EventRun<'_>,
    hook: MatchedHook<'_>,
    stdin: &[u8],
    env: &[(&str, &str)],
) -> HookOutcome {
    let reporter = run.observer.map(|observer| {
        let handler = match hook {
            MatchedHook::Command(command) => HookHandler::Command(command.command.clone()),
            MatchedHook::Callback(callback, _) => {
                HookHandler::Callback(callback.callback_id.clone())
            }
        };
        RunReporter::start(observer, run.event, run.hook_name, handler)
    });
    let mut one = HookOutcome {
        ran: 1,
        ..HookOutcome::default()
    };
    let end = match hook {
        MatchedHook::Command(command) => {
            let own: Vec<(&str, &str)> = command
                .env
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .chain(env.iter().copied())
                .collect();
            let result = run_shell(&command.command, run.cwd, &own, stdin, command.timeout).await;
            judge(
                run.event,
                &command.command,
                command.timeout,
                &result,
                &mut one,
            );
            reporter.as_ref().map(|_| command_end(&result))
        }
        MatchedHook::Callback(callback, host) => {
            let tool_use_id = run
                .input
                .get("tool_use_id")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let call = host.call(&callback.callback_id, run.input.clone(), tool_use_id);
            let result = match tokio::time::timeout(callback.timeout, call).await {
                Ok(answer) => answer.map_err(CallbackError::Failed),
                Err(_elapsed) => Err(CallbackError::Timeout),
            };
            judge_callback(run.event, callback, &result, &mut one);
            reporter.as_ref().map(|_| callback_end(&result))
        }
    };
    if let (Some(reporter), Some(mut end)) = (reporter, end) {
        if !one.failures.is_empty() {
            end.outcome = HookRunOutcome::Error;
            if end.stderr.is_empty() {
                end.stderr = one
                    .failures
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n");
            }
        }
        reporter.end(end);
    }
    one
}

/// A command's run as `hook_response` reports it.
fn command_end(result: &Result<ProcessOutput, RunError>) -> HookRunEnd {
    match result {
        Ok(output) => {
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            let exit_code = output.status.code();
            HookRunEnd {
                outcome: match exit_code {
                    Some(0) => HookRunOutcome::Success,
                    _ => HookRunOutcome::Error,
                },
                output: format!("{stdout}{stderr}"),
                stdout,
                stderr,
                exit_code,
            }
        }
        // The failure's message becomes stderr (see `run_one`).
        Err(_) => HookRunEnd {
            outcome: HookRunOutcome::Error,
            output: String::new(),
            stdout: String::new(),
            stderr: String::new(),
            exit_code: None,
        },
    }
}

/// A callback's run as `hook_response` reports it: its answer as JSON.
fn callback_end(result: &Result<Value, CallbackError>) -> HookRunEnd {
    let (outcome, output) = match result {
        Ok(answer) => (HookRunOutcome::Success, answer.to_string()),
        Err(_) => (HookRunOutcome::Error, String::new()),
    };
    HookRunEnd {
        outcome,
        output,
        stdout: String::new(),
        stderr: String::new(),
        exit_code: None,
    }
}

/// One command's result into `outcome`.
fn judge(
    event: HookEvent,
    command: &str,
    timeout: Duration,
    result: &Result<ProcessOutput, RunError>,
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

/// One callback's answer into `outcome`: read as a command's stdout JSON is.
fn judge_callback(
    event: HookEvent,
    hook: &CallbackHook,
    result: &Result<Value, CallbackError>,
    outcome: &mut HookOutcome,
) {
    let failed = |error: String| HookRunFailure::CallbackFailed {
        event: event.name(),
        callback_id: hook.callback_id.clone(),
        error,
    };
    match result {
        Err(CallbackError::Timeout) => outcome.failures.push(HookRunFailure::CallbackTimeout {
            event: event.name(),
            callback_id: hook.callback_id.clone(),
            timeout: hook.timeout,
        }),
        Err(CallbackError::Failed(error)) => outcome.failures.push(failed(error.clone())),
        // An answer with nothing to say.
        Ok(Value::Null) => {}
        Ok(answer) => match HookJsonOutput::deserialize(answer) {
            Ok(parsed) => read_output(
                event,
                &HookHandler::Callback(hook.callback_id.clone()),
                parsed,
                outcome,
            ),
            Err(error) => outcome.failures.push(failed(format!(
                "its answer is not a hook's JSON output ({error})"
            ))),
        },
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
    match serde_json::from_str(text) {
        Ok(parsed) => read_output(
            event,
            &HookHandler::Command(command.to_owned()),
            parsed,
            outcome,
        ),
        Err(error) => outcome.failures.push(HookRunFailure::InvalidOutput {
            event: event.name(),
            command: command.to_owned(),
            error: error.to_string(),
        }),
    }
}

/// What a hook's JSON output says, into `outcome`: the one reading of a command's stdout JSON
/// and a callback's answer.
fn read_output(
    event: HookEvent,
    handler: &HookHandler,
    parsed: HookJsonOutput,
    outcome: &mut HookOutcome,
) {
    if let Some(message) = parsed.system_message {
        outcome.system_messages.push(message);
    }
    if parsed.keep_going == Some(false) && outcome.stop.is_none() {
        outcome.stop = Some(parsed.stop_reason);
    }
    let reason = parsed.reason;
    match parsed.decision.as_deref() {
        Some("block") => outcome.blocks.push(reason.clone().unwrap_or_else(|| {
            format!("{} {handler} blocked this (no reason given)", event.name())
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
                "PreToolUse {handler} answered permissionDecision `{other}`, which tine \
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
