//! Answers to an ask, their persistence, and the session's record of denials.

use std::time::SystemTime;

use serde_json::Value;

use tine_config::settings::add_rules_to_file;
use tine_config::{SettingsError, SettingsPaths, SettingsSource};

use super::suggest::PersistDestination;
use super::{PermissionContext, PermissionRule, RuleBehavior, RuleSource, SourcedRule};

/// What the person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskResolution {
    /// Run this call; ask again next time.
    ApproveOnce,
    /// Do not run it; the feedback goes back to the model.
    Reject {
        /// What to tell the model, if anything.
        feedback: Option<String>,
    },
    /// Run it, and add allow rules (usually the ask's suggestions).
    AlwaysAllow {
        /// The allow rules to add.
        rules: Vec<PermissionRule>,
        /// The settings file they go to.
        destination: PersistDestination,
    },
    /// Do not run it, and add deny rules.
    NeverAllow {
        /// The deny rules to add.
        rules: Vec<PermissionRule>,
        /// The settings file they go to.
        destination: PersistDestination,
    },
}

impl AskResolution {
    /// Whether the call goes ahead.
    pub fn proceeds(&self) -> bool {
        match self {
            AskResolution::ApproveOnce | AskResolution::AlwaysAllow { .. } => true,
            AskResolution::Reject { .. } | AskResolution::NeverAllow { .. } => false,
        }
    }
}

/// One refused call, kept for the session (seed 003 §五: told to the model, counted per tool,
/// readable by SDK callers).
#[derive(Debug, Clone, PartialEq)]
pub struct Denial {
    /// The tool denied.
    pub tool: String,
    /// Its input.
    pub input: Value,
    /// When.
    pub at: SystemTime,
    /// What the person said, if anything.
    pub feedback: Option<String>,
}

/// The session's denials, oldest first.
#[derive(Debug, Clone, Default)]
pub struct DenialLog {
    entries: Vec<Denial>,
}

impl DenialLog {
    /// Records a denial.
    pub fn record(&mut self, tool: &str, input: Value, feedback: Option<String>) {
        self.entries.push(Denial {
            tool: tool.to_string(),
            input,
            at: SystemTime::now(),
            feedback,
        });
    }

    /// The denials, oldest first.
    pub fn entries(&self) -> &[Denial] {
        &self.entries
    }

    /// How many calls of `tool` were refused (3 or more suggests explaining, seed 003 §五).
    pub fn count_for(&self, tool: &str) -> usize {
        self.entries.iter().filter(|d| d.tool == tool).count()
    }
}

impl PermissionContext {
    /// Apply an answer: add "always" / "never" rules to this context and persist them to the
    /// destination's settings file (atomically, other keys kept), and record rejections.
    /// Returns whether the call goes ahead. On a write error the rules still apply to this
    /// session and the error says which file could not be written.
    pub fn apply_answer(
        &mut self,
        answer: &AskResolution,
        tool: &str,
        input: &Value,
        paths: &SettingsPaths,
        denials: &mut DenialLog,
    ) -> Result<bool, SettingsError> {
        match answer {
            AskResolution::ApproveOnce => Ok(true),
            AskResolution::Reject { feedback } => {
                denials.record(tool, input.clone(), feedback.clone());
                Ok(false)
            }
            AskResolution::AlwaysAllow { rules, destination } => {
                self.remember_rules(rules, RuleBehavior::Allow, *destination, paths)?;
                Ok(true)
            }
            AskResolution::NeverAllow { rules, destination } => {
                denials.record(tool, input.clone(), None);
                self.remember_rules(rules, RuleBehavior::Deny, *destination, paths)?;
                Ok(false)
            }
        }
    }

    /// Adds `rules` as `behavior` rules and keeps them at `destination` (a settings file, or
    /// this session only).
    pub fn remember_rules(
        &mut self,
        rules: &[PermissionRule],
        behavior: RuleBehavior,
        destination: PersistDestination,
        paths: &SettingsPaths,
    ) -> Result<(), SettingsError> {
        let source = match destination {
            PersistDestination::Local => Some(SettingsSource::Local),
            PersistDestination::Project => Some(SettingsSource::Project),
            PersistDestination::User => Some(SettingsSource::User),
            PersistDestination::Session => None,
        };
        let (rule_source, base_dir) = match source {
            Some(source) => (RuleSource::Settings(source), paths.base_dir_of(source)),
            None => (RuleSource::Session, self.cwd.clone()),
        };
        for rule in rules {
            self.add_rule(SourcedRule {
                rule: rule.clone(),
                behavior,
                source: rule_source,
                base_dir: base_dir.clone(),
            });
        }
        match source.and_then(|s| paths.path_of(s)) {
            Some(path) => {
                let texts: Vec<String> = rules.iter().map(ToString::to_string).collect();
                add_rules_to_file(path, behavior.list(), &texts)
            }
            None => Ok(()),
        }
    }
}
