//! The paths a command line touches, as the permission engine judges them: what read-only
//! parts read (operands of file-reading programs, `cd` targets, input redirections) and what
//! writing parts may write (their literal operands and output redirections). Every path comes
//! back resolved (`ResolvedPath`), from every directory the line may run in: the shell's
//! working directory and each literal `cd` target, since `cd sub && cat f` reads `sub/f`.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

use super::resolve::ResolvedPath;
use crate::bash::{CommandAnalysis, SimpleCommand, Word};

/// Programs that take no file operands: their arguments are never read as paths.
const NO_PATH_OPERANDS: &[&str] = &[
    "echo", "printf", "true", "false", "pwd", "basename", "dirname", "whoami", "id", "groups",
    "uname", "uptime", "nproc", "arch", "tty", "locale", "seq", "sleep", "free", "popd", ":", "[[",
    "read", "which", "whereis", "type", "date", "hostname", "test", "[", "ps",
];

/// Programs whose first operand is a pattern or a program, not a file, unless the pattern
/// comes from an option (`-e`, `-f`, `--regexp`, ...).
const PATTERN_FIRST: &[&str] = &[
    "grep", "egrep", "fgrep", "rg", "ag", "sed", "awk", "gawk", "mawk", "nawk", "jq", "look",
];

/// More directories than this (from `cd`s) and the line is judged from the first ones only
/// after asking: a line that long is not a quick read.
const MAX_BASES: usize = 16;
/// A glob that matches more than this is treated as unknown.
const MAX_GLOB_MATCHES: usize = 4096;

/// What one part of the line touches.
#[derive(Debug, Default)]
pub(super) struct PartPaths {
    /// Files and directories a read-only part reads.
    pub reads: Vec<ResolvedPath>,
    /// Paths a writing part may write (operands and output redirections).
    pub writes: Vec<ResolvedPath>,
    /// Output redirection targets only (what `Edit` rules are matched against).
    pub redirect_writes: Vec<ResolvedPath>,
    /// Why some path of the part is only known at run time.
    pub unknown: Option<String>,
    /// Why the part may read through links it finds while recursing (`grep -R`, `find -L`).
    pub follows_links: Option<String>,
}

/// The paths of every part of `analysis`, in part order.
pub(super) fn line_paths(
    analysis: &CommandAnalysis,
    shell_cwd: &Path,
    home: Option<&Path>,
) -> Vec<PartPaths> {
    let bases = bases(analysis, shell_cwd, home);
    analysis
        .parts()
        .iter()
        .map(|part| part_paths(part, &bases, home))
        .collect()
}

/// Where the line's relative paths may start: the shell's cwd and every literal `cd` target,
/// each `cd` taken from every directory found before it.
fn bases(analysis: &CommandAnalysis, shell_cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut bases = vec![shell_cwd.to_path_buf()];
    for part in analysis.parts() {
        if !matches!(program_name(part), Some("cd" | "pushd")) {
            continue;
        }
        let operands: Vec<&Word> = part
            .args
            .iter()
            .filter(|a| !a.text().starts_with('-') || a.text() == "-")
            .collect();
        let target = match operands.first() {
            None => home.map(Path::to_path_buf),
            Some(word) => match word.literal.as_deref() {
                Some(text) => expand_tilde(text, home).map(PathBuf::from),
                None => None,
            },
        };
        let Some(target) = target else {
            continue; // the `cd` part itself is unknown and asks
        };
        let from: Vec<PathBuf> = bases.clone();
        for base in from {
            let next = base.join(&target);
            if bases.len() < MAX_BASES && !bases.contains(&next) {
                bases.push(next);
            }
        }
    }
    bases
}

fn program_name(part: &SimpleCommand) -> Option<&str> {
    let program = part.program.as_deref()?;
    Some(program.rsplit('/').next().unwrap_or(program))
}

fn part_paths(part: &SimpleCommand, bases: &[PathBuf], home: Option<&Path>) -> PartPaths {
    let mut out = PartPaths::default();
    if part.is_read_only() {
        read_paths(part, bases, home, &mut out);
    } else {
        write_paths(part, bases, home, &mut out);
    }
    out
}

