//! PreCompact and PostCompact hooks from settings, in Claude Code's shape:
//!
//! ```json
//! {"hooks": {"PreCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command": "./keep.sh"}]}]}}
//! ```
//!
//! The matcher is the trigger (`manual`, `auto`; empty or `*` for both; `a|b` for either; a
//! reactive compaction counts as `auto`). Each command gets JSON on stdin (`session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, `trigger`, and `custom_instructions` for
//! PreCompact, `compact_summary` for PostCompact) and runs through the same process runner as
//! Stop hooks. What a PreCompact hook prints (exit 0) is added to the summary instruction,
//! seed 003 §九's "keep this"; what a PostCompact hook prints is added to the new history after
//! the summary. Plain text, or JSON with `hookSpecificOutput.additionalContext`. A failing hook
//! is logged and never stops the compaction.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tine_config::SessionId;
use tine_query_loop::CompactTrigger;
use tine_query_loop::hooks::{DEFAULT_HOOK_TIMEOUT, HookMatcher, HookSpec, run_hook_command};

/// One hook command of a compaction event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactHookCommand {
    /// The matcher (`manual`, `auto`, or empty for both).
    pub matcher: String,
    /// The shell command.
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
}

impl CompactHookCommand {
    fn matches(&self, trigger: CompactTrigger) -> bool {
        let name = match trigger {
            CompactTrigger::Manual => "manual",
            CompactTrigger::Auto | CompactTrigger::Reactive => "auto",
        };
        let matcher = self.matcher.trim();
        matcher.is_empty()
            || matcher == "*"
            || matcher
                .split('|')
                .any(|m| m.trim().eq_ignore_ascii_case(name))
    }
}

/// The PreCompact and PostCompact commands of the settings, lowest precedence first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactHookCommands {
    /// PreCompact hooks.
    pub pre: Vec<CompactHookCommand>,
    /// PostCompact hooks.
    pub post: Vec<CompactHookCommand>,
}

impl CompactHookCommands {
    /// Reads one settings file's `hooks` object (other events are not looked at).
    pub fn from_hooks_value(hooks: &Value) -> Result<Self, serde_json::Error> {
        Ok(Self {
            pre: commands(hooks.get("PreCompact"))?,
            post: commands(hooks.get("PostCompact"))?,
        })
    }

    /// Appends another source's commands; the same command text runs once.
    pub fn merge(&mut self, other: Self) {
        for (mine, theirs) in [(&mut self.pre, other.pre), (&mut self.post, other.post)] {
            for command in theirs {
                if !mine.iter().any(|c| c.command == command.command) {
                    mine.push(command);
                }
            }
        }
    }

    /// Whether there is no hook at all.
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty() && self.post.is_empty()
    }
}

fn commands(event: Option<&Value>) -> Result<Vec<CompactHookCommand>, serde_json::Error> {
    let Some(event) = event else {
        return Ok(Vec::new());
    };
    let matchers: Vec<HookMatcher> = serde_json::from_value(event.clone())?;
    let mut out = Vec::new();
    for group in matchers {
        for spec in group.hooks {
            match spec {
                HookSpec::Command { command, timeout } => out.push(CompactHookCommand {
                    matcher: group.matcher.clone(),
                    command,
                    timeout: timeout.map_or(DEFAULT_HOOK_TIMEOUT, Duration::from_secs),
                }),
                HookSpec::Unsupported => {
                    tracing::debug!("skipping a compaction hook of an unsupported type");
                }
            }
        }
    }
    Ok(out)
}

/// The hooks of one session, ready to run.
#[derive(Debug, Clone)]
pub struct CompactHooks {
    /// The hook commands.
    pub commands: CompactHookCommands,
    /// The session, for the hooks' JSON input.
    pub session_id: SessionId,
    /// The session's transcript, for the hooks' JSON input.
    pub transcript_path: PathBuf,
    /// The working directory the hooks run in.
    pub cwd: PathBuf,
}

#[derive(Serialize)]
struct HookInput<'a> {
    session_id: &'a SessionId,
    transcript_path: &'a PathBuf,
    cwd: &'a PathBuf,
    hook_event_name: &'static str,
    trigger: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    custom_instructions: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    compact_summary: Option<&'a str>,
}

impl CompactHooks {
    /// Runs the PreCompact hooks; returns what they ask the summary to keep.
    pub async fn pre_compact(&self, trigger: CompactTrigger, focus: Option<&str>) -> Vec<String> {
        let input = HookInput {
            session_id: &self.session_id,
            transcript_path: &self.transcript_path,
            cwd: &self.cwd,
            hook_event_name: "PreCompact",
            trigger: trigger_name(trigger),
            custom_instructions: Some(focus.unwrap_or("")),
            compact_summary: None,
        };
        self.run(&self.commands.pre, trigger, &input).await
    }

    /// Runs the PostCompact hooks; returns the context they add after the summary.
    pub async fn post_compact(&self, trigger: CompactTrigger, summary: &str) -> Vec<String> {
        let input = HookInput {
            session_id: &self.session_id,
            transcript_path: &self.transcript_path,
            cwd: &self.cwd,
            hook_event_name: "PostCompact",
            trigger: trigger_name(trigger),
            custom_instructions: None,
            compact_summary: Some(summary),
        };
        self.run(&self.commands.post, trigger, &input).await
    }

