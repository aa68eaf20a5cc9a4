//! Output styles (Claude Code's): `outputStyle` in settings names one, and its instructions
//! join the system prompt. Built-ins: Default (nothing added), Explanatory and Learning;
//! custom styles are Markdown files with front matter (`name`, `description`,
//! `keep-coding-instructions`) in `.claude/output-styles/`, `.tine/output-styles/`,
//! `~/.claude/output-styles/` and `$TINE_HOME/output-styles/` (the project's first, then the
//! user's; the first of a name wins). The system prompt is part of every request's cache key,
//! so a style chosen with `/output-style` applies from the next session or after `/clear`.

use std::path::{Path, PathBuf};

/// One style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutputStyle {
    pub name: String,
    pub description: String,
    /// What joins the system prompt (empty: nothing).
    pub prompt: String,
}

const EXPLANATORY: &str = "You are in the Explanatory output style. Besides doing the task, \
explain your choices as you go: before and after writing code, give short \"Insight\" notes \
(2-3 points) about why the code is shaped as it is, the trade-offs of the approach and the \
patterns of this codebase it follows. Keep the insights specific to this code, not general \
programming advice.";

const LEARNING: &str = "You are in the Learning output style. Help the person learn by doing: \
besides your own work, when a piece of the task is small and meaningful (a function body of \
2-10 lines, a design decision, an edge case), leave it to them: write the surrounding code, \
mark the spot with a TODO(human) comment, explain what it should do and why it matters, and \
ask them to write it. Share short \"Insight\" notes about the codebase as you go.";

/// The built-in styles.
fn built_in() -> Vec<OutputStyle> {
    vec![
        OutputStyle {
            name: "Default".to_owned(),
            description: "tine's own way: concise, to the point".to_owned(),
            prompt: String::new(),
        },
        OutputStyle {
            name: "Explanatory".to_owned(),
            description: "explains its choices with short insights as it works".to_owned(),
            prompt: EXPLANATORY.to_owned(),
        },
        OutputStyle {
            name: "Learning".to_owned(),
            description: "leaves small, meaningful pieces for you to write, with TODO(human)"
                .to_owned(),
            prompt: LEARNING.to_owned(),
        },
    ]
}

/// Where custom styles are looked up, in order.
fn dirs(cwd: &Path, home: &Path, user_home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![
        cwd.join(".claude/output-styles"),
        cwd.join(".tine/output-styles"),
    ];
    if let Some(user) = user_home {
        dirs.push(user.join(".claude/output-styles"));
    }
    dirs.push(home.join("output-styles"));
    dirs
}

/// A custom style from its file (front matter `name`, `description`; the body is the prompt).
fn parse(path: &Path) -> Option<OutputStyle> {
    let text = std::fs::read_to_string(path).ok()?;
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let (front, body) = match text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---"))
    {
        Some((front, body)) => (front, body.trim_start_matches('\n')),
        None => ("", text.as_str()),
    };
    let field = |key: &str| {
        front.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
        })
    };
    Some(OutputStyle {
        name: field("name").unwrap_or(stem),
        description: field("description").unwrap_or_default(),
        prompt: body.trim().to_owned(),
    })
}

/// Every style: the built-ins, then the custom ones (a custom style of a built-in's name
/// replaces it).
pub(crate) fn all(cwd: &Path, home: &Path, user_home: Option<&Path>) -> Vec<OutputStyle> {
    let mut styles = built_in();
    for dir in dirs(cwd, home, user_home) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        files.sort();
        for file in files {
            if let Some(style) = parse(&file) {
                if let Some(known) = styles
                    .iter_mut()
                    .find(|s| s.name.eq_ignore_ascii_case(&style.name))
                {
                    if built_in().iter().any(|b| b.name == known.name) {
                        *known = style;
                    }
                } else {
                    styles.push(style);
                }
            }
        }
    }
    styles
}

/// The style named `name` (case-insensitive).
pub(crate) fn find(
    name: &str,
    cwd: &Path,
    home: &Path,
    user_home: Option<&Path>,
) -> Option<OutputStyle> {
    all(cwd, home, user_home)
        .into_iter()
        .find(|s| s.name.eq_ignore_ascii_case(name.trim()))
}

/// What the style `outputStyle` names adds to the system prompt (`None`: nothing).
pub(crate) fn system_prompt_part(
    settings: &tine_config::settings::LoadedSettings,
    cwd: &Path,
    home: &Path,
    user_home: Option<&Path>,
) -> Option<String> {
    let (value, _) = settings.get("outputStyle")?;
    let name = value.as_str()?;
    let style = find(name, cwd, home, user_home)?;
    (!style.prompt.is_empty()).then(|| format!("# Output style: {}\n{}", style.name, style.prompt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_and_a_custom_style_are_found() {
        let root = tempfile::tempdir().unwrap();
        let (cwd, home) = (root.path().join("p"), root.path().join("h"));
        std::fs::create_dir_all(cwd.join(".claude/output-styles")).unwrap();
        std::fs::write(
            cwd.join(".claude/output-styles/pirate.md"),
            "---\nname: Pirate\ndescription: talks like one\n---\nSpeak like a pirate.\n",
        )
        .unwrap();
        let names: Vec<String> = all(&cwd, &home, None).into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["Default", "Explanatory", "Learning", "Pirate"]);
        let pirate = find("pirate", &cwd, &home, None).unwrap();
        assert_eq!(pirate.prompt, "Speak like a pirate.");
        assert!(
            find("Explanatory", &cwd, &home, None)
                .unwrap()
                .prompt
                .contains("Insight")
        );
        assert!(
            find("Default", &cwd, &home, None)
                .unwrap()
                .prompt
                .is_empty()
        );
    }
}
