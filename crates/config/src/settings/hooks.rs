//! The `hooks` object of one source, checked for shape (Claude Code's):
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 30}]}]}}
//! ```
//!
//! Every hook is handed out as written ([`HookSetting`]: event name, matcher, type, command,
//! timeout, with its file and line): what an event name or a matcher means is the hook
//! runner's (`tine-query-loop`), which reports what it cannot understand at that place. Fail
//! closed: a hook may be a guard (a PreToolUse hook refusing `rm`), so a `hooks` section that
//! cannot be read fully is a fatal error ([`SettingsError::Hook`]), never a silent ignore.

use super::checker::Checker;
use super::error::SettingsError;
use super::jsonc::{Node, Spanned};
use super::{Location, SettingText};

/// One hook of a settings file, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct HookSetting {
    /// The event key as written (`PreToolUse`), where it sits.
    pub event: SettingText,
    /// The group's `matcher` (`Bash|Edit`, `*`, a regex); `None` when absent.
    pub matcher: Option<SettingText>,
    /// `command` (the only type tine runs), `prompt`, `http`, ...
    pub hook_type: String,
    /// The shell command of a `command` hook.
    pub command: Option<String>,
    /// Seconds, when given (a positive number).
    pub timeout_secs: Option<f64>,
    /// Where the hook object is: `hooks.PreToolUse[0].hooks[1]` at file:line.
    pub key: String,
    /// The file, line and column.
    pub at: Location,
}

impl Checker<'_> {
    /// Checks `hooks`; every hook that has the right shape goes to `out`.
    pub(super) fn hooks(&mut self, value: &Spanned, out: &mut Vec<HookSetting>) {
        let Node::Object(events) = &value.node else {
            self.hook_error(
                value,
                "hooks",
                "must be an object of events (`{\"PreToolUse\": [...]}`)",
            );
            return;
        };
        for event in events {
            let key = format!("hooks.{}", event.key);
            let name = SettingText {
                text: event.key.clone(),
                key: key.clone(),
                at: self.at(event.key_offset),
            };
            let Node::Array(groups) = &event.value.node else {
                self.hook_error(
                    &event.value,
                    &key,
                    "must be an array of matcher groups (`[{\"matcher\": \"Bash\", \"hooks\": [...]}]`)",
                );
                continue;
            };
            for (g, group) in groups.iter().enumerate() {
                self.group(&name, &format!("{key}[{g}]"), group, out);
            }
        }
    }

    fn group(
        &mut self,
        event: &SettingText,
        key: &str,
        group: &Spanned,
        out: &mut Vec<HookSetting>,
    ) {
        let Node::Object(members) = &group.node else {
            self.hook_error(group, key, "must be an object with `matcher` and `hooks`");
            return;
        };
        let mut matcher = None;
        let mut hooks = None;
        for member in members {
            match member.key.as_str() {
                "matcher" => match &member.value.node {
                    Node::String(text) => {
                        matcher = Some(SettingText {
                            text: text.clone(),
                            key: format!("{key}.matcher"),
                            at: self.at(member.value.offset),
                        });
                    }
                    _ => self.hook_error(
                        &member.value,
                        &format!("{key}.matcher"),
                        "must be a string (a tool name, `A|B`, a regex, or `*`)",
                    ),
                },
                "hooks" => hooks = Some(&member.value),
                // Claude Code has no other key here; a typo (`hook`) would drop the hooks.
                other => self.hook_error(
                    &member.value,
                    &format!("{key}.{other}"),
                    "is not a key of a matcher group (use `matcher` and `hooks`)",
                ),
            }
        }
        let Some(hooks) = hooks else {
            self.hook_missing(group, key, "has no `hooks` array");
            return;
        };
        let Node::Array(items) = &hooks.node else {
            self.hook_error(hooks, &format!("{key}.hooks"), "must be an array of hooks");
            return;
        };
        for (h, item) in items.iter().enumerate() {
            let key = format!("{key}.hooks[{h}]");
            if let Some(hook) = self.hook(event, matcher.as_ref(), &key, item) {
                out.push(hook);
            }
        }
    }

    fn hook(
        &mut self,
        event: &SettingText,
        matcher: Option<&SettingText>,
        key: &str,
        item: &Spanned,
    ) -> Option<HookSetting> {
        let Node::Object(members) = &item.node else {
            self.hook_error(
                item,
                key,
                "must be an object (`{\"type\": \"command\", \"command\": \"...\"}`)",
            );
            return None;
        };
        let mut hook_type = None;
        let mut command = None;
        let mut timeout_secs = None;
        let mut ok = true;
        for member in members {
            let value = &member.value;
            match (member.key.as_str(), &value.node) {
                ("type", Node::String(text)) => hook_type = Some(text.clone()),
                ("command", Node::String(text)) if !text.trim().is_empty() => {
                    command = Some(text.clone());
                }
                ("timeout", Node::Number(n)) if n.as_f64().is_some_and(|s| s > 0.0) => {
                    timeout_secs = n.as_f64();
                }
                ("type", _) => {
                    self.hook_error(
                        value,
                        &format!("{key}.type"),
                        "must be a string (`command`)",
                    );
                    ok = false;
                }
                ("command", _) => {
                    self.hook_error(
                        value,
                        &format!("{key}.command"),
                        "must be a non-empty string",
                    );
                    ok = false;
                }
                ("timeout", _) => {
                    self.hook_error(
                        value,
                        &format!("{key}.timeout"),
                        "must be a positive number of seconds",
                    );
                    ok = false;
                }
                // Claude Code's other fields (statusMessage, once, async, shell, prompt, url,
                // ...) belong to features or types the runner decides about.
                _ => {}
            }
        }
        let Some(hook_type) = hook_type else {
            self.hook_missing(item, key, "has no `type` (use `\"type\": \"command\"`)");
            return None;
        };
        if hook_type == "command" && command.is_none() && ok {
            self.hook_missing(item, key, "is a command hook without a `command`");
            return None;
        }
        ok.then(|| HookSetting {
            event: event.clone(),
            matcher: matcher.cloned(),
            hook_type,
            command,
            timeout_secs,
            key: key.to_owned(),
            at: self.at(item.offset),
        })
    }

    /// `key` holds a value of the wrong kind.
    fn hook_error(&mut self, value: &Spanned, key: &str, problem: &str) {
        let problem = format!("{problem}, found {}", value.type_name_for_hooks());
        self.hook_missing(value, key, &problem);
    }

    /// `key` lacks something.
    fn hook_missing(&mut self, value: &Spanned, key: &str, problem: &str) {
        self.errors.push(SettingsError::Hook {
            at: self.at(value.offset),
            key: key.to_owned(),
            problem: problem.to_owned(),
        });
    }
}

