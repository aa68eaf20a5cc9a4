//! Skills: packaged instructions the model loads when a task calls for them, read
//! as Claude Code reads them. A skill is a folder with a `SKILL.md` (frontmatter `name`,
//! `description`, optional `allowed-tools`; a Markdown body of instructions) and any scripts
//! or reference files beside it. Folders are looked up in `.tine/skills/` and
//! `.claude/skills/` of every directory from the working directory up to the repository root
//! (the nearest wins a name) and in `TINE_HOME/skills/` and `~/.claude/skills/` of the user,
//! whose skills win a name over the project's (Claude Code: personal over project, so a cloned
//! repository cannot shadow a skill of yours).
//!
//! The model sees only the [`listing`] (each name and description), put once into the
//! session's first user message so the system prompt and the tool array never depend on
//! which skills exist; the body reaches the conversation only when the skill is invoked,
//! through the `Skill` tool or as `/NAME` by the user. A skill that
//! cannot be read is a [`SkillWarning`] (data, never printed here).

use std::path::{Path, PathBuf};

use crate::custom_commands;

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillScope {
    /// A `.tine/skills/` or `.claude/skills/` folder of the project.
    Project,
    /// `TINE_HOME/skills/` or `~/.claude/skills/`.
    User,
    /// A Claude Code plugin's `skills/` (named `PLUGIN:SKILL`).
    Plugin,
}

impl SkillScope {
    /// `project` or `user`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::User => "user",
            Self::Plugin => "plugin",
        }
    }
}

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// What `/NAME` and the Skill tool's `skill` say: the frontmatter's `name`, else the
    /// folder's.
    pub name: String,
    /// When to use it: the only text of the skill the model sees before it is invoked.
    pub description: String,
    /// The instructions, frontmatter removed.
    pub body: String,
    /// The skill's folder (the base of the paths its instructions name).
    pub dir: PathBuf,
    /// Its `SKILL.md`.
    pub path: PathBuf,
    /// The frontmatter's `allowed-tools`: permission rules (`Bash(git log:*)`) that allow
    /// their calls without a question while the skill runs (the rest of its turn).
    pub allowed_tools: Vec<String>,
    /// Project or user.
    pub scope: SkillScope,
}

/// Why a skill was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason} (skill skipped)", .path.display())]
pub struct SkillWarning {
    /// The `SKILL.md` (or folder) that could not be used.
    pub path: PathBuf,
    /// What is wrong with it.
    pub reason: String,
}

/// The folders skills are read from, in the order names are looked up (the first wins):
/// the user's `TINE_HOME/skills` and `~/.claude/skills`, then `.tine/skills` and
/// `.claude/skills` of `cwd` and of each parent up to the repository root (the nearest
/// directory holding `.git`; without one, `cwd` alone).
pub fn skill_dirs(
    cwd: &Path,
    tine_home: &Path,
    user_home: Option<&Path>,
) -> Vec<(PathBuf, SkillScope)> {
    let mut project = Vec::new();
    let mut root_found = false;
    for dir in cwd.ancestors() {
        project.push(dir);
        if dir.join(".git").exists() {
            root_found = true;
            break;
        }
    }
    if !root_found {
        project.truncate(1);
    }
    let mut dirs = vec![(tine_home.join("skills"), SkillScope::User)];
    if let Some(home) = user_home {
        dirs.push((home.join(".claude").join("skills"), SkillScope::User));
    }
    for dir in project {
        for folder in [
            dir.join(".tine").join("skills"),
            dir.join(".claude").join("skills"),
        ] {
            // The home directory inside the repository: its folders are the user's.
            if !dirs.iter().any(|(d, _)| *d == folder) {
                dirs.push((folder, SkillScope::Project));
            }
        }
    }
    dirs
}

/// Every skill of `dirs` (sorted by name; the first folder holding a name wins it), with the
/// skills that were skipped.
pub fn load(dirs: &[(PathBuf, SkillScope)]) -> (Vec<Skill>, Vec<SkillWarning>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut warnings = Vec::new();
    for (dir, scope) in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        folders.sort();
        for folder in folders {
            let path = folder.join("SKILL.md");
            if !path.is_file() {
                // A folder without SKILL.md is not a skill (it may hold shared files).
                continue;
            }
            let parsed = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot be read: {e}"))
                .and_then(|text| parse_skill(&text, &folder, *scope));
            match parsed {
                Ok(skill) if skills.iter().any(|s| s.name == skill.name) => {}
                Ok(skill) => skills.push(skill),
                Err(reason) => warnings.push(SkillWarning { path, reason }),
            }
        }
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    (skills, warnings)
}

/// One `SKILL.md` of folder `dir`: `---` frontmatter, then the instructions.
pub fn parse_skill(text: &str, dir: &Path, scope: SkillScope) -> Result<Skill, String> {
    let text = text
        .strip_prefix('\u{feff}')
        .unwrap_or(text)
        .replace("\r\n", "\n");
    let rest = text
        .strip_prefix("---\n")
        .ok_or("it does not start with `---` frontmatter (name, description)")?;
    let (front, body) = match rest.strip_prefix("---") {
        Some(after) => ("", after),
        None => rest
            .split_once("\n---")
            .ok_or("its frontmatter has no closing `---`")?,
    };
    let body = body.split_once('\n').map_or("", |(_, b)| b).trim();
    let fields = frontmatter_fields(front)?;
    let field = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let folder_name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let name = field("name").unwrap_or(folder_name);
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
    {
        return Err(format!(
            "its name `{name}` is not a skill name (letters, digits, `-`, `_`, at most 64)"
        ));
    }
    let description = field("description")
        .ok_or("its frontmatter has no `description` (the model reads it to choose the skill)")?;
    if body.is_empty() {
        return Err("it has no instructions after the frontmatter".to_owned());
    }
    let allowed_tools = field("allowed-tools")
        .map(|v| custom_commands::split_rules(&v))
        .unwrap_or_default();
    Ok(Skill {
        name,
        description,
        body: body.to_owned(),
        dir: dir.to_path_buf(),
        path: dir.join("SKILL.md"),
        allowed_tools,
        scope,
    })
}

