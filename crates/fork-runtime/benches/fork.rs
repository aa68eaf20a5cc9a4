//! Benchmark: a 30-turn scripted session (prefix growing to ~60k tokens) against the in-process
//! simulator, with one cache-sharing fork per turn. Prints (a) the share of the parent's cached
//! prefix each fork read from the cache (target 100%, every fork) and (b) the forks'
//! billed-equivalent input (reads 0.1x, writes 1.25x, the rest 1x) against the same forks sent
//! without cache sharing (target <= 0.2x). Run over both wires: the Messages API (explicit
//! cache breakpoints; the parent's cached prefix is what it read and wrote) and OpenAI chat
//! completions with automatic prefix caching, as vLLM and llama.cpp do (the parent's cached
//! prefix is its whole prompt, `cached_tokens` the fork's read).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use tine_api_client::{ContentBlock, Message, SystemPrompt, TextBlock, Usage};
use tine_fork_runtime::{CacheSafeParams, ForkParams, run_forked_agent};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_query_loop::AllowAll;
use tine_test_support::{ScratchProject, Session, SessionBuilder, openai_client_for, server};

const TURNS: usize = 30;

#[derive(Clone, Copy, PartialEq)]
enum Wire {
    Anthropic,
    OpenAi,
}

fn billed(u: &Usage) -> f64 {
    u.cache_read_input_tokens as f64 * 0.1
        + u.cache_creation_input_tokens as f64 * 1.25
        + u.input_tokens as f64
}

#[tokio::main]
async fn main() {
    run(Wire::Anthropic).await;
    run(Wire::OpenAi).await;
}

async fn run(wire: Wire) {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .marker("<bench-fork>")
                .reply(Reply::text("Nothing new to note.")),
        )
        .default_reply(Reply::text("Done: noted the details of this step."));
    let server = server(scenario).await;
    let project = ScratchProject::new();
    let mut system = String::from("You are tine, a terminal coding agent.\n");
    for i in 0..150 {
        system.push_str(&format!(
            "Rule {i}: read before editing; keep diffs small.\n"
        ));
    }
    let mut builder = SessionBuilder::new(project.home(), project.cwd());
    if wire == Wire::OpenAi {
        builder = builder
            .client(openai_client_for(&server))
            .configure(|c| c.model = "qwen2.5-coder:7b".to_owned());
    }
    let Session {
        parent,
        pipeline,
        mut engine,
        ..
    } = builder
        .configure(move |c| {
            c.system_prompt = Arc::from(system);
            c.max_turns = Some(4);
            c.persist = false;
        })
        .start(&server)
        .await;

    let mut shares = Vec::new();
    let (mut shared_billed, mut unshared_billed) = (0.0, 0.0);
    let mut last_prompt = 0;
    for turn in 0..TURNS {
        // ~2k tokens of new conversation per turn
        let mut prompt = format!("Step {turn}: here is the log of this step.\n");
        for line in 0..160 {
            prompt.push_str(&format!(
                "log {turn}.{line}: compiled module ok, 0 warnings\n"
            ));
        }
        let result = engine.submit(&prompt, |_| {}).await;
        assert!(result.terminal.is_success(), "{:?}", result.terminal);
        let parent_usage = result.usage;
        last_prompt = parent_usage.total_input_tokens();
        let cache_safe = pipeline.slot().get().expect("params saved");
        let fork_prompt = vec![Message::user(vec![ContentBlock::text(
            "<bench-fork> Anything worth remembering from the last step?",
        )])];

        let shared = run_forked_agent(
            &parent,
            ForkParams::new(
                Arc::clone(&cache_safe),
                fork_prompt.clone(),
                Arc::new(AllowAll),
                "bench",
            ),
        )
        .await
        .unwrap();
        let first = shared.first_request_usage.unwrap_or_default();
        let cached = match wire {
            Wire::Anthropic => {
                parent_usage.cache_read_input_tokens + parent_usage.cache_creation_input_tokens
            }
            Wire::OpenAi => parent_usage.total_input_tokens(),
        };
        shares.push(first.cache_read_input_tokens as f64 / cached.max(1) as f64);
        shared_billed += billed(&shared.usage);

        // The same fork without cache sharing: a system prompt of its own (one changed line,
        // different every turn), as a fork that rebuilds its prompt would send.
        let mut template = cache_safe.template.clone();
        template.system = Arc::new(SystemPrompt::Blocks(vec![
            TextBlock::new(format!(
                "[unshared fork {turn}]\n{}",
                match &*cache_safe.template.system {
                    SystemPrompt::Blocks(b) => b.iter().map(|b| b.text.clone()).collect::<String>(),
                    SystemPrompt::Text(t) => t.clone(),
                }
            ))
            .with_cache_control(tine_api_client::CacheControl::ephemeral()),
        ]));
        let unshared_params = Arc::new(CacheSafeParams {
            template,
            messages: Arc::clone(&cache_safe.messages),
        });
        let unshared = run_forked_agent(
            &parent,
            ForkParams::new(
                unshared_params,
                fork_prompt,
                Arc::new(AllowAll),
                "bench_unshared",
            ),
        )
        .await
        .unwrap();
        unshared_billed += billed(&unshared.usage);
    }
    let min = shares.iter().cloned().fold(f64::INFINITY, f64::min);
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
    let below = shares.iter().filter(|s| **s < 1.0).count();
    println!(
        "fork bench ({}): {TURNS} turns, one cache-sharing fork per turn, final prompt {last_prompt} tokens",
        match wire {
            Wire::Anthropic => "Messages API",
            Wire::OpenAi => "OpenAI chat completions, automatic prefix caching",
        }
    );
    println!(
        "(a) share of the parent's cached prefix read from cache by each fork: min {:.1}%, mean {:.1}%, forks below 100%: {below} (target 100%, every fork)",
        min * 100.0,
        mean * 100.0
    );
    println!(
        "(b) forks' billed-equivalent input: {:.0} tokens shared vs {:.0} unshared = {:.3}x (target <= 0.2x)",
        shared_billed,
        unshared_billed,
        shared_billed / unshared_billed.max(1.0)
    );
    server.stop().await;
}
