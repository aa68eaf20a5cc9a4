//! Failures the run recovers from: an overloaded API, a stream cut mid-reply, a reply cut at
//! `max_tokens`.

use tine_e2e::Project;
use tine_e2e::request_bodies;
use tine_e2e::tine_mock_api::{Fault, Reply, Rule, Scenario};

use super::{mock, tine};

#[tokio::test]
async fn a_529_with_retry_after_is_retried_and_the_run_succeeds() {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .request(1)
                .fault(Fault::http_retry_after(529, 1)),
        )
        .default_reply(Reply::text("Back again."));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = tine(&project, &server)
        .args(["-p", "hello", "--output-format", "json", "--verbose"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Back again.");
    let log = server.requests();
    assert_eq!(log.iter().map(|r| r.status).collect::<Vec<_>>(), [529, 200]);
    assert!(out.stderr.contains("retrying"), "{}", out.stderr);
    // The retried request is the same request.
    assert_eq!(log[0].body, log[1].body);
    // --verbose also logs to a file under TINE_HOME (stdout stayed one JSON object), never the key.
    let logged = std::fs::read_to_string(project.home().join("logs/tine.log")).unwrap();
    assert!(!logged.is_empty());
    assert!(!logged.contains("test-key"));
}

#[tokio::test]
async fn a_stream_dropped_mid_reply_is_retried_without_duplicated_text() {
    let text = "The whole answer, streamed in several pieces, arrives exactly once.";
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .request(1)
                .reply(Reply::text(text))
                .fault(Fault::drop_after(4)),
        )
        .default_reply(Reply::text(text));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = tine(&project, &server)
        .args(["-p", "hello", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    let result = out.json();
    assert_eq!(result["result"], text);
    assert_eq!(server.requests().len(), 2);
    // The transcript holds one assistant reply, whole.
    let records = project.transcript(result["session_id"].as_str().unwrap());
    let assistants: Vec<_> = records
        .iter()
        .filter(|r| r["type"] == "assistant")
        .collect();
    assert_eq!(assistants.len(), 1);
    assert!(assistants[0]["message"].to_string().contains(text));
}

#[tokio::test]
async fn max_tokens_escalates_once_then_asks_the_model_to_resume() {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .request(1)
                .reply(Reply::text("cut short").stop_reason("max_tokens")),
        )
        .rule(
            Rule::new()
                .request(2)
                .reply(Reply::text("part one").stop_reason("max_tokens")),
        )
        .default_reply(Reply::text("part two"));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = tine(&project, &server)
        .args(["-p", "write a lot", "--output-format", "json", "--verbose"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "part two");
    let bodies = request_bodies(&server);
    let limits: Vec<u64> = bodies
        .iter()
        .map(|b| b["max_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(limits, [8000, 64000, 64000]);
    // Request 1's cut reply was dropped; request 2's was kept and followed by the nudge.
    let messages = bodies[2]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert!(messages[1].to_string().contains("part one"));
    assert!(messages[2].to_string().contains("Output token limit hit"));
    assert!(
        out.stderr
            .contains("max_output_tokens escalation 8000 -> 64000"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("max_output_tokens recovery #1"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn redirected_text_output_holds_a_reply_cut_mid_stream_once() {
    let text = "A reply long enough to be cut somewhere in the middle of its stream.";
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .request(1)
                .reply(Reply::text(text).chunk_delay_ms(1))
                .fault(Fault::drop_after(6)),
        )
        .default_reply(Reply::text(text));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = tine(&project, &server).args(["-p", "hello"]).run().await;
    out.assert_success();
    // stdout is a pipe here, as in `tine -p ... > file`: the bytes are the reply, once.
    assert_eq!(out.stdout, format!("{text}\n"));
    assert_eq!(server.requests().len(), 2);
    assert!(out.stderr.contains("retrying"), "{}", out.stderr);
}