/// The frontmatter's `key: value` pairs: a value may be quoted, folded over indented lines
/// (`key: >` or a plain continuation), or a list of `- item` lines (joined with commas).
fn frontmatter_fields(front: &str) -> Result<Vec<(String, String)>, String> {
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in front.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            let Some((_, value)) = fields.last_mut() else {
                return Err(format!(
                    "its frontmatter starts with an indented line `{line}`"
                ));
            };
            let item = line.trim();
            let (item, separator) = match item.strip_prefix("- ") {
                Some(item) => (item, ", "),
                None => (item, " "),
            };
            if !value.is_empty() {
                value.push_str(separator);
            }
            value.push_str(unquote(item.trim()));
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!("its frontmatter line `{line}` is not `key: value`"));
        };
        let value = value.trim();
        let value = if matches!(value, ">" | "|" | ">-" | "|-") {
            ""
        } else {
            unquote(value)
        };
        fields.push((key.trim().to_owned(), value.to_owned()));
    }
    Ok(fields)
}

fn unquote(value: &str) -> &str {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value)
}

/// What the model is told once, at the start of the session's first user message: each
/// skill's name and description (never its body). Empty without skills.
pub fn listing(skills: &[Skill]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "<system-reminder>\nThe following skills are available for use with the Skill tool. \
         When a task matches a skill's description, invoke it with the Skill tool before \
         doing the task; its instructions are loaded then.\n\n",
    );
    for skill in skills {
        text.push_str(&format!(
            "- {}: {}\n",
            skill.name,
            one_line(&skill.description)
        ));
    }
    text.push_str("</system-reminder>");
    text
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The user context with the listing after it (unchanged without skills).
pub(crate) fn with_listing(
    user_context: std::sync::Arc<str>,
    skills: &[Skill],
) -> std::sync::Arc<str> {
    if skills.is_empty() {
        return user_context;
    }
    std::sync::Arc::from(format!("{user_context}\n\n{}", listing(skills)))
}

/// What invoking `skill` with `args` puts in the conversation: the folder, the body (with
/// `$ARGUMENTS` and `$1`.. as custom commands have them) and the folder's other files, which
/// the model may Read or run.
pub fn invocation_text(skill: &Skill, args: &str) -> String {
    let mut text = format!(
        "Base directory for this skill: {}\n\n{}",
        skill.dir.display(),
        custom_commands::expand(&skill.body, args).trim_end()
    );
    let files = other_files(&skill.dir);
    if !files.is_empty() {
        text.push_str(
            "\n\nOther files in this skill's folder (Read them, or run them, as the \
             instructions say):\n",
        );
        for file in files {
            text.push_str(&format!("- {}\n", file.display()));
        }
        text.truncate(text.trim_end().len());
    }
    text
}

/// The most files of a skill's folder named to the model.
const MAX_OTHER_FILES: usize = 100;

/// The files of `dir` other than its `SKILL.md` (three levels deep, sorted, at most
/// 100).
pub fn other_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            if out.len() >= MAX_OTHER_FILES {
                return;
            }
            if path.is_dir() {
                if depth < 3 {
                    walk(&path, depth + 1, out);
                }
            } else {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, 1, &mut files);
    let skill_md = dir.join("SKILL.md");
    files.retain(|f| *f != skill_md);
    files
}

/// `/skills` and `tine skills list`: each skill, where it is from, and what was skipped.
pub fn list_text(skills: &[Skill], warnings: &[SkillWarning]) -> String {
    let mut text = if skills.is_empty() {
        String::from(
            "No skills. A skill is a folder with a SKILL.md in .tine/skills/ or \
             .claude/skills/ of the project, or in ~/.tine/skills/ for every project.\n",
        )
    } else {
        String::from("Skills:\n")
    };
    for skill in skills {
        text.push_str(&format!(
            "- {} ({}, {}): {}\n",
            skill.name,
            skill.scope.as_str(),
            skill.path.display(),
            one_line(&skill.description)
        ));
    }
    for warning in warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text
}

/// The skills a session read at start, and the ones it skipped.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionSkills {
    pub skills: std::sync::Arc<[Skill]>,
    pub warnings: Vec<SkillWarning>,
}

impl SessionSkills {
    /// The skills of `cwd` and the user; each skipped one is also a warning notice.
    pub(crate) fn load(
        cwd: &Path,
        tine_home: &Path,
        user_home: Option<&Path>,
        notices: &mut Vec<crate::protocol::Notice>,
    ) -> Self {
        let (skills, warnings) = load(&skill_dirs(cwd, tine_home, user_home));
        notices.extend(
            warnings
                .iter()
                .map(|w| crate::protocol::Notice::warning(w.to_string())),
        );
        Self {
            skills: skills.into(),
            warnings,
        }
    }

    /// The skill `/name` invokes.
    pub(crate) fn find(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
