//! Bash command analysis: parse a command line with tree-sitter-bash, find every simple command
//! in it (across pipelines, lists, subshells, loops and substitutions), classify each as read /
//! search / list / neutral / other, and decide whether the whole line is read-only.
//!
//! Read-only is deliberately narrow (seed 003 §四: `cat x | grep y` is a read, `cat x > y` is
//! not): every simple command must be an allowlisted program with safe flags (`programs`), with no
//! redirection to a file, no command / process / arithmetic substitution, no prefix assignment that
//! can change what runs (`PAGER=`, `LD_PRELOAD=`), no run-time program name, and no parse error.
//! The permission engine uses the same analysis to match rules part by part, so that an allow
//! rule for `a` never lets `a && rm -rf x` through.

mod git;
mod options;
mod parse;
mod programs;
mod sed;

use std::fmt;

/// What a simple command does, as the UI and the permission engine see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandKind {
    /// Reads file contents (`cat`, `head`, `wc`, `git log`, ...).
    Read,
    /// Searches (`grep`, `rg`, `find`, `which`, ...).
    Search,
    /// Lists directories or files (`ls`, `tree`, `du`, ...).
    List,
    /// Neither reads nor writes anything of note (`echo`, `cd`, `true`, `date`, ...).
    Neutral,
    /// Anything else, including everything that writes or runs code.
    Other,
}

/// One word of a command: its source text, and its value when that is known before running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word as written (quotes included).
    pub raw: String,
    /// The value after quote removal; `None` when it depends on expansion, globbing or braces.
    pub literal: Option<String>,
}

impl Word {
    /// The literal value, or the raw text when the value is only known at run time.
    pub fn text(&self) -> &str {
        self.literal.as_deref().unwrap_or(&self.raw)
    }
}

/// A redirection attached to a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirection {
    /// The operator as written: `>`, `>>`, `<`, `2>`'s `>`, `&>`, `>&`, `<<`, `<<<`, ...
    pub operator: String,
    /// The file descriptor before the operator, if any (`2` in `2>&1`).
    pub fd: Option<String>,
    /// The target as written (`/dev/null`, `1`, `out.txt`, a heredoc delimiter).
    pub target: String,
    /// The target's value when it is fixed before running (quotes removed); `None` for
    /// expanding targets, here-documents and here-strings.
    pub literal: Option<String>,
    /// Whether this redirection writes to a file (anything but `/dev/null` and fd duplication).
    pub writes_file: bool,
}

/// One simple command found in the line: the unit of classification and of rule matching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The program's literal name; `None` when it is computed at run time (`$CMD x`) or the
    /// command has no program at all (a bare assignment, `export`'s operands are args).
    pub program: Option<String>,
    /// The arguments after the program.
    pub args: Vec<Word>,
    /// Prefix assignments (`FOO=bar cmd`), as `(name, raw value)`.
    pub assignments: Vec<(String, String)>,
    /// Redirections of this command, including those of an enclosing group (`{ a; } > f`).
    pub redirections: Vec<Redirection>,
    /// Assignments, program and arguments joined by single spaces, as rules see the command.
    pub text: String,
    /// The command's source text including its own redirections.
    pub source: String,
    /// Inside a command or process substitution (`$(..)`, `` `..` ``, `<(..)`).
    pub nested: bool,
    /// What kind of command this is.
    pub kind: CommandKind,
    /// Why this command is not read-only; `None` when it is.
    pub not_read_only: Option<String>,
}

impl SimpleCommand {
    /// Whether this command on its own only reads.
    pub fn is_read_only(&self) -> bool {
        self.not_read_only.is_none()
    }

    /// Whether any redirection of this command writes a file.
    pub fn writes_file(&self) -> bool {
        self.redirections.iter().any(|r| r.writes_file)
    }
}

/// The analysis of one command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandAnalysis {
    /// The command line analysed.
    pub command: String,
    /// Every simple command, in source order; substitutions' commands follow their host.
    pub commands: Vec<SimpleCommand>,
    /// Whole-line reasons against read-only (substitutions, parse errors, function definitions).
    pub concerns: Vec<String>,
    /// tree-sitter found a syntax error (or the parser could not run).
    pub parse_error: bool,
    /// Whether the line can be judged part by part: false after a parse error, a function
    /// definition or arithmetic evaluation, where the parts found need not be what runs.
    pub splittable: bool,
}

impl CommandAnalysis {
    /// The parts of the line for per-part permission matching (one per simple command).
    pub fn parts(&self) -> &[SimpleCommand] {
        &self.commands
    }

    /// Whether the whole line only reads: every part read-only, no whole-line concern.
    pub fn is_read_only(&self) -> bool {
        !self.commands.is_empty()
            && self.concerns.is_empty()
            && self.commands.iter().all(SimpleCommand::is_read_only)
    }

    /// Why the line is not read-only (first reason), if it is not.
    pub fn not_read_only_reason(&self) -> Option<String> {
        if let Some(concern) = self.concerns.first() {
            return Some(concern.clone());
        }
        if self.commands.is_empty() {
            return Some("no command to run".to_string());
        }
        self.commands.iter().find_map(|c| {
            c.not_read_only
                .as_ref()
                .map(|why| format!("`{}`: {why}", c.text))
        })
    }

    /// The line's collapsed classification for UIs (seed 003 §四 `isSearchOrReadBashCommand`).
    pub fn summary(&self) -> KindSummary {
        let mut summary = KindSummary::default();
        if !self.is_read_only() {
            return summary;
        }
        for command in &self.commands {
            match command.kind {
                CommandKind::Read => summary.is_read = true,
                CommandKind::Search => summary.is_search = true,
                CommandKind::List => summary.is_list = true,
                CommandKind::Neutral => {}
                CommandKind::Other => return KindSummary::default(),
            }
        }
        summary
    }
}

/// Collapsed classification of a read-only line; all false when it is not read-only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindSummary {
    /// A search (`grep`, `rg`, `find`).
    pub is_search: bool,
    /// A read (`cat`, `head`, `wc`).
    pub is_read: bool,
    /// A listing (`ls`, `tree`).
    pub is_list: bool,
}

impl fmt::Display for CommandKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommandKind::Read => "read",
            CommandKind::Search => "search",
            CommandKind::List => "list",
            CommandKind::Neutral => "neutral",
            CommandKind::Other => "other",
        })
    }
}

/// Analyse a command line. Never panics; unparseable input yields a non-read-only analysis.
pub fn analyze(command: &str) -> CommandAnalysis {
    parse::analyze(command)
}

/// Whether `command` only reads: the Bash tool's `is_read_only`, and what lets a command run
/// without approval in `default` mode.
pub fn is_read_only_command(command: &str) -> bool {
    analyze(command).is_read_only()
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
