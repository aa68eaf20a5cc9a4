//! Micro-compaction through the real binary: once the gap since the last reply outlives the
//! prompt cache (`TINE_MICRO_COMPACT_IDLE_SECS`, 300 s by default, the cache's lifetime), the
//! next request clears every tool result but the five most recent; within the gap nothing is
//! cleared. The gap here is a command that sleeps past a one-second setting; nothing asserts on
//! how long anything took.

use serde_json::json;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};

use super::{mock, tine};

const CLEARED: &str = "[Old tool result content cleared]";

/// Seven Reads, then a command that sleeps two seconds, then the answer.
fn scenario() -> Scenario {
    let mut scenario = Scenario::new();
    for i in 0..7 {
        scenario = scenario.rule(Rule::new().assistant_turns(i).reply(Reply::tool_use(
            "Read",
            json!({"file_path": format!("f{i}.txt")}),
        )));
    }
    scenario
        .rule(
            Rule::new()
                .assistant_turns(7)
                .reply(Reply::tool_use("Bash", json!({"command": "sleep 2"}))),
        )
        .default_reply(Reply::text("Done."))
}

fn project() -> Project {
    let project = Project::new();
    for i in 0..7 {
        project.write(
            &format!("f{i}.txt"),
            &format!("the contents of file number {i}, long enough to be worth clearing\n"),
        );
    }
    project
}

/// The last request's body as text.
fn last_request(server: &MockServer) -> String {
    String::from_utf8_lossy(&server.requests().last().unwrap().body).into_owned()
}

#[tokio::test]
async fn an_idle_gap_past_the_setting_clears_all_but_the_five_latest_results() {
    let server = mock(scenario()).await;
    let project = project();
    let out = tine(&project, &server)
        .env("TINE_MICRO_COMPACT_IDLE_SECS", "1")
        .args(["-p", "read them all", "--allowedTools", "Bash", "--verbose"])
        .run()
        .await;
    out.assert_success();
    assert!(out.stdout.ends_with("Done.\n"), "{}", out.stdout);
    let body = last_request(&server);
    // Eight results (seven Reads, the command): the three oldest cleared, five kept.
    assert_eq!(body.matches(CLEARED).count(), 3, "{body}");
    for i in 0..3 {
        assert!(!body.contains(&format!("file number {i},")), "f{i} cleared");
    }
    for i in 3..7 {
        assert!(body.contains(&format!("file number {i},")), "f{i} kept");
    }
    assert!(
        out.stderr.contains("[tine] the cache went cold: "),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn within_the_cache_lifetime_nothing_is_cleared_and_zero_never_clears() {
    for idle in [None, Some("0")] {
        let server = mock(scenario()).await;
        let project = project();
        let mut run =
            tine(&project, &server).args(["-p", "read them all", "--allowedTools", "Bash"]);
        if let Some(idle) = idle {
            run = run.env("TINE_MICRO_COMPACT_IDLE_SECS", idle);
        }
        let out = run.run().await;
        out.assert_success();
        let body = last_request(&server);
        assert!(!body.contains(CLEARED), "{idle:?}: {body}");
        for i in 0..7 {
            assert!(
                body.contains(&format!("file number {i},")),
                "{idle:?}: f{i}"
            );
        }
    }
}

fn without_breakpoints(mut value: serde_json::Value) -> serde_json::Value {
    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                map.remove("cache_control");
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

/// The clearing is a decision the transcript keeps: `-c` replays the results as the live
/// request sent them (cleared), so the resumed request repeats its prefix byte for byte and
/// reads it from the cache, rather than sending the old results whole again.
#[tokio::test]
async fn a_resumed_session_sends_the_cleared_results_as_the_live_one_did() {
    let server = mock(scenario()).await;
    let project = project();
    tine(&project, &server)
        .env("TINE_MICRO_COMPACT_IDLE_SECS", "1")
        .args(["-p", "read them all", "--allowedTools", "Bash"])
        .run()
        .await
        .assert_success();
    let before = server.requests().len();
    let resumed = tine(&project, &server)
        .args(["-c", "-p", "thanks", "--verbose"])
        .run()
        .await;
    resumed.assert_success();
    let log = server.requests();
    let previous = without_breakpoints(log[before - 1].json().unwrap());
    let next = without_breakpoints(log[before].json().unwrap());
    let old = previous["messages"].as_array().unwrap();
    let new = next["messages"].as_array().unwrap();
    assert_eq!(
        new.len(),
        old.len() + 2,
        "the last reply and the new prompt"
    );
    assert_eq!(&new[..old.len()], &old[..]);
    assert_eq!(next.to_string().matches(CLEARED).count(), 3);
    assert!(
        !resumed.stderr.contains("[tine] cache break"),
        "{}",
        resumed.stderr
    );
    let usage = log[before].usage.unwrap();
    let prompt =
        usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.input_tokens;
    assert!(
        usage.cache_read_input_tokens as f64 / prompt as f64 >= 0.9,
        "{usage:?}"
    );
}