fn read_paths(part: &SimpleCommand, bases: &[PathBuf], home: Option<&Path>, out: &mut PartPaths) {
    for redirect in &part.redirections {
        if matches!(redirect.operator.as_str(), "<") {
            match redirect.literal.as_deref() {
                Some(text) => add_text(text, bases, home, &mut out.reads, &mut out.unknown),
                None => {
                    out.unknown.get_or_insert(format!(
                        "reads `{}`, known only at run time, which may be outside the project",
                        redirect.target
                    ));
                }
            }
        }
    }
    let Some(name) = program_name(part) else {
        return;
    };
    if NO_PATH_OPERANDS.contains(&name) {
        return;
    }
    if matches!(name, "cd" | "pushd")
        && part
            .args
            .iter()
            .any(|a| a.text() == "-" || a.text().starts_with('+'))
    {
        // `cd -` goes to `$OLDPWD`, `pushd +1` into the directory stack: anywhere.
        out.unknown.get_or_insert(
            "changes to a directory known only at run time, which may be outside the project"
                .to_string(),
        );
    }
    if name == "xargs" {
        // The operands of the program xargs runs arrive on its input.
        let inner = part.args.iter().find_map(|a| {
            let text = a.literal.as_deref()?;
            (!text.starts_with('-')).then_some(text)
        });
        let inner = inner.map(|p| p.rsplit('/').next().unwrap_or(p));
        if !inner.is_some_and(|p| NO_PATH_OPERANDS.contains(&p)) {
            out.unknown.get_or_insert(
                "runs a program on paths that arrive on its input, which may be outside the \
                 project"
                    .to_string(),
            );
        }
    }
    if let Some(why) = follows_links(name, &part.args) {
        out.follows_links = Some(why);
    }
    let pattern_from_option = part.args.iter().any(|a| {
        let t = a.text();
        matches!(
            t,
            "-e" | "-f" | "--regexp" | "--file" | "--expression" | "--from-file"
        ) || t.starts_with("--regexp=")
            || t.starts_with("--file=")
            || t.starts_with("--expression=")
            || t.starts_with("--from-file=")
    });
    let mut skip_pattern = PATTERN_FIRST.contains(&name) && !pattern_from_option;
    let mut options_done = false;
    let mut operands = 0;
    for word in &part.args {
        let Some(text) = word.literal.as_deref() else {
            if skip_pattern {
                skip_pattern = false;
                continue;
            }
            add_word(word, bases, home, &mut out.reads, &mut out.unknown);
            operands += 1;
            continue;
        };
        if !options_done && text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && text.starts_with('-') && text != "-" {
            // `--file=/etc/x` and `-f/etc/x` carry a path; other flags carry none.
            let value = match text.split_once('=') {
                Some((_, value)) if text.starts_with("--") => Some(value),
                _ if !text.starts_with("--") && text[1..].contains('/') => {
                    text.get(2..).filter(|v| !v.is_empty())
                }
                _ => None,
            };
            if let Some(value) = value {
                add_text(value, bases, home, &mut out.reads, &mut out.unknown);
            }
            continue;
        }
        if skip_pattern {
            skip_pattern = false;
            continue;
        }
        if text == "-" {
            continue;
        }
        add_text(text, bases, home, &mut out.reads, &mut out.unknown);
        operands += 1;
    }
    if operands == 0 {
        // `ls`, `grep -r x`, `git log`: the working directory itself is what is read.
        out.reads.extend(
            bases
                .iter()
                .map(|base| ResolvedPath::new(base, Path::new("."))),
        );
    }
}

fn write_paths(part: &SimpleCommand, bases: &[PathBuf], home: Option<&Path>, out: &mut PartPaths) {
    let mut unknown = None;
    for word in &part.args {
        match word.literal.as_deref() {
            Some(text) => add_text(text, bases, home, &mut out.writes, &mut unknown),
            None => {
                add_word(word, bases, home, &mut out.writes, &mut unknown);
                // `$X/.git/hooks/x`: the spelling alone may name a protected directory.
                for base in bases {
                    out.writes
                        .push(ResolvedPath::new(base, Path::new(&word.raw)));
                }
            }
        }
    }
    for redirect in part.redirections.iter().filter(|r| r.writes_file) {
        let target = redirect.literal.as_deref().unwrap_or(&redirect.target);
        let mut found = Vec::new();
        add_text(target, bases, home, &mut found, &mut unknown);
        out.writes.extend(found.iter().cloned());
        out.redirect_writes.extend(found);
    }
}

