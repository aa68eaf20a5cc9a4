//! What a front end sends the session: [`Submission`]s (run in order, one at a time) and the
//! answers to permission requests.

use std::fmt;

/// Work for the session, queued and run one at a time in the order submitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submission {
    /// A user prompt: one turn of the model (recall first, background jobs after).
    Prompt(String),
    /// A slash command, without its slash: `Command { name: "compact", args: "keep the API" }`
    /// for `/compact keep the API`. See [`crate::COMMANDS`] for the ones the session knows.
    Command {
        /// The command's name, without the slash.
        name: String,
        /// The rest of the line.
        args: String,
    },
}

impl Submission {
    /// A prompt, or the command it spells when it starts with `/name` (a slash alone, or one
    /// followed by something that is not a name, stays a prompt).
    pub fn parse(text: &str) -> Self {
        let trimmed = text.trim();
        if let Some(rest) = trimmed.strip_prefix('/') {
            let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let is_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'));
            if is_name {
                return Self::Command {
                    name: name.to_owned(),
                    args: args.trim().to_owned(),
                };
            }
        }
        Self::Prompt(text.to_owned())
    }
}

/// Names one submission in the events it causes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubmissionId(pub u64);

impl fmt::Display for SubmissionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "submission-{}", self.0)
    }
}

/// Names one permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PermissionId(pub u64);

impl fmt::Display for PermissionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "permission-{}", self.0)
    }
}

/// Names one question about a stuck model ([`crate::StuckQuestion`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StuckId(pub u64);

impl fmt::Display for StuckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stuck-{}", self.0)
    }
}

/// A person's answer to a [`crate::PermissionRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionAnswer {
    /// Run it this once.
    Once,
    /// Run it, and allow the request's `always_rule` from now on: added to the session and
    /// saved in the project's local settings (`.tine/settings.local.json`). Without a rule to
    /// offer, the same as `Once`.
    Always,
    /// Do not run it; `feedback` (what to do instead) goes to the model with the refusal.
    Deny {
        /// What to tell the model instead, if anything.
        feedback: Option<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands_are_told_from_prompts() {
        assert_eq!(
            Submission::parse("/compact keep the API "),
            Submission::Command {
                name: "compact".into(),
                args: "keep the API".into()
            }
        );
        assert_eq!(
            Submission::parse("  /cost"),
            Submission::Command {
                name: "cost".into(),
                args: String::new()
            }
        );
        assert_eq!(
            Submission::parse("/ not a command"),
            Submission::Prompt("/ not a command".into())
        );
        assert_eq!(
            Submission::parse("/usr/bin/env is where?"),
            Submission::Prompt("/usr/bin/env is where?".into())
        );
        assert_eq!(Submission::parse("hi"), Submission::Prompt("hi".into()));
    }
}
