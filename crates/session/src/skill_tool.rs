//! The `Skill` tool: `{skill, args?}` loads a skill's instructions into the turn (its body
//! with the arguments, and the paths of the folder's other files) and, while the submission
//! runs, allows the calls its `allowed-tools` name — in the context of the agent that loaded
//! it only ([`SkillGrants`]: a sub-agent's grants end with it and never reach the main
//! thread, nor the main thread's a sub-agent). Its description is fixed text: which
//! skills exist is said once in the first user message ([`crate::skills::listing`]), so the
//! tool array is the same bytes in every session that has skills.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tine_permissions::{PermissionRule, PermissionTarget, ToolVerdict};
use tine_tools::{ContextExtension, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};

use crate::skills::{Skill, invocation_text};

/// The tool's name (Claude Code's).
pub(crate) const SKILL_TOOL: &str = "Skill";

/// The allow rules the skills loaded in one agent's tool context granted (their
/// `allowed-tools`): the main thread's until its submission ends (the actor clears them), a
/// sub-agent's for its run. A fork starts with none, so a grant stays with the agent that
/// loaded the skill; the permission check reads the calling context's.
#[derive(Debug, Default)]
pub(crate) struct SkillGrants(Mutex<Vec<PermissionRule>>);

impl ContextExtension for SkillGrants {
    fn fork(&self) -> Option<Self> {
        None
    }
}

impl SkillGrants {
    /// The rules granted so far.
    pub(crate) fn rules(&self) -> Vec<PermissionRule> {
        self.lock().clone()
    }

    /// Adds `rules` (a skill was loaded).
    pub(crate) fn extend(&self, rules: Vec<PermissionRule>) {
        self.lock().extend(rules);
    }

    /// Ends every grant (the submission that made them ended).
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<PermissionRule>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `ctx`'s grants (the agent whose context it is), made empty the first time.
pub(crate) fn grants(ctx: &ToolContext) -> Arc<SkillGrants> {
    ctx.ext_or_default::<SkillGrants>()
}

/// The Skill tool of a session with skills.
pub(crate) struct SkillTool {
    skills: Arc<[Skill]>,
}

impl SkillTool {
    pub(crate) fn new(skills: Arc<[Skill]>) -> Self {
        Self { skills }
    }

    fn find(&self, name: &str) -> Option<&Skill> {
        let name = name.trim().trim_start_matches('/');
        self.skills.iter().find(|s| s.name == name)
    }
}

/// The Skill tool of a session with skills (none without: a session that has no skills
/// sends no Skill tool). `--bare` has neither the tool nor the listing; `/NAME` still works.
pub(crate) fn tool(skills: &crate::skills::SessionSkills, bare: bool) -> Option<Arc<dyn Tool>> {
    (!bare && !skills.skills.is_empty())
        .then(|| Arc::new(SkillTool::new(Arc::clone(&skills.skills))) as Arc<dyn Tool>)
}

/// A skill's `allowed-tools` as rules, and what could not be read as one.
pub(crate) fn parse_allowed(skill: &Skill) -> (Vec<PermissionRule>, Vec<String>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for text in &skill.allowed_tools {
        match text.parse::<PermissionRule>() {
            Ok(rule) => rules.push(rule),
            Err(error) => errors.push(format!(
                "{}: allowed-tools `{text}` is not a rule ({error}); ignored",
                skill.path.display()
            )),
        }
    }
    (rules, errors)
}

impl Tool for SkillTool {
    fn name(&self) -> &str {
        SKILL_TOOL
    }

