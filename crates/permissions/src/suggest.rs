//! What "yes, and don't ask again" offers for an ask ([`AlwaysAllow`]), and the rules it
//! suggests for a Bash line. The suggestion never allows more than the person saw, kind by kind:
//!
//! - An edit (Edit, Write, MultiEdit, NotebookEdit) inside the project switches this session to
//!   `acceptEdits` and saves nothing (Claude Code's "Yes, allow all edits during this session").
//!   An edit outside the project, which `acceptEdits` does not reach, allows that one file for
//!   this session only (`Edit(//abs/file)`, nothing saved).
//! - A read outside the project: `Read(//dir/**)` for its directory; a fetch:
//!   `WebFetch(domain:host)`; any other tool: the tool's name. Saved in local settings.
//! - A Bash line: one rule per part that needs approval (a part a rule already allows, or a
//!   read-only one, needs none; the engine judges a line part by part, so a rule for one part
//!   never lets another through), saved in local settings:
//!
//! | the part                                              | the rule                        |
//! |-------------------------------------------------------|---------------------------------|
//! | `touch a.txt`, `mkdir -p out`, `./build.sh x`         | `Bash(touch:*)`: the program    |
//! | `git commit -m x`, `npm run build`, `cargo test foo`  | `Bash(git commit:*)`: program and subcommand, for the programs of `SUBCOMMAND_PROGRAMS` |
//! | `git -C dir push` (no plain subcommand)               | the exact part                  |
//! | `rm -rf build`, `chmod 777 x`, `curl …`, `python x.py`, `sudo …`, `find … -delete` | the exact part: for `EXACT_PROGRAMS` a prefix would allow anything |
//! | `FOO=1 make`, `$CMD x`                                | the exact part                  |
//! | `echo hi > notes.txt` (writes a file)                 | the exact part with its redirection (only an exact rule covers a writing part) |
//!
//! A compound line (`a && b`, `a | b`, `a; b`, `$(…)`) gets the rules of its parts, never a
//! prefix of the line. A line tine cannot split (a parse error, a function definition,
//! arithmetic) gets none: "Yes" is once only, as the parts found need not be what runs.

use std::fmt;

use crate::bash::SimpleCommand;
use crate::{PermissionMode, PermissionRule};

/// Programs whose first argument is a subcommand: a rule keeps both words (`Bash(git commit:*)`).
pub(crate) const SUBCOMMAND_PROGRAMS: &[&str] = &[
    "git",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "npx",
    "cargo",
    "go",
    "rustup",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "terraform",
    "gh",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "conda",
    "make",
    "just",
    "dotnet",
    "mvn",
    "gradle",
    "./gradlew",
    "bundle",
    "rake",
    "mix",
    "composer",
    "swift",
    "zig",
    "nix",
    "brew",
    "apt",
    "apt-get",
    "systemctl",
];

/// Programs a prefix rule would hand everything to: they delete or overwrite without undo,
/// change permissions, signal processes, run other commands or code, or send data away. "Don't
/// ask again" allows the exact command seen (`Bash(rm -rf build)`), never `Bash(rm:*)`.
pub(crate) const EXACT_PROGRAMS: &[&str] = &[
    // Deleting, overwriting, permissions, processes.
    "rm",
    "rmdir",
    "shred",
    "dd",
    "mkfs",
    "truncate",
    "chmod",
    "chown",
    "chgrp",
    "kill",
    "pkill",
    "killall",
    "find",
    // Running other commands or code.
    "env",
    "command",
    "builtin",
    "exec",
    "eval",
    "source",
    ".",
    "time",
    "nice",
    "nohup",
    "timeout",
    "stdbuf",
    "xargs",
    "sudo",
    "doas",
    "su",
    "watch",
    "strace",
    "ionice",
    "chroot",
    "setsid",
    "unbuffer",
    "bash",
    "sh",
    "zsh",
    "dash",
    "fish",
    "python",
    "python3",
    "node",
    "perl",
    "ruby",
    "php",
    "lua",
    "osascript",
    // Sending data away.
    "curl",
    "wget",
    "ssh",
    "scp",
    "rsync",
    "nc",
    "ncat",
    "socat",
];

/// Where "always" / "never" answers are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PersistDestination {
    /// `<cwd>/.tine/settings.local.json` (not committed): the default.
    #[default]
    Local,
    /// `<cwd>/.tine/settings.json` (shared with the team).
    Project,
    /// `$TINE_HOME/settings.json`.
    User,
    /// This session only, nothing written.
    Session,
}

/// What "yes, and don't ask again" does for one ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlwaysAllow {
    /// Add these allow rules, kept at `destination`.
    Rules {
        /// The rules (never empty).
        rules: Vec<PermissionRule>,
        /// Where they are kept ([`PersistDestination::Session`]: nothing is written).
        destination: PersistDestination,
    },
    /// Switch this session to `mode`; nothing is written.
    Mode(PermissionMode),
}

impl AlwaysAllow {
    /// `rules`, saved in the project's local settings; `None` when there are none.
    pub fn saved(rules: Vec<PermissionRule>) -> Option<Self> {
        (!rules.is_empty()).then_some(AlwaysAllow::Rules {
            rules,
            destination: PersistDestination::Local,
        })
    }

    /// The rules it adds (none for a mode).
    pub fn rules(&self) -> &[PermissionRule] {
        match self {
            AlwaysAllow::Rules { rules, .. } => rules,
            AlwaysAllow::Mode(_) => &[],
        }
    }
}

/// The rules joined by ", ", or the mode's name (`acceptEdits`).
impl fmt::Display for AlwaysAllow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlwaysAllow::Rules { rules, .. } => {
                for (i, rule) in rules.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{rule}")?;
                }
                Ok(())
            }
            AlwaysAllow::Mode(mode) => f.write_str(mode.as_str()),
        }
    }
}

/// The rule "don't ask again" adds for one part of a Bash line (the table above).
pub(crate) fn bash_part_rule(part: &SimpleCommand) -> PermissionRule {
    let exact = |text: &str| PermissionRule::with_content("Bash", text.trim());
    if part.writes_file() {
        return exact(&part.source);
    }
    let Some(program) = part.program.as_deref() else {
        return exact(&part.text);
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    if !part.assignments.is_empty() || EXACT_PROGRAMS.contains(&name) {
        return exact(&part.text);
    }
    if SUBCOMMAND_PROGRAMS.contains(&name) || SUBCOMMAND_PROGRAMS.contains(&program) {
        return match part.args.first().and_then(|a| a.literal.as_deref()) {
            Some(sub) if is_plain_word(sub) => {
                PermissionRule::with_content("Bash", format!("{program} {sub}:*"))
            }
            None if part.args.is_empty() => {
                PermissionRule::with_content("Bash", format!("{program}:*"))
            }
            // `git -C dir push`, `cargo +nightly build`: a prefix would be the whole program.
            _ => exact(&part.text),
        };
    }
    PermissionRule::with_content("Bash", format!("{program}:*"))
}

/// A subcommand's word: not an option, nothing a shell would expand.
fn is_plain_word(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('-')
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
}
