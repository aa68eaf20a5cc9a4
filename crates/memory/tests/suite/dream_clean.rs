//! A dream over a memory directory seeded with duplicates, a contradiction and a relative date,
//! with the model's edits scripted as a model makes them (read in parallel, then write in
//! parallel, not quite perfectly: it keeps a duplicate index line and the line of a memory it
//! emptied). The directory ends clean: no duplicate or dead index lines, absolute dates, the
//! emptied file gone, within the index limits. The fork's first request reads the parent's
//! whole cached prefix.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::json;
use tine_fork_runtime::{BackgroundEvent, BackgroundJob};
use tine_memory::{
    DREAM_JOB, DREAM_MARKER, DreamStatus, INDEX_FILE, MAX_INDEX_BYTES, MAX_INDEX_LINE_CHARS,
    MAX_INDEX_LINES,
};
use tine_mock_api::{Reply, Rule, Scenario};

use super::dream_support::{Probe, consolidated_at, dream_job, past_sessions, transcripts};
use super::harness::{Extracted, World, server, session_with};

const INDEX: &str = "\
- [Test runner](project_tests.md) — tests run with Jest
- [Test runner](project_tests.md) — tests run with Jest
- [Tests](project_tests_2.md) — the project uses Jest for its tests
- [Deploys](project_deploy.md) — deploys happen on Fridays since yesterday
- [Old note](gone.md) — a memory whose file is gone
";

fn topic(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}\n")
}

fn seed(world: &World) {
    let mem = world.mem();
    std::fs::write(mem.join(INDEX_FILE), INDEX).unwrap();
    std::fs::write(
        mem.join("project_tests.md"),
        topic(
            "Test runner",
            "tests run with Jest",
            "Tests run with Jest (SEED-TESTS).",
        ),
    )
    .unwrap();
    std::fs::write(
        mem.join("project_tests_2.md"),
        topic(
            "Tests",
            "the project uses Jest",
            "The project uses Jest for its tests.",
        ),
    )
    .unwrap();
    std::fs::write(
        mem.join("project_deploy.md"),
        topic(
            "Deploys",
            "deploys on Fridays",
            "Since yesterday, deploys happen on Fridays.",
        ),
    )
    .unwrap();
}