    async fn run(
        &self,
        commands: &[CompactHookCommand],
        trigger: CompactTrigger,
        input: &HookInput<'_>,
    ) -> Vec<String> {
        let chosen: Vec<&CompactHookCommand> =
            commands.iter().filter(|c| c.matches(trigger)).collect();
        if chosen.is_empty() {
            return Vec::new();
        }
        let stdin = match serde_json::to_vec(input) {
            Ok(bytes) => bytes,
            Err(error) => {
                tracing::error!(%error, "cannot encode the compaction hook input; hooks skipped");
                return Vec::new();
            }
        };
        let cwd = self.cwd.to_string_lossy().into_owned();
        let env = [
            ("TINE_PROJECT_DIR", cwd.as_str()),
            ("CLAUDE_PROJECT_DIR", cwd.as_str()),
        ];
        let runs = chosen
            .iter()
            .map(|c| run_hook_command(&c.command, &self.cwd, &env, &stdin, c.timeout));
        let results = futures::future::join_all(runs).await;
        let mut out = Vec::new();
        for (command, result) in chosen.iter().zip(results) {
            let event = input.hook_event_name;
            match result {
                Ok(output) if output.status.success() => {
                    if let Some(text) = hook_text(&output.stdout) {
                        out.push(text);
                    }
                }
                Ok(output) => tracing::warn!(
                    event,
                    command = %command.command,
                    status = %output.status,
                    stderr = %String::from_utf8_lossy(&output.stderr).trim(),
                    "compaction hook failed (compaction goes on)"
                ),
                Err(error) => tracing::warn!(
                    event,
                    command = %command.command,
                    ?error,
                    "compaction hook could not run (compaction goes on)"
                ),
            }
        }
        out
    }
}

fn trigger_name(trigger: CompactTrigger) -> &'static str {
    match trigger {
        CompactTrigger::Manual => "manual",
        CompactTrigger::Auto | CompactTrigger::Reactive => "auto",
    }
}

/// Plain text as printed, or JSON's `hookSpecificOutput.additionalContext`.
fn hook_text(stdout: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if text.starts_with('{')
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        return value
            .pointer("/hookSpecificOutput/additionalContext")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
    }
    Some(text.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn matchers_pick_the_trigger() {
        let c = |m: &str| CompactHookCommand {
            matcher: m.into(),
            command: "x".into(),
            timeout: DEFAULT_HOOK_TIMEOUT,
        };
        assert!(c("").matches(CompactTrigger::Manual));
        assert!(c("auto").matches(CompactTrigger::Reactive));
        assert!(!c("auto").matches(CompactTrigger::Manual));
        assert!(c("manual|auto").matches(CompactTrigger::Manual));
    }

    #[test]
    fn settings_are_read_and_merged() {
        let hooks = json!({
            "PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "a", "timeout": 5}]}],
            "PostCompact": [{"hooks": [{"type": "command", "command": "b"}, {"type": "prompt"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "c"}]}]
        });
        let mut read = CompactHookCommands::from_hooks_value(&hooks).unwrap();
        assert_eq!(read.pre[0].timeout, Duration::from_secs(5));
        assert_eq!(read.post.len(), 1);
        read.merge(CompactHookCommands::from_hooks_value(&hooks).unwrap());
        assert_eq!((read.pre.len(), read.post.len()), (1, 1));
        assert!(CompactHookCommands::from_hooks_value(&json!({"PreCompact": 3})).is_err());
    }

    #[test]
    fn hook_output_is_text_or_additional_context() {
        assert_eq!(
            hook_text(b" keep the schema \n").unwrap(),
            "keep the schema"
        );
        assert_eq!(
            hook_text(br#"{"hookSpecificOutput": {"additionalContext": "ctx"}}"#).unwrap(),
            "ctx"
        );
        assert_eq!(hook_text(br#"{"continue": true}"#), None);
        assert_eq!(hook_text(b""), None);
    }

    #[tokio::test]
    async fn hooks_run_with_their_input() {
        let dir = tempfile::tempdir().unwrap();
        let hooks = CompactHooks {
            commands: CompactHookCommands {
                pre: vec![CompactHookCommand {
                    matcher: String::new(),
                    command: "cat > pre.json; echo keep the ledger".into(),
                    timeout: DEFAULT_HOOK_TIMEOUT,
                }],
                post: vec![CompactHookCommand {
                    matcher: "manual".into(),
                    command: "echo after".into(),
                    timeout: DEFAULT_HOOK_TIMEOUT,
                }],
            },
            session_id: SessionId::new_random(),
            transcript_path: dir.path().join("t.jsonl"),
            cwd: dir.path().to_path_buf(),
        };
        let kept = hooks
            .pre_compact(CompactTrigger::Reactive, Some("focus"))
            .await;
        assert_eq!(kept, ["keep the ledger"]);
        let input: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("pre.json")).unwrap()).unwrap();
        assert_eq!(input["hook_event_name"], "PreCompact");
        assert_eq!(input["trigger"], "auto");
        assert_eq!(input["custom_instructions"], "focus");
        assert!(
            hooks
                .post_compact(CompactTrigger::Auto, "s")
                .await
                .is_empty()
        );
        assert_eq!(
            hooks.post_compact(CompactTrigger::Manual, "s").await,
            ["after"]
        );
    }
}
