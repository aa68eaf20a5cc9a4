//! A main-thread session on the mock, wired as the CLI wires it: the engine's stop hooks are
//! the pipeline, whose parent context shares the engine's tool context.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tine_api_client::{ModelClient, ToolArray};
use tine_config::SessionId;
use tine_fork_runtime::{
    BackgroundJob, CacheSafeSlot, JobContext, ParentContext, SessionLocation, StopHookPipeline,
};
use tine_mock_api::MockServer;
use tine_query_loop::{AllowAll, EngineConfig, QueryEngine};
use tine_tools::ToolContext;
use tokio_util::sync::CancellationToken;

use crate::mock::{MODEL, Tools, big_system_prompt, client_for, tool_setup};
use crate::tally::EventTally;

/// The config of a plain session in `cwd` under `home`: [`MODEL`], [`big_system_prompt`], no
/// user context, every call allowed, no hooks, ten turns at most, a transcript written. Tests
/// change what they are about.
pub fn engine_config(
    client: Arc<dyn ModelClient>,
    home: &Path,
    cwd: &Path,
    tools: Tools,
    tool_definitions: ToolArray,
) -> EngineConfig {
    EngineConfig {
        client,
        model: MODEL.into(),
        cwd: cwd.to_path_buf(),
        home: home.to_path_buf(),
        system_prompt: Arc::from(big_system_prompt()),
        user_context: None,
        tools,
        tool_definitions,
        thinking: None,
        max_turns: Some(10),
        can_use_tool: Arc::new(AllowAll),
        prompter: None,
        tool_context: None,
        stop_hooks: None,
        hooks: None,
        compactor: None,
        post_sampling: None,
        on_request: None,
        monitor: None,
        persist: true,
    }
}

type PipelineStep = Box<dyn FnOnce(StopHookPipeline) -> StopHookPipeline + Send>;
type ToolsStep = Box<dyn FnOnce(Tools) -> Tools + Send>;
type ConfigStep = Box<dyn FnOnce(&mut EngineConfig) + Send>;

/// Builds a [`Session`]; [`SessionBuilder::start`] runs it on a mock.
pub struct SessionBuilder {
    home: PathBuf,
    cwd: PathBuf,
    jobs: Vec<Arc<dyn BackgroundJob>>,
    pipeline: Option<PipelineStep>,
    wrap_tools: Option<ToolsStep>,
    config: Vec<ConfigStep>,
    client: Option<Arc<dyn ModelClient>>,
}

impl SessionBuilder {
    /// A session in `cwd` with `home` as `TINE_HOME`.
    pub fn new(home: &Path, cwd: &Path) -> Self {
        Self {
            home: home.to_path_buf(),
            cwd: cwd.to_path_buf(),
            jobs: Vec::new(),
            pipeline: None,
            wrap_tools: None,
            config: Vec::new(),
            client: None,
        }
    }

    /// Registers a background job with the pipeline.
    pub fn job(mut self, job: Arc<dyn BackgroundJob>) -> Self {
        self.jobs.push(job);
        self
    }

    /// Anything else about the pipeline (jobs, user hooks), after the jobs of [`Self::job`].
    pub fn pipeline(
        mut self,
        build: impl FnOnce(StopHookPipeline) -> StopHookPipeline + Send + 'static,
    ) -> Self {
        self.pipeline = Some(Box::new(build));
        self
    }

    /// Wraps the tools (as the CLI guards memory writes); the definitions stay those of the
    /// built-ins, as the CLI serializes them before wrapping.
    pub fn wrap_tools(mut self, wrap: impl FnOnce(Tools) -> Tools + Send + 'static) -> Self {
        self.wrap_tools = Some(Box::new(wrap));
        self
    }

    /// The user context put before the first prompt (what the CLI renders: instruction files,
    /// the memory index).
    pub fn user_context(self, context: impl Into<String>) -> Self {
        let context: Arc<str> = Arc::from(context.into());
        self.configure(move |c| c.user_context = Some(context))
    }

    /// Any other change to the [`engine_config`] defaults (a system prompt, `max_turns`,
    /// `persist`).
    pub fn configure(mut self, change: impl FnOnce(&mut EngineConfig) + Send + 'static) -> Self {
        self.config.push(Box::new(change));
        self
    }

    /// Another client for the session and its forks (default: [`client_for`] the server),
    /// e.g. [`crate::mock::openai_client_for`] it.
    pub fn client(mut self, client: Arc<dyn ModelClient>) -> Self {
        self.client = Some(client);
        self
    }

    pub async fn start(self, server: &MockServer) -> Session {
        let client = self.client.unwrap_or_else(|| client_for(server));
        let (tools, defs) = tool_setup();
        let tools = match self.wrap_tools {
            Some(wrap) => wrap(tools),
            None => tools,
        };
        let tool_context = ToolContext::new(&self.cwd);
        let session_id = SessionId::new_random();
        let parent = Arc::new(ParentContext::new(
            Arc::clone(&client),
            Arc::clone(&tools),
            tool_context.clone(),
            SessionLocation {
                home: self.home.clone(),
                cwd: self.cwd.clone(),
                session_id: session_id.clone(),
            },
        ));
        let (events, tx) = EventTally::new();
        let mut pipeline =
            StopHookPipeline::new(Arc::clone(&parent), CacheSafeSlot::new()).with_events(tx);
        for job in self.jobs {
            pipeline = pipeline.with_job(job);
        }
        if let Some(build) = self.pipeline {
            pipeline = build(pipeline);
        }
        let pipeline = Arc::new(pipeline);
        let mut config = engine_config(client, &self.home, &self.cwd, tools, defs);
        config.tool_context = Some(tool_context);
        config.stop_hooks = Some(pipeline.clone());
        for change in self.config {
            change(&mut config);
        }
        let engine = QueryEngine::with_session_id(config, session_id)
            .await
            .unwrap();
        Session {
            parent,
            pipeline,
            engine,
            events,
        }
    }
}

/// A running session: its engine, its pipeline, the parent its forks share, and what the
/// pipeline reported.
pub struct Session {
    pub parent: Arc<ParentContext>,
    pub pipeline: Arc<StopHookPipeline>,
    pub engine: QueryEngine,
    pub events: EventTally,
}

impl Session {
    /// Waits for the background jobs (bounded at 30 s), none of which may need cancelling.
    pub async fn wait_jobs(&self) {
        let report = self.pipeline.drain(Duration::from_secs(30)).await;
        assert_eq!(
            report.cancelled, 0,
            "a background job was still running after 30 s"
        );
    }

    /// A job context for the last completed turn (what the pipeline would give a job).
    pub fn job_context(&self) -> JobContext {
        JobContext {
            cache_safe: self.pipeline.slot().get().unwrap(),
            parent: Arc::clone(&self.parent),
            cancel: CancellationToken::new(),
        }
    }
}