fn scripted_model(world: &World) -> Scenario {
    let mem = world.mem().display().to_string();
    let sessions = transcripts(world).display().to_string();
    let file = |name: &str| format!("{mem}/{name}");
    Scenario::new()
        // Orient and gather: read the index and topics, grep the transcripts narrowly.
        .rule(
            Rule::new().last_user_contains(DREAM_MARKER).reply(
                Reply::text("Orienting.")
                    .with_tool_use("Read", json!({"file_path": file(INDEX_FILE)}))
                    .with_tool_use("Read", json!({"file_path": file("project_tests.md")}))
                    .with_tool_use("Read", json!({"file_path": file("project_tests_2.md")}))
                    .with_tool_use("Read", json!({"file_path": file("project_deploy.md")}))
                    .with_tool_use(
                        "Grep",
                        json!({"pattern": "Vitest", "path": sessions, "output_mode": "content", "head_limit": 5}),
                    ),
            ),
        )
        // Consolidate, prune and index.
        .rule(
            Rule::new().tool_results(true).marker("SEED-TESTS").reply(
                Reply::text("Consolidating.")
                    .with_tool_use(
                        "Write",
                        json!({"file_path": file("project_tests.md"), "content": topic(
                            "Test runner",
                            "tests run with Vitest (was Jest)",
                            "Tests run with Vitest; the project switched from Jest on 2026-04-20.",
                        )}),
                    )
                    .with_tool_use(
                        "Write",
                        json!({"file_path": file("project_tests_2.md"), "content": ""}),
                    )
                    .with_tool_use(
                        "Edit",
                        json!({
                            "file_path": file("project_deploy.md"),
                            "old_string": "Since yesterday, deploys",
                            "new_string": "Since 2026-04-20, deploys",
                        }),
                    )
                    .with_tool_use(
                        "Write",
                        json!({"file_path": file(INDEX_FILE), "content": "\
- [Test runner](project_tests.md) — tests run with Vitest (switched from Jest on 2026-04-20)
- [Test runner](project_tests.md) — tests run with Vitest (switched from Jest on 2026-04-20)
- [Tests](project_tests_2.md) — the project uses Jest for its tests
- [Deploys](project_deploy.md) — deploys happen on Fridays since 2026-04-20
"}),
                    ),
            ),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .marker("has been updated")
                .reply(Reply::text("Merged the test-runner memories, dated the deploy rule.")),
        )
        .default_reply(Reply::text("OK."))
}

#[tokio::test]
async fn a_dream_leaves_a_clean_index_and_reads_the_parents_cache() {
    let world = World::new();
    seed(&world);
    let start = SystemTime::now();
    consolidated_at(world.mem(), start - Duration::from_secs(72 * 3_600));
    past_sessions(&world, 5, start);
    let server = server(scripted_model(&world)).await;
    let probe = Probe::at(start);
    let job = dream_job(&world, &probe);
    let jobs: Vec<Arc<dyn BackgroundJob>> = vec![job.clone()];
    let mut s = session_with(&world, &server, None, jobs, true).await;
    s.engine
        .submit("what does this project use for tests?", |_| {})
        .await;
    s.wait().await;

    // The outcome and the task.
    let events = s.events.all();
    let outcome = events
        .iter()
        .find_map(|e| match e {
            BackgroundEvent::Finished { job, outcome } if job == DREAM_JOB => Some(outcome.clone()),
            _ => None,
        })
        .expect("the dream finished");
    assert_eq!(outcome.data()["status"], "completed", "{outcome:#?}");
    assert_eq!(
        outcome.summary,
        "improved 3 memories and the index: project_deploy.md, project_tests.md, project_tests_2.md"
    );
    assert_eq!(outcome.data()["removed"], json!(["project_tests_2.md"]));
    assert_eq!(outcome.data()["index_lines_dropped"], 2);
    assert_eq!(outcome.data()["requests"], 3);
    let state = job.task().unwrap().state();
    assert!(matches!(state.status, DreamStatus::Completed { .. }));
    assert_eq!(state.phase.as_str(), "updating");
    assert_eq!(
        state.files_touched,
        [
            "project_tests.md",
            "project_tests_2.md",
            "project_deploy.md",
            "MEMORY.md"
        ]
    );
    assert_eq!(state.turns.len(), 3);
    assert_eq!(
        state.turns[0].tools,
        ["Read", "Read", "Read", "Read", "Grep"]
    );

    // The directory is clean.
    let mem = world.mem();
    let index = std::fs::read_to_string(mem.join(INDEX_FILE)).unwrap();
    let lines: Vec<&str> = index.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines,
        [
            "- [Test runner](project_tests.md) — tests run with Vitest (switched from Jest on 2026-04-20)",
            "- [Deploys](project_deploy.md) — deploys happen on Fridays since 2026-04-20",
        ]
    );
    let unique: std::collections::HashSet<_> = lines.iter().collect();
    assert_eq!(unique.len(), lines.len());
    assert!(lines.len() <= MAX_INDEX_LINES && index.len() <= MAX_INDEX_BYTES);
    assert!(
        lines
            .iter()
            .all(|l| l.chars().count() < MAX_INDEX_LINE_CHARS)
    );
    assert!(!mem.join("project_tests_2.md").exists());
    for entry in std::fs::read_dir(mem).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            assert!(!text.contains("yesterday"), "{name}: {text}");
            assert!(
                !text.contains("Jest (SEED"),
                "{name}: contradicted fact kept"
            );
        }
    }

    // The prompt, and the first request on the parent's cache.
    let log = server.requests();
    let parent = log[0].usage.unwrap();
    let parent_cached = parent.cache_read_input_tokens + parent.cache_creation_input_tokens;
    let first = log
        .iter()
        .find(|r| String::from_utf8_lossy(&r.body).contains(DREAM_MARKER))
        .unwrap();
    let body = String::from_utf8_lossy(&first.body);
    assert!(body.contains(&format!("`{}`", mem.display())));
    assert!(body.contains(&transcripts(&world).display().to_string()));
    let usage = first.usage.unwrap();
    assert!(parent_cached > 2_000, "{parent:?}");
    assert!(
        usage.cache_read_input_tokens >= parent_cached,
        "the dream read {} of the parent's {parent_cached} cached tokens",
        usage.cache_read_input_tokens
    );
    let share = outcome.data()["first_request_cache_share"]
        .as_f64()
        .unwrap();
    println!(
        "dream first request: {} read from the cache, {} written, {} uncached; share {:.1}%",
        usage.cache_read_input_tokens,
        usage.cache_creation_input_tokens,
        usage.input_tokens,
        share * 100.0
    );
    assert!(share > 0.5, "{share}");
}
