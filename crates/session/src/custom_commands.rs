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
    pub path: PathBuf,
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
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let (description, body) = split_front_matter(&text);
        let description = description.unwrap_or_else(|| {
            body.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or_default()
                .trim()
                .chars()
                .take(80)
                .collect()
        });
        out.push(CustomCommand {
            name: format!("{prefix}{stem}"),
            description,
            body,
            path,
        });
    }
}

/// The front matter's `description` and the body after it.
fn split_front_matter(text: &str) -> (Option<String>, String) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return (None, text.to_owned());
    };
    let Some(end) = rest.find("\n---") else {
        return (None, text.to_owned());
    };
    let front = &rest[..end];
    let body = rest[end + 4..].trim_start_matches('\n').to_owned();
    let description = front.lines().find_map(|line| {
        line.strip_prefix("description:")
            .map(|v| v.trim().trim_matches('"').to_owned())
    });
    (description, body)
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
}
