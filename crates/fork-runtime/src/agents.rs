//! Typed agents (seed 003 §七): the built-ins `general-purpose`, `Explore` and `Plan`, and
//! custom agents from Markdown files: `.tine/agents/*.md` and `.claude/agents/*.md` in the
//! project, `TINE_HOME/agents/*.md` and `~/.claude/agents/*.md` for the user. A file's
//! frontmatter says `name`, `description`, `tools` (a comma list; absent = every tool),
//! `model` and `isolation`; its body is the agent's system prompt. Later sources win a name:
//! built-ins, then the user's, then the project's (`.claude` before `.tine`).

use std::path::{Path, PathBuf};

/// Where a definition came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSource {
    /// One of tine's own (general-purpose, Explore, Plan).
    BuiltIn,
    /// A Markdown file under `.tine/agents/` or `.claude/agents/`.
    File(PathBuf),
    /// Given by the front end's app (the Agent SDK's `agents` in `initialize`).
    App,
}

/// One typed agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    /// What `subagent_type` names.
    pub name: String,
    /// When to use it (the Agent tool's description lists it).
    pub description: String,
    /// The tools it may use, by name; `None`: every tool of the session (but the Agent and
    /// task tools: a sub-agent does not start sub-agents).
    pub tools: Option<Vec<String>>,
    /// `None` or `inherit`: the parent's model.
    pub model: Option<String>,
    /// The agent's system prompt (the file's body).
    pub system_prompt: String,
    /// Only read-only calls are allowed (Explore, Plan).
    pub read_only: bool,
    /// `worktree`: run in a git worktree of its own.
    pub isolation: Option<String>,
    /// Where the definition came from.
    pub source: AgentSource,
}

const GENERAL_PURPOSE_PROMPT: &str = "You are an agent for tine, a command-line coding \
agent. Given the user's task, use the tools available to complete it fully: search code, \
read files, run commands, make the changes asked for. Do not stop halfway and do not \
gold-plate. When you are done, reply with a concise report of what you did and found: the \
caller reads only that report, so include the file paths and facts it needs.";

const EXPLORE_PROMPT: &str = "You are a file search specialist for tine, a command-line \
coding agent. You explore codebases quickly and read-only: find files by pattern with Glob, \
search contents with Grep, read what matters with Read, and use Bash only for read-only \
commands (ls, git log, git diff, cat). You cannot create, modify or delete files. Answer \
with what was asked for: the paths, the relevant lines, and a short explanation.";

const PLAN_PROMPT: &str = "You are a software architect for tine, a command-line coding \
agent. Explore the codebase read-only (Glob, Grep, Read, read-only Bash) and design an \
implementation plan for the task: the approach, the files to change and how, the order of \
the steps, the risks and how to test. You cannot create, modify or delete files. End with \
the list of the files most critical to the plan.";

/// The built-in typed agents.
pub fn builtin_agents() -> Vec<AgentDefinition> {
    let read_only_tools = || {
        Some(
            ["Bash", "Glob", "Grep", "Read", "WebFetch"]
                .map(str::to_owned)
                .to_vec(),
        )
    };
    vec![
        AgentDefinition {
            name: "general-purpose".to_owned(),
            description: "Researches complex questions, searches code, carries out multi-step \
                          tasks."
                .to_owned(),
            tools: None,
            model: None,
            system_prompt: GENERAL_PURPOSE_PROMPT.to_owned(),
            read_only: false,
            isolation: None,
            source: AgentSource::BuiltIn,
        },
        AgentDefinition {
            name: "Explore".to_owned(),
            description: "Fast, read-only: finds files, searches code, answers questions about \
                          the codebase."
                .to_owned(),
            tools: read_only_tools(),
            model: None,
            system_prompt: EXPLORE_PROMPT.to_owned(),
            read_only: true,
            isolation: None,
            source: AgentSource::BuiltIn,
        },
        AgentDefinition {
            name: "Plan".to_owned(),
            description: "Read-only software architect: designs an implementation plan.".to_owned(),
            tools: read_only_tools(),
            model: None,
            system_prompt: PLAN_PROMPT.to_owned(),
            read_only: true,
            isolation: None,
            source: AgentSource::BuiltIn,
        },
    ]
}

/// Why a custom agent file was skipped.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason} (agent skipped)", .path.display())]
pub struct AgentFileError {
    /// The agent file.
    pub path: PathBuf,
    /// Why it was skipped.
    pub reason: String,
}

