//! Benchmark `cargo xtask bench agents`: a parent turn over a ~50k-token conversation forks N
//! children (N = 2, 4, 8) through the real Agent tool and `AgentRuntime`, against the
//! in-process simulator. Prints the children's billed-equivalent input (cache reads 0.1x,
//! writes 1.25x, the rest 1x) against N unshared sub-agents sent the same context with a
//! system prompt of their own (target <= 0.2x), and the share of the parent's prefix each
//! child's first request read from the cache (target 100%).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tine_api_client::{ContentBlock, Message, SystemPrompt, TextBlock, Usage};
use tine_fork_runtime::{
    AgentRuntime, CacheSafeParams, ForkParams, TaskRegistry, agent_tools, builtin_agents,
    fork_directive_text, run_forked_agent,
};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_query_loop::{AllowAll, Spawner, tool_definitions};
use tine_test_support::{ScratchProject, Session, SessionBuilder, server};

fn billed(u: &Usage) -> f64 {
    u.cache_read_input_tokens as f64 * 0.1
        + u.cache_creation_input_tokens as f64 * 1.25
        + u.input_tokens as f64
}

/// About 50k tokens of conversation (4 bytes a token).
fn big_prompt() -> String {
    let mut text = String::from("Here is the build log to split up:\n");
    let mut line = 0;
    while text.len() < 200_000 {
        text.push_str(&format!(
            "log {line}: module {} compiled, 0 warnings, 12 tests passed\n",
            line % 97
        ));
        line += 1;
    }
    text
}

async fn fan_out(n: usize) -> (f64, f64, f64, u64) {
    let mut reply = Reply::text("Splitting the work.");
    for i in 0..n {
        reply = reply.with_tool_use(
            "Agent",
            json!({"description": format!("part {i}"), "prompt": format!("Handle part {i} of the log.")}),
        );
    }
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("Your directive:")
                .named("child")
                .reply(Reply::text("Scope: one part\nResult: fine")),
        )
        .rule(Rule::new().assistant_turns(0).named("parent").reply(reply))
        .default_reply(Reply::text("Waiting for the parts."));
    let server = server(scenario).await;
    let project = ScratchProject::new();
    let agents: Arc<[_]> = builtin_agents().into();
    let tools_agents = Arc::clone(&agents);
    let Session {
        parent,
        pipeline,
        mut engine,
        ..
    } = SessionBuilder::new(project.home(), project.cwd())
        .configure(move |c| {
            let mut tools: Vec<_> = c.tools.iter().cloned().collect();
            tools.extend(agent_tools(tools_agents));
            tools.sort_by(|a, b| a.name().cmp(b.name()));
            c.tool_definitions = tool_definitions(&tools);
            c.tools = tools.into();
            c.persist = false;
        })
        .start(&server)
        .await;
    let tasks = TaskRegistry::new(project.home().join("tasks"));
    let runtime = AgentRuntime::new(
        Arc::clone(&parent),
        Arc::new(AllowAll),
        agents,
        tasks.clone(),
    );
    engine.tool_context().insert_ext(tasks.clone());
    engine.tool_context().insert_ext(Spawner(Arc::new(runtime)));

    let turn = engine.submit(&big_prompt(), |_| {}).await;
    assert!(turn.terminal.is_success(), "{:?}", turn.terminal);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let mut reported = 0;
    while let Some(batch) = tasks.next_notifications(deadline).await {
        reported += batch.len();
    }
    assert_eq!(reported, n);

    let log = server.requests();
    let parent_prompt = log
        .iter()
        .find(|r| r.rule.as_deref() == Some("parent"))
        .and_then(|r| r.usage)
        .map_or(0, |u| u.prompt_tokens());
    let children: Vec<_> = log
        .iter()
        .filter(|r| r.rule.as_deref() == Some("child"))
        .filter_map(|r| r.usage)
        .collect();
    assert_eq!(children.len(), n);
    let min_share = children
        .iter()
        .map(|u| u.cache_read_input_tokens as f64 / parent_prompt.max(1) as f64)
        .fold(f64::INFINITY, f64::min)
        .min(1.0);
    let shared: f64 = children
        .iter()
        .map(|u| {
            billed(&Usage {
                input_tokens: u.input_tokens,
                cache_creation_input_tokens: u.cache_creation_input_tokens,
                cache_read_input_tokens: u.cache_read_input_tokens,
                ..Usage::default()
            })
        })
        .sum();

    // The same N sub-agents without cache sharing: the same context and directive, each
    // under a system prompt of its own (as an agent that rebuilds its prompt would send).
    let cache_safe = pipeline.slot().get().expect("the turn saved its params");
    let mut unshared = 0.0;
    for i in 0..n {
        let mut template = cache_safe.template.clone();
        let system = match &*cache_safe.template.system {
            SystemPrompt::Blocks(b) => b.iter().map(|b| b.text.clone()).collect::<String>(),
            SystemPrompt::Text(t) => t.clone(),
        };
        template.system = Arc::new(SystemPrompt::Blocks(vec![
            TextBlock::new(format!("[unshared agent {i}]\n{system}"))
                .with_cache_control(tine_api_client::CacheControl::ephemeral()),
        ]));
        let params = Arc::new(CacheSafeParams {
            template,
            messages: Arc::clone(&cache_safe.messages),
        });
        let prompt = vec![Message::user(vec![ContentBlock::text(
            fork_directive_text(&format!("Handle part {i} of the log.")),
        )])];
        let result = run_forked_agent(
            &parent,
            ForkParams::new(params, prompt, Arc::new(AllowAll), "bench_unshared"),
        )
        .await
        .unwrap();
        unshared += billed(&result.usage);
    }
    server.stop().await;
    (shared, unshared, min_share, parent_prompt)
}

#[tokio::main]
async fn main() {
    println!("agents bench: fork children of one parent turn vs unshared sub-agents");
    for n in [2, 4, 8] {
        let (shared, unshared, min_share, parent_prompt) = fan_out(n).await;
        println!(
            "N = {n}: parent prefix {parent_prompt} tokens; children's first requests read >= {:.1}% of it (target 100%); billed input {shared:.0} fan-out vs {unshared:.0} unshared = {:.3}x (target <= 0.2x)",
            min_share * 100.0,
            shared / unshared.max(1.0)
        );
    }
}
