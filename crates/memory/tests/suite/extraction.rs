//! The extraction job against the mock: the skip when the main agent wrote memory, the
//! trailing run, the cursor, and sandbox denials that leave nothing outside the directory.

use serde_json::json;
use tine_fork_runtime::BackgroundJob;
use tine_memory::{EXTRACTION_MARKER, ExtractionJob, RunReport};
use tine_mock_api::{Reply, Rule, Scenario};

use super::harness::{Extracted, World, extraction_job, last_user_has, server, session};
use super::scenario::scenario;

fn extraction_requests(server: &tine_mock_api::MockServer) -> Vec<tine_mock_api::RequestRecord> {
    server
        .requests()
        .into_iter()
        .filter(|r| last_user_has(r, EXTRACTION_MARKER))
        .collect()
}

#[tokio::test]
async fn no_fork_when_the_main_agent_wrote_memory_itself() {
    let world = World::new();
    let mem = world.mem().display().to_string();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("remember")
                .tool_results(false)
                .reply(Reply::text("Saving that.").with_tool_use(
                    "Write",
                    json!({
                        "file_path": format!("{mem}/feedback_tabs.md"),
                        "content": "---\nname: Tabs\ndescription: the user prefers tabs\ntype: feedback\n---\nUse tabs.\n"
                    }),
                )),
        )
        .rule(Rule::new().marker(EXTRACTION_MARKER).reply(Reply::text("Nothing to save.")))
        .rule(Rule::new().tool_results(true).reply(Reply::text("Saved.")))
        .default_reply(Reply::text("OK."));
    let server = server(scenario).await;
    let mut s = session(&world, &server, None, Some(extraction_job(&world))).await;
    s.engine
        .submit("please remember that I prefer tabs", |_| {})
        .await;
    let outcomes = s.drain().await;
    assert_eq!(outcomes[0].data()["status"], "skipped_main_agent_wrote");
    assert_eq!(outcomes[0].summary, "");
    assert!(extraction_requests(&server).is_empty());
    assert!(world.mem().join("feedback_tabs.md").exists());

    // The cursor moved: the next turn's fork sees only its own two new messages.
    s.engine.submit("what time is it", |_| {}).await;
    let outcomes = s.drain().await;
    assert_eq!(outcomes.len(), 2);
    let forks = extraction_requests(&server);
    assert_eq!(forks.len(), 1);
    assert!(String::from_utf8_lossy(&forks[0].body).contains("last ~2 messages"));
}

#[tokio::test]
async fn a_trigger_during_a_run_is_stashed_and_a_trailing_run_follows() {
    let world = World::new();
    let server = server(scenario(&world)).await;
    // No job on the pipeline: the test drives the job by hand, as the pipeline would.
    let mut s = session(&world, &server, None, None).await;
    s.engine
        .submit("this project uses React 18 and PostgreSQL", |_| {})
        .await;
    let first = s.job_context();
    s.engine.submit("we deploy on Fridays", |_| {}).await;
    let second = s.job_context();
    s.engine.submit("and we use GitHub Actions", |_| {}).await;
    let third = s.job_context();
    assert!(third.cache_safe.messages.len() > second.cache_safe.messages.len());

    let job = ExtractionJob::new(world.memory.clone()).unwrap();
    let running = job.run(first); // `running` is set before the future is polled
    assert!(job.is_running());
    let stashed = job.run(second).await.unwrap();
    assert_eq!(stashed.data()["status"], "stashed");
    let stashed = job.run(third).await.unwrap(); // the latest wins
    assert_eq!(stashed.data()["status"], "stashed");
    let outcome = running.await.unwrap();
    assert!(!job.is_running());

    let data = outcome.data();
    let runs = data["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{outcome:?}");
    assert_eq!(runs[0]["new_messages"], 2);
    // the trailing run used the latest context and only what came after the first run
    assert_eq!(runs[1]["new_messages"], 4);
    assert_eq!(outcome.summary, "saved 1 memory: project_stack.md");
    let forks = extraction_requests(&server);
    assert_eq!(forks.len(), 2);
    assert!(String::from_utf8_lossy(&forks[1].body).contains("and we use GitHub Actions"));
    assert!(String::from_utf8_lossy(&forks[1].body).contains("last ~4 messages"));

    // Nothing new since: a run does nothing and sends nothing.
    let again = job.extract_once(&s.job_context()).await.unwrap();
    assert_eq!(again, RunReport::NothingNew);
    assert_eq!(extraction_requests(&server).len(), 2);
}

