//! [`AgentRuntime`], the session's [`SubagentSpawner`]: what the Agent tool's call becomes.
//!
//! - No `subagent_type` (or `"fork"`): a fork child of the turn in progress (seed 002). Its
//!   `CacheSafeParams` are the turn's template (system bytes, the exact tool array, model,
//!   thinking) and the conversation before the calling reply; its prompt is
//!   [`build_forked_messages`]. It always runs in the background.
//! - A typed agent: its own system prompt, only its tools, its model, a conversation of one
//!   message (the session's user context, then the prompt), in the foreground unless
//!   `run_in_background`; with `isolation: worktree`, in a git worktree of its own
//!   ([`crate::worktree`]), whose fate its report ends with.
//!
//! Every agent is a task of the [`TaskRegistry`] (its id names its sidechain transcript and
//! its output file), runs in a context from `create_subagent_context` under a child of the
//! calling turn's token (interrupting the turn cancels it; TaskStop cancels it alone), and is
//! billed to the ledger as `agent:<type>:<id>`. A fork child calling Agent again gets an error
//! result, never a grandchild ([`is_fork_child`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use futures::future::BoxFuture;
use tine_api_client::{ContentBlock, Message, Role, Usage};
use tine_config::subagent_transcript_path;
use tine_query_loop::{
    AgentRequest, CanUseTool, StopHooks, SubagentSpawner, TurnInProgress, system_prompt_blocks,
    tool_definitions,
};
use tine_tools::{Tool, ToolContext, ToolDisplay, ToolError, ToolOutput};
use tokio_util::sync::CancellationToken;

use crate::agent_activity::AgentActivity;
use crate::agent_report::{launched, outcome, render_for_output, sent_to_background};
use crate::agent_stop::{AgentStopHooks, SubagentIdentity, SubagentStopHook};
use crate::agents::{AgentDefinition, AgentSource, resolve_model};
use crate::cache_safe::CacheSafeParams;
use crate::fork::{ForkParams, OnEvent, OnMessage, run_forked_agent};
use crate::fork_child::{FORK_QUERY_SOURCE, build_forked_messages, is_fork_child};
use crate::fork_policy::{ForkPolicy, Refusals};
use crate::subagent::ParentContext;
use crate::tasks::{TaskKind, TaskOutput, TaskRegistry, TaskState};
use crate::worktree::{
    AgentWorktree, WORKTREE_ISOLATION, WorktreeError, WorktreeGuard, create_worktree, repository_of,
};

/// Tools a sub-agent never gets (it does not start sub-agents or manage the session's tasks).
pub const AGENT_ONLY_TOOLS: [&str; 3] = ["Agent", "TaskOutput", "TaskStop"];

/// What a typed agent is told about where it runs, before its task, as the main thread is
/// (Claude Code's user context for a sub-agent): the session's block (environment, git status,
/// CLAUDE.md / AGENTS.md, memory), or for the read-only built-ins (Explore, Plan), which
/// Claude Code gives no CLAUDE.md or git status, the environment alone.
#[derive(Debug, Clone)]
pub struct AgentUserContext {
    /// The main thread's whole `<system-reminder>` block.
    pub full: Arc<str>,
    /// The environment facts alone (for Explore and Plan).
    pub lean: Arc<str>,
}

/// The session's spawner.
#[derive(Clone)]
pub struct AgentRuntime {
    /// Weak: the runtime lives on the parent's own tool context (the Agent tool finds it
    /// there), so a strong reference would keep the session alive forever.
    parent: Weak<ParentContext>,
    /// The session's permission checker; asks become denials (a sub-agent cannot ask).
    can_use_tool: Arc<dyn CanUseTool>,
    agents: Arc<[AgentDefinition]>,
    tasks: TaskRegistry,
    /// The SubagentStop hooks every sub-agent's loop runs when its model stops.
    stop_hook: Option<Arc<dyn SubagentStopHook>>,
    /// Put before a typed agent's task; `None`: the task alone.
    user_context: Option<AgentUserContext>,
    /// One worktree made at a time (`git worktree add` of two agents at once would race on
    /// the repository's files).
    worktree_lock: Arc<tokio::sync::Mutex<()>>,
}

