//! Slash commands: the session's command table (its built-ins, skills and custom commands,
//! from [`SessionInfo::commands`](tine_session::SessionInfo)) with the UI's own (`/help`,
//! `/tasks`, `/exit`), parsing a submitted line, and the completion list shown while a
//! command is typed.

use ratatui::text::{Line, Span};
use tine_session::{CommandInfo, CommandSource};

use crate::theme;

/// The commands the UI answers itself, with what `/help` says of them.
const LOCAL: &[(&str, &str)] = &[
    ("help", "Show commands and keys"),
    ("tasks", "Show or hide background tasks"),
    ("exit", "Exit tine"),
];

/// The UI's list of commands: the built-ins (the session's and the UI's own, by name), then
/// the skills and custom commands in the session's order.
pub(crate) fn table(session: &[CommandInfo]) -> Vec<CommandInfo> {
    let local = LOCAL.iter().map(|(name, description)| CommandInfo {
        name: (*name).to_owned(),
        description: (*description).to_owned(),
        runs_turn: false,
        source: CommandSource::Builtin,
    });
    let mut builtins: Vec<CommandInfo> = session
        .iter()
        .filter(|c| c.source == CommandSource::Builtin && !is_local(&c.name))
        .cloned()
        .chain(local)
        .collect();
    builtins.sort_by(|a, b| a.name.cmp(&b.name));
    builtins.extend(
        session
            .iter()
            .filter(|c| c.source != CommandSource::Builtin && !is_local(&c.name))
            .cloned(),
    );
    builtins
}

/// Whether the UI answers `/name` itself.
fn is_local(name: &str) -> bool {
    LOCAL.iter().any(|(local, _)| *local == name)
}

/// What a submitted line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Parsed {
    Prompt,
    Command {
        command: CommandInfo,
        args: String,
    },
    /// `/name` that names no command.
    Unknown(String),
}

pub(crate) fn parse(text: &str, commands: &[CommandInfo]) -> Parsed {
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
        Some(command) => Parsed::Command {
            command: command.clone(),
            args: args.to_owned(),
        },
        None => Parsed::Unknown(name.to_owned()),
    }
}

/// The completion list's state.
#[derive(Debug, Default)]
pub(crate) struct Completion {
    pub selected: usize,
    /// The text the list was dismissed for (Esc); it shows again once the text changes.
    dismissed_for: Option<String>,
}

/// At most this many rows of completions.
pub(crate) const MAX_ROWS: usize = 8;

impl Completion {
    /// The commands matching what is typed, if a command is being typed: names starting with
    /// it first, then names containing it.
    pub(crate) fn matches<'a>(
        &self,
        text: &str,
        commands: &'a [CommandInfo],
    ) -> Vec<&'a CommandInfo> {
        let Some(prefix) = text.strip_prefix('/') else {
            return Vec::new();
        };
        if prefix.contains(char::is_whitespace) || self.dismissed_for.as_deref() == Some(text) {
            return Vec::new();
        }
        let mut out: Vec<&CommandInfo> = commands
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

    pub(crate) fn dismiss(&mut self, text: &str) {
        self.dismissed_for = Some(text.to_owned());
    }

    pub(crate) fn reset(&mut self) {
        self.selected = 0;
    }

    pub(crate) fn move_by(&mut self, delta: isize, count: usize) {
        if count == 0 {
            return;
        }
        let n = isize::try_from(count).unwrap_or(isize::MAX);
        let current = isize::try_from(self.selected.min(count - 1)).unwrap_or(0);
        self.selected = usize::try_from((current + delta).rem_euclid(n)).unwrap_or(0);
    }

    /// The list's rows: a window of `MAX_ROWS` around the selection.
    pub(crate) fn rows(&self, matches: &[&CommandInfo], width: u16) -> Vec<Line<'static>> {
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

    /// The session's built-ins (its table without skills or custom commands).
    fn session_builtins() -> Vec<CommandInfo> {
        tine_session::COMMANDS
            .iter()
            .map(tine_session::CommandSpec::info)
            .collect()
    }

    fn custom(name: &str, source: CommandSource) -> CommandInfo {
        CommandInfo {
            name: name.into(),
            description: format!("the {name} command"),
            runs_turn: true,
            source,
        }
    }

    #[test]
    fn every_command_the_session_answers_is_in_the_list_as_it_runs() {
        let session = session_builtins();
        let ui = table(&session);
        for command in &session {
            let shown = ui.iter().find(|c| c.name == command.name);
            assert_eq!(
                shown.map(|c| c.runs_turn),
                Some(command.runs_turn),
                "/{}: the UI holds its turn guard exactly when the session runs a turn",
                command.name
            );
        }
        for (name, _) in LOCAL {
            assert!(ui.iter().any(|c| c.name == *name), "/{name}");
        }
        assert_eq!(ui.iter().filter(|c| c.name == "help").count(), 1);
        let help = ui
            .iter()
            .find(|c| c.name == "help")
            .map(|c| c.description.as_str());
        assert_eq!(help, Some("Show commands and keys"), "the UI answers /help");
    }

    #[test]
    fn built_ins_by_name_then_skills_and_custom_commands_in_the_sessions_order() {
        let mut session = session_builtins();
        session.push(custom("zed", CommandSource::Skill));
        session.push(custom("apply", CommandSource::Custom));
        let ui = table(&session);
        let names: Vec<&str> = ui.iter().map(|c| c.name.as_str()).collect();
        let builtins = &names[..names.len() - 2];
        let mut sorted = builtins.to_vec();
        sorted.sort_unstable();
        assert_eq!(builtins, sorted);
        assert_eq!(names[names.len() - 2..], ["zed", "apply"]);
    }

    #[test]
    fn parses_commands_paths_and_unknown_names() {
        let cmds = table(&session_builtins());
        assert!(
            matches!(parse("/cost", &cmds), Parsed::Command { ref command, ref args } if command.name == "cost" && args.is_empty())
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
        let mut session = session_builtins();
        session.push(custom("review-pr", CommandSource::Custom));
        let cmds = table(&session);
        let c = Completion::default();
        let names = |t: &str| {
            c.matches(t, &cmds)
                .iter()
                .map(|s| s.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("/c"), ["clear", "compact", "context", "cost", "mcp"]);
        assert_eq!(names("/th"), ["thinking"]);
        assert_eq!(
            names("/in"),
            ["init", "plugin", "reload-plugins", "rewind", "thinking"]
        );
        assert_eq!(names("/rev"), ["review-pr"]);
        assert!(names("/cost now").is_empty(), "arguments end completion");
        assert!(names("plain").is_empty());
        assert_eq!(names("/").len(), cmds.len());
    }

    #[test]
    fn dismissed_until_the_text_changes() {
        let cmds = table(&session_builtins());
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