#[tokio::test]
async fn sandbox_denials_leave_nothing_outside_the_memory_directory() {
    let world = World::new();
    let mem = world.mem().display().to_string();
    let root = world.root().to_path_buf();
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, world.mem().join("link")).unwrap();
    let o = outside.display().to_string();
    let scenario = Scenario::new()
        .rule(
            Rule::new().marker(EXTRACTION_MARKER).reply(
                Reply::text("Writing.")
                    .with_tool_use("Write", json!({"file_path": format!("{o}/abs.md"), "content": "x"}))
                    .with_tool_use("Write", json!({"file_path": format!("{mem}/../escape.md"), "content": "x"}))
                    .with_tool_use("Write", json!({"file_path": format!("{mem}/link/via_link.md"), "content": "x"}))
                    .with_tool_use("Write", json!({"file_path": format!("{mem}/..／escape.md"), "content": "x"}))
                    .with_tool_use("Write", json!({"file_path": "relative.md", "content": "x"}))
                    .with_tool_use("Edit", json!({"file_path": format!("{}/src.rs", world.cwd.display()), "old_string": "a", "new_string": "b"}))
                    .with_tool_use("Bash", json!({"command": format!("touch {o}/bash.md")}))
                    .with_tool_use("WebFetch", json!({"url": "http://127.0.0.1:9/", "prompt": "x"}))
                    .with_tool_use("Write", json!({"file_path": format!("{mem}/user_role.md"), "content": "---\nname: Role\ndescription: d\ntype: user\n---\nok\n"})),
            ),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("OK."));
    let server = server(scenario).await;
    let mut s = session(&world, &server, None, Some(extraction_job(&world))).await;
    std::fs::write(world.cwd.join("src.rs"), "a").unwrap();
    s.engine
        .submit("I am the on-call engineer this week", |_| {})
        .await;
    let outcomes = s.drain().await;
    assert_eq!(outcomes[0].summary, "saved 1 memory: user_role.md");

    assert!(
        World::files_under(&outside).is_empty(),
        "{:?}",
        World::files_under(&outside)
    );
    assert_eq!(World::files_under(&world.cwd), ["src.rs"]);
    assert_eq!(
        std::fs::read_to_string(world.cwd.join("src.rs")).unwrap(),
        "a"
    );
    assert!(!world.mem().parent().unwrap().join("escape.md").exists());
    // `link` is the symlink the test made; nothing went through it
    assert_eq!(World::files_under(world.mem()), ["link", "user_role.md"]);
    // the model was told why, call by call
    let log = server.requests();
    let results = log.iter().find(|r| {
        last_user_has(r, "tool_result") && String::from_utf8_lossy(&r.body).contains("Writing.")
    });
    let results = String::from_utf8_lossy(&results.unwrap().body).into_owned();
    // absolute, `..`, through the symlink, relative to the cwd, the Edit in the project
    assert_eq!(results.matches("outside the memory directory").count(), 5);
    assert!(results.contains("U+FF0F"));
    assert!(results.contains("not read-only"));
    assert!(results.contains("`WebFetch` is not available"));
}

#[tokio::test]
async fn the_main_threads_next_request_reads_the_reply_the_fork_cached() {
    let world = World::new();
    let server = server(scenario(&world)).await;
    let mut s = session(&world, &server, None, Some(extraction_job(&world))).await;
    s.engine
        .submit("this project uses React 18 and PostgreSQL", |_| {})
        .await;
    s.drain().await;
    s.engine.submit("thanks, that is all for now", |_| {}).await;
    s.drain().await;
    let log = server.requests();
    let fork_first = log
        .iter()
        .position(|r| last_user_has(r, EXTRACTION_MARKER))
        .unwrap();
    let fork = log[fork_first].usage.unwrap();
    let main_next = log[fork_first + 1..]
        .iter()
        .find(|r| !String::from_utf8_lossy(&r.body).contains(EXTRACTION_MARKER))
        .unwrap()
        .usage
        .unwrap();
    // The fork wrote the parent's tail (its final reply); the next main request reads it all
    // and writes only the new user message.
    assert!(fork.cache_creation_input_tokens > 0);
    assert_eq!(
        main_next.cache_read_input_tokens,
        fork.cache_read_input_tokens + fork.cache_creation_input_tokens
    );
}
