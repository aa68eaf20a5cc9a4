//! One source's text to a [`SettingsLayer`], checking each key on its own: a key of the wrong
//! type is reported with its line and dropped, the rest of the file stays; `permissions` lists
//! are checked element by element, so one bad rule costs only itself. What may hide a
//! restriction (a deny or ask list, or an element of one, that is not a string) is a fatal
//! error, see [`SettingsError::is_fatal`]. Rule strings and `defaultMode` are kept as
//! [`SettingText`]s, for the permission engine to parse.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::checker::Checker;
use super::error::{Location, SettingsError};
use super::hooks::HookSetting;
use super::jsonc::{self, Member, Node, Spanned};
use super::known_keys::is_claude_code_key;
use super::{RuleList, SettingsFormat, SettingsSource};

/// A string of `permissions` as written, for the permission engine to parse: a rule
/// (`Bash(rm:*)`) or the `defaultMode`. What it cannot understand it reports at [`Self::at`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingText {
    /// The string as written.
    pub text: String,
    /// Where it sits: `permissions.deny[2]`, `permissions.defaultMode`.
    pub key: String,
    /// The file (or `--settings (inline JSON)`), line and column.
    pub at: Location,
}

/// The `permissions` object of one source, checked for shape. Only entries of the right type
/// are kept; what was dropped is in `LoadedSettings::errors`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionsSettings {
    /// `permissions.allow`, in the order written.
    pub allow: Vec<SettingText>,
    /// `permissions.deny`, in the order written.
    pub deny: Vec<SettingText>,
    /// `permissions.ask`, in the order written.
    pub ask: Vec<SettingText>,
    /// The last `defaultMode` string of the file.
    pub default_mode: Option<SettingText>,
    /// `permissions.additionalDirectories`, as written.
    pub additional_directories: Vec<String>,
    /// `disableBypassPermissionsMode: "disable"`: bypassPermissions may not be used.
    pub disable_bypass_permissions_mode: bool,
}

impl PermissionsSettings {
    /// The rule strings of one list, in the order written.
    pub fn rules(&self, list: RuleList) -> &[SettingText] {
        match list {
            RuleList::Allow => &self.allow,
            RuleList::Deny => &self.deny,
            RuleList::Ask => &self.ask,
        }
    }

    fn rules_mut(&mut self, list: RuleList) -> &mut Vec<SettingText> {
        match list {
            RuleList::Allow => &mut self.allow,
            RuleList::Deny => &mut self.deny,
            RuleList::Ask => &mut self.ask,
        }
    }
}

/// One loaded source.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsLayer {
    /// Which source it is.
    pub source: SettingsSource,
    /// tine's own file or a Claude Code user's (read, never written).
    pub format: SettingsFormat,
    /// The file, or `None` for inline `--settings` JSON.
    pub path: Option<PathBuf>,
    /// The JSON object as written, less keys whose value has the wrong type (so a lower
    /// source's valid value applies instead).
    pub raw: Map<String, Value>,
    /// `permissions`, typed and checked.
    pub permissions: PermissionsSettings,
    /// Root of this layer's `/path` rules.
    pub base_dir: PathBuf,
    /// `hooks`, every hook of the right shape, in the order written.
    pub hooks: Vec<HookSetting>,
}

pub(crate) fn label(path: Option<&Path>) -> String {
    path.map_or_else(
        || "--settings (inline JSON)".to_string(),
        |p| p.display().to_string(),
    )
}

/// Parse one source's text into a layer; problems go to `errors`, each naming `path` and the
/// line. `None` when nothing could be read (the text is not JSON, or not an object).
pub fn parse_layer(
    source: SettingsSource,
    path: Option<&Path>,
    base_dir: PathBuf,
    text: &str,
    errors: &mut Vec<SettingsError>,
) -> Option<SettingsLayer> {
    let file = label(path);
    let doc = match jsonc::parse(text) {
        Ok(doc) => doc,
        Err(err) => {
            errors.push(SettingsError::Syntax {
                at: Location::at(file, (err.line, err.column)),
                message: err.message,
            });
            return None;
        }
    };
    let mut raw = Map::new();
    let mut permissions = PermissionsSettings::default();
    let mut hooks = Vec::new();
    match &doc.root {
        // Only whitespace or comments: an empty file sets nothing.
        None => {}
        Some(Spanned {
            node: Node::Object(members),
            ..
        }) => {
            let mut checker = Checker::new(&file, &doc, errors);
            checker.root(members, &mut raw, &mut permissions, &mut hooks);
        }
        Some(other) => {
            errors.push(SettingsError::NotAnObject {
                at: Location::at(file, doc.position(other.offset)),
                found: other.type_name(),
            });
            return None;
        }
    }
    Some(SettingsLayer {
        source,
        format: SettingsFormat::Tine,
        path: path.map(Path::to_path_buf),
        raw,
        permissions,
        base_dir,
        hooks,
    })
}

/// The type tine needs for a top-level key it reads itself.
#[derive(Debug, Clone, Copy)]
enum Expected {
    String,
    Bool,
    Object,
}

impl Expected {
    fn of(key: &str) -> Option<Expected> {
        match key {
            "model" | "provider" | "autoMemoryDirectory" | "$schema" => Some(Expected::String),
            "autoMemoryEnabled" => Some(Expected::Bool),
            // `openai`: the openai provider's endpoint, key and models (read by the cli).
            "env" | "openai" => Some(Expected::Object),
            _ => None,
        }
    }