    fn description(&self) -> String {
        "Execute a skill within the main conversation.\n\nSkills are packaged instructions \
         (with scripts and reference files beside them) for particular tasks. The skills \
         available are listed in a system-reminder at the start of the conversation, each \
         with a description of when to use it. When a task matches a skill's description, \
         call this tool with the skill's name before doing the task: its instructions are \
         loaded into the conversation, with the paths of its other files, and you then follow \
         them.\n\n- `skill`: the skill's name exactly as listed (e.g. \"pdf\").\n- `args`: \
         optional arguments for the skill (e.g. a file name).\n\nDo not invoke a skill that is \
         not listed, and do not invoke one that is already loaded in this turn."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The skill's name, as listed"},
                "args": {"type": "string", "description": "Optional arguments for the skill"}
            },
            "required": ["skill"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            // `run_tool` checked the schema: `skill` is a string, `args` one if given.
            let requested = input
                .get("skill")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let args = input
                .get("args")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let Some(skill) = self.find(requested) else {
                let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
                return Err(ToolError::Failed(format!(
                    "Unknown skill `{}`; the skills are: {}",
                    requested,
                    names.join(", ")
                )));
            };
            let skill = skill.clone();
            // The folder listing reads the disk: off the runtime's threads.
            let text = tokio::task::spawn_blocking(move || {
                let text = invocation_text(&skill, &args);
                (skill, text)
            })
            .await
            .map_err(|e| ToolError::Failed(format!("the skill could not be loaded: {e}")))?;
            let (skill, mut text) = text;
            let (rules, errors) = parse_allowed(&skill);
            if !rules.is_empty() {
                grants(ctx).extend(rules);
            }
            for error in errors {
                text.push_str(&format!("\n\n(note: {error})"));
            }
            Ok(
                ToolOutput::text(format!("Launching skill: {}\n\n{text}", skill.name))
                    .with_summary(format!("Loaded skill {}", skill.name)),
            )
        })
    }

    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        // `Skill(NAME)` rules match the skill's name.
        let name = input
            .get("skill")
            .and_then(Value::as_str)
            .map(|s| s.trim().trim_start_matches('/').to_owned());
        PermissionTarget::Other { content: name }
    }

    fn check_permissions(&self, input: &Value, _ctx: &ToolContext) -> ToolVerdict {
        let name = input
            .get("skill")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match self.find(name) {
            // Loading instructions touches nothing; one that pre-approves tools is a grant
            // the rules (or a person) decide, as Claude Code asks for it.
            Some(skill) if skill.allowed_tools.is_empty() => ToolVerdict::Allow {
                reason: "loading a skill's instructions touches nothing".to_owned(),
            },
            _ => ToolVerdict::Passthrough,
        }
    }

    fn is_read_only(&self, input: &Value) -> bool {
        let name = input
            .get("skill")
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.find(name).is_some_and(|s| s.allowed_tools.is_empty())
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        false
    }

    fn render_call(&self, input: &Value) -> String {
        let name = input
            .get("skill")
            .and_then(Value::as_str)
            .unwrap_or_default();
        format!("Skill({name})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::{SkillScope, parse_skill};

    fn tool(dir: &std::path::Path) -> SkillTool {
        let folder = dir.join("git-log");
        std::fs::create_dir_all(folder.join("ref")).unwrap();
        std::fs::write(folder.join("ref/format.md"), "x").unwrap();
        let skill = parse_skill(
            "---\ndescription: Summarize history\nallowed-tools: Bash(git log:*), not a rule(\n---\nSummarize $ARGUMENTS",
            &folder,
            SkillScope::Project,
        )
        .unwrap();
        SkillTool::new(vec![skill].into())
    }

    #[tokio::test]
    async fn invoking_loads_the_body_and_files_and_grants_allowed_tools() {
        let dir = tempfile::tempdir().unwrap();
        let tool = tool(dir.path());
        let ctx = ToolContext::new(dir.path());
        let sub_agent = ctx.fork();
        let output =
            tine_tools::run_tool(&tool, json!({"skill": "git-log", "args": "main"}), &ctx).await;
        assert!(!output.is_error, "{output:?}");
        assert!(
            output.content.starts_with("Launching skill: git-log\n"),
            "{}",
            output.content
        );
        assert!(
            output.content.contains("Summarize main"),
            "{}",
            output.content
        );
        let file = dir.path().join("git-log/ref/format.md");
        assert!(output.content.contains(&format!("- {}", file.display())));
        assert!(
            output.content.contains("is not a rule"),
            "{}",
            output.content
        );
        let rules = grants(&ctx).rules();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].to_string(), "Bash(git log:*)");
        // The grant is the calling context's: a fork (made before or after) has none.
        assert!(grants(&sub_agent).rules().is_empty());
        assert!(grants(&ctx.fork()).rules().is_empty());
        // A grant is not read-only: the rules decide.
        assert!(!tool.is_read_only(&json!({"skill": "git-log"})));
    }

    #[tokio::test]
    async fn an_unknown_skill_is_an_error_naming_the_skills() {
        let dir = tempfile::tempdir().unwrap();
        let tool = tool(dir.path());
        let ctx = ToolContext::new(dir.path());
        let output = tine_tools::run_tool(&tool, json!({"skill": "nope"}), &ctx).await;
        assert!(output.is_error);
        assert!(output.content.contains("git-log"), "{}", output.content);
        assert!(grants(&ctx).rules().is_empty());
    }
}
