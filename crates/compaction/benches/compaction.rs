//! Benchmark: a scripted session against the in-process simulator that reads files until its
//! context reaches ~150k tokens, where auto compaction (threshold capped at 150k) summarizes it
//! mid-turn and the turn goes on. Prints the tokens before and after (target: after <= 20% of
//! before, seed 003 §九's 150k -> 30k), the share of the parent's cached prefix the summary
//! request read from the cache (target 100%; Claude Code reads ~80%), and the summary request's
//! billed-equivalent input (reads 0.1x, writes 1.25x, the rest 1x) against the same request
//! with nothing cached (target <= 0.2x).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use tine_api_client::{ClientConfig, Credentials, HttpClient, ModelClient, RetryPolicy, Usage};
use tine_compaction::{
    CONTINUATION_PREFIX, CompactionConfig, SUMMARY_INSTRUCTION_MARKER, SessionCompactor,
};
use tine_config::SessionId;
use tine_fork_runtime::{CacheBreakDetector, ParentContext, SessionLocation};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_query_loop::{AllowAll, EngineConfig, QueryEngine, Terminal};
use tine_tools::builtin_tools;
use tine_tools::{Tool, ToolContext};

const FILES: usize = 20;
const FILE_TOKENS: usize = 9_000;
const THRESHOLD: u64 = 150_000;

fn billed(u: &Usage) -> f64 {
    u.cache_read_input_tokens as f64 * 0.1
        + u.cache_creation_input_tokens as f64 * 1.25
        + u.input_tokens as f64
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (home, cwd) = (base.join("home"), base.join("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let mut scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(SUMMARY_INSTRUCTION_MARKER)
                .named("summary")
                .reply(Reply::text(&format!(
                    "<analysis>{}</analysis>\n<summary>\n{}\n</summary>",
                    "going through the conversation. ".repeat(200),
                    "1. Primary request: read every file of the project. ".repeat(60)
                ))),
        )
        .rule(
            Rule::new()
                .first_user_contains(CONTINUATION_PREFIX)
                .reply(Reply::text("Finished after compaction.")),
        );
    for i in 0..FILES {
        let name = format!("f{i:02}.txt");
        let mut text = String::new();
        let mut line = 0;
        while text.len() < FILE_TOKENS * 4 {
            text.push_str(&format!(
                "{name} line {line}: the content of a file being read\n"
            ));
            line += 1;
        }
        std::fs::write(cwd.join(&name), text).unwrap();
        scenario = scenario.rule(
            Rule::new()
                .assistant_turns(i)
                .reply(Reply::tool_use("Read", json!({"file_path": name}))),
        );
    }
    let scenario = scenario.default_reply(Reply::text("All read."));
    let server = MockServer::start(MockConfig::new(scenario)).await.unwrap();

    let config = ClientConfig::new(server.base_url(), Credentials::api_key("bench"))
        .with_retry(RetryPolicy::none());
    let client: Arc<dyn ModelClient> = Arc::new(HttpClient::new(config).unwrap());
    let mut tools: Vec<Arc<dyn Tool>> = builtin_tools();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let tools: Arc<[Arc<dyn Tool>]> = Arc::from(tools);
    let tool_context = ToolContext::new(&cwd);
    let session_id = SessionId::new_random();
    let parent = Arc::new(ParentContext::new(
        Arc::clone(&client),
        Arc::clone(&tools),
        tool_context.clone(),
        SessionLocation {
            home: home.clone(),
            cwd: cwd.clone(),
            session_id: session_id.clone(),
        },
    ));
    let compaction = CompactionConfig {
        // effective window − 13k = 150k
        window_cap: Some(THRESHOLD + 13_000 + 20_000),
        ..CompactionConfig::default()
    };
    let compactor = Arc::new(SessionCompactor::new(Arc::clone(&parent), compaction));
    let mut system = String::from("You are tine, a terminal coding agent.\n");
    for i in 0..200 {
        system.push_str(&format!("Guideline {i}: read before you edit.\n"));
    }
    let engine_config = EngineConfig {
        client,
        model: "claude-sonnet-4-5".into(),
        cwd: cwd.clone(),
        home,
        system_prompt: Arc::from(system),
        user_context: None,
        tool_definitions: tine_query_loop::tool_definitions(&tools),
        tools,
        thinking: None,
        max_turns: Some(60),
        can_use_tool: Arc::new(AllowAll),
        prompter: None,
        tool_context: Some(tool_context),
        stop_hooks: None,
        hooks: None,
        compactor: Some(compactor.clone()),
        post_sampling: None,
        on_request: None,
        monitor: Some(Arc::new(CacheBreakDetector::new())),
        persist: true,
    };
    let mut engine = QueryEngine::with_session_id(engine_config, session_id)
        .await
        .unwrap();
    let turn = engine.submit("read every file", |_| {}).await;
    assert_eq!(turn.terminal, Terminal::Completed, "{:?}", turn.terminal);
    assert_eq!(turn.result, "Finished after compaction.");

    let reports = compactor.reports();
    assert_eq!(reports.len(), 1, "one compaction");
    let report = &reports[0];
    let b = &report.boundary;
    let summary = report.summary_usage.unwrap();
    let share = report.cache_read_share().unwrap();
    let shared = billed(&summary);
    let unshared = summary.total_input_tokens() as f64;
    println!(
        "compaction bench: {} messages, {} files read, auto compaction at {} tokens",
        b.messages_summarized,
        b.dropped.files_read.len(),
        THRESHOLD
    );
    println!(
        "(a) tokens before {} -> after {} = {:.1}% (target <= 20%, seed: 150k -> 30k)",
        b.tokens_before,
        b.tokens_after,
        b.tokens_after as f64 * 100.0 / b.tokens_before as f64
    );
    println!(
        "    the new history: the summary, {} file(s) re-attached ({}), {} referenced (over 5k tokens; the last file read is cut to 5k instead)",
        b.files_reattached.len(),
        b.files_reattached
            .iter()
            .map(|f| f.rsplit('/').next().unwrap_or(f))
            .collect::<Vec<_>>()
            .join(", "),
        report.files_referenced.len()
    );
    println!(
        "(b) summary request's read of the parent's cached prefix: {} of {} tokens = {:.1}% (target 100%; Claude Code ~80%)",
        summary.cache_read_input_tokens,
        report.parent_prompt_tokens.unwrap_or(0),
        share * 100.0
    );
    println!(
        "(c) summary request's billed-equivalent input: {shared:.0} vs {unshared:.0} with nothing cached = {:.3}x (target <= 0.2x)",
        shared / unshared.max(1.0)
    );
    println!(
        "    its cache writes: {} tokens (nothing after it reads what it would write)",
        summary.cache_creation_input_tokens
    );
    server.stop().await;
}