impl AgentRuntime {
    /// The spawner for `parent`'s sub-agents: `can_use_tool` judges their calls, `agents` are
    /// the types they can be started as, `tasks` tracks the background ones.
    pub fn new(
        parent: Arc<ParentContext>,
        can_use_tool: Arc<dyn CanUseTool>,
        agents: Arc<[AgentDefinition]>,
        tasks: TaskRegistry,
    ) -> Self {
        Self {
            parent: Arc::downgrade(&parent),
            can_use_tool,
            agents,
            tasks,
            stop_hook: None,
            user_context: None,
            worktree_lock: Arc::default(),
        }
    }

    /// Gives typed agents `context` before their task (fork children have the parent's).
    pub fn with_user_context(mut self, context: AgentUserContext) -> Self {
        self.user_context = Some(context);
        self
    }

    /// Runs `hook` (the SubagentStop hooks) in every sub-agent's loop when its model ends a
    /// turn: a block makes the agent go on with the reason, as Claude Code does.
    pub fn with_stop_hook(mut self, hook: Arc<dyn SubagentStopHook>) -> Self {
        self.stop_hook = Some(hook);
        self
    }

    /// The session's task registry.
    pub fn tasks(&self) -> &TaskRegistry {
        &self.tasks
    }

    /// The agent types sub-agents can be started as.
    pub fn agents(&self) -> &[AgentDefinition] {
        &self.agents
    }

    fn parent(&self) -> Result<Arc<ParentContext>, ToolError> {
        self.parent
            .upgrade()
            .ok_or_else(|| ToolError::Failed("the session is ending; no agent started".to_owned()))
    }

