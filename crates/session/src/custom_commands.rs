//! Custom slash commands: Markdown files whose body is a prompt, as Claude Code reads them.
//! `.tine/commands/NAME.md` and `.claude/commands/NAME.md` of the project, then
//! `~/.tine/commands/` and `~/.claude/commands/` of the user (a file in a subfolder is
//! `DIR:NAME`); the first of a name wins. A front end lists them (completion) and submits the
//! [`expand`]ed body as a prompt; `$ARGUMENTS` is what followed the command, `$1`, `$2` its
//! words.

use std::path::{Path, PathBuf};

/// One custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Without the slash.
    pub name: String,
    /// The front matter's `description`, else the body's first line.
    pub description: String,
    /// The prompt, front matter removed.
    pub body: String,
    /// The command's file.
    pub path: PathBuf,
    /// The front matter's `allowed-tools`: permission rules (`Bash(git add:*)`) that allow
    /// their calls without a question while the command's turn runs.
    pub allowed_tools: Vec<String>,
    /// The front matter's `model`: the turn runs on it (an alias such as `haiku` resolved).
    pub model: Option<String>,
}

/// The command folders of `cwd` and the user's homes, in the order names are looked up.
pub fn command_dirs(cwd: &Path, tine_home: &Path, user_home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![
        cwd.join(".tine").join("commands"),
        cwd.join(".claude").join("commands"),
        tine_home.join("commands"),
    ];
    if let Some(home) = user_home {
        dirs.push(home.join(".claude").join("commands"));
    }
    dirs
}

/// Every command in `dirs`, sorted by name; unreadable files are skipped.
pub fn load(dirs: &[PathBuf]) -> Vec<CustomCommand> {
    let mut commands: Vec<CustomCommand> = Vec::new();
    for dir in dirs {
        let mut found = Vec::new();
        collect(dir, "", 0, &mut found);
        for command in found {
            if !commands.iter().any(|c| c.name == command.name) {
                commands.push(command);
            }
        }
    }
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    commands
}

fn collect(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<CustomCommand>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        if path.is_dir() {
            if depth < 2 {
                collect(&path, &format!("{prefix}{stem}:"), depth + 1, out);
            }
            continue;
        }
        if path.extension().and_then(|e| e.to_str()) != Some("md") {
            continue;
        }
        if let Some(command) = read_command(&path, format!("{prefix}{stem}")) {
            out.push(command);
        }
    }
}

/// The command file at `path`, named `name`; `None` when it cannot be read.
pub(crate) fn read_command(path: &Path, name: String) -> Option<CustomCommand> {
    let text = std::fs::read_to_string(path).ok()?;
    let (front, body) = split_front_matter(&text);
    let field = |key: &str| {
        front.lines().find_map(|line| {
            line.strip_prefix(key)
                .and_then(|rest| rest.strip_prefix(':'))
                .map(|v| v.trim().trim_matches('"').to_owned())
                .filter(|v| !v.is_empty())
        })
    };
    let allowed_tools = field("allowed-tools")
        .map(|v| split_rules(&v))
        .unwrap_or_default();
    let model = field("model");
    let description = field("description").unwrap_or_else(|| {
        body.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .chars()
            .take(80)
            .collect()
    });
    Some(CustomCommand {
        name,
        description,
        body,
        path: path.to_path_buf(),
        allowed_tools,
        model,
    })
}

/// Every command of one folder (a file in a subfolder is `DIR:NAME`), unsorted.
pub(crate) fn load_dir(dir: &Path) -> Vec<CustomCommand> {
    let mut found = Vec::new();
    collect(dir, "", 0, &mut found);
    found
}

/// The front matter (empty without one) and the body after it.
fn split_front_matter(text: &str) -> (String, String) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return (String::new(), text.to_owned());
    };
    let Some(end) = rest.find("\n---") else {
        return (String::new(), text.to_owned());
    };
    let front = rest[..end].to_owned();
    let body = rest[end + 4..].trim_start_matches('\n').to_owned();
    (front, body)
}

