//! A project, and main-thread sessions on the in-process mock wired as the cli wires them: the
//! compactor's fork parent shares the engine's tool context, the cache-break detector is the
//! engine's monitor. (Copied small from the memory tests until a shared test-support crate
//! lands.)

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tine_api_client::{ClientConfig, Credentials, HttpClient, ModelClient, RetryPolicy, ToolArray};
use tine_compaction::{
    BeforeCompaction, CONTINUATION_PREFIX, CompactionConfig, ManualClock,
    SUMMARY_INSTRUCTION_MARKER, SessionCompactor,
};
use tine_config::SessionId;
use tine_config::settings::{LoadedSettings, SettingsSource, parse_layer};
use tine_fork_runtime::{CacheBreakDetector, ParentContext, SessionLocation};
use tine_mock_api::{MockConfig, MockServer, Reply, RequestRecord, Rule, Scenario};
use tine_query_loop::hooks::{HookConfig, Hooks};
use tine_query_loop::{AllowAll, EngineConfig, QueryEngine, QueryEvent, TurnResult};
use tine_tools::builtin_tools;
use tine_tools::{Tool, ToolContext};

/// What the scripted summaries say (after a scratchpad that must not survive).
pub(super) const SUMMARY: &str = "SUMMARY-TEXT: the user asked to read the files; all were read.";

/// A system prompt long enough (~2.5k tokens) to pass the minimum cacheable prefix.
pub(super) fn big_system_prompt() -> String {
    let mut s = String::from("You are tine, a terminal coding agent.\n");
    for i in 0..200 {
        s.push_str(&format!(
            "Guideline {i}: read before you edit, keep changes small.\n"
        ));
    }
    s
}

/// The rule answering summary requests, to put first.
pub(super) fn summary_rule() -> Rule {
    Rule::new()
        .last_user_contains(SUMMARY_INSTRUCTION_MARKER)
        .named("summary")
        .reply(Reply::text(&format!(
            "<analysis>SCRATCHPAD that must be stripped</analysis>\n<summary>\n{SUMMARY}\n</summary>"
        )))
}

/// The rule answering the first request after a compaction.
pub(super) fn continued_rule(reply: &str) -> Rule {
    Rule::new()
        .first_user_contains(CONTINUATION_PREFIX)
        .named("continued")
        .reply(Reply::text(reply))
}

/// A scratch world: tine home and a project.
pub(super) struct World {
    pub _root: tempfile::TempDir,
    pub home: PathBuf,
    pub cwd: PathBuf,
}

impl World {
    pub(super) fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let home = base.join("tine-home");
        let cwd = base.join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        Self {
            _root: root,
            home,
            cwd,
        }
    }

    /// Writes a text file of about `tokens` tokens (as the mock counts) under the project.
    pub(super) fn big_file(&self, name: &str, tokens: usize) -> PathBuf {
        let path = self.cwd.join(name);
        let mut text = String::new();
        let mut i = 0;
        while text.len() < tokens * 4 {
            text.push_str(&format!(
                "{name} line {i}: some content of the file to keep\n"
            ));
            i += 1;
        }
        std::fs::write(&path, text).unwrap();
        path
    }
}

pub(super) async fn server(scenario: Scenario) -> MockServer {
    MockServer::start(MockConfig::new(scenario)).await.unwrap()
}

pub(super) fn client_for(server: &MockServer) -> Arc<dyn ModelClient> {
    let config = ClientConfig::new(server.base_url(), Credentials::api_key("test-key"))
        .with_retry(RetryPolicy::none());
    Arc::new(HttpClient::new(config).unwrap())
}

type ToolSetup = (Arc<[Arc<dyn Tool>]>, ToolArray);

fn tool_setup() -> ToolSetup {
    let mut tools: Vec<Arc<dyn Tool>> = builtin_tools();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let defs = tine_query_loop::tool_definitions(&tools);
    (Arc::from(tools), defs)
}

/// How a test session is made.
#[derive(Default)]
pub(super) struct Options {
    pub config: CompactionConfig,
    pub user_context: Option<String>,
    pub hooks: bool,
    pub before_compaction: Option<BeforeCompaction>,
    pub clock: Option<ManualClock>,
    pub session_id: Option<SessionId>,
    pub resume: bool,
}

/// The hooks of one project settings text, as a session reads them.
fn hook_config(cwd: &Path, text: &str) -> HookConfig {
    let mut errors = Vec::new();
    let layer = parse_layer(
        SettingsSource::Project,
        Some(&cwd.join(".tine/settings.json")),
        cwd.to_path_buf(),
        text,
        &mut errors,
    );
    let loaded = LoadedSettings {
        layers: layer.into_iter().collect(),
        errors,
    };
    let (config, errors) = HookConfig::from_settings(&loaded);
    assert!(errors.is_empty() && loaded.errors.is_empty(), "{errors:?}");
    config
}