    fn matches(self, value: &Spanned) -> bool {
        matches!(
            (self, &value.node),
            (Expected::String, Node::String(_))
                | (Expected::Bool, Node::Bool(_))
                | (Expected::Object, Node::Object(_))
        )
    }

    fn name(self) -> &'static str {
        match self {
            Expected::String => "a string",
            Expected::Bool => "a boolean (true or false)",
            Expected::Object => "an object",
        }
    }
}

impl Checker<'_> {
    fn root(
        &mut self,
        members: &[Member],
        raw: &mut Map<String, Value>,
        permissions: &mut PermissionsSettings,
        hooks: &mut Vec<HookSetting>,
    ) {
        let mut seen = HashSet::new();
        for member in members {
            let key = member.key.as_str();
            let first = seen.insert(key);
            if key == "hooks" {
                if !first {
                    self.duplicate(member, member.key.clone(), "the hooks of both are used");
                }
                self.hooks(&member.value, hooks);
                raw.insert(member.key.clone(), member.value.to_value());
                continue;
            }
            if key == "permissions" {
                if !first {
                    self.duplicate(member, member.key.clone(), "the rules of both are used");
                }
                self.permissions(&member.value, permissions);
                raw.insert(member.key.clone(), member.value.to_value());
                continue;
            }
            if !first {
                self.duplicate(member, member.key.clone(), "the last one is used");
            }
            match Expected::of(key) {
                Some(expected) if !expected.matches(&member.value) => {
                    self.wrong_type(member.key.clone(), &member.value, expected.name(), false);
                    raw.shift_remove(key);
                }
                Some(_) => {
                    raw.insert(member.key.clone(), member.value.to_value());
                }
                None => {
                    if !is_claude_code_key(key) {
                        self.errors.push(SettingsError::UnknownKey {
                            at: self.at(member.key_offset),
                            key: member.key.clone(),
                        });
                    }
                    raw.insert(member.key.clone(), member.value.to_value());
                }
            }
        }
    }

    fn permissions(&mut self, value: &Spanned, out: &mut PermissionsSettings) {
        let Node::Object(members) = &value.node else {
            // It may have been meant to hold deny rules: fatal.
            self.wrong_type("permissions".into(), value, "an object", true);
            return;
        };
        let mut seen = HashSet::new();
        for member in members {
            let key = format!("permissions.{}", member.key);
            let first = seen.insert(member.key.as_str());
            let value = &member.value;
            let list = match member.key.as_str() {
                "allow" => Some(RuleList::Allow),
                "deny" => Some(RuleList::Deny),
                "ask" => Some(RuleList::Ask),
                _ => None,
            };
            if let Some(list) = list {
                if !first {
                    self.duplicate(member, key.clone(), "the rules of both are used");
                }
                self.rules(list, key, value, out.rules_mut(list));
                continue;
            }
            if !first {
                self.duplicate(member, key.clone(), "the last one is used");
            }
            match member.key.as_str() {
                "defaultMode" => {
                    out.default_mode = None;
                    match &value.node {
                        Node::String(text) => {
                            out.default_mode = Some(SettingText {
                                text: text.clone(),
                                key,
                                at: self.at(value.offset),
                            });
                        }
                        _ => self.wrong_type(key, value, "a string", false),
                    }
                }
                "additionalDirectories" => {
                    out.additional_directories.clear();
                    let Node::Array(items) = &value.node else {
                        self.wrong_type(key, value, "an array of paths", false);
                        continue;
                    };
                    for (i, item) in items.iter().enumerate() {
                        match &item.node {
                            Node::String(dir) if !dir.trim().is_empty() => {
                                out.additional_directories.push(dir.clone());
                            }
                            _ => self.wrong_type(format!("{key}[{i}]"), item, "a path", false),
                        }
                    }
                }
                "disableBypassPermissionsMode" => match &value.node {
                    // `true` is read as meant: a restriction is never loosened by a typo.
                    Node::String(text) if text == "disable" => {
                        out.disable_bypass_permissions_mode = true;
                    }
                    Node::Bool(disable) => out.disable_bypass_permissions_mode = *disable,
                    _ => self.wrong_type(key, value, "\"disable\"", true),
                },
                // Claude Code's auto mode does not exist in tine: nothing to turn off.
                "disableAutoMode" => {}
                _ => self.errors.push(SettingsError::UnknownKey {
                    at: self.at(member.key_offset),
                    key,
                }),
            }
        }
    }

    fn rules(&mut self, list: RuleList, key: String, value: &Spanned, out: &mut Vec<SettingText>) {
        let restrictive = list.restricts();
        let Node::Array(items) = &value.node else {
            self.wrong_type(key, value, "an array of rule strings", restrictive);
            return;
        };
        for (i, item) in items.iter().enumerate() {
            let key = format!("{key}[{i}]");
            let Node::String(text) = &item.node else {
                self.wrong_type(
                    key,
                    item,
                    "a rule string such as \"Bash(rm:*)\"",
                    restrictive,
                );
                continue;
            };
            out.push(SettingText {
                text: text.clone(),
                key,
                at: self.at(item.offset),
            });
        }
    }
}
