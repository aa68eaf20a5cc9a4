//! Sub-agents in the session: a background fork child runs under a child of its parent's
//! turn's token, so interrupting the turn cancels it (and its task says so).

use std::time::Duration;

use serde_json::json;
use tine_fork_runtime::TaskState;
use tine_mock_api::{Reply, Rule, Scenario};
use tine_session::{Submission, TurnOutcome};

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
    s.handle
        .submit(Submission::Prompt("start a child".into()))
        .unwrap();
    let tasks = s.handle.tasks().clone();
    let mut waited = 0;
    while tasks.list().is_empty() {
        assert!(waited < 600, "the child never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    s.handle.interrupt();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Interrupted);
    let mut waited = 0;
    let task = loop {
        let task = tasks.list().remove(0);
        if task.state != TaskState::Running {
            break task;
        }
        assert!(waited < 600, "the child was not cancelled with the turn");
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    };
    assert_eq!(task.state, TaskState::Cancelled);
    let output = std::fs::read_to_string(&task.output_file).unwrap();
    assert!(output.ends_with("[cancelled]\n"), "{output}");
    s.shutdown().await;
}