pub(super) struct Session {
    pub engine: QueryEngine,
    pub compactor: Arc<SessionCompactor>,
    pub detector: Arc<CacheBreakDetector>,
    pub events: Arc<Mutex<Vec<QueryEvent>>>,
}

pub(super) async fn session(world: &World, server: &MockServer, options: Options) -> Session {
    let client = client_for(server);
    let (tools, defs) = tool_setup();
    let tool_context = ToolContext::new(&world.cwd);
    let session_id = options.session_id.unwrap_or_else(SessionId::new_random);
    let parent = Arc::new(ParentContext::new(
        Arc::clone(&client),
        Arc::clone(&tools),
        tool_context.clone(),
        SessionLocation {
            home: world.home.clone(),
            cwd: world.cwd.clone(),
            session_id: session_id.clone(),
        },
    ));
    let user_context: Option<Arc<str>> = options.user_context.map(Arc::from);
    let mut compactor = SessionCompactor::new(Arc::clone(&parent), options.config)
        .with_user_context(user_context.clone());
    if options.hooks {
        let transcript = tine_config::transcript_path(&world.home, &world.cwd, &session_id);
        let settings = r#"{"hooks": {
            "PreCompact": [{"hooks": [{"type": "command", "command": "cat > pre-compact.json; echo keep the ledger format"}]}],
            "PostCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "echo POST-HOOK-CONTEXT"}]}]
        }}"#;
        compactor = compactor.with_hooks(Hooks::new(
            hook_config(&world.cwd, settings),
            session_id.clone(),
            transcript,
            world.cwd.clone(),
        ));
    }
    if let Some(hook) = options.before_compaction {
        compactor = compactor.with_before_compaction(hook);
    }
    if let Some(clock) = options.clock {
        compactor = compactor.with_clock(Arc::new(clock));
    }
    let compactor = Arc::new(compactor);
    let detector = Arc::new(CacheBreakDetector::new());
    let events = Arc::new(Mutex::new(Vec::new()));
    let config = EngineConfig {
        client,
        model: "claude-sonnet-4-5".into(),
        cwd: world.cwd.clone(),
        home: world.home.clone(),
        system_prompt: Arc::from(big_system_prompt()),
        user_context,
        tools,
        tool_definitions: defs,
        thinking: None,
        max_turns: Some(30),
        can_use_tool: Arc::new(AllowAll),
        prompter: None,
        tool_context: Some(tool_context),
        stop_hooks: None,
        hooks: None,
        compactor: Some(compactor.clone()),
        post_sampling: None,
        on_request: None,
        monitor: Some(detector.clone()),
        persist: true,
    };
    let engine = if options.resume {
        QueryEngine::resume(config, session_id).await.unwrap()
    } else {
        QueryEngine::with_session_id(config, session_id)
            .await
            .unwrap()
    };
    Session {
        engine,
        compactor,
        detector,
        events,
    }
}

impl Session {
    /// One turn, its events kept.
    pub(super) async fn turn(&mut self, prompt: &str) -> TurnResult {
        let events = Arc::clone(&self.events);
        self.engine
            .submit(prompt, move |e| events.lock().unwrap().push(e.clone()))
            .await
    }

    pub(super) fn events(&self) -> Vec<QueryEvent> {
        self.events.lock().unwrap().clone()
    }

    /// The transcript's records as JSON.
    pub(super) fn transcript(&self) -> Vec<Value> {
        std::fs::read_to_string(self.engine.transcript_path())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The summary requests and the others.
pub(super) fn is_summary(record: &RequestRecord) -> bool {
    record.rule.as_deref() == Some("summary")
        || String::from_utf8_lossy(&record.body).contains(SUMMARY_INSTRUCTION_MARKER)
}

pub(super) fn prompt_tokens(record: &RequestRecord) -> u64 {
    record.usage.map_or(0, |u| u.prompt_tokens())
}

pub(super) fn body(record: &RequestRecord) -> Value {
    record.json().unwrap()
}

/// The request's messages with every `cache_control` removed (breakpoints are not part of
/// the cache key).
pub(super) fn unmarked_messages(record: &RequestRecord) -> Vec<Value> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("cache_control");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut messages = body(record)["messages"].as_array().unwrap().clone();
    messages.iter_mut().for_each(strip);
    messages
}
