//! The Agent SDK's flags about a session's spending and its conversation, through the binary
//! against the mock: `--max-budget-usd` (the turn ends between requests, `error_max_budget_usd`,
//! the transcript whole; a later turn asks nothing), `--fork-session` (a new transcript, the
//! old one byte for byte as it was) and `--resume-session-at` (up to that message, forked or
//! as a branch of the same session).

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies, transcript_messages};

use super::{mock, model_calling, tine};

async fn run_json(project: &Project, server: &MockServer, args: &[&str]) -> Value {
    run_json_prompt(project, server, "hi", args).await
}
/// Reads a file, then (if asked again) answers.
async fn read_then_done(project: &Project) -> MockServer {
    project.write("notes.txt", "some notes\n");
    model_calling(&[(
        "Read",
        json!({"file_path": project.cwd().join("notes.txt")}),
    )])
    .await
}

#[tokio::test]
async fn max_budget_usd_ends_the_turn_between_requests_with_the_transcript_whole() {
    let project = Project::new();
    let server = read_then_done(&project).await;
    let out = tine(&project, &server)
        .args(["-p", "read the notes", "--output-format", "json"])
        .args(["--max-budget-usd", "0.0001"])
        .run()
        .await;
    assert!(!out.status.success(), "{}", out.stdout);
    let result = out.json();
    assert_eq!(result["subtype"], "error_max_budget_usd", "{result}");
    assert_eq!(result["is_error"], true);
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0001);
    // One request: its tool ran and its result is in the transcript, then no more.
    assert_eq!(request_bodies(&server).len(), 1);
    let id = result["session_id"].as_str().unwrap();
    let messages = transcript_messages(&project.transcript(id));
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");

    // A budget the run stays under changes nothing, not even the request bytes.
    let project = Project::new();
    let server = read_then_done(&project).await;
    let plain = run_json(&project, &server, &[]).await;
    let within = run_json(&project, &server, &["--max-budget-usd", "100"]).await;
    assert_eq!(within["subtype"], "success");
    assert_eq!(within["result"], plain["result"]);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        requests[0].body, requests[2].body,
        "the budget changed the bytes"
    );
    let bad = tine(&project, &server)
        .args(["-p", "hi", "--max-budget-usd=-1"])
        .run()
        .await;
    assert!(bad.stderr.contains("--max-budget-usd"), "{}", bad.stderr);
}

#[tokio::test]
async fn over_the_budget_a_later_turn_makes_no_request() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let line = |text: &str| {
        format!("{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n")
    };
    let out = tine(&project, &server)
        .args(["-p", "--input-format", "stream-json", "--output-format"])
        .args(["stream-json", "--verbose", "--max-budget-usd", "0.0001"])
        .stdin(format!("{}{}", line("first"), line("second")))
        .run()
        .await;
    let results: Vec<Value> = out
        .json_lines()
        .into_iter()
        .filter(|l| l["type"] == "result")
        .collect();
    assert_eq!(results.len(), 2, "{}", out.stdout);
    // The first turn ended as the model meant; it spent the budget, so the second asked nothing.
    assert_eq!(results[0]["subtype"], "success");
    assert_eq!(results[1]["subtype"], "error_max_budget_usd");
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(request_bodies(&server).len(), 1);
}

fn remember_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("what was the word")
                .first_user_contains("banana")
                .reply(Reply::text("The word was banana.")),
        )
        .rule(
            Rule::new()
                .last_user_contains("remember")
                .reply(Reply::text("Noted.")),
        )
        .default_reply(Reply::text("I do not know."))
}

/// A session told "banana" then "cherry": its id.
async fn two_words(project: &Project, server: &MockServer) -> String {
    let first = run_json_prompt(project, server, "remember banana", &[]).await;
    let id = first["session_id"].as_str().unwrap().to_owned();
    run_json_prompt(project, server, "remember cherry too", &["-r", &id]).await;
    id
}

async fn run_json_prompt(
    project: &Project,
    server: &MockServer,
    prompt: &str,
    args: &[&str],
) -> Value {
    let out = tine(project, server)
        .args(["-p", prompt, "--output-format", "json"])
        .args(args)
        .run()
        .await;
    out.assert_success();
    out.json()
}

fn transcript_bytes(project: &Project, id: &str) -> Vec<u8> {
    std::fs::read(project.transcripts_dir().join(format!("{id}.jsonl"))).unwrap()
}

