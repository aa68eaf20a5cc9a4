//! Compaction through the real binary: automatic mid-turn under `TINE_AUTO_COMPACT_WINDOW`,
//! `-c` resuming from the boundary, `/compact FOCUS` headless, `tine compact log`, and the
//! `autoCompactEnabled` setting.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};

use super::{mock, tine};

const MARKER: &str = "Your task is to write a detailed summary of the conversation so far";
const CONTINUED: &str = "This session is being continued from an earlier conversation";

fn scenario() -> Scenario {
    let mut scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(MARKER)
                .named("summary")
                .reply(Reply::text(
                    "<analysis>scratch</analysis><summary>The user had the files read.</summary>",
                )),
        )
        .rule(
            Rule::new()
                .last_user_contains("what next")
                .reply(Reply::text("Next: nothing.")),
        )
        .rule(
            Rule::new()
                .first_user_contains(CONTINUED)
                .named("continued")
                .reply(Reply::text("Finished after compaction.")),
        );
    for i in 0..8 {
        scenario = scenario.rule(Rule::new().assistant_turns(i).reply(Reply::tool_use(
            "Read",
            json!({"file_path": format!("f{i}.txt")}),
        )));
    }
    scenario.default_reply(Reply::text("All read."))
}

fn project_with_files() -> Project {
    let project = Project::new();
    for i in 0..8 {
        let mut text = String::new();
        let mut line = 0;
        while text.len() < 48_000 {
            text.push_str(&format!("f{i} line {line}: the content of a big file\n"));
            line += 1;
        }
        project.write(&format!("f{i}.txt"), &text);
    }
    project
}

fn summaries(server: &tine_e2e::tine_mock_api::MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.rule.as_deref() == Some("summary"))
        .count()
}

#[tokio::test]
async fn auto_compaction_then_resume_from_the_boundary_then_compact_and_log() {
    let server = mock(scenario()).await;
    let project = project_with_files();
    let first = tine(&project, &server)
        .env("TINE_AUTO_COMPACT_WINDOW", "75000")
        .args(["-p", "read the files", "--output-format", "json"])
        .run()
        .await;
    first.assert_success();
    let result = first.json();
    assert_eq!(result["result"], "Finished after compaction.", "{result}");
    assert_eq!(summaries(&server), 1);
    assert!(
        result["usage_by_source"]["compact"]["requests"].as_u64() == Some(1),
        "{result}"
    );
    let id = result["session_id"].as_str().unwrap().to_owned();
    // The summary request read everything the request before it had sent, from the cache.
    let log = server.requests();
    let at = log
        .iter()
        .position(|r| r.rule.as_deref() == Some("summary"))
        .unwrap();
    let parent = log[at - 1].usage.unwrap().prompt_tokens();
    assert_eq!(log[at].usage.unwrap().cache_read_input_tokens, parent);

    // -c resumes from the boundary: the summary and the reply, never the reads before.
    let resumed = tine(&project, &server)
        .env("TINE_AUTO_COMPACT_WINDOW", "75000")
        .args(["-c", "-p", "what next?", "--output-format", "json"])
        .run()
        .await;
    resumed.assert_success();
    assert_eq!(resumed.json()["session_id"], id.as_str());
    assert_eq!(resumed.json()["result"], "Next: nothing.");
    let bodies = request_bodies(&server);
    let messages = bodies.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages[0].to_string().contains(CONTINUED));
    assert!(!Value::Array(messages).to_string().contains("tool_use"));

    // /compact FOCUS headless: a manual compaction instead of a turn.
    let compacted = tine(&project, &server)
        .args([
            "-c",
            "-p",
            "/compact keep the plan",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    compacted.assert_success();
    let result = compacted.json();
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["compact_boundary"]["trigger"], "manual");
    assert_eq!(result["compact_boundary"]["focus"], "keep the plan");
    assert_eq!(summaries(&server), 2);
    let summary = request_bodies(&server).last().unwrap().to_string();
    assert!(summary.contains("keep the plan"));

    // Text output, and the log.
    let log = tine(&project, &server).args(["compact", "log"]).run().await;
    log.assert_success();
    assert!(log.stdout.contains("2 compactions"), "{}", log.stdout);
    assert!(log.stdout.contains("(auto)") && log.stdout.contains("(manual)"));
    assert!(
        log.stdout.contains("- user: read the files"),
        "{}",
        log.stdout
    );
    let slash_log = tine(&project, &server)
        .args(["-c", "-p", "/compact log"])
        .run()
        .await;
    slash_log.assert_success();
    assert_eq!(slash_log.stdout, log.stdout);
}

#[tokio::test]
async fn auto_compaction_can_be_turned_off_and_compact_needs_a_conversation() {
    let server = mock(scenario()).await;
    let project = project_with_files();
    project.write(".tine/settings.json", r#"{"autoCompactEnabled": false}"#);
    let out = tine(&project, &server)
        .env("TINE_AUTO_COMPACT_WINDOW", "75000")
        .args(["-p", "read the files", "--verbose"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(summaries(&server), 0);
    assert!(out.stderr.contains("% full"), "{}", out.stderr);
    assert!(out.stderr.contains("auto compaction is off"));

    let empty = Project::new();
    let out = tine(&empty, &server).args(["-p", "/compact"]).run().await;
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr.contains("nothing to compact"), "{}", out.stderr);
}
