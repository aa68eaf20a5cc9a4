//! Permission modes, named as in Claude Code's settings.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How much the engine lets through without asking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PermissionMode {
    /// Ask for anything not allowed by a rule, except read-only commands and reads in the project.
    #[default]
    #[serde(rename = "default")]
    Default,
    /// Also allow file edits inside the project.
    #[serde(rename = "acceptEdits")]
    AcceptEdits,
    /// Planning: anything that writes is refused.
    #[serde(rename = "plan")]
    Plan,
    /// Allow everything except what deny and ask rules catch and writes to `.git/`, `.tine/`
    /// and `.claude/`.
    #[serde(rename = "bypassPermissions")]
    BypassPermissions,
    /// Never ask: what would be asked is refused (headless runs, forks).
    #[serde(rename = "dontAsk")]
    DontAsk,
}

impl PermissionMode {
    /// The settings name (`acceptEdits`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::DontAsk => "dontAsk",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
