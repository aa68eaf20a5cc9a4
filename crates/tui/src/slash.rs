//! Slash commands: the built-ins, custom ones given to the app as data, parsing a submitted
//! line, and the completion list shown while a command is typed.

use ratatui::text::{Line, Span};

use crate::theme;

/// A command the person can type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommandSpec {
    /// Without the slash.
    pub name: String,
    pub description: String,
    /// Whether running it is a turn with the model (a custom command's prompt, `/compact`):
    /// the app waits for `TurnEnded` before sending what was queued after it.
    pub runs_turn: bool,
}

impl SlashCommandSpec {
    pub fn new(name: &str, description: &str, runs_turn: bool) -> Self {
        Self {
            name: name.to_owned(),
            description: description.to_owned(),
            runs_turn,
        }
    }
}

/// The built-in commands, in the order /help lists them.
pub fn builtins() -> Vec<SlashCommandSpec> {
    [
        ("help", "Show commands and keys", false),
        ("clear", "Start a fresh conversation", false),
        (
            "compact",
            "Summarize the conversation to free context",
            true,
        ),
        (
            "cost",
            "Session cost, per source, and cache read share",
            false,
        ),
        ("model", "Show or change the model", false),
        (
            "thinking",
            "Extended thinking on or off (/thinking on|off; Tab toggles)",
            false,
        ),
        ("memory", "Show the memory files", false),
        (
            "init",
            "Write an AGENTS.md for this project from its code",
            true,
        ),
        ("resume", "Resume an earlier conversation", false),
        ("tasks", "Show or hide background tasks", false),
        ("permissions", "Show the permission rules", false),
        ("skills", "Show the skills of this project and user", false),
        ("mcp", "Show MCP servers", false),
        ("exit", "Exit tine", false),
    ]
    .into_iter()
    .map(|(n, d, t)| SlashCommandSpec::new(n, d, t))
    .collect()
}

/// What a submitted line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Prompt,
    Command {
        spec: SlashCommandSpec,
        args: String,
    },
    /// `/name` that names no command.
    Unknown(String),
}

pub fn parse(text: &str, commands: &[SlashCommandSpec]) -> Parsed {
    let Some(rest) = text.trim_start().strip_prefix('/') else {
        return Parsed::Prompt;
    };
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    // "/usr/bin/env is odd" is a path, not a command.
    if name.is_empty() || name.contains('/') {
        return Parsed::Prompt;
    }
    match commands.iter().find(|c| c.name == name) {
        Some(spec) => Parsed::Command {
            spec: spec.clone(),
            args: args.to_owned(),
        },
        None => Parsed::Unknown(name.to_owned()),
    }
}

/// The completion list's state.
#[derive(Debug, Default)]
pub struct Completion {
    pub selected: usize,
    /// The text the list was dismissed for (Esc); it shows again once the text changes.
    dismissed_for: Option<String>,
}

/// At most this many rows of completions.
pub const MAX_ROWS: usize = 8;

impl Completion {
    /// The commands matching what is typed, if a command is being typed: names starting with
    /// it first, then names containing it.
    pub fn matches<'a>(
        &self,
        text: &str,
        commands: &'a [SlashCommandSpec],
    ) -> Vec<&'a SlashCommandSpec> {
        let Some(prefix) = text.strip_prefix('/') else {
            return Vec::new();
        };
        if prefix.contains(char::is_whitespace) || self.dismissed_for.as_deref() == Some(text) {
            return Vec::new();
        }
        let mut out: Vec<&SlashCommandSpec> = commands
            .iter()
            .filter(|c| c.name.starts_with(prefix))
            .collect();
        out.extend(
            commands
                .iter()
                .filter(|c| !c.name.starts_with(prefix) && c.name.contains(prefix)),
        );
        out
    }

    pub fn dismiss(&mut self, text: &str) {
        self.dismissed_for = Some(text.to_owned());
    }

    pub fn reset(&mut self) {
        self.selected = 0;
    }

    pub fn move_by(&mut self, delta: isize, count: usize) {
        if count == 0 {
            return;
        }
        let n = isize::try_from(count).unwrap_or(isize::MAX);
        let current = isize::try_from(self.selected.min(count - 1)).unwrap_or(0);
        self.selected = usize::try_from((current + delta).rem_euclid(n)).unwrap_or(0);
    }

    /// The list's rows: a window of `MAX_ROWS` around the selection.
    pub fn rows(&self, matches: &[&SlashCommandSpec], width: u16) -> Vec<Line<'static>> {
        let selected = self.selected.min(matches.len().saturating_sub(1));
        let start = selected.saturating_sub(MAX_ROWS - 1);
        let name_w = matches
            .iter()
            .map(|c| c.name.len() + 1)
            .max()
            .unwrap_or(0)
            .max(10);
        matches
            .iter()
            .enumerate()
            .skip(start)
            .take(MAX_ROWS)
            .map(|(i, c)| {
                let chosen = i == selected;
                let style = if chosen {
                    theme::selected()
                } else {
                    ratatui::style::Style::default()
                };
                let line = Line::from(vec![
                    Span::styled(if chosen { "❯ " } else { "  " }, style),
                    Span::styled(format!("/{:<name_w$}", c.name), style),
                    Span::styled(c.description.clone(), theme::dim()),
                ]);
                crate::wrap::truncate(line, usize::from(width))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_paths_and_unknown_names() {
        let cmds = builtins();
        assert!(
            matches!(parse("/cost", &cmds), Parsed::Command { ref spec, ref args } if spec.name == "cost" && args.is_empty())
        );
        assert!(
            matches!(parse("/model opus", &cmds), Parsed::Command { ref args, .. } if args == "opus")
        );
        assert_eq!(parse("/usr/bin/ls is broken", &cmds), Parsed::Prompt);
        assert_eq!(parse("/nope", &cmds), Parsed::Unknown("nope".into()));
        assert_eq!(parse("hello /help", &cmds), Parsed::Prompt);
    }

    #[test]
    fn completion_lists_prefix_matches_first() {
        let mut cmds = builtins();
        cmds.push(SlashCommandSpec::new("review-pr", "Review a PR", true));
        let c = Completion::default();
        let names = |t: &str| {
            c.matches(t, &cmds)
                .iter()
                .map(|s| s.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("/c"), ["clear", "compact", "cost", "mcp"]);
        assert_eq!(names("/th"), ["thinking"]);
        assert_eq!(names("/in"), ["init", "thinking"]);
        assert_eq!(names("/rev"), ["review-pr"]);
        assert!(names("/cost now").is_empty(), "arguments end completion");
        assert!(names("plain").is_empty());
        assert_eq!(names("/").len(), cmds.len());
    }

    #[test]
    fn dismissed_until_the_text_changes() {
        let cmds = builtins();
        let mut c = Completion::default();
        c.dismiss("/c");
        assert!(c.matches("/c", &cmds).is_empty());
        assert!(!c.matches("/co", &cmds).is_empty());
    }

    #[test]
    fn selection_wraps_around() {
        let mut c = Completion::default();
        c.move_by(-1, 3);
        assert_eq!(c.selected, 2);
        c.move_by(1, 3);
        assert_eq!(c.selected, 0);
    }
}
