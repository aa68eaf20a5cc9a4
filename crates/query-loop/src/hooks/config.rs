//! What the settings' hooks mean: one command per hook, for an event and a matcher (`event`);
//! a [`HookConfig`] also holds the callbacks an app registered (`callback`), matched the same
//! way. `tine-config` hands every hook over as written with its file and line
//! ([`HookSetting`]); what cannot be understood here (an unknown event, a bad regex, a type
//! tine cannot run) is reported at that place as a fatal [`SettingsError::Hook`], because a
//! hook may be a guard. Events and types of Claude Code's that tine does not run are warnings
//! ([`SettingsError::HookNotRun`]).

use std::sync::Arc;
use std::time::Duration;

use tine_config::settings::{HookSetting, LoadedSettings, SettingsError};

use super::callback::{CallbackHook, CallbackSet, HookCallbacks};
use super::event::{DEFAULT_HOOK_TIMEOUT, HookEvent, Matcher, NOT_RUN_EVENTS};

/// One runnable hook.
#[derive(Debug, Clone)]
pub struct HookCommand {
    /// The event it runs on.
    pub event: HookEvent,
    /// What it applies to.
    pub matcher: Matcher,
    /// The matcher as written (empty when absent).
    pub matcher_text: String,
    /// The shell command.
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
    /// Where it was written (for messages): `file:line`.
    pub origin: String,
    /// Variables set for it beyond the session's (a plugin's hook: `CLAUDE_PLUGIN_ROOT`).
    pub env: Vec<(String, String)>,
}

/// Every hook of a session: the settings' commands in settings order (lowest precedence
/// source first), then the app's callbacks in the order the app gave them.
#[derive(Debug, Clone, Default)]
pub struct HookConfig {
    commands: Vec<HookCommand>,
    callbacks: Option<CallbackSet>,
}

/// One hook that applies to an event: a settings command or an app's callback.
#[derive(Clone, Copy)]
pub(crate) enum MatchedHook<'a> {
    /// A command from settings.
    Command(&'a HookCommand),
    /// An app's callback, with what runs it.
    Callback(&'a CallbackHook, &'a Arc<dyn HookCallbacks>),
}

impl HookConfig {
    /// The hooks of every settings source, and what could not be understood (fatal: a hook
    /// the session cannot run; or a warning: a Claude Code event or type tine does not run).
    /// The same command for the same event and matcher runs once.
    pub fn from_settings(loaded: &LoadedSettings) -> (HookConfig, Vec<SettingsError>) {
        let mut config = HookConfig::default();
        let mut errors = Vec::new();
        for hook in loaded.layers.iter().flat_map(|l| &l.hooks) {
            if let Some(command) = read_hook(hook, &mut errors)
                && !config.commands.iter().any(|c| {
                    c.event == command.event
                        && c.command == command.command
                        && c.matcher_text == command.matcher_text
                })
            {
                config.commands.push(command);
            }
        }
        (config, errors)
    }

    /// Adds hooks read from a file other than settings (a plugin's `hooks/hooks.json`), each
    /// run with `env` set; returns what could not be understood, as
    /// [`HookConfig::from_settings`] does (the caller decides whether it is fatal). Nothing is
    /// added when anything is wrong.
    pub fn add_hooks(
        &mut self,
        hooks: &[HookSetting],
        env: &[(String, String)],
    ) -> Vec<SettingsError> {
        let mut errors = Vec::new();
        let mut commands = Vec::new();
        for hook in hooks {
            if let Some(mut command) = read_hook(hook, &mut errors) {
                command.env = env.to_vec();
                commands.push(command);
            }
        }
        if errors.is_empty() {
            self.commands.extend(commands);
        }
        errors
    }

    /// Built directly (tests, hosts without settings).
    pub fn from_commands(commands: Vec<HookCommand>) -> HookConfig {
        HookConfig {
            commands,
            callbacks: None,
        }
    }

    /// These hooks and an app's `callbacks` (read by
    /// [`super::callback_hooks_from_json`]), run through `host`; both kinds run for one
    /// event, as Claude Code runs both. Replaces callbacks given before.
    pub fn with_callbacks(
        mut self,
        callbacks: Vec<CallbackHook>,
        host: Arc<dyn HookCallbacks>,
    ) -> HookConfig {
        self.callbacks = (!callbacks.is_empty()).then_some(CallbackSet {
            hooks: callbacks,
            host,
        });
        self
    }