/// The uuid of the first assistant record of `id`'s transcript (the reply to "banana").
fn first_reply_uuid(project: &Project, id: &str) -> String {
    project
        .transcript(id)
        .iter()
        .find(|r| r["type"] == "assistant")
        .and_then(|r| r["uuid"].as_str())
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn fork_session_goes_on_in_a_new_transcript_and_leaves_the_old_one_as_it_was() {
    let server = mock(remember_scenario()).await;
    let project = Project::new();
    let id = two_words(&project, &server).await;
    let before = transcript_bytes(&project, &id);
    let forked = run_json_prompt(
        &project,
        &server,
        "what was the word?",
        &["-r", &id, "--fork-session"],
    )
    .await;
    let fork = forked["session_id"].as_str().unwrap().to_owned();
    assert_ne!(fork, id);
    assert_eq!(
        transcript_bytes(&project, &id),
        before,
        "the old one changed"
    );
    // The fork has the whole conversation, its own id on every record, and the new turn.
    let records = project.transcript(&fork);
    // (Annotations carry no session id.)
    assert!(
        records
            .iter()
            .all(|r| r.get("sessionId").is_none_or(|s| s == fork.as_str()))
    );
    assert!(
        records
            .iter()
            .filter(|r| r.get("sessionId").is_some())
            .count()
            >= 4
    );
    let texts: Vec<String> = transcript_messages(&records)
        .iter()
        .map(|m| m.to_string())
        .collect();
    assert_eq!(texts.len(), 6, "{texts:?}");
    assert!(texts[2].contains("remember cherry"));
    assert!(texts[4].contains("what was the word"));
    // Its first request repeats the old session's prefix: read from the cache.
    let bodies = request_bodies(&server);
    assert_eq!(bodies[2]["messages"].as_array().unwrap().len(), 5);
    let requests = server.requests();
    assert!(requests[2].usage.unwrap().cache_read_input_tokens > 0);

    // --session-id names the fork.
    let chosen = "6f2a6c1e-0000-4000-8000-00000000abcd";
    let named = run_json_prompt(
        &project,
        &server,
        "what was the word?",
        &["-r", &id, "--fork-session", "--session-id", chosen],
    )
    .await;
    assert_eq!(named["session_id"], chosen);
}

#[tokio::test]
async fn resume_session_at_resumes_up_to_that_message() {
    let server = mock(remember_scenario()).await;
    let project = Project::new();
    let id = two_words(&project, &server).await;
    let at = first_reply_uuid(&project, &id);
    // Forked at the reply to "banana": cherry was never said.
    let before = transcript_bytes(&project, &id);
    let forked = run_json_prompt(
        &project,
        &server,
        "what was the word?",
        &["-r", &id, "--fork-session", "--resume-session-at", &at],
    )
    .await;
    assert_eq!(forked["result"], "The word was banana.");
    assert_eq!(transcript_bytes(&project, &id), before);
    let bodies = request_bodies(&server);
    let sent = bodies.last().unwrap()["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(!Value::Array(sent.clone()).to_string().contains("cherry"));

    // In the same session: the branch goes on from that message, and later resumes follow it.
    let same = run_json_prompt(
        &project,
        &server,
        "what was the word?",
        &["-r", &id, "--resume-session-at", &at],
    )
    .await;
    assert_eq!(same["session_id"], id.as_str());
    assert_eq!(same["result"], "The word was banana.");
    let again = run_json_prompt(&project, &server, "and now?", &["-r", &id]).await;
    assert_eq!(again["session_id"], id.as_str());
    let bodies = request_bodies(&server);
    let sent = bodies.last().unwrap()["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 5, "{sent:?}");
    assert!(!Value::Array(sent.clone()).to_string().contains("cherry"));

    // A uuid the session does not have, or no session to resume: said, nothing sent.
    let count = request_bodies(&server).len();
    for args in [
        vec!["-r", id.as_str(), "--resume-session-at", "nope"],
        vec!["--resume-session-at", at.as_str()],
    ] {
        let out = tine(&project, &server)
            .args(["-p", "hi"])
            .args(&args)
            .run()
            .await;
        assert!(!out.status.success());
        assert!(out.stderr.contains("--resume-session-at"), "{}", out.stderr);
    }
    assert_eq!(request_bodies(&server).len(), count);
}
