//! Hooks an app registers instead of writing commands in settings: the Claude Agent SDK's
//! hook callbacks. The app names them in its `initialize` request (`"hooks": {"PreToolUse":
//! [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 30}]}`, read by
//! [`callback_hooks_from_json`]); when one matches, the front end asks the app through
//! [`HookCallbacks`] with the JSON a command hook reads on stdin, and the app's answer is read
//! as a command hook's JSON output, by the same code.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use super::event::{DEFAULT_HOOK_TIMEOUT, HookEvent, Matcher, NOT_RUN_EVENTS};

/// Runs an app's hook callbacks: the front end implements it (the SDK's `hook_callback`
/// control request). The future is dropped when the hook's timeout passes or the turn is
/// interrupted; the front end may then withdraw its request.
pub trait HookCallbacks: Send + Sync {
    /// Calls callback `callback_id` with `input` (exactly what a command hook reads on stdin)
    /// and, for tool events, the call's `tool_use_id`. `Ok` is the hook's JSON output (read
    /// as a command hook's stdout JSON); `Err` means the hook failed (a non-blocking error,
    /// shown to the user).
    fn call(
        &self,
        callback_id: &str,
        input: Value,
        tool_use_id: Option<String>,
    ) -> BoxFuture<'static, Result<Value, String>>;
}

/// One callback an app registered for an event.
#[derive(Debug, Clone)]
pub struct CallbackHook {
    /// The event it runs on.
    pub event: HookEvent,
    /// What it applies to.
    pub matcher: Matcher,
    /// The matcher as the app wrote it (empty when absent).
    pub matcher_text: String,
    /// The app's id for it (`hook_0`).
    pub callback_id: String,
    /// How long the app may take to answer.
    pub timeout: Duration,
}

/// An app's callback hooks with what runs them (a part of [`super::HookConfig`]).
#[derive(Clone)]
pub(crate) struct CallbackSet {
    pub(crate) hooks: Vec<CallbackHook>,
    pub(crate) host: Arc<dyn HookCallbacks>,
}

impl std::fmt::Debug for CallbackSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackSet")
            .field("hooks", &self.hooks)
            .finish_non_exhaustive()
    }
}

/// Reads the `hooks` of an app's `initialize` request: an object from event names to
/// matcher groups, each `{"matcher": TEXT | null, "hookCallbackIds": [ID, ...], "timeout":
/// SECONDS}`; `null` is no hooks. Returns the callbacks, and warnings for Claude Code events
/// tine does not run (their callbacks are left out). An unknown event, a matcher that is not
/// valid, or a group of the wrong shape is an error naming it: a hook may be a guard, so it
/// is not dropped silently.
pub fn callback_hooks_from_json(value: &Value) -> Result<(Vec<CallbackHook>, Vec<String>), String> {
    let mut hooks = Vec::new();
    let mut warnings = Vec::new();
    let events = match value {
        Value::Null => return Ok((hooks, warnings)),
        Value::Object(events) => events,
        other => {
            return Err(format!(
                "the app's `hooks` must be an object from event names to matcher groups, not {}",
                kind(other)
            ));
        }
    };
    for (name, groups) in events {
        let Some(event) = HookEvent::from_name(name) else {
            if NOT_RUN_EVENTS.contains(&name.as_str()) {
                warnings.push(format!(
                    "the app registered `{name}` hooks, an event tine does not have; they will \
                     not run"
                ));
                continue;
            }
            return Err(format!(
                "the app's hooks: `{name}` is not a hook event; use one of {}",
                HookEvent::ALL.map(HookEvent::name).join(", ")
            ));
        };
        let groups = match groups {
            Value::Null => continue,
            Value::Array(groups) => groups,
            other => {
                return Err(format!(
                    "the app's `{name}` hooks must be an array of matcher groups, not {}",
                    kind(other)
                ));
            }
        };
        for (index, group) in groups.iter().enumerate() {
            read_group(event, index, group, &mut hooks)?;
        }
    }
    Ok((hooks, warnings))
}