/// `text` (a literal operand) from every base; `~` is the home.
fn add_text(
    text: &str,
    bases: &[PathBuf],
    home: Option<&Path>,
    into: &mut Vec<ResolvedPath>,
    unknown: &mut Option<String>,
) {
    if text.is_empty() {
        return;
    }
    let Some(expanded) = expand_tilde(text, home) else {
        unknown.get_or_insert(format!(
            "reads `{text}`, in a home directory not known here, outside the project"
        ));
        return;
    };
    let path = Path::new(&expanded);
    if path.is_absolute() {
        into.push(ResolvedPath::new(Path::new("/"), path));
    } else {
        into.extend(bases.iter().map(|base| ResolvedPath::new(base, path)));
    }
}

/// A word only known at run time: a plain glob is expanded here (every match counts); any
/// other expansion (`$X`, `` `x` ``, braces, quotes around globs) is unknown.
fn add_word(
    word: &Word,
    bases: &[PathBuf],
    home: Option<&Path>,
    into: &mut Vec<ResolvedPath>,
    unknown: &mut Option<String>,
) {
    let raw = word.raw.as_str();
    let plain_glob = !raw.contains(['$', '`', '{', '}', '"', '\'', '\\', '('])
        && (!raw.starts_with('~') || raw == "~" || raw.starts_with("~/"));
    let expanded = plain_glob.then(|| expand_tilde(raw, home)).flatten();
    let Some(pattern) = expanded else {
        unknown.get_or_insert(format!(
            "reads `{raw}`, known only at run time, which may be outside the project"
        ));
        return;
    };
    let starts: Vec<PathBuf> = if Path::new(&pattern).is_absolute() {
        vec![PathBuf::from("/")]
    } else {
        bases.to_vec()
    };
    for start in starts {
        match expand_glob(&start, &pattern) {
            Some(matches) if matches.is_empty() => {
                // No match: the shell passes the pattern on as written.
                into.push(ResolvedPath::new(&start, Path::new(&pattern)));
            }
            Some(matches) => {
                into.extend(matches.iter().map(|m| ResolvedPath::new(&start, m)));
            }
            None => {
                unknown.get_or_insert(format!(
                    "reads `{raw}`, which matches too many files to check"
                ));
                return;
            }
        }
    }
}

/// `~` and `~/x` from the home; `None` for `~user` or when the home is not known.
fn expand_tilde(text: &str, home: Option<&Path>) -> Option<String> {
    if text == "~" || text.starts_with("~/") {
        let home = home?;
        let rest = text.trim_start_matches('~').trim_start_matches('/');
        return Some(home.join(rest).to_string_lossy().into_owned());
    }
    if text.starts_with('~') {
        return None;
    }
    Some(text.to_string())
}

/// The paths `pattern` matches from `start`, component by component (hidden files included,
/// which is more than bash matches: every match is judged). `None` past [`MAX_GLOB_MATCHES`].
fn expand_glob(start: &Path, pattern: &str) -> Option<Vec<PathBuf>> {
    let mut current = vec![start.to_path_buf()];
    for component in pattern.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        if !component.contains(['*', '?', '[']) {
            next.extend(current.iter().map(|dir| dir.join(component)));
        } else {
            let matcher = GlobBuilder::new(component)
                .literal_separator(true)
                .build()
                .ok()?
                .compile_matcher();
            for dir in &current {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    if matcher.is_match(entry.file_name()) {
                        next.push(dir.join(entry.file_name()));
                        if next.len() > MAX_GLOB_MATCHES {
                            return None;
                        }
                    }
                }
            }
        }
        current = next;
    }
    let matched: Vec<PathBuf> = current
        .into_iter()
        .filter(|p| p.symlink_metadata().is_ok())
        .collect();
    Some(matched)
}

/// Why `program args` may follow links found while recursing, which can lead anywhere.
fn follows_links(program: &str, args: &[Word]) -> Option<String> {
    let flags: Vec<&str> = args
        .iter()
        .map(Word::text)
        .filter(|t| t.starts_with('-'))
        .collect();
    let short = |c: char| {
        flags
            .iter()
            .any(|f| !f.starts_with("--") && f[1..].contains(c))
    };
    let long = |name: &str| flags.contains(&name);
    let follows = match program {
        "grep" | "egrep" | "fgrep" => short('R') || long("--dereference-recursive"),
        "rg" | "fd" | "fdfind" => short('L') || long("--follow"),
        "ag" => short('f') || long("--follow"),
        "find" => flags.iter().any(|f| matches!(*f, "-L" | "-follow")),
        "tree" => short('l'),
        "ls" => short('L') && short('R'),
        "du" => short('L') || long("--dereference"),
        _ => false,
    };
    follows.then(|| {
        format!("follows symbolic links while it recurses (`{program}`), which may lead outside the project")
    })
}
