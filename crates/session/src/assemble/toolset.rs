//! The third stage: the tools. The MCP servers start (in parallel, bounded), the typed
//! agents and skills are read, and the pool is made once: built-ins, the Agent and task
//! tools, StructuredOutput for `--json-schema`, Skill when there are skills, then the servers'
//! tools, sorted and deduplicated, serialized once (the Bash sandbox's note appended to Bash's
//! description, the web search server tool when the rules allow it), so every request of the
//! session sends the same bytes.

use std::sync::Arc;

use tine_api_client::ToolArray;
use tine_fork_runtime::{AgentDefinition, AgentSource};
use tine_tools::{Tool, ToolPool};
use tokio_util::sync::CancellationToken;

use super::ground::Ground;
use super::policy::Policy;
use crate::emit::Emitter;
use crate::error::StartError;
use crate::mcp::SessionMcp;
use crate::options::{Approvals, SessionOptions};
use crate::protocol::Notice;
use crate::skills::SessionSkills;
use crate::structured::StructuredSlot;

/// The session's tools, fixed at start.
pub(crate) struct ToolSet {
    /// The MCP servers, when any is configured.
    pub mcp: Option<SessionMcp>,
    pub tools: Arc<[Arc<dyn Tool>]>,
    /// The array every request sends.
    pub definitions: ToolArray,
    /// Their names, in order (the `init` line's).
    pub names: Vec<String>,
    pub agents: Arc<[AgentDefinition]>,
    pub skills: SessionSkills,
    /// `--json-schema`: where the StructuredOutput tool leaves the answer.
    pub structured: Option<StructuredSlot>,
    /// `--permission-prompt-tool`: the MCP tool that answers headless asks.
    pub prompt_tool: Option<Arc<dyn Tool>>,
}

impl ToolSet {
    pub(crate) async fn assemble(
        options: &SessionOptions,
        ground: &Ground,
        policy: &mut Policy,
        session_token: &CancellationToken,
        events: &Emitter,
        notices: &mut Vec<Notice>,
    ) -> Result<Self, StartError> {
        let Ground {
            cwd,
            home,
            user_home,
            loaded,
            ..
        } = ground;
        let (mcp, mcp_tools) = crate::mcp::start(
            options.approvals == Approvals::Interactive,
            session_token,
            &options.mcp_configs,
            options.strict_mcp_config || options.bare,
            options.sdk_mcp_relay.clone(),
            ground
                .plugins
                .plugins
                .iter()
                .flat_map(|p| p.parts.mcp_servers.iter().cloned())
                .collect(),
            cwd,
            home,
            user_home.as_deref(),
            loaded,
            events,
            &mut policy.context,
            notices,
        )
        .await;
        let mut agents =
            crate::agents::definitions(cwd, home, user_home.as_deref(), &options.agents, notices);
        let mut skills = SessionSkills::load(cwd, home, user_home.as_deref(), notices);
        // `--setting-sources`: Claude Code finds agents and skills through its sources too.
        if options.setting_sources.is_some() {
            let reads = |path: &std::path::Path| {
                ground
                    .paths
                    .reads(crate::flags::file_scope(path, home, user_home.as_deref()))
            };
            agents = agents
                .iter()
                .filter(|agent| match &agent.source {
                    AgentSource::File(path) => reads(path),
                    AgentSource::BuiltIn | AgentSource::App => true,
                })
                .cloned()
                .collect();
            skills.skills = skills
                .skills
                .iter()
                .filter(|skill| reads(&skill.path))
                .cloned()
                .collect();
        }
        // The plugins' agents and skills (`PLUGIN:NAME`), after that filter: a plugin is in
        // or out as a whole (`plugins`).
        crate::plugins::join_agents_and_skills(&ground.plugins, &mut agents, &mut skills, notices);
        // `--json-schema`: the StructuredOutput tool is in the array from the first request.
        let structured = match &options.json_schema {
            Some(schema) => {
                crate::structured::check_schema(schema).map_err(StartError::Flag)?;
                Some(StructuredSlot::default())
            }
            None => None,
        };
        let structured_tool =
            options
                .json_schema
                .clone()
                .zip(structured.clone())
                .map(|(schema, slot)| {
                    Arc::new(crate::structured::StructuredOutputTool::new(schema, slot))
                        as Arc<dyn Tool>
                });
        // `--tools`: only the built-ins it names (StructuredOutput is the flag's, not one).
        // A small window's lean profile offers the core tools only (`crate::lean`).
        let names =
            crate::lean::tool_names(ground.lean.is_some(), options.builtin_tools.as_deref());
        let selection = BuiltinSelection::new(names.as_deref());
        let builtins: Vec<Arc<dyn Tool>> = tine_tools::builtin_tools()
            .into_iter()
            .chain(crate::agents::tools(&agents))
            .collect();
        selection.warn_unknown(&builtins, notices);
        let builtins: Vec<Arc<dyn Tool>> = builtins
            .into_iter()
            .chain(crate::skill_tool::tool(&skills, options.bare))
            .filter(|tool| selection.offers(tool.as_ref()))
            .collect();
        let pool = ToolPool::assemble(
            builtins.into_iter().chain(structured_tool),
            mcp_tools,
            |name| policy.context.is_tool_denied(name),
        );
        let tools: Arc<[Arc<dyn Tool>]> = pool.tools().iter().cloned().collect();
        let prompt_tool = options
            .permission_prompt_tool
            .as_deref()
            .map(|name| crate::prompt_tool::find(&tools, name))
            .transpose()
            .map_err(StartError::Flag)?;
        let mut definitions: ToolArray = pool.definitions().clone();
        if let Some(sandbox) = &policy.sandbox {
            // Decided once at start: every request of the session sends the same tool array.
            let note = sandbox.model_note();
            // The one re-serialization of the array, before any request.
            definitions = definitions
                .iter()
                .cloned()
                .map(|mut definition| {
                    if definition.name == "Bash" {
                        definition.description.push_str(&note);
                    }
                    definition
                })
                .collect();
        }
        // The server's web search is a built-in too: `--tools` without it offers none.
        let definitions = match selection.names_web_search() {
            true => crate::web_search::offer(definitions, &policy.context),
            false => definitions,
        };
        let mut names: Vec<String> = pool.names().into_iter().map(str::to_owned).collect();
        if definitions.has_server_tool("web_search") {
            names.push(crate::web_search::WEB_SEARCH_RULE.to_owned());
        }
        Ok(Self {
            mcp,
            tools,
            definitions,
            names,
            agents,
            skills,
            structured,
            prompt_tool,
        })
    }
}