    fn find(&self, name: &str) -> Result<&AgentDefinition, ToolError> {
        self.agents
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                let known: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
                ToolError::Failed(format!(
                    "no agent type `{name}`; available: {} (or leave subagent_type out to fork \
                     this conversation)",
                    known.join(", ")
                ))
            })
    }

    /// A fork child of `turn`: always in the background.
    fn fork(
        &self,
        turn: &TurnInProgress,
        request: &AgentRequest,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let Some((reply, history)) = turn.messages.split_last() else {
            return Err(ToolError::Failed(
                "there is no conversation to fork yet".to_owned(),
            ));
        };
        if reply.role != Role::Assistant {
            return Err(ToolError::Failed(
                "the Agent call is not part of a reply; nothing to fork".to_owned(),
            ));
        }
        let cache_safe = Arc::new(CacheSafeParams {
            template: turn.template.clone(),
            messages: Arc::from(history),
        });
        let prompt = build_forked_messages(&request.prompt, reply).to_vec();
        let cancel = ctx.cancellation().child_token();
        let (id, output) = self
            .tasks
            .register(TaskKind::Agent, &request.description, true, cancel.clone())
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        let mut params = ForkParams::new(
            cache_safe,
            prompt,
            Arc::clone(&self.can_use_tool),
            FORK_QUERY_SOURCE,
        );
        // The turn's tools, not the session's first set: the child sends the turn's tool array
        // (the cache key), which `/mcp restart` may have grown since.
        params.overrides.tools = Some(Arc::clone(&turn.tools));
        self.prepare(&mut params, &id, "fork", &output, cancel, None);
        self.start_background(id.clone(), "fork".to_owned(), params, output.clone());
        Ok(launched(&id, &request.description, &output))
    }

    /// A typed agent: its prompt, its tools, its model.
    async fn typed(
        &self,
        turn: &TurnInProgress,
        request: &AgentRequest,
        ctx: &ToolContext,
        name: &str,
    ) -> Result<ToolOutput, ToolError> {
        let agent = self.find(name)?.clone();
        let main_checkout = self.parent()?.session.cwd.clone();
        let isolated = match agent.isolation.as_deref().map(str::trim) {
            None | Some("") => false,
            Some(WORKTREE_ISOLATION) => {
                // Refused before a task exists: the model reads why.
                repository_of(&main_checkout)
                    .await
                    .map_err(|e| ToolError::Failed(e.to_string()))?;
                true
            }
            Some(other) => {
                return Err(ToolError::Failed(
                    WorktreeError::Unsupported(other.to_owned()).to_string(),
                ));
            }
        };
        let tools: Arc<[Arc<dyn Tool>]> = turn
            .tools
            .iter()
            .filter(|t| !AGENT_ONLY_TOOLS.contains(&t.name()))
            .filter(|t| {
                agent
                    .tools
                    .as_ref()
                    .is_none_or(|listed| listed.iter().any(|n| n == t.name()))
            })
            .cloned()
            .collect();
        let model = resolve_model(
            request.model.as_deref(),
            agent.model.as_deref(),
            &turn.template.model,
        );
        let background = request.run_in_background.unwrap_or(false);
        let cancel = ctx.cancellation().child_token();
        let (id, output) = self
            .tasks
            .register(
                TaskKind::Agent,
                &request.description,
                background,
                cancel.clone(),
            )
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        let worktree = if isolated {
            match self.make_worktree(&main_checkout, &id).await {
                Ok(worktree) => Some(worktree),
                Err(error) => {
                    let why = error.to_string();
                    self.tasks.finish(
                        &id,
                        TaskState::Failed(why.clone()),
                        why.clone(),
                        Usage::default(),
                        0.0,
                    );
                    return Err(ToolError::Failed(why));
                }
            }
        } else {
            None
        };
        let working_dir = worktree
            .as_ref()
            .map_or_else(|| ctx.cwd(), |w| w.cwd.clone());
        let system = format!(
            "{}\n\nWorking directory: {}",
            agent.system_prompt,
            working_dir.display()
        );
        let template = tine_query_loop::RequestTemplate {
            model,
            system: Arc::new(system_prompt_blocks(&system)),
            tools: agent_tool_array(&tools, &turn.template.tools),
            // As Claude Code: a typed agent runs with thinking disabled (its output tokens are
            // the cost); only a fork child keeps the parent's config, which is in the cache key.
            thinking: None,
            skip_cache_write: false,
            replacements: None,
            effort: None,
        };
        let cache_safe = Arc::new(CacheSafeParams {
            template,
            messages: Arc::from(Vec::<Message>::new()),
        });
        let can_use_tool: Arc<dyn CanUseTool> = if agent.read_only {
            Arc::new(read_only_agent(Arc::clone(&self.can_use_tool)))
        } else {
            Arc::clone(&self.can_use_tool)
        };
        let source = format!("agent:{}", agent.name);
        let mut blocks = Vec::with_capacity(3);
        if let Some(context) = &self.user_context {
            let lean = agent.read_only && agent.source == AgentSource::BuiltIn;
            let text = if lean { &context.lean } else { &context.full };
            blocks.push(ContentBlock::text(text.as_ref()));
        }
        if let Some(worktree) = &worktree {
            blocks.push(ContentBlock::text(worktree.notice(&main_checkout)));
        }
        let first = if blocks.is_empty() {
            Message::user(request.prompt.clone())
        } else {
            blocks.push(ContentBlock::text(request.prompt.clone()));
            Message::user(blocks)
        };
        let mut params = ForkParams::new(cache_safe, vec![first], can_use_tool, &source);
        params.overrides.tools = Some(tools);
        params.overrides.worktree = worktree;
        // A foreground agent's activity goes to its call too: progress lines under it.
        let call = (!background).then(|| ctx.clone());
        let activity = self.prepare(&mut params, &id, &agent.name, &output, cancel, call);
        if background {
            self.start_background(id.clone(), agent.name.clone(), params, output.clone());
            return Ok(launched(&id, &request.description, &output));
        }
        // On its own task, so Ctrl+B can send it to the background without losing its work;
        // until then it is the call's (aborted if the call is dropped).
        let mut run = AbortOnDrop(Some({
            let runtime = self.clone();
            let (task, agent_type, output) = (id.clone(), agent.name.clone(), output.clone());
            tokio::spawn(async move { runtime.run(&task, &agent_type, params, &output).await })
        }));
        let (state, report) = tokio::select! {
            ran = run.wait() => ran,
            () = self.tasks.until_backgrounded(&id) => {
                run.detach();
                activity.detach();
                return Ok(sent_to_background(&id, &request.description, &output));
            }
        };
        match state {
            TaskState::Completed => Ok(ToolOutput::text(format!(
                "{report}\n\nagentId: {id} (output: {})",
                output.path().display()
            ))
            .with_summary(format!("{} finished", agent.name))
            .with_display(ToolDisplay::Agent(activity.totals()))),
            TaskState::Cancelled => Err(ToolError::Cancelled),
            TaskState::Failed(why) => {
                // What it said before it stopped, and where its worktree is, if kept.
                let said = if report.trim() == why.trim() {
                    String::new()
                } else {
                    format!("\n\n{report}")
                };
                Err(ToolError::Failed(format!(
                    "agent {id} ({}) stopped: {why}{said}",
                    agent.name
                )))
            }
            TaskState::Running => Err(ToolError::Failed(format!(
                "agent {id} ({}) did not finish",
                agent.name
            ))),
        }
    }

    /// What every sub-agent shares: its id, ledger source, transcript, token, output file
    /// and activity (told to the registry, and to `call`, the Agent call waiting for it).
    fn prepare(
        &self,
        params: &mut ForkParams,
        id: &str,
        agent_type: &str,
        output: &TaskOutput,
        cancel: CancellationToken,
        call: Option<ToolContext>,
    ) -> Arc<AgentActivity> {
        params.agent_id = Some(id.to_owned());
        params.ledger_source = Some(Arc::from(format!("agent:{agent_type}:{id}")));
        params.skip_transcript = false;
        params.overrides.cancellation = Some(cancel);
        params.stop_hooks = self.stop_hook.as_ref().map(|hook| {
            let worktree = params.overrides.worktree.as_ref();
            let agent = self.identity(id, agent_type, worktree.map(|w| w.cwd.clone()));
            Arc::new(AgentStopHooks {
                hook: Arc::clone(hook),
                agent,
            }) as Arc<dyn StopHooks>
        });
        let output = output.clone();
        let on_message: OnMessage = Arc::new(move |message: &Message| {
            output.append(&render_for_output(message));
        });
        params.on_message = Some(on_message);
        let activity = AgentActivity::new(id, self.tasks.clone(), call);
        let observer = Arc::clone(&activity);
        let on_event: OnEvent = Arc::new(move |event| observer.observe(event));
        params.on_event = Some(on_event);
        activity
    }

    /// Who the agent `id` is, for its hooks: its sidechain transcript (the session's), its
    /// working directory (`cwd`, else the session's).
    fn identity(&self, id: &str, agent_type: &str, cwd: Option<PathBuf>) -> SubagentIdentity {
        let parent = self.parent.upgrade();
        let transcript_path = parent.as_ref().and_then(|p| {
            let session = &p.session;
            subagent_transcript_path(&session.home, &session.cwd, &session.session_id, id).ok()
        });
        SubagentIdentity {
            agent_id: id.to_owned(),
            agent_type: agent_type.to_owned(),
            transcript_path,
            cwd: cwd
                .or_else(|| parent.map(|p| p.tool_context.cwd()))
                .unwrap_or_default(),
        }
    }

    /// Agent `id`'s worktree of the repository `main_checkout` is in, under
    /// `TINE_HOME/worktrees/`, one at a time.
    async fn make_worktree(
        &self,
        main_checkout: &Path,
        id: &str,
    ) -> Result<AgentWorktree, WorktreeError> {
        let dir = self
            .parent
            .upgrade()
            .map(|p| p.session.home.join("worktrees"))
            .ok_or_else(|| WorktreeError::Create("the session is ending".to_owned()))?;
        let _one_at_a_time = self.worktree_lock.lock().await;
        create_worktree(main_checkout, &dir, id).await
    }

    fn start_background(
        &self,
        id: String,
        agent_type: String,
        params: ForkParams,
        output: TaskOutput,
    ) {
        let runtime = self.clone();
        tokio::spawn(async move {
            runtime.run(&id, &agent_type, params, &output).await;
        });
    }

    /// Runs the agent to its end and records it: the task's state and report (a background
    /// task's notification), the output file's last line.
    async fn run(
        &self,
        id: &str,
        agent_type: &str,
        params: ForkParams,
        output: &TaskOutput,
    ) -> (TaskState, String) {
        // Dropped midway (the call interrupted), the guard still finishes the worktree.
        let worktree = params.overrides.worktree.clone().map(WorktreeGuard::new);
        let ran = match self.parent() {
            Ok(parent) => run_forked_agent(&parent, params)
                .await
                .map_err(|e| e.to_string()),
            Err(error) => Err(error.to_string()),
        };
        let (state, report, usage, cost) = match ran {
            Ok(result) => {
                let (state, report) = outcome(&result);
                (state, report, result.usage, result.cost_usd)
            }
            Err(error) => (
                TaskState::Failed(error.clone()),
                error,
                Usage::default(),
                0.0,
            ),
        };
        let report = match worktree {
            Some(guard) => match guard.finish().await {
                Some(outcome) => format!("{report}\n\n{}", outcome.report_line()),
                None => report,
            },
            None => report,
        };
        output.append(&format!("\n[{state}]\n"));
        tracing::debug!(task = %id, agent = %agent_type, %state, "sub-agent ended");
        self.tasks
            .finish(id, state.clone(), report.clone(), usage, cost);
        (state, report)
    }
}