/// The directories custom agents are read from, lowest precedence first.
pub fn agent_dirs(cwd: &Path, tine_home: &Path, user_home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::with_capacity(4);
    if let Some(home) = user_home {
        dirs.push(home.join(".claude").join("agents"));
    }
    dirs.push(tine_home.join("agents"));
    dirs.push(cwd.join(".claude").join("agents"));
    dirs.push(cwd.join(".tine").join("agents"));
    dirs
}

/// The built-ins and every custom agent of `dirs` (later ones win a name, case-insensitive),
/// with the files that could not be read.
pub fn load_agents(dirs: &[PathBuf]) -> (Vec<AgentDefinition>, Vec<AgentFileError>) {
    let mut agents = builtin_agents();
    let mut errors = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        files.sort();
        for path in files {
            let parsed = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|text| parse_agent_file(&text, &path));
            match parsed {
                Ok(agent) => {
                    agents.retain(|a| !a.name.eq_ignore_ascii_case(&agent.name));
                    agents.push(agent);
                }
                Err(reason) => errors.push(AgentFileError { path, reason }),
            }
        }
    }
    (agents, errors)
}

/// One agent file: `---` frontmatter of `key: value` lines, then the system prompt.
pub fn parse_agent_file(text: &str, path: &Path) -> Result<AgentDefinition, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---")
        .ok_or("it does not start with `---` frontmatter")?;
    let (front, body) = rest
        .split_once("\n---")
        .ok_or("its frontmatter has no closing `---`")?;
    let body = body.split_once('\n').map_or("", |(_, b)| b).trim();
    let mut agent = AgentDefinition {
        name: String::new(),
        description: String::new(),
        tools: None,
        model: None,
        system_prompt: body.to_owned(),
        read_only: false,
        isolation: None,
        source: AgentSource::File(path.to_path_buf()),
    };
    for line in front.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = unquote(value.trim());
        match key.trim() {
            "name" => agent.name = value.to_owned(),
            "description" => agent.description = value.to_owned(),
            "tools" => {
                let tools: Vec<String> = value
                    .split(',')
                    .map(|t| unquote(t.trim()).to_owned())
                    .filter(|t| !t.is_empty())
                    .collect();
                agent.tools = (!tools.is_empty() && tools != ["*"]).then_some(tools);
            }
            "model" => agent.model = (!value.is_empty()).then(|| value.to_owned()),
            "isolation" => agent.isolation = (!value.is_empty()).then(|| value.to_owned()),
            _ => {}
        }
    }
    if agent.name.is_empty() {
        return Err("its frontmatter has no `name`".to_owned());
    }
    if agent.system_prompt.is_empty() {
        return Err("it has no body (the agent's system prompt)".to_owned());
    }
    Ok(agent)
}

fn unquote(value: &str) -> &str {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value)
}

/// The model a typed agent runs on: the request's, else the definition's, else the parent's;
/// `inherit` is the parent's, and the short names are the current models of their family.
pub fn resolve_model(requested: Option<&str>, defined: Option<&str>, parent: &str) -> String {
    let chosen = requested
        .filter(|m| !m.trim().is_empty())
        .or(defined.filter(|m| !m.trim().is_empty()));
    match chosen {
        None | Some("inherit") => parent.to_owned(),
        Some(model) => tine_api_client::resolve_model_alias(model),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_gives_name_description_tools_model_and_prompt() {
        let text = "---\nname: reviewer\ndescription: \"Reviews diffs\"\ntools: Read, Grep\nmodel: haiku\n---\nYou review code.\n";
        let agent = parse_agent_file(text, Path::new("r.md")).unwrap();
        assert_eq!(agent.name, "reviewer");
        assert_eq!(agent.description, "Reviews diffs");
        assert_eq!(agent.tools, Some(vec!["Read".into(), "Grep".into()]));
        assert_eq!(agent.model.as_deref(), Some("haiku"));
        assert_eq!(agent.system_prompt, "You review code.");
        let all = parse_agent_file("---\nname: x\n---\nbody", Path::new("x.md")).unwrap();
        assert_eq!(all.tools, None);
        assert!(parse_agent_file("no frontmatter", Path::new("y.md")).is_err());
    }

    #[test]
    fn models_resolve_against_the_parent() {
        assert_eq!(resolve_model(None, None, "p"), "p");
        assert_eq!(resolve_model(Some("inherit"), Some("opus"), "p"), "p");
        assert_eq!(resolve_model(None, Some("haiku"), "p"), "claude-haiku-5-5");
        assert_eq!(resolve_model(Some("m-1"), Some("opus"), "p"), "m-1");
    }
}
