//! The away summary against the mock: the small fast model reads the last 30 messages (from a
//! person's message on) and no request carries `cache_control`; off by a setting, the handle's
//! call sends nothing.

use tine_mock_api::{Reply, Rule, Scenario};
use tine_session::{AWAY_MESSAGES, AWAY_QUERY_SOURCE};
use tine_session::{Op, SessionEvent, TurnOutcome};

use super::support::{Running, World, http_client, server};

const SUMMARY: &str = "You were renaming the parser module; next, run the tests.";

fn scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("The user stepped away")
                .reply(Reply::text(SUMMARY)),
        )
        .default_reply(Reply::text("Done with that step."))
}

async fn turns(s: &mut Running, n: usize) {
    for i in 0..n {
        s.handle
            .submit(Op::Prompt(format!("step {i} of renaming the parser")))
            .unwrap();
        assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    }
}

#[tokio::test]
async fn a_return_gets_one_to_three_sentences_from_the_small_model_without_cache_writes() {
    let world = World::new();
    let server = server(scenario()).await;
    let mut s = Running::start(world.options(http_client(&server))).await;
    assert_eq!(s.info.away_after, Some(std::time::Duration::from_secs(300)));
    turns(&mut s, 20).await;
    s.submit(Op::AwaySummary);
    let text = s
        .until(|e| match e {
            SessionEvent::AwaySummary(text) => Some(text.clone()),
            _ => None,
        })
        .await;
    assert_eq!(text, SUMMARY);

    let requests = server.requests();
    let away = requests.last().unwrap();
    let body = away.json().unwrap();
    assert!(
        body["model"].as_str().unwrap().contains("haiku"),
        "{}",
        body["model"]
    );
    assert!(
        !String::from_utf8_lossy(&away.body).contains("cache_control"),
        "a one-off request writes no cache"
    );
    let messages = body["messages"].as_array().unwrap();
    assert!(messages.len() <= AWAY_MESSAGES + 1, "{}", messages.len());
    assert!(messages.len() >= AWAY_MESSAGES - 1, "{}", messages.len());
    assert!(
        messages[0].to_string().contains("step 5 of renaming"),
        "{}",
        messages[0]
    );
    assert!(
        messages[messages.len() - 2]
            .to_string()
            .contains("Done with that step")
    );
    // Billed under its own source: the next turn's cost counts it.
    s.handle.submit(Op::Prompt("and now?".into())).unwrap();
    let cost = s.turn_end().await.cost;
    assert!(cost.by_source.contains_key(AWAY_QUERY_SOURCE), "{cost:?}");
}

#[tokio::test]
async fn off_by_a_setting_nothing_is_sent() {
    let world = World::new();
    world.project_settings(r#"{"awaySummaryEnabled": false}"#);
    let server = server(scenario()).await;
    let mut s = Running::start(world.options(http_client(&server))).await;
    assert_eq!(s.info.away_after, None);
    turns(&mut s, 2).await;
    s.submit(Op::AwaySummary);
    // Submissions run in order after it: by this turn's end the call was handled.
    turns(&mut s, 1).await;
    assert_eq!(server.requests().len(), 3);
    assert!(
        !s.seen
            .iter()
            .any(|e| matches!(e, SessionEvent::AwaySummary(_)))
    );
}
