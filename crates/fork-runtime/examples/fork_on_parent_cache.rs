//! A fork that reads its parent's prompt cache. The parent runs one turn through `query()` on
//! the bundled simulator; the fork then sends the parent's exact prefix (system prompt, tool
//! array, model, messages: the `CacheSafeParams`) plus a question of its own, and its first
//! request reads the whole prefix from the cache. Prints the cache figures of both.
//!
//!     cargo run -p tine-fork-runtime --example fork_on_parent_cache

use std::sync::Arc;

use futures::StreamExt;
use tine_api_client::{ClientConfig, Credentials, HttpClient, Message, ModelClient, Usage};
use tine_config::SessionId;
use tine_fork_runtime::{
    CacheSafeParams, ForkParams, ParentContext, SessionLocation, run_forked_agent,
};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_query_loop::{
    AllowAll, QueryEvent, QueryParams, RequestTemplate, query, system_prompt_blocks,
    tool_definitions,
};
use tine_tools::{Tool, ToolContext, builtin_tools};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("worth remembering")
                .reply(Reply::text("The user prefers small diffs.")),
        )
        .default_reply(Reply::text("Done: I will keep the diffs small."));
    let server = MockServer::start(MockConfig::new(scenario)).await?;
    let client: Arc<dyn ModelClient> = Arc::new(HttpClient::new(ClientConfig::new(
        server.base_url(),
        Credentials::api_key("offline"),
    ))?);

    let mut tools: Vec<Arc<dyn Tool>> = builtin_tools();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let tools: Arc<[Arc<dyn Tool>]> = Arc::from(tools);
    let guidelines: String = (0..200)
        .map(|i| format!("Guideline {i}: read before you edit, keep changes small.\n"))
        .collect();
    let template = RequestTemplate {
        model: "claude-sonnet-4-5".into(),
        system: Arc::new(system_prompt_blocks(&guidelines)),
        tools: tool_definitions(&tools),
        thinking: None,
        skip_cache_write: false,
        replacements: None,
        effort: None,
    };
    let tool_context = ToolContext::new(scratch.path());

    // The parent's turn. Its request writes the prompt cache up to its last message.
    let mut history = vec![Message::user("Please keep your diffs small from now on.")];
    let params = QueryParams::new(
        Arc::clone(&client),
        template.clone(),
        Arc::clone(&tools),
        tool_context.clone(),
    );
    let mut parent_usage = Usage::default();
    let mut events = query(params, history.clone());
    while let Some(event) = events.next().await {
        match event {
            QueryEvent::AssistantMessage { message, usage, .. } => {
                history.push(message);
                parent_usage = usage;
            }
            QueryEvent::UserMessage { message, .. } => history.push(message),
            _ => {}
        }
    }
    println!(
        "parent: {} prompt tokens, {} written to the cache, {} read",
        parent_usage.total_input_tokens(),
        parent_usage.cache_creation_input_tokens,
        parent_usage.cache_read_input_tokens
    );

    // The fork: the parent's cache key exactly, then its own prompt.
    let parent = ParentContext::new(
        client,
        tools,
        tool_context,
        SessionLocation {
            home: scratch.path().join("tine-home"),
            cwd: scratch.path().to_path_buf(),
            session_id: SessionId::new_random(),
        },
    );
    let cache_safe = Arc::new(CacheSafeParams {
        template,
        messages: Arc::from(history),
    });
    let fork = run_forked_agent(
        &parent,
        ForkParams::new(
            cache_safe,
            vec![Message::user(
                "Anything worth remembering from this conversation?",
            )],
            Arc::new(AllowAll),
            "example_fork",
        ),
    )
    .await?;
    let first = fork.first_request_usage.unwrap_or_default();
    let parent_cached =
        parent_usage.cache_creation_input_tokens + parent_usage.cache_read_input_tokens;
    println!(
        "fork: {} request(s); first request {} prompt tokens, {} read from the parent's cache \
         ({:.0}% of the parent's cached prefix), {} written",
        fork.requests,
        first.total_input_tokens(),
        first.cache_read_input_tokens,
        100.0 * first.cache_read_input_tokens as f64 / parent_cached.max(1) as f64,
        first.cache_creation_input_tokens,
    );
    let answer = fork
        .messages
        .last()
        .map(tine_query_loop::message_text)
        .unwrap_or_default();
    println!(
        "fork answered: {answer} ({:?}, ${:.6})",
        fork.terminal, fork.cost_usd
    );
    server.stop().await;
    Ok(())
}
