//! Failures the run recovers from: an overloaded API, a stream cut mid-reply, a reply cut at
//! `max_tokens`, a prompt that does not fit (reactive compaction). Over both wires (`both_wires!`).

use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Fault, Reply, Rule, Scenario};

use super::mock;
use super::wire::{Wire, both_wires, model_bodies, tine_on};

both_wires!(
    a_529_with_retry_after_is_retried_and_the_run_succeeds,
    a_stream_dropped_mid_reply_is_retried_without_duplicated_text,
    max_tokens_escalates_once_then_asks_the_model_to_resume,
    redirected_text_output_holds_a_reply_cut_mid_stream_once,
    a_prompt_that_does_not_fit_is_compacted_and_the_run_goes_on,
);

async fn a_529_with_retry_after_is_retried_and_the_run_succeeds(wire: Wire) {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .request(1)
                .fault(Fault::http_retry_after(529, 1)),
        )
        .default_reply(Reply::text("Back again."));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = tine_on(wire, &project, &server)
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

async fn a_stream_dropped_mid_reply_is_retried_without_duplicated_text(wire: Wire) {
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
    let out = tine_on(wire, &project, &server)
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

async fn max_tokens_escalates_once_then_asks_the_model_to_resume(wire: Wire) {
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
    let out = tine_on(wire, &project, &server)
        .args(["-p", "write a lot", "--output-format", "json", "--verbose"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "part two");
    let bodies = model_bodies(&server);
    let limits: Vec<u64> = bodies
        .iter()
        .map(|b| b["max_tokens"].as_u64().unwrap())
        .collect();
    // The escalation is capped at the model's output limit: 64k for Claude, the 32k assumed for
    // a model tine does not know.
    let escalated = match wire {
        Wire::Anthropic => 64000,
        Wire::OpenAi => 32000,
    };
    assert_eq!(limits, [8000, escalated, escalated]);
    // Request 1's cut reply was dropped; request 2's was kept and followed by the nudge.
    let messages = bodies[2]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert!(messages[1].to_string().contains("part one"));
    assert!(messages[2].to_string().contains("Output token limit hit"));
    assert!(
        out.stderr
            .contains(&format!("max_output_tokens escalation 8000 -> {escalated}")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("max_output_tokens recovery #1"),
        "{}",
        out.stderr
    );
}

async fn redirected_text_output_holds_a_reply_cut_mid_stream_once(wire: Wire) {
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
    let out = tine_on(wire, &project, &server)
        .args(["-p", "hello"])
        .run()
        .await;
    out.assert_success();
    // stdout is a pipe here, as in `tine -p ... > file`: the bytes are the reply, once.
    assert_eq!(out.stdout, format!("{text}\n"));
    assert_eq!(server.requests().len(), 2);
    assert!(out.stderr.contains("retrying"), "{}", out.stderr);
}

async fn a_prompt_that_does_not_fit_is_compacted_and_the_run_goes_on(wire: Wire) {
    // Anthropic's `prompt is too long`, or a chat server's `context_length_exceeded`: the same
    // path either way, reactive compaction (the `SessionCompactor` -p installs), and the run
    // goes on over the same wire. What came before the prompt is summarized; the prompt is not.
    let scenario = Scenario::new()
        .rule(Rule::new().request(2).fault(Fault::prompt_too_long()))
        .default_reply(Reply::text("Recovered."));
    let server = mock(scenario).await;
    let project = Project::new();
    let earlier = format!("remember this: {}", "an earlier long message. ".repeat(400));
    tine_on(wire, &project, &server)
        .args(["-p", &earlier])
        .run()
        .await
        .assert_success();
    let out = tine_on(wire, &project, &server)
        .args(["-c", "-p", "and now this", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Recovered.");
    // The refused request, then compaction's and the retried turn's, all on one wire.
    let bodies = model_bodies(&server);
    assert!(bodies.len() >= 4, "{} requests", bodies.len());
    assert_eq!(bodies.len(), server.requests().len());
    let last = bodies.last().unwrap().to_string();
    assert!(
        last.contains("and now this"),
        "the prompt reached the model"
    );
    assert!(
        !last.contains("an earlier long message. an earlier"),
        "{last}"
    );
}
