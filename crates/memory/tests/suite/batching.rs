//! Batched extraction (issue 11): the fork runs once a batch of eligible turns has gathered and
//! when the host flushes; acknowledgements start nothing; and nothing is lost, because every
//! run covers all messages since the previous one.

use std::sync::Arc;

use serde_json::json;
use tine_memory::{EXTRACTION_MARKER, ExtractionJob, ExtractionOptions};
use tine_mock_api::{MockServer, Reply, Rule, Scenario};

use super::harness::{Extracted, Session, World, last_user_has, server, session};

fn job(world: &World, every: u32) -> Arc<ExtractionJob> {
    let options = ExtractionOptions {
        every,
        ..ExtractionOptions::default()
    };
    Arc::new(ExtractionJob::with_options(world.memory.clone(), options).unwrap())
}

/// The extraction requests' prompts, in order.
fn fork_prompts(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .into_iter()
        .filter(|r| last_user_has(r, EXTRACTION_MARKER))
        .map(|r| {
            let body = r.json().unwrap();
            let last = body["messages"].as_array().unwrap().last().unwrap().clone();
            last.to_string()
        })
        .collect()
}

fn quiet_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .marker(EXTRACTION_MARKER)
                .reply(Reply::text("Nothing to save.")),
        )
        .default_reply(Reply::text("OK."))
}

async fn say(s: &mut Session, prompt: &str) {
    s.engine.submit(prompt, |_| {}).await;
    s.wait().await;
}

#[tokio::test]
async fn the_fork_waits_for_a_batch_of_eligible_turns_and_a_flush_takes_the_rest() {
    let world = World::new();
    let server = server(quiet_scenario()).await;
    let mut s = session(&world, &server, None, Some(job(&world, 3))).await;
    say(&mut s, "we deploy on Fridays").await;
    say(&mut s, "our CI is GitHub Actions").await;
    say(&mut s, "thanks").await; // an acknowledgement: not counted
    assert!(fork_prompts(&server).is_empty());
    say(&mut s, "the staging host is staging.internal").await;
    let forks = fork_prompts(&server);
    assert_eq!(forks.len(), 1, "a fork after the third eligible turn");
    // It covers every turn since the start, the acknowledgement included.
    assert!(forks[0].contains("last ~8 messages"), "{}", forks[0]);

    say(&mut s, "we use Vitest for tests").await;
    assert_eq!(fork_prompts(&server).len(), 1, "not due yet");
    // Idle or exit: the host flushes, and the fork takes what is left.
    let outcomes = s.drain().await;
    let forks = fork_prompts(&server);
    assert_eq!(forks.len(), 2);
    assert!(forks[1].contains("last ~2 messages"), "{}", forks[1]);
    assert_eq!(outcomes.last().unwrap().data()["status"], "extracted");
    // Nothing left: a second flush starts nothing.
    assert_eq!(s.pipeline.flush(), 0);
}

#[tokio::test]
async fn acknowledgements_alone_start_no_fork_but_stay_in_the_next_window() {
    let world = World::new();
    let server = server(quiet_scenario()).await;
    let mut s = session(&world, &server, None, Some(job(&world, 1))).await;
    say(&mut s, "ok").await;
    say(&mut s, "yes do it").await;
    assert_eq!(s.pipeline.flush(), 0, "nothing to learn, nothing to flush");
    assert!(fork_prompts(&server).is_empty());
    say(&mut s, "we use Postgres 16").await;
    let forks = fork_prompts(&server);
    assert_eq!(forks.len(), 1);
    assert!(forks[0].contains("last ~6 messages"), "{}", forks[0]);
}

/// A memory per fact, written by the fork whose window holds it: the mock tells the windows
/// apart by the fork's turn (`assistant_turns`) and the prompt's message count.
fn remembering_scenario(world: &World, facts: &[(usize, &str)], turns: usize) -> Scenario {
    let mem = world.mem().display().to_string();
    let mut scenario = Scenario::new();
    for t in 1..=turns {
        for w in 1..=t {
            let in_window: Vec<&(usize, &str)> = facts
                .iter()
                .filter(|(f, _)| *f > t - w && *f <= t)
                .collect();
            if in_window.is_empty() {
                continue;
            }
            let mut reply = Reply::text("Saving.");
            for (_, slug) in in_window {
                let content = format!(
                    "---\nname: {slug}\ndescription: what the user said about {slug}\ntype: project\n---\n\n{slug}\n"
                );
                reply = reply.with_tool_use(
                    "Write",
                    json!({"file_path": format!("{mem}/project_{slug}.md"), "content": content}),
                );
            }
            scenario = scenario.rule(
                Rule::new()
                    .marker(&format!("last ~{} messages", 2 * w))
                    .assistant_turns(t)
                    .reply(reply),
            );
        }
    }
    scenario
        .rule(
            Rule::new()
                .marker(EXTRACTION_MARKER)
                .reply(Reply::text("Nothing to save.")),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Saved.")))
        .default_reply(Reply::text("OK."))
}

#[tokio::test]
async fn every_fact_stated_across_batches_is_saved() {
    let prompts = [
        "this project uses React 18 and PostgreSQL",
        "how do I reverse a list in Python?",
        "thanks",
        "we deploy on Fridays only",
        "ok",
        "what does git rebase -i do?",
        "our CI runs on GitHub Actions",
        "I am the backend lead",
        "got it, thanks",
        "tests use Vitest",
        "what is a good name for this function?",
    ];
    let facts = [
        (1, "stack"),
        (4, "deploys"),
        (7, "ci"),
        (8, "lead"),
        (10, "vitest"),
    ];
    let world = World::new();
    let server = server(remembering_scenario(&world, &facts, prompts.len())).await;
    let mut s = session(&world, &server, None, Some(job(&world, 3))).await;
    for prompt in prompts {
        say(&mut s, prompt).await;
    }
    s.drain().await;
    let forks = fork_prompts(&server).len();
    // A fork that only wrote ends there: no request for a closing reply nobody reads.
    let extraction_requests = server
        .requests()
        .iter()
        .filter(|r| super::harness::body_has(r, EXTRACTION_MARKER))
        .count();
    assert_eq!(extraction_requests, forks, "one request per fork");
    assert!(
        (2..=4).contains(&forks),
        "{forks} extraction requests for {} turns",
        prompts.len()
    );
    for (_, slug) in facts {
        let file = world.mem().join(format!("project_{slug}.md"));
        assert!(file.exists(), "the fact `{slug}` was not saved");
    }
}

#[tokio::test]
async fn before_compaction_extracts_what_has_gathered_due_or_not() {
    let world = World::new();
    let server = server(quiet_scenario()).await;
    let job = job(&world, 8);
    let mut s = session(&world, &server, None, Some(job.clone())).await;
    say(&mut s, "we deploy on Fridays").await;
    say(&mut s, "our CI is GitHub Actions").await;
    assert!(fork_prompts(&server).is_empty(), "not due: 2 of 8");
    assert_eq!(job.pending_batch(&s.job_context()).eligible, 2);
    // Compaction is about to replace the history: extract from it first, and wait.
    let outcome = job.before_compaction(s.job_context()).await.unwrap();
    assert_eq!(outcome.data()["status"], "extracted");
    let forks = fork_prompts(&server);
    assert_eq!(forks.len(), 1);
    assert!(forks[0].contains("last ~4 messages"), "{}", forks[0]);
    assert_eq!(job.pending_batch(&s.job_context()).turns, 0);
    assert_eq!(s.pipeline.flush(), 0, "nothing left for the idle flush");
}
