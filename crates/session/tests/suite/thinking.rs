//! `/thinking` (the TUI's Tab) turns extended thinking on and off between turns: the next
//! request carries the new config, everything before the messages stays the same bytes.

use tine_mock_api::{Reply, Scenario};
use tine_session::{Op, TurnOutcome};

use super::support::{Running, World, http_client, server};

#[tokio::test]
async fn the_thinking_command_changes_the_next_requests_only() {
    let world = World::new();
    let server = server(Scenario::new().default_reply(Reply::text("Fine."))).await;
    let mut options = world.options(http_client(&server));
    options.bare = true;
    // A model that takes a budget (the default, Opus 5.5, thinks adaptively).
    options.model = Some("claude-sonnet-4-5".into());
    let mut s = Running::start(options).await;
    let thinking = |args: &str| Op::Command {
        name: "thinking".into(),
        args: args.into(),
    };
    for submission in [
        Op::Prompt("first".into()),
        thinking(""),
        Op::Prompt("second".into()),
        thinking("off"),
        Op::Prompt("third".into()),
    ] {
        s.handle.submit(submission).unwrap();
        assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    }
    let bodies: Vec<serde_json::Value> = server
        .requests()
        .iter()
        .map(|r| r.json().unwrap())
        .collect();
    assert_eq!(bodies.len(), 3);
    assert!(bodies[0].get("thinking").is_none());
    assert_eq!(
        bodies[1]["thinking"],
        serde_json::json!({"type": "enabled", "budget_tokens": 31999})
    );
    assert!(bodies[1]["max_tokens"].as_u64().unwrap() > 31999);
    assert!(bodies[2].get("thinking").is_none());
    for body in &bodies[1..] {
        assert_eq!(body["system"], bodies[0]["system"]);
        assert_eq!(body["tools"], bodies[0]["tools"]);
    }
    s.shutdown().await;
}