    /// Whether there is no hook at all.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty() && self.callback_hooks().is_empty()
    }

    /// Whether any hook (command or callback) is set for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.commands.iter().any(|c| c.event == event)
            || self.callback_hooks().iter().any(|c| c.event == event)
    }

    /// The command hooks of `event` whose matcher takes `target` (every hook of an event
    /// without a matcher).
    pub fn matching(&self, event: HookEvent, target: Option<&str>) -> Vec<&HookCommand> {
        self.commands
            .iter()
            .filter(|c| applies(event, &c.event, &c.matcher, target))
            .collect()
    }

    /// The app's callbacks of `event` whose matcher takes `target`.
    pub fn matching_callbacks(&self, event: HookEvent, target: Option<&str>) -> Vec<&CallbackHook> {
        self.callback_hooks()
            .iter()
            .filter(|c| applies(event, &c.event, &c.matcher, target))
            .collect()
    }

    /// Every hook that runs for `event` on `target`: commands first, then callbacks.
    pub(crate) fn matched(&self, event: HookEvent, target: Option<&str>) -> Vec<MatchedHook<'_>> {
        let mut matched: Vec<MatchedHook<'_>> = self
            .matching(event, target)
            .into_iter()
            .map(MatchedHook::Command)
            .collect();
        if let Some(set) = &self.callbacks {
            matched.extend(
                set.hooks
                    .iter()
                    .filter(|c| applies(event, &c.event, &c.matcher, target))
                    .map(|c| MatchedHook::Callback(c, &set.host)),
            );
        }
        matched
    }

    fn callback_hooks(&self) -> &[CallbackHook] {
        self.callbacks.as_ref().map_or(&[], |set| &set.hooks)
    }
}

/// Whether a hook of `hook_event` with `matcher` runs for `event` on `target`.
fn applies(
    event: HookEvent,
    hook_event: &HookEvent,
    matcher: &Matcher,
    target: Option<&str>,
) -> bool {
    *hook_event == event && (!event.has_matcher() || matcher.matches(target.unwrap_or("")))
}

