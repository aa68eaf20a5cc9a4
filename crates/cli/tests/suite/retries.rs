//! Replies sent again, through the binary: text output holds each reply once (after a dropped
//! stream, a corrupt frame, a max_tokens escalation), a "resume directly" continuation is
//! appended, and a refused local connection fails after a few quick attempts with a message
//! that says nothing is listening there.

use tine_e2e::tine_mock_api::{Fault, Reply, Rule, Scenario};
use tine_e2e::{Project, TineRun};

use super::{TINE, mock, tine};

#[tokio::test]
async fn text_output_after_max_tokens_escalation_holds_the_reply_once() {
    // The retried request gets the reply again from its start, then its end.
    let full = "The beginning of a long answer, and then the rest of it.";
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .request(1)
                .reply(Reply::text("The beginning of a long").stop_reason("max_tokens")),
        )
        .default_reply(Reply::text(full));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = tine(&project, &server)
        .args(["-p", "write a lot"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.stdout, format!("{full}\n"));
    let limits: Vec<u64> = tine_e2e::request_bodies(&server)
        .iter()
        .map(|b| b["max_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(limits, [8000, 64000]);
}

#[tokio::test]
async fn text_output_appends_a_resumed_continuation() {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .request(1)
                .reply(Reply::text("Part one").stop_reason("max_tokens")),
        )
        .rule(
            Rule::new()
                .request(2)
                .reply(Reply::text("Part one, cut at the raised limit").stop_reason("max_tokens")),
        )
        .default_reply(Reply::text(" and part two."));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = tine(&project, &server)
        .args(["-p", "write a lot"])
        .run()
        .await;
    out.assert_success();
    // Request 1's cut reply was dropped (escalation); request 2's was kept and continued.
    assert_eq!(
        out.stdout,
        "Part one, cut at the raised limit and part two.\n"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_corrupt_frame_is_retried_and_the_reply_printed_once() {
    let text = "An answer that survives a corrupt frame in its first attempt.";
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .request(1)
                .reply(Reply::text(text))
                .fault(Fault::corrupt_after(5)),
        )
        // The json run below: its first attempt is corrupt too.
        .rule(
            Rule::new()
                .request(3)
                .reply(Reply::text(text))
                .fault(Fault::corrupt_after(5)),
        )
        .default_reply(Reply::text(text));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = tine(&project, &server).args(["-p", "hello"]).run().await;
    out.assert_success();
    assert_eq!(out.stdout, format!("{text}\n"));
    let log = server.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(
        log[0].fault.as_deref(),
        Some("corrupt frame after 5 events")
    );
    assert!(
        out.stderr.contains("could not be decoded"),
        "{}",
        out.stderr
    );

    // json: the result is the whole reply, and the retry was reported on stderr too.
    let out = tine(&project, &server)
        .args(["-p", "hello", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], text);
    assert!(out.stderr.contains("retrying"), "{}", out.stderr);
}

#[tokio::test]
async fn a_refused_local_connection_fails_after_three_attempts_naming_the_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let project = Project::new();
    for format in ["text", "json"] {
        let out = TineRun::new(TINE, &project, &url)
            .args(["-p", "hello", "--output-format", format])
            .run()
            .await;
        assert_eq!(out.code(), Some(1), "{}", out.stderr);
        let retries: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("retrying"))
            .collect();
        assert_eq!(retries.len(), 2, "{format}: {}", out.stderr);
        assert!(retries[0].contains("attempt 2 of 3"), "{}", out.stderr);
        assert!(retries[1].contains("attempt 3 of 3"), "{}", out.stderr);
        let message = format!("nothing is listening at {url}");
        assert!(out.stderr.contains(&message), "{format}: {}", out.stderr);
        assert!(out.stderr.contains("ANTHROPIC_BASE_URL"), "{}", out.stderr);
    }
}
