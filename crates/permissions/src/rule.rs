//! Permission rules: `Tool` or `Tool(content)`, with the behavior they carry and where they
//! come from.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use tine_config::{RuleList, SettingsSource};

/// One rule as written in settings: `Bash`, `Bash(npm run test:*)`, `Read(//etc/**)`,
/// `mcp__github`, `mcp__github__*`, `WebFetch(domain:docs.rs)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PermissionRule {
    /// The tool name (or MCP server prefix) before the parentheses.
    pub tool: String,
    /// What is inside the parentheses; `None` for a rule that covers every call of the tool.
    pub content: Option<String>,
}

/// What a rule says about the calls it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleBehavior {
    /// Run without asking.
    Allow,
    /// Never run.
    Deny,
    /// Always ask.
    Ask,
}

impl RuleBehavior {
    /// The list of `permissions` holding such rules.
    pub fn list(self) -> RuleList {
        match self {
            RuleBehavior::Allow => RuleList::Allow,
            RuleBehavior::Deny => RuleList::Deny,
            RuleBehavior::Ask => RuleList::Ask,
        }
    }

    /// The key of the list holding such rules in `permissions`.
    pub fn key(self) -> &'static str {
        self.list().key()
    }
}

impl From<RuleList> for RuleBehavior {
    fn from(list: RuleList) -> Self {
        match list {
            RuleList::Allow => RuleBehavior::Allow,
            RuleList::Deny => RuleBehavior::Deny,
            RuleList::Ask => RuleBehavior::Ask,
        }
    }
}

/// Where a rule came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleSource {
    /// A settings file (or the `--settings` flag).
    Settings(SettingsSource),
    /// A command-line flag such as `--allowedTools`.
    CliArg,
    /// An answer given during this session, not persisted.
    Session,
}

impl fmt::Display for RuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleSource::Settings(source) => write!(f, "{source}"),
            RuleSource::CliArg => f.write_str("command line"),
            RuleSource::Session => f.write_str("this session"),
        }
    }
}

/// A rule with its behavior, source, and the directory that `/`-rooted paths are relative to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcedRule {
    /// The rule.
    pub rule: PermissionRule,
    /// Whether it allows, denies or asks.
    pub behavior: RuleBehavior,
    /// Where it came from.
    pub source: RuleSource,
    /// Root of `/path` file patterns: the project for project and local settings, the settings
    /// file's directory otherwise.
    pub base_dir: PathBuf,
}

/// Why a rule string does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleParseError {
    /// An empty rule.
    #[error("empty rule: write a tool name such as `Bash` or `Read(./src/**)`")]
    Empty,
    /// A tool name with characters a tool name cannot have.
    #[error(
        "invalid tool name `{name}`: use letters, digits, `_` and `-` (MCP: `mcp__server` or `mcp__server__*`)"
    )]
    InvalidToolName {
        /// The name as written.
        name: String,
    },
    /// A `(` without its `)`.
    #[error("missing `)` at the end of `{rule}`")]
    MissingClosingParen {
        /// The rule as written.
        rule: String,
    },
    /// `Tool()`: empty parentheses.
    #[error("empty parentheses in `{rule}`: write `{tool}` alone to match every call")]
    EmptyContent {
        /// The rule as written.
        rule: String,
        /// The tool named.
        tool: String,
    },
}

fn valid_tool_name(name: &str) -> bool {
    let body = name.strip_suffix("__*").unwrap_or(name);
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && (body.len() == name.len() || name.starts_with("mcp__"))
}

impl FromStr for PermissionRule {
    type Err = RuleParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.is_empty() {
            return Err(RuleParseError::Empty);
        }
        let (tool, content) = match text.split_once('(') {
            None => (text, None),
            Some((tool, rest)) => {
                let Some(content) = rest.strip_suffix(')') else {
                    return Err(RuleParseError::MissingClosingParen {
                        rule: text.to_string(),
                    });
                };
                if content.is_empty() {
                    return Err(RuleParseError::EmptyContent {
                        rule: text.to_string(),
                        tool: tool.to_string(),
                    });
                }
                (tool, Some(content.to_string()))
            }
        };
        if !valid_tool_name(tool) {
            return Err(RuleParseError::InvalidToolName {
                name: tool.to_string(),
            });
        }
        Ok(PermissionRule {
            tool: tool.to_string(),
            content,
        })
    }
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.content {
            Some(content) => write!(f, "{}({content})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

impl PermissionRule {
    /// A rule covering every call of `tool`.
    pub fn tool(tool: impl Into<String>) -> Self {
        PermissionRule {
            tool: tool.into(),
            content: None,
        }
    }

    /// A rule for `tool` calls matching `content`.
    pub fn with_content(tool: impl Into<String>, content: impl Into<String>) -> Self {
        PermissionRule {
            tool: tool.into(),
            content: Some(content.into()),
        }
    }

    /// Whether this rule names `tool` as a whole: the same name, or an MCP server rule
    /// (`mcp__server`, `mcp__server__*`) covering `mcp__server__tool`.
    pub fn names_tool(&self, tool: &str) -> bool {
        if self.tool == tool {
            return true;
        }
        let server = self.tool.strip_suffix("__*").unwrap_or(&self.tool);
        server.starts_with("mcp__")
            && server.matches("__").count() == 1
            && tool
                .strip_prefix(server)
                .is_some_and(|rest| rest.starts_with("__") && rest.len() > 2)
    }
}