fn read_group(
    event: HookEvent,
    index: usize,
    group: &Value,
    hooks: &mut Vec<CallbackHook>,
) -> Result<(), String> {
    let name = event.name();
    let at = || format!("the app's `{name}` matcher group {index}");
    let Some(group) = group.as_object() else {
        return Err(format!("{} must be an object, not {}", at(), kind(group)));
    };
    let matcher_text = match group.get("matcher") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => {
            return Err(format!(
                "{}: `matcher` must be a string, not {}",
                at(),
                kind(other)
            ));
        }
    };
    let matcher = Matcher::parse(&matcher_text).map_err(|error| {
        format!(
            "{}: `{matcher_text}` is not a valid matcher ({error})",
            at()
        )
    })?;
    let timeout = match group.get("timeout") {
        None | Some(Value::Null) => DEFAULT_HOOK_TIMEOUT,
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|secs| *secs > 0.0)
            .and_then(|secs| Duration::try_from_secs_f64(secs.min(1e9)).ok())
            .ok_or_else(|| format!("{}: `timeout` must be a positive number of seconds", at()))?,
        Some(other) => {
            return Err(format!(
                "{}: `timeout` must be a number of seconds, not {}",
                at(),
                kind(other)
            ));
        }
    };
    let ids = match group.get("hookCallbackIds") {
        Some(Value::Array(ids)) => ids,
        None => return Err(format!("{} has no `hookCallbackIds`", at())),
        Some(other) => {
            return Err(format!(
                "{}: `hookCallbackIds` must be an array of strings, not {}",
                at(),
                kind(other)
            ));
        }
    };
    for id in ids {
        let Some(id) = id.as_str() else {
            return Err(format!(
                "{}: `hookCallbackIds` must hold strings, not {}",
                at(),
                kind(id)
            ));
        };
        hooks.push(CallbackHook {
            event,
            matcher: matcher.clone(),
            matcher_text: matcher_text.clone(),
            callback_id: id.to_owned(),
            timeout,
        });
    }
    Ok(())
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_sdks_hooks_are_read_with_matchers_and_timeouts() {
        let (hooks, warnings) = callback_hooks_from_json(&json!({
            "PreToolUse": [
                {"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 30},
                {"matcher": null, "hookCallbackIds": ["hook_2"]}
            ],
            "Stop": [{"hookCallbackIds": ["hook_3"], "timeout": 0.5}],
            "SubagentStart": [{"hookCallbackIds": ["hook_4"]}]
        }))
        .unwrap();
        let seen: Vec<(HookEvent, &str, &str, Duration)> = hooks
            .iter()
            .map(|h| {
                (
                    h.event,
                    h.matcher_text.as_str(),
                    h.callback_id.as_str(),
                    h.timeout,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (
                    HookEvent::PreToolUse,
                    "Bash",
                    "hook_0",
                    Duration::from_secs(30)
                ),
                (
                    HookEvent::PreToolUse,
                    "Bash",
                    "hook_1",
                    Duration::from_secs(30)
                ),
                (HookEvent::PreToolUse, "", "hook_2", DEFAULT_HOOK_TIMEOUT),
                (HookEvent::Stop, "", "hook_3", Duration::from_millis(500)),
            ]
        );
        assert!(hooks[0].matcher.matches("Bash") && !hooks[0].matcher.matches("Read"));
        assert!(hooks[2].matcher.matches("Read"));
        // Claude Code has SubagentStart; tine does not run it: said, not silent.
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("SubagentStart"), "{warnings:?}");
        assert_eq!(callback_hooks_from_json(&Value::Null).unwrap().0.len(), 0);
    }

    #[test]
    fn a_malformed_hooks_value_is_an_error_naming_what_is_wrong() {
        for (value, needle) in [
            (json!([]), "must be an object"),
            (
                json!({"PreTooluse": [{"hookCallbackIds": ["h"]}]}),
                "`PreTooluse` is not a hook event",
            ),
            (
                json!({"PreToolUse": [{"matcher": "Bash(", "hookCallbackIds": ["h"]}]}),
                "`Bash(` is not a valid matcher",
            ),
            (
                json!({"PreToolUse": {"hookCallbackIds": ["h"]}}),
                "must be an array",
            ),
            (
                json!({"PreToolUse": [{"matcher": "Bash"}]}),
                "no `hookCallbackIds`",
            ),
            (
                json!({"PreToolUse": [{"hookCallbackIds": [3]}]}),
                "must hold strings",
            ),
            (
                json!({"Stop": [{"hookCallbackIds": ["h"], "timeout": -1}]}),
                "positive number",
            ),
            (
                json!({"Stop": [{"hookCallbackIds": ["h"], "timeout": "30"}]}),
                "number of seconds",
            ),
            (
                json!({"Stop": [{"matcher": 1, "hookCallbackIds": ["h"]}]}),
                "must be a string",
            ),
        ] {
            let error = callback_hooks_from_json(&value).unwrap_err();
            assert!(error.contains(needle), "{value}: {error}");
        }
    }
}