impl SubagentSpawner for AgentRuntime {
    fn spawn<'a>(
        &'a self,
        turn: &'a TurnInProgress,
        request: AgentRequest,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            // The recursion guard: a fork child keeps the Agent tool (the cache key), so its
            // call is refused here; typed agents do not have it at all.
            if is_fork_child(&turn.query_source, &turn.messages) {
                return Err(ToolError::Failed(
                    "Agent is not available inside a forked worker: you are the fork. Do the \
                     work of your directive yourself with your other tools, then report."
                        .to_owned(),
                ));
            }
            if turn.query_source.starts_with("agent:") {
                return Err(ToolError::Failed(
                    "sub-agents cannot start sub-agents; do the work yourself".to_owned(),
                ));
            }
            match request.subagent_type.as_deref() {
                None | Some("fork") | Some("") => self.fork(turn, &request, ctx),
                Some(name) => self.typed(turn, &request, ctx, name).await,
            }
        })
    }
}

/// A foreground agent's task: aborted when dropped, unless detached (sent to the background).
struct AbortOnDrop(Option<tokio::task::JoinHandle<(TaskState, String)>>);

impl AbortOnDrop {
    async fn wait(&mut self) -> (TaskState, String) {
        let Some(handle) = self.0.as_mut() else {
            return std::future::pending().await;
        };
        let ran = handle.await;
        self.0 = None;
        ran.unwrap_or_else(|error| {
            let why = format!("the agent's task failed: {error}");
            (TaskState::Failed(why.clone()), why)
        })
    }