/// `Bash(git add:*), Bash(git status:*), Read` (or a `[...]` list): the rules, split at commas
/// outside parentheses.
pub(crate) fn split_rules(value: &str) -> Vec<String> {
    let value = value.trim().trim_start_matches('[').trim_end_matches(']');
    let mut rules = Vec::new();
    let (mut depth, mut current) = (0usize, String::new());
    for c in value.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                rules.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    rules.push(current);
    rules
        .into_iter()
        .map(|r| r.trim().trim_matches('"').trim_matches('\'').to_owned())
        .filter(|r| !r.is_empty())
        .collect()
}

/// The prompt command `body` makes with `args`: `$ARGUMENTS` is all of them, `$1`..`$9` each
/// word. A body that uses none gets the arguments appended (as Claude Code does), so they are
/// never lost.
pub fn expand(body: &str, args: &str) -> String {
    let words: Vec<&str> = args.split_whitespace().collect();
    let uses_args = body.contains("$ARGUMENTS") || (1..=9).any(|n| body.contains(&format!("${n}")));
    let mut text = body.replace("$ARGUMENTS", args);
    for n in (1..=9).rev() {
        let word = words.get(n - 1).copied().unwrap_or_default();
        text = text.replace(&format!("${n}"), word);
    }
    if !uses_args && !args.trim().is_empty() {
        text = format!("{}\n\nARGUMENTS: {}", text.trim_end(), args.trim());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_put_in_place_or_appended() {
        assert_eq!(
            expand("Fix issue $ARGUMENTS now", "#12 fast"),
            "Fix issue #12 fast now"
        );
        assert_eq!(expand("Move $1 to $2", "a.rs b.rs"), "Move a.rs to b.rs");
        assert_eq!(expand("Review", "src/"), "Review\n\nARGUMENTS: src/");
        assert_eq!(expand("Review", ""), "Review");
    }

    #[test]
    fn commands_are_read_with_descriptions_and_namespaces() {
        let dir = tempfile::tempdir().unwrap();
        let tine = dir.path().join(".tine/commands");
        std::fs::create_dir_all(tine.join("git")).unwrap();
        std::fs::write(
            tine.join("review.md"),
            "---\ndescription: Review a file\n---\nReview $ARGUMENTS",
        )
        .unwrap();
        std::fs::write(tine.join("git/log.md"), "Summarize the git log").unwrap();
        let claude = dir.path().join(".claude/commands");
        std::fs::create_dir_all(&claude).unwrap();
        // The first folder wins a name.
        std::fs::write(claude.join("review.md"), "other").unwrap();
        std::fs::write(claude.join("notes.txt"), "not a command").unwrap();
        let commands = load(&command_dirs(dir.path(), &dir.path().join("home"), None));
        let names: Vec<_> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["git:log", "review"]);
        assert_eq!(commands[1].description, "Review a file");
        assert_eq!(commands[1].body, "Review $ARGUMENTS");
        assert_eq!(commands[0].description, "Summarize the git log");
    }

    #[test]
    fn front_matter_gives_allowed_tools_and_model() {
        let dir = tempfile::tempdir().unwrap();
        let tine = dir.path().join(".tine/commands");
        std::fs::create_dir_all(&tine).unwrap();
        std::fs::write(
            tine.join("commit.md"),
            "---\nallowed-tools: Bash(git add:*), Bash(git commit:*), Read\nmodel: haiku\n\
             description: Commit\n---\nCommit $ARGUMENTS",
        )
        .unwrap();
        let commands = load(&command_dirs(dir.path(), &dir.path().join("home"), None));
        assert_eq!(
            commands[0].allowed_tools,
            ["Bash(git add:*)", "Bash(git commit:*)", "Read"]
        );
        assert_eq!(commands[0].model.as_deref(), Some("haiku"));
        assert_eq!(commands[0].description, "Commit");
        assert_eq!(
            split_rules("[\"Read\", \"Bash(a, b)\"]"),
            ["Read", "Bash(a, b)"]
        );
    }
}
