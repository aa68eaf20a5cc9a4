//! A project with a memory directory, and main-thread sessions on the in-process mock wired as
//! the CLI wires them: the engine's stop hooks are the pipeline (with the extraction job when
//! asked), whose parent context shares the engine's tool context.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tine_api_client::{
    ClientConfig, Credentials, HttpClient, ModelClient, RetryPolicy, ToolDefinition,
};
use tine_config::SessionId;
use tine_fork_runtime::{
    BackgroundEvent, BackgroundJob, CacheSafeSlot, JobContext, JobOutcome, ParentContext,
    SessionInfo, StopHookPipeline,
};
use tine_memory::{DirSource, ExtractionJob, MemoryDir};
use tine_mock_api::{MockConfig, MockServer, RequestRecord, Scenario};
use tine_query_loop::{AllowAll, EngineConfig, QueryEngine};
use tine_tools::builtin::builtin_tools;
use tine_tools::{Tool, ToolContext};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

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

pub type Tools = Arc<[Arc<dyn Tool>]>;

pub fn tool_setup() -> (Tools, Arc<[ToolDefinition]>) {
    let mut tools: Vec<Arc<dyn Tool>> = builtin_tools();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let defs: Vec<ToolDefinition> = tine_query_loop::tool_definitions(&tools).to_vec();
    (Arc::from(tools), Arc::from(defs))
}

/// A scratch world: tine home, a project (the cwd), and the memory directory.
pub struct World {
    pub root: tempfile::TempDir,
    pub home: PathBuf,
    pub cwd: PathBuf,
    pub memory: MemoryDir,
}

impl World {
    pub fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let home = base.join("tine-home");
        let cwd = base.join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        let memory = MemoryDir::new(
            tine_memory::default_memory_dir(&home, &cwd),
            DirSource::Default,
        );
        memory.ensure().unwrap();
        Self {
            root,
            home,
            cwd,
            memory,
        }
    }

    pub fn mem(&self) -> &Path {
        self.memory.path()
    }

    /// Files under `dir`, relative, sorted (hidden ones included).
    pub fn files_under(dir: &Path) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if e.file_type().unwrap().is_dir() {
                    walk(root, &p, out);
                } else {
                    out.push(p.strip_prefix(root).unwrap().display().to_string());
                }
            }
        }
        let mut out = Vec::new();
        walk(dir, dir, &mut out);
        out.sort();
        out
    }
}

pub struct Session {
    pub parent: Arc<ParentContext>,
    pub pipeline: Arc<StopHookPipeline>,
    pub engine: QueryEngine,
    pub events: Arc<Mutex<Vec<BackgroundEvent>>>,
}

/// A session of `world` on `server`; `user_context` is what the CLI puts before the first
/// prompt (the memory index), `job` the extraction job if registered.
pub async fn session(
    world: &World,
    server: &MockServer,
    user_context: Option<String>,
    job: Option<Arc<dyn BackgroundJob>>,
) -> Session {
    session_with(
        world,
        server,
        user_context,
        job.into_iter().collect(),
        false,
    )
    .await
}

/// Like [`session`], with several jobs, and the tools wrapped by `guard_memory_writes` as the
/// CLI wires them when `guarded`.
pub async fn session_with(
    world: &World,
    server: &MockServer,
    user_context: Option<String>,
    jobs: Vec<Arc<dyn BackgroundJob>>,
    guarded: bool,
) -> Session {
    let client = client_for(server);
    let (tools, defs) = tool_setup();
    let tools: Tools = if guarded {
        tine_memory::guard_memory_writes(&tools, world.mem())
            .unwrap()
            .into()
    } else {
        tools
    };
    let tool_context = ToolContext::new(&world.cwd);
    let session_id = SessionId::new_random();
    let parent = Arc::new(ParentContext::new(
        Arc::clone(&client),
        Arc::clone(&tools),
        tool_context.clone(),
        SessionInfo {
            home: world.home.clone(),
            cwd: world.cwd.clone(),
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
    let mut pipeline =
        StopHookPipeline::new(Arc::clone(&parent), CacheSafeSlot::new()).with_events(tx);
    for job in jobs {
        pipeline = pipeline.with_job(job);
    }
    let pipeline = Arc::new(pipeline);
    let config = EngineConfig {
        client,
        model: "claude-sonnet-4-5".into(),
        cwd: world.cwd.clone(),
        home: world.home.clone(),
        system_prompt: Arc::from(big_system_prompt()),
        user_context: user_context.map(Arc::from),
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
        parent,
        pipeline,
        engine,
        events,
    }
}

pub async fn server(scenario: Scenario) -> MockServer {
    MockServer::start(MockConfig::new(scenario)).await.unwrap()
}

pub fn extraction_job(world: &World) -> Arc<ExtractionJob> {
    Arc::new(ExtractionJob::new(world.memory.clone()).unwrap())
}

impl Session {
    /// Flushes the batched work and waits for the background jobs, as `-p` does at exit;
    /// returns the extraction outcomes seen so far.
    pub async fn drain(&self) -> Vec<JobOutcome> {
        self.pipeline.flush();
        self.wait().await
    }

    /// Waits for the background jobs without flushing (what a turn's end alone started);
    /// returns the extraction outcomes seen so far.
    pub async fn wait(&self) -> Vec<JobOutcome> {
        let report = self.pipeline.drain(Duration::from_secs(30)).await;
        assert_eq!(report.cancelled, 0);
        // the event forwarder runs on its own task
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                BackgroundEvent::Finished { job, outcome } if job == "extract_memories" => {
                    Some(outcome.clone())
                }
                BackgroundEvent::Failed { job, error } => panic!("{job} failed: {error}"),
                _ => None,
            })
            .collect()
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

/// Whether a request's last user message carries `marker`.
pub fn last_user_has(record: &RequestRecord, marker: &str) -> bool {
    let body: Value = record.json().unwrap();
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m.to_string().contains(marker))
}

/// Whether any part of a request's body contains `text`.
pub fn body_has(record: &RequestRecord, text: &str) -> bool {
    String::from_utf8_lossy(&record.body).contains(text)
}