fn read_hook(hook: &HookSetting, errors: &mut Vec<SettingsError>) -> Option<HookCommand> {
    let Some(event) = HookEvent::from_name(&hook.event.text) else {
        if NOT_RUN_EVENTS.contains(&hook.event.text.as_str()) {
            errors.push(SettingsError::HookNotRun {
                at: hook.at.clone(),
                key: hook.key.clone(),
                what: format!(
                    "is a `{}` hook, an event tine does not have",
                    hook.event.text
                ),
            });
        } else {
            errors.push(SettingsError::Hook {
                at: hook.event.at.clone(),
                key: hook.event.key.clone(),
                problem: format!(
                    "is not a hook event; use one of {}",
                    HookEvent::ALL.map(HookEvent::name).join(", ")
                ),
            });
        }
        return None;
    };
    let matcher = match &hook.matcher {
        None => Matcher::All,
        Some(text) => match Matcher::parse(&text.text) {
            Ok(matcher) => matcher,
            Err(error) => {
                errors.push(SettingsError::Hook {
                    at: text.at.clone(),
                    key: text.key.clone(),
                    problem: format!("is not a valid matcher ({error})"),
                });
                return None;
            }
        },
    };
    let Some(command) = hook.command.clone().filter(|_| hook.hook_type == "command") else {
        errors.push(SettingsError::Hook {
            at: hook.at.clone(),
            key: hook.key.clone(),
            problem: format!(
                "is a `{}` hook; tine runs only `command` hooks (`\"type\": \"command\"`)",
                hook.hook_type
            ),
        });
        return None;
    };
    Some(HookCommand {
        event,
        matcher,
        matcher_text: hook
            .matcher
            .as_ref()
            .map(|m| m.text.clone())
            .unwrap_or_default(),
        command,
        // Positive (tine-config checked); a silly size is a very long wait, not a panic.
        timeout: hook.timeout_secs.map_or(DEFAULT_HOOK_TIMEOUT, |secs| {
            Duration::try_from_secs_f64(secs.min(1e9)).unwrap_or(DEFAULT_HOOK_TIMEOUT)
        }),
        origin: hook.at.to_string(),
        env: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use tine_config::settings::{SettingsSource, parse_layer};

    use super::*;

    fn load(text: &str) -> (HookConfig, Vec<SettingsError>) {
        let mut errors = Vec::new();
        let layer = parse_layer(
            SettingsSource::Project,
            Some(Path::new("/p/.claude/settings.json")),
            PathBuf::from("/p"),
            text,
            &mut errors,
        );
        let loaded = LoadedSettings {
            layers: layer.into_iter().collect(),
            errors,
        };
        let (config, mut errors) = HookConfig::from_settings(&loaded);
        errors.extend(loaded.errors);
        (config, errors)
    }

    #[test]
    fn hooks_are_read_with_their_timeout_and_deduplicated() {
        let (config, errors) = load(
            r#"{"hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "./guard.sh", "timeout": 5},
                    {"type": "command", "command": "./guard.sh", "timeout": 5}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "./check.sh"}]}]
            }}"#,
        );
        assert!(errors.is_empty(), "{errors:?}");
        let pre = config.matching(HookEvent::PreToolUse, Some("Bash"));
        assert_eq!(pre.len(), 1);
        assert_eq!(pre[0].timeout, Duration::from_secs(5));
        assert!(
            config
                .matching(HookEvent::PreToolUse, Some("Read"))
                .is_empty()
        );
        // Stop has no matcher: it always runs.
        let stop = config.matching(HookEvent::Stop, Some("anything"));
        assert_eq!(stop[0].timeout, DEFAULT_HOOK_TIMEOUT);
    }

    #[test]
    fn subagent_stop_matches_the_agent_type() {
        let (config, errors) = load(
            r#"{"hooks": {"SubagentStop": [
                {"matcher": "Explore|reviewer", "hooks": [{"type": "command", "command": "./a.sh"}]},
                {"hooks": [{"type": "command", "command": "./all.sh"}]}
            ]}}"#,
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            config
                .matching(HookEvent::SubagentStop, Some("reviewer"))
                .len(),
            2
        );
        let fork = config.matching(HookEvent::SubagentStop, Some("fork"));
        assert_eq!(fork.len(), 1);
        assert_eq!(fork[0].command, "./all.sh");
    }

    #[test]
    fn compaction_hooks_match_the_trigger_exactly() {
        let (config, errors) = load(
            r#"{"hooks": {
                "PreCompact": [
                    {"matcher": "auto", "hooks": [{"type": "command", "command": "./auto.sh", "timeout": 5}]},
                    {"matcher": "manual|auto", "hooks": [{"type": "command", "command": "./either.sh"}]},
                    {"matcher": "Auto", "hooks": [{"type": "command", "command": "./capital.sh"}]},
                    {"hooks": [{"type": "command", "command": "./all.sh"}]}
                ],
                "PostCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "./after.sh"}]}]
            }}"#,
        );
        assert!(errors.is_empty(), "{errors:?}");
        let names = |event, trigger| -> Vec<String> {
            config
                .matching(event, Some(trigger))
                .into_iter()
                .map(|c| c.command.clone())
                .collect()
        };
        assert_eq!(
            names(HookEvent::PreCompact, "auto"),
            ["./auto.sh", "./either.sh", "./all.sh"]
        );
        assert_eq!(
            names(HookEvent::PreCompact, "manual"),
            ["./either.sh", "./all.sh"]
        );
        assert_eq!(names(HookEvent::PostCompact, "manual"), ["./after.sh"]);
        assert!(names(HookEvent::PostCompact, "auto").is_empty());
        assert_eq!(
            config.matching(HookEvent::PreCompact, Some("auto"))[0].timeout,
            Duration::from_secs(5)
        );
    }

    #[test]
    fn what_cannot_run_is_fatal_and_claude_code_only_events_warn() {
        for (text, needle) in [
            (r#"{"hooks": {"PreTooluse": []}}"#, "not a hook event"),
            (
                r#"{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}}"#,
                "not a valid matcher",
            ),
            (
                r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "judge"}]}]}}"#,
                "only `command` hooks",
            ),
            (
                r#"{"hooks": {"PostCompact": [{"hooks": [{"type": "prompt", "prompt": "judge"}]}]}}"#,
                "only `command` hooks",
            ),
            (r#"{"hooks": {"Stop": {"hooks": []}}}"#, "must be an array"),
            (
                r#"{"hooks": {"Stop": [{"hook": []}]}}"#,
                "not a key of a matcher group",
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}"#,
                "positive number",
            ),
        ] {
            // An unknown event with no hooks still names itself: checked per hook, so give one.
            let text = text.replace(
                r#""PreTooluse": []"#,
                r#""PreTooluse": [{"hooks": [{"type": "command", "command": "x"}]}]"#,
            );
            let (_, errors) = load(&text);
            assert!(
                errors
                    .iter()
                    .any(|e| e.is_fatal() && e.to_string().contains(needle)),
                "{text}: {errors:?}"
            );
            assert!(
                errors
                    .iter()
                    .all(|e| e.file() == "/p/.claude/settings.json")
            );
        }
        let (config, errors) = load(
            r#"{"hooks": {"PermissionQuery": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#,
        );
        assert!(config.is_empty());
        assert_eq!(errors.len(), 1);
        assert!(!errors[0].is_fatal(), "{}", errors[0]);
    }

    #[test]
    fn added_hooks_carry_their_environment_and_come_whole_or_not_at_all() {
        let (mut config, _) = load("{}");
        let hooks = tine_config::settings::parse_hooks_file(
            Path::new("/plugin/hooks/hooks.json"),
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}]}}"#,
        )
        .unwrap();
        let env = [("CLAUDE_PLUGIN_ROOT".to_owned(), "/plugin".to_owned())];
        assert!(config.add_hooks(&hooks, &env).is_empty());
        let stop = config.matching(HookEvent::Stop, None);
        assert_eq!(stop.len(), 1);
        assert_eq!(stop[0].env, env);
        let bad = tine_config::settings::parse_hooks_file(
            Path::new("/plugin/hooks/hooks.json"),
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./a.sh"}]}],
                          "Nope": [{"hooks": [{"type": "command", "command": "./b.sh"}]}]}}"#,
        )
        .unwrap();
        assert_eq!(config.add_hooks(&bad, &env).len(), 1);
        assert_eq!(config.matching(HookEvent::Stop, None).len(), 1);
    }
}
