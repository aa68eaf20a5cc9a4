//! Compact a long history: a session on the bundled simulator reads four big files (one turn
//! each), then `/compact` summarizes it with a fork on the session's own prompt cache. Prints
//! the history before and after, the boundary's token figures and what the summary request
//! read from the cache.
//!
//!     cargo run -p tine-compaction --example compact_history

use std::sync::Arc;

use serde_json::json;
use tine_api_client::{ClientConfig, Credentials, HttpClient, ModelClient, RetryPolicy};
use tine_compaction::{CompactionConfig, SUMMARY_INSTRUCTION_MARKER, SessionCompactor};
use tine_config::SessionId;
use tine_fork_runtime::{ParentContext, SessionLocation};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_query_loop::{AllowAll, EngineConfig, QueryEngine};
use tine_tools::{Tool, ToolContext, builtin_tools};

const FILES: [&str; 4] = ["parser.rs", "lexer.rs", "ast.rs", "eval.rs"];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let home = scratch.path().join("tine-home");
    let cwd = scratch.path().join("project");
    std::fs::create_dir_all(&home)?;
    std::fs::create_dir_all(&cwd)?;
    for name in FILES {
        let text: String = (0..1500)
            .map(|i| format!("// {name} line {i}: code worth remembering\n"))
            .collect();
        std::fs::write(cwd.join(name), text)?;
    }

    // The scripted model: "read X" calls Read on X; the summary request gets a summary.
    let mut scenario = Scenario::new().rule(
        Rule::new()
            .last_user_contains(SUMMARY_INSTRUCTION_MARKER)
            .reply(Reply::text(
                "<analysis>scratch</analysis>\n<summary>The user had four files read: \
                 parser.rs, lexer.rs, ast.rs, eval.rs.</summary>",
            )),
    );
    for name in FILES {
        scenario = scenario.rule(
            Rule::new()
                .last_user_contains(&format!("read {name}"))
                .reply(Reply::tool_use("Read", json!({ "file_path": name }))),
        );
    }
    let server = MockServer::start(MockConfig::new(
        scenario.default_reply(Reply::text("Read.")),
    ))
    .await?;
    let client: Arc<dyn ModelClient> = Arc::new(HttpClient::new(
        ClientConfig::new(server.base_url(), Credentials::api_key("offline"))
            .with_retry(RetryPolicy::none()),
    )?);

    let mut tools: Vec<Arc<dyn Tool>> = builtin_tools();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let tools: Arc<[Arc<dyn Tool>]> = Arc::from(tools);
    let tool_context = ToolContext::new(&cwd);
    let session_id = SessionId::new_random();

    // The compactor forks from the session: same client, tools and tool context.
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
    let compactor = Arc::new(SessionCompactor::new(parent, CompactionConfig::default()));

    let mut config = EngineConfig::new(
        client,
        "claude-sonnet-4-5",
        &cwd,
        &home,
        long_system_prompt(),
        tools,
        Arc::new(AllowAll),
    );
    config.tool_context = Some(tool_context);
    config.compactor = Some(compactor);
    let mut engine = QueryEngine::with_session_id(config, session_id).await?;

    for name in FILES {
        let turn = engine.submit(&format!("read {name}"), |_| {}).await;
        println!("turn `read {name}`: {} ({:?})", turn.result, turn.terminal);
    }
    println!("history before: {} messages", engine.messages().len());

    let boundary = engine.compact_now(None).await?;
    println!("history after: {} message(s)", engine.messages().len());
    println!(
        "boundary: {:?}, {} messages summarized, about {} tokens before, {} after",
        boundary.trigger,
        boundary.messages_summarized,
        boundary.tokens_before,
        boundary.tokens_after
    );
    println!(
        "files put back after the summary: {:?}",
        boundary.files_reattached
    );
    println!(
        "summary request: {} prompt tokens, {} read from the session's cache",
        boundary.summary_prompt_tokens, boundary.summary_cache_read_tokens
    );
    server.stop().await;
    Ok(())
}

/// A system prompt past the minimum cacheable prefix (1,024 tokens), so the cache works.
fn long_system_prompt() -> String {
    let mut prompt = String::from("You are a coding agent.\n");
    for i in 0..200 {
        prompt.push_str(&format!("Guideline {i}: read before you edit.\n"));
    }
    prompt
}
