//! Sessions across processes: `--resume`, `--continue`, and a session whose process died (or was
//! interrupted) mid-turn.

use std::time::Duration;

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies, transcript_messages};

use super::{mock, tine};

fn remember_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("banana")
                .reply(Reply::text("Noted: banana.")),
        )
        .rule(
            Rule::new()
                .last_user_contains("what was the word")
                .first_user_contains("banana")
                .reply(Reply::text("The word was banana.")),
        )
        .default_reply(Reply::text("I do not know."))
}

#[tokio::test]
async fn resume_and_continue_restore_the_conversation() {
    let server = mock(remember_scenario()).await;
    let project = Project::new();
    let first = tine(&project, &server)
        .args(["-p", "remember the word banana", "--output-format", "json"])
        .run()
        .await;
    first.assert_success();
    let id = first.json()["session_id"].as_str().unwrap().to_owned();

    let resumed = tine(&project, &server)
        .args([
            "--resume",
            id.as_str(),
            "-p",
            "what was the word?",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    resumed.assert_success();
    let resumed = resumed.json();
    assert_eq!(resumed["result"], "The word was banana.");
    assert_eq!(resumed["session_id"], id.as_str());
    let bodies = request_bodies(&server);
    assert_eq!(bodies[1]["messages"].as_array().unwrap().len(), 3);

    let continued = tine(&project, &server)
        .args([
            "--continue",
            "-p",
            "what was the word again?",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    continued.assert_success();
    assert_eq!(continued.json()["session_id"], id.as_str());
    let bodies = request_bodies(&server);
    assert_eq!(bodies[2]["messages"].as_array().unwrap().len(), 5);
    // The transcript holds the whole conversation, in order.
    let messages = transcript_messages(&project.transcript(&id));
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
}

#[tokio::test]
async fn continue_without_a_session_is_a_clear_error() {
    let server = mock(Scenario::new()).await;
    let project = Project::new();
    let out = tine(&project, &server)
        .args(["--continue", "-p", "hi"])
        .run()
        .await;
    assert_eq!(out.code(), Some(1));
    assert!(
        out.stderr.contains("no session to continue"),
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
}

/// A scenario whose first reply runs a long `sleep`, and which answers anything else "Resumed.".
fn sleeping_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new().assistant_turns(0).reply(
                Reply::text("Waiting.").with_tool_use("Bash", json!({"command": "sleep 30"})),
            ),
        )
        .default_reply(Reply::text("Resumed."))
}

/// Waits until the transcript of the running session holds the assistant's tool call.
async fn wait_for_tool_call(project: &Project) -> String {
    for _ in 0..400 {
        if let Ok(entries) = std::fs::read_dir(project.transcripts_dir()) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(id) = name.strip_suffix(".jsonl")
                    && std::fs::read_to_string(entry.path())
                        .is_ok_and(|t| t.contains("\"tool_use\""))
                {
                    return id.to_owned();
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the session never reached its tool call");
}

/// Every `tool_use` is answered in the next message, and every line of the file parses.
fn assert_whole_and_paired(project: &Project, id: &str) -> Vec<Value> {
    let path = project.transcripts_dir().join(format!("{id}.jsonl"));
    let text = std::fs::read_to_string(path).unwrap();
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("torn line {line}: {e}"));
    }
    project.transcript(id)
}

fn assert_paired(messages: &[Value]) {
    for (i, message) in messages.iter().enumerate() {
        let Some(blocks) = message["content"].as_array() else {
            continue;
        };
        for block in blocks.iter().filter(|b| b["type"] == "tool_use") {
            let next = messages
                .get(i + 1)
                .unwrap_or_else(|| panic!("no answer to {block}"));
            let answered = next["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b2| b2["tool_use_id"] == block["id"]));
            assert!(answered, "tool_use {} unanswered in {next}", block["id"]);
        }
    }
}

#[tokio::test]
async fn a_session_killed_mid_turn_resumes_well_paired() {
    let server = mock(sleeping_scenario()).await;
    let project = Project::new();
    let mut child = tine(&project, &server)
        .args(["-p", "wait a while", "--allowedTools", "Bash(sleep:*)"])
        .spawn();
    let id = wait_for_tool_call(&project).await;
    // Let the tool start, then kill tine outright (no chance to clean up).
    tokio::time::sleep(Duration::from_millis(200)).await;
    child.kill().await.unwrap();
    assert_whole_and_paired(&project, &id);

    let out = tine(&project, &server)
        .args([
            "--resume",
            id.as_str(),
            "-p",
            "go on",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Resumed.");
    let log = server.requests();
    let last = log.last().unwrap();
    assert_eq!(
        last.status, 200,
        "the API accepted the resumed history: {:?}",
        last.error
    );
    let body = last.json().unwrap();
    let messages = body["messages"].as_array().unwrap();
    assert_paired(messages);
    assert!(body["messages"].to_string().contains("go on"));
}

#[tokio::test]
async fn ctrl_c_stops_the_turn_kills_the_tool_and_keeps_the_transcript_whole() {
    let server = mock(sleeping_scenario()).await;
    let project = Project::new();
    let mut child = tine(&project, &server)
        .args(["-p", "wait a while", "--allowedTools", "Bash(sleep:*)"])
        .spawn();
    let id = wait_for_tool_call(&project).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("tine did not stop after Ctrl-C")
        .unwrap();
    assert_eq!(status.code(), Some(130));

    let records = assert_whole_and_paired(&project, &id);
    let messages = transcript_messages(&records);
    assert_paired(&messages);
    // The interrupted call got its result in the transcript itself.
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][0]["type"], "tool_result");
    // Nothing is left running: a resumed session goes on normally.
    let out = tine(&project, &server)
        .args([
            "--resume",
            id.as_str(),
            "-p",
            "go on",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Resumed.");
}
