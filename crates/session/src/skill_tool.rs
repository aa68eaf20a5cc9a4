//! The `Skill` tool: `{skill, args?}` loads a skill's instructions into the turn (its body
//! with the arguments, and the paths of the folder's other files) and, while the submission
//! runs, allows the calls its `allowed-tools` name. Its description is fixed text: which
//! skills exist is said once in the first user message ([`crate::skills::listing`]), so the
//! tool array is the same bytes in every session that has skills.

use std::sync::{Arc, PoisonError};

use serde_json::{Value, json};
use tine_permissions::{PermissionRule, PermissionTarget, ToolVerdict};
use tine_tools::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};

use crate::permission::TurnAllow;
use crate::skills::{Skill, invocation_text};

/// The tool's name (Claude Code's).
pub(crate) const SKILL_TOOL: &str = "Skill";

/// The Skill tool of a session with skills.
pub(crate) struct SkillTool {
    skills: Arc<[Skill]>,
    turn_allow: TurnAllow,
}

impl SkillTool {
    pub(crate) fn new(skills: Arc<[Skill]>, turn_allow: TurnAllow) -> Self {
        Self { skills, turn_allow }
    }

    fn find(&self, name: &str) -> Option<&Skill> {
        let name = name.trim().trim_start_matches('/');
        self.skills.iter().find(|s| s.name == name)
    }
}

/// The Skill tool of a session with skills (none without: a session that has no skills
/// sends no Skill tool). `--bare` has neither the tool nor the listing; `/NAME` still works.
pub(crate) fn tool(
    skills: &crate::skills::SessionSkills,
    bare: bool,
    turn_allow: &TurnAllow,
) -> Option<Arc<dyn Tool>> {
    (!bare && !skills.skills.is_empty()).then(|| {
        Arc::new(SkillTool::new(
            Arc::clone(&skills.skills),
            Arc::clone(turn_allow),
        )) as Arc<dyn Tool>
    })
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

    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
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
                self.turn_allow
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend(rules);
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

    fn tool(dir: &std::path::Path) -> (SkillTool, TurnAllow) {
        let folder = dir.join("git-log");
        std::fs::create_dir_all(folder.join("ref")).unwrap();
        std::fs::write(folder.join("ref/format.md"), "x").unwrap();
        let skill = parse_skill(
            "---\ndescription: Summarize history\nallowed-tools: Bash(git log:*), not a rule(\n---\nSummarize $ARGUMENTS",
            &folder,
            SkillScope::Project,
        )
        .unwrap();
        let allow = TurnAllow::default();
        (SkillTool::new(vec![skill].into(), allow.clone()), allow)
    }

    #[tokio::test]
    async fn invoking_loads_the_body_and_files_and_grants_allowed_tools() {
        let dir = tempfile::tempdir().unwrap();
        let (tool, allow) = tool(dir.path());
        let ctx = ToolContext::new(dir.path());
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
        let rules = allow.lock().unwrap().clone();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].to_string(), "Bash(git log:*)");
        // A grant is not read-only: the rules decide.
        assert!(!tool.is_read_only(&json!({"skill": "git-log"})));
    }

    #[tokio::test]
    async fn an_unknown_skill_is_an_error_naming_the_skills() {
        let dir = tempfile::tempdir().unwrap();
        let (tool, allow) = tool(dir.path());
        let ctx = ToolContext::new(dir.path());
        let output = tine_tools::run_tool(&tool, json!({"skill": "nope"}), &ctx).await;
        assert!(output.is_error);
        assert!(output.content.contains("git-log"), "{}", output.content);
        assert!(allow.lock().unwrap().is_empty());
    }
}