impl Spanned {
    /// What was found, for a message (`an array`, `a string`, ...).
    fn type_name_for_hooks(&self) -> String {
        match &self.node {
            Node::String(s) if s.len() <= 40 => format!("the string {s:?}"),
            _ => self.type_name().to_owned(),
        }
    }
}

/// The hooks of a file that holds only hooks, such as a Claude Code plugin's
/// `hooks/hooks.json` (`{"description": "...", "hooks": {...}}`): every hook as
/// [`HookSetting`], or every problem, each naming `path` and the line. Unlike a settings file's,
/// any problem is an `Err`: the file's owner (a plugin) is then skipped as a whole.
pub fn parse_hooks_file(
    path: &std::path::Path,
    text: &str,
) -> Result<Vec<HookSetting>, Vec<SettingsError>> {
    let mut errors = Vec::new();
    let layer = super::parse_layer(
        super::SettingsSource::User,
        Some(path),
        path.parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default(),
        text,
        &mut errors,
    );
    // A hooks file may describe itself; its other keys are no settings.
    errors.retain(|e| !matches!(e, SettingsError::UnknownKey { key, .. } if key == "description"));
    let Some(layer) = layer else {
        return Err(errors);
    };
    if !layer.raw.contains_key("hooks") {
        errors.push(SettingsError::Hook {
            at: Location::file(path.display().to_string()),
            key: "hooks".to_owned(),
            problem: "is missing: a hooks file is `{\"hooks\": {\"PreToolUse\": [...]}}`"
                .to_owned(),
        });
    }
    if errors.is_empty() {
        Ok(layer.hooks)
    } else {
        Err(errors)
    }
}