impl ToolSet {
    /// The tools behind ToolSearch (`toolSearch`, see `crate::tool_search`): ToolSearch joins
    /// the tools and the array, the deferred ones move to the array's catalog. Once, before
    /// any request.
    pub(crate) fn defer_rarely_used(
        &mut self,
        ground: &Ground,
        window: u64,
        starts_in_plan_mode: bool,
        notices: &mut Vec<Notice>,
    ) {
        let env = std::env::var(crate::tool_search::TOOL_SEARCH_ENV).ok();
        let mode = crate::tool_search::ToolSearchMode::from_settings(
            &ground.loaded,
            env.as_deref(),
            notices,
        );
        let deferred =
            crate::tool_search::decide(mode, &self.definitions, window, starts_in_plan_mode);
        if deferred.is_empty() {
            return;
        }
        tracing::info!(
            deferred = deferred.len(),
            ?mode,
            "tools deferred behind ToolSearch"
        );
        let (tools, definitions) =
            crate::tool_search::apply(&self.tools, &self.definitions, &deferred);
        self.tools = tools;
        self.definitions = definitions;
        let web_search = self
            .names
            .iter()
            .any(|n| n == crate::web_search::WEB_SEARCH_RULE);
        self.names = self.tools.iter().map(|t| t.name().to_owned()).collect();
        if web_search {
            self.names
                .push(crate::web_search::WEB_SEARCH_RULE.to_owned());
        }
    }
}

/// `--tools`: which built-in tools the session offers (all, without the flag).
struct BuiltinSelection<'a> {
    names: Option<&'a [String]>,
}

impl<'a> BuiltinSelection<'a> {
    fn new(names: Option<&'a [String]>) -> Self {
        Self { names }
    }

    fn named(&self, name: &str) -> bool {
        self.names
            .is_none_or(|names| names.iter().any(|n| n == name))
    }

    /// Whether `tool` is offered: named by its name or an alias (`Task` for Agent).
    fn offers(&self, tool: &dyn Tool) -> bool {
        self.named(tool.name()) || tool.aliases().iter().any(|alias| self.named(alias))
    }

    fn names_web_search(&self) -> bool {
        self.named(crate::web_search::WEB_SEARCH_RULE)
    }

    /// A name no built-in has is said once at start: the model does not get it. (Skill is
    /// one, offered when the session has skills.)
    fn warn_unknown(&self, builtins: &[Arc<dyn Tool>], notices: &mut Vec<Notice>) {
        let Some(names) = self.names else {
            return;
        };
        for name in names {
            let known = [
                crate::web_search::WEB_SEARCH_RULE,
                crate::skill_tool::SKILL_TOOL,
            ]
            .contains(&name.as_str())
                || builtins
                    .iter()
                    .any(|tool| tool.name() == name || tool.aliases().contains(&name.as_str()));
            if !known {
                notices.push(Notice::warning(format!(
                    "--tools {name}: tine has no built-in tool of that name; it is not offered"
                )));
            }
        }
    }
}
