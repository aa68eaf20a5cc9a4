//! Sub-agents in the session: a background fork child runs under a child of its parent's
//! turn's token, so interrupting the turn cancels it (and its task says so).

use serde_json::json;
use tine_fork_runtime::TaskState;
use tine_mock_api::{Reply, Rule, Scenario};
use tine_session::{Op, SessionEvent, TurnOutcome};

use super::support::{Running, World, http_client, server};

#[tokio::test]
async fn a_fork_child_is_cancelled_with_its_parents_turn() {
    let world = World::new();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("Your directive: SLOW-CHILD")
                .named("child")
                .reply(Reply::text("Scope: never").latency_ms(600_000)),
        )
        .rule(
            Rule::new()
                .assistant_turns(0)
                .named("parent")
                .reply(Reply::tool_use(
                    "Agent",
                    json!({"description": "slow", "prompt": "SLOW-CHILD"}),
                )),
        )
        // The parent's turn keeps running after the launch, so it can be interrupted.
        .default_reply(Reply::text("Waiting.").latency_ms(600_000));
    let server = server(scenario).await;
    let mut options = world.options(http_client(&server));
    options.bare = true;
    let mut s = Running::start(options).await;
    s.handle.submit(Op::Prompt("start a child".into())).unwrap();
    // The tasks panel's feed says when the child starts, and how it ended.
    let started = s
        .until(|e| match e {
            SessionEvent::Task(task) if task.state == TaskState::Running => Some(task.clone()),
            _ => None,
        })
        .await;
    s.interrupt();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Interrupted);
    let ended = s
        .seen_or_until(|e| match e {
            SessionEvent::Task(task)
                if task.id == started.id && task.state != TaskState::Running =>
            {
                Some(task.clone())
            }
            _ => None,
        })
        .await;
    assert_eq!(
        ended.state,
        TaskState::Cancelled,
        "the child was not cancelled with the turn"
    );
    let output = std::fs::read_to_string(ended.output_file.as_ref().unwrap()).unwrap();
    assert!(output.ends_with("[cancelled]\n"), "{output}");
    s.shutdown().await;
}