    fn detach(&mut self) {
        self.0 = None;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.abort();
        }
    }
}

/// Explore and Plan: only calls the tool itself calls read-only (a Bash line that writes is
/// refused), then the session's rules.
fn read_only_agent(session: Arc<dyn CanUseTool>) -> ForkPolicy {
    ForkPolicy::judged_by(session, ReadOnlyAgent).read_only()
}

/// How a read-only agent's refusals read.
struct ReadOnlyAgent;

impl Refusals for ReadOnlyAgent {
    fn tool_not_allowed(&self, tool: &dyn Tool, _input: &serde_json::Value) -> String {
        format!("this agent cannot use {}", tool.name())
    }

    fn not_read_only(&self, tool: &dyn Tool, input: &serde_json::Value) -> String {
        format!(
            "this agent is read-only: {} would change something",
            tool.render_call(input)
        )
    }
}

/// A typed agent's array: its tools, deferred as the session defers them when it has
/// ToolSearch to load them with (otherwise all of them sent: nothing could load them).
fn agent_tool_array(
    tools: &[Arc<dyn tine_tools::Tool>],
    session: &tine_api_client::ToolArray,
) -> tine_api_client::ToolArray {
    let array = tool_definitions(tools);
    match tools.iter().any(|t| t.name() == tine_tools::TOOL_SEARCH) {
        true => tine_tools::defer_tools(&array, |name| session.is_deferred(name)),
        false => array,
    }
}
