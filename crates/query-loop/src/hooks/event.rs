//! The events tine runs hooks for and what a matcher group applies to, as Claude Code reads
//! them: shared by the settings' commands (`config`) and an app's callbacks (`callback`).

use std::time::Duration;

use regex::Regex;

/// A hook's timeout when settings (or the app registering it) give none (Claude Code's default).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The events tine runs hooks for (Claude Code's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// Before a tool call runs (may block it, allow it or ask).
    PreToolUse,
    /// After a tool call ran.
    PostToolUse,
    /// Before a prompt is sent (may add context or refuse it).
    UserPromptSubmit,
    /// When a session starts, resumes, is cleared or compacted.
    SessionStart,
    /// When a session ends.
    SessionEnd,
    /// When tine notifies the user (a permission ask, an idle prompt).
    Notification,
    /// Before a compaction (its output joins the summary instruction).
    PreCompact,
    /// After a compaction (its output joins the new history after the summary).
    PostCompact,
    /// When a sub-agent ends.
    SubagentStop,
    /// When the model ends a turn.
    Stop,
}

impl HookEvent {
    /// Every event, in Claude Code's order.
    pub const ALL: [HookEvent; 10] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::Notification,
        HookEvent::PreCompact,
        HookEvent::PostCompact,
        HookEvent::SubagentStop,
        HookEvent::Stop,
    ];

    /// The name in settings and in `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Notification => "Notification",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PostCompact => "PostCompact",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::Stop => "Stop",
        }
    }

    /// The event named `name` (Claude Code's spelling), if tine has it.
    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.name() == name)
    }

    /// What the matcher is matched against: the tool name (Pre/PostToolUse), the notification
    /// type, the compaction trigger (`manual` or `auto`), the session start source or end
    /// reason, the agent type (SubagentStop, as Claude Code). The other events have no
    /// matcher: their hooks always run.
    pub(crate) fn has_matcher(self) -> bool {
        match self {
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::Notification
            | HookEvent::PreCompact
            | HookEvent::PostCompact
            | HookEvent::SessionStart
            | HookEvent::SessionEnd
            | HookEvent::SubagentStop => true,
            HookEvent::UserPromptSubmit | HookEvent::Stop => false,
        }
    }
}

/// Claude Code's events tine does not run: accepted, with a warning.
pub(crate) const NOT_RUN_EVENTS: &[&str] = &[
    "PermissionDenied",
    "PermissionQuery",
    "PermissionRequest",
    "PostToolUseFailure",
    "Setup",
    "SubagentStart",
    "TaskCompleted",
    "TeammateIdle",
];

/// Which values a matcher group applies to, as Claude Code reads it: empty or `*` is every
/// value; a plain word or `A|B` list is compared exactly (case matters: `Auto` is not the
/// `auto` trigger); anything else is a regex searched in the value (`Notebook.*`,
/// `mcp__github__.*`).
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Every value.
    All,
    /// These values exactly.
    Exact(Vec<String>),
    /// Values the regex matches somewhere.
    Regex(Regex),
}

impl Matcher {
    /// Reads a matcher as Claude Code does.
    pub fn parse(text: &str) -> Result<Matcher, regex::Error> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        if text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|' || c == '-')
        {
            return Ok(Matcher::Exact(
                text.split('|').map(|s| s.trim().to_owned()).collect(),
            ));
        }
        Regex::new(text).map(Matcher::Regex)
    }

    /// Whether the matcher applies to `value` (a tool name, a source).
    pub fn matches(&self, value: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Exact(names) => names.iter().any(|n| n == value),
            Matcher::Regex(re) => re.is_match(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_read_as_claude_code_reads_them() {
        let m = |t: &str| Matcher::parse(t).unwrap();
        assert!(m("").matches("Bash") && m("*").matches("mcp__x__y"));
        assert!(m("Bash|Edit").matches("Edit") && !m("Bash|Edit").matches("Bash2"));
        assert!(!m("Bash").matches("BashOutput"));
        assert!(m("Notebook.*").matches("NotebookEdit"));
        assert!(m("mcp__github__.*").matches("mcp__github__issue"));
        assert!(Matcher::parse("Bash(").is_err());
    }
}
