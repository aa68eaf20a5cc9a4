//! A main-thread session on the in-process mock, wired as the CLI wires it: the engine's stop
//! hooks are the pipeline, whose parent context shares the engine's tool context.

use std::sync::{Arc, Mutex};

use tine_api_client::{
    ClientConfig, Credentials, HttpClient, ModelClient, RetryPolicy, ToolDefinition,
};
use tine_config::SessionId;
use tine_fork_runtime::{
    BackgroundEvent, CacheSafeSlot, ParentContext, SessionInfo, StopHookPipeline,
};
use tine_mock_api::{MockConfig, MockServer, Scenario};
use tine_query_loop::{AllowAll, EngineConfig, QueryEngine};
use tine_tools::builtin::builtin_tools;
use tine_tools::{Tool, ToolContext};
use tokio::sync::mpsc;

/// A system prompt long enough (~2.5k tokens) to pass the minimum cacheable prefix.
pub fn big_system_prompt() -> String {
    let mut s = String::from("You are tine, a terminal coding agent.\n");
    for i in 0..200 {
        s.push_str(&format!(
            "Guideline {i}: read before you edit, keep changes small.\n"
        ));
    }
    s
}

pub fn client_for(server: &MockServer) -> Arc<dyn ModelClient> {
    let config = ClientConfig::new(server.base_url(), Credentials::api_key("test-key"))
        .with_retry(RetryPolicy::none());
    Arc::new(HttpClient::new(config).unwrap())
}

/// What the engine puts before the session's first prompt (the cli's instruction files,
/// environment and memory index); a fork must send it unchanged.
pub const USER_CONTEXT: &str =
    "<system-reminder>\nAGENTS.md: run the tests before committing.\n</system-reminder>";

pub type Tools = Arc<[Arc<dyn Tool>]>;

pub fn tool_setup() -> (Tools, Arc<[ToolDefinition]>) {
    let mut tools: Vec<Arc<dyn Tool>> = builtin_tools();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let defs: Vec<ToolDefinition> = tine_query_loop::tool_definitions(&tools).to_vec();
    (Arc::from(tools), Arc::from(defs))
}

pub struct Session {
    pub server: MockServer,
    pub home: tempfile::TempDir,
    pub cwd: tempfile::TempDir,
    pub parent: Arc<ParentContext>,
    pub pipeline: Arc<StopHookPipeline>,
    pub engine: QueryEngine,
    pub events: Arc<Mutex<Vec<BackgroundEvent>>>,
}

pub async fn session(
    scenario: Scenario,
    build: impl FnOnce(StopHookPipeline) -> StopHookPipeline,
) -> Session {
    let server = MockServer::start(MockConfig::new(scenario)).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let client = client_for(&server);
    let (tools, defs) = tool_setup();
    let tool_context = ToolContext::new(cwd.path());
    let session_id = SessionId::new_random();
    let parent = Arc::new(ParentContext::new(
        Arc::clone(&client),
        Arc::clone(&tools),
        tool_context.clone(),
        SessionInfo {
            home: home.path().to_path_buf(),
            cwd: cwd.path().to_path_buf(),
            session_id: session_id.clone(),
        },
    ));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    tokio::spawn(async move {
        while let Some(e) = rx.recv().await {
            sink.lock().unwrap().push(e);
        }
    });
    let pipeline = Arc::new(build(
        StopHookPipeline::new(Arc::clone(&parent), CacheSafeSlot::new()).with_events(tx),
    ));
    let config = EngineConfig {
        client,
        model: "claude-sonnet-4-5".into(),
        cwd: cwd.path().to_path_buf(),
        home: home.path().to_path_buf(),
        system_prompt: Arc::from(big_system_prompt()),
        user_context: Some(Arc::from(USER_CONTEXT)),
        tools,
        tool_definitions: defs,
        thinking: None,
        max_turns: Some(10),
        can_use_tool: Arc::new(AllowAll),
        prompter: None,
        tool_context: Some(tool_context),
        stop_hooks: Some(pipeline.clone()),
        compactor: None,
        post_sampling: None,
        on_request: None,
        monitor: None,
        persist: true,
    };
    let engine = QueryEngine::with_session_id(config, session_id)
        .await
        .unwrap();
    Session {
        server,
        home,
        cwd,
        parent,
        pipeline,
        engine,
        events,
    }
}
