//! The session's command table: its built-ins ([`COMMANDS`]), then the skills, then the
//! custom commands of `.tine/commands/` and `.claude/commands/` and the plugins', as a front end completes and
//! dispatches from it ([`SessionInfo::commands`](crate::SessionInfo)).

use crate::custom_commands;
use crate::protocol::{CommandInfo, CommandSource};

/// A command the session knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// Without the slash.
    pub name: &'static str,
    /// One line for `/help` and completion.
    pub summary: &'static str,
    /// Whether it talks to the model (a front end holds its turn guard until `TurnEnded`;
    /// every command gets exactly one `TurnEnded` either way).
    pub runs_turn: bool,
}

impl CommandSpec {
    /// The built-in as the table lists it.
    pub fn info(&self) -> CommandInfo {
        CommandInfo {
            name: self.name.to_owned(),
            description: self.summary.to_owned(),
            runs_turn: self.runs_turn,
            source: CommandSource::Builtin,
        }
    }
}

/// Every command the session answers.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "cost",
        summary: "what this session spent: total, per source, and the last request's cache read share",
        runs_turn: false,
    },
    CommandSpec {
        name: "help",
        summary: "the commands the session answers, and the custom commands of this project",
        runs_turn: false,
    },
    CommandSpec {
        name: "model",
        summary: "show the model, or `/model NAME` to use another from now on (opus, sonnet, haiku or an id)",
        runs_turn: false,
    },
    CommandSpec {
        name: "memory",
        summary: "the memory files of this project",
        runs_turn: false,
    },
    CommandSpec {
        name: "init",
        summary: "write an AGENTS.md for this project from its code",
        runs_turn: true,
    },
    CommandSpec {
        name: "clear",
        summary: "start over (a new conversation)",
        runs_turn: false,
    },
    CommandSpec {
        name: "output-style",
        summary: "the output styles (Default, Explanatory, Learning, yours); `/output-style NAME` for the next session",
        runs_turn: false,
    },
    CommandSpec {
        name: "context",
        summary: "the context window by part (system prompt, tools, MCP tools, memory files, messages, free space) with tokens",
        runs_turn: false,
    },
    CommandSpec {
        name: "export",
        summary: "the conversation as plain text: to the clipboard (the UI), to `/export FILE`, or a dated file here (-p)",
        runs_turn: false,
    },
    CommandSpec {
        name: "rewind",
        summary: "go back to before a prompt: its files (Bash's changes too), the conversation, or both (`/rewind` lists them)",
        runs_turn: false,
    },
    CommandSpec {
        name: "resume",
        summary: "this directory's sessions, newest first; `/resume ID` opens one in place of this one",
        runs_turn: false,
    },
    CommandSpec {
        name: "permissions",
        summary: "the permission mode and every rule, with the file it comes from",
        runs_turn: false,
    },
    CommandSpec {
        name: "compact",
        summary: "replace the conversation by a summary now (`/compact FOCUS` says what to keep; \
                  `/compact log` shows what each compaction dropped)",
        runs_turn: true,
    },
    CommandSpec {
        name: "thinking",
        summary: "extended thinking on or off from the next request (`/thinking on|off`; alone, or Tab in the TUI, toggles)",
        runs_turn: false,
    },
    CommandSpec {
        name: "skills",
        summary: "the skills of this project and user (`/NAME [args]` runs one), and where each is from",
        runs_turn: false,
    },
    CommandSpec {
        name: "mcp",
        summary: "the MCP servers and their state (`/mcp restart NAME` reconnects one)",
        runs_turn: false,
    },
    CommandSpec {
        name: "plugin",
        summary: "the plugins: installed, loaded, skipped; `/plugin enable|disable|install|uninstall NAME`, \
                  `/plugin marketplace add PATH|GIT-URL` (from the next session)",
        runs_turn: false,
    },
    CommandSpec {
        name: "reload-plugins",
        summary: "load the plugins again now, as the settings enable them (a new tool array and \
                  listing: the next request writes the prompt cache again)",
        runs_turn: false,
    },
];

/// The session's command table: its built-ins, then the skills, then the custom commands a
/// skill of the same name does not hide (`/NAME` runs the skill, as in Claude Code), then the
/// plugins' commands (`/PLUGIN:NAME`).
pub(crate) fn table(
    command_dirs: &[std::path::PathBuf],
    skills: &[crate::skills::Skill],
    plugins: &crate::plugins::SessionPlugins,
) -> Vec<CommandInfo> {
    let mut table: Vec<CommandInfo> = COMMANDS.iter().map(CommandSpec::info).collect();
    for skill in skills {
        table.push(CommandInfo {
            name: skill.name.clone(),
            description: format!("(skill) {}", skill.description),
            runs_turn: true,
            source: CommandSource::Skill,
        });
    }
    let plugin_commands = plugins.commands().cloned();
    for command in custom_commands::load(command_dirs)
        .into_iter()
        .chain(plugin_commands)
    {
        if table.iter().any(|c| c.name == command.name) {
            continue;
        }
        table.push(CommandInfo {
            name: command.name,
            description: command.description,
            runs_turn: true,
            source: CommandSource::Custom,
        });
    }
    table
}

/// The spec of `name`, if the session knows it.
pub fn find(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().find(|c| c.name == name)
}
