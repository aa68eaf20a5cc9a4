//! ExitPlanMode through the real tool and the session's permission checker: in plan mode a
//! person sees the plan; approving leaves plan mode (option 1: default, option 2: acceptEdits)
//! and the next write runs; "No" keeps plan mode and the model reads the feedback. Headless
//! it is refused (the model is told to give the plan as its answer); outside plan mode too.

use serde_json::json;
use tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_permissions::PermissionMode;
use tine_query_loop::QueryEvent;
use tine_session::{Approvals, Op, PermissionAnswer, SessionEvent};

use super::support::{Running, World, http_client, server};

const PLAN: &str = "1. Write plan.txt\n2. Done";

/// The model presents its plan, then (once the result is in) writes a file, then stops.
fn planning() -> Scenario {
    Scenario::new()
        .rule(Rule::new().assistant_turns(0).reply(
            Reply::text("Here is my plan.").with_tool_use("ExitPlanMode", json!({"plan": PLAN})),
        ))
        .rule(
            Rule::new()
                .assistant_turns(1)
                .marker("approved your plan")
                .reply(Reply::text("Writing.").with_tool_use(
                    "Write",
                    json!({"file_path": "plan.txt", "content": "done\n"}),
                )),
        )
        .default_reply(Reply::text("Stopping."))
}

async fn start(
    world: &World,
    server: &MockServer,
    approvals: Approvals,
    mode: PermissionMode,
) -> Running {
    let mut options = world.options(http_client(server));
    options.bare = true;
    options.approvals = approvals;
    options.permission_mode = Some(mode);
    Running::start(options).await
}

fn results(events: &[SessionEvent]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Query(QueryEvent::ToolResult { output, .. }) => {
                Some((output.is_error, output.content.clone()))
            }
            _ => None,
        })
        .collect()
}

fn mode_changes(events: &[SessionEvent]) -> Vec<PermissionMode> {
    events
        .iter()
        .filter_map(|e| match e {
            SessionEvent::PermissionModeChanged(mode) => Some(*mode),
            _ => None,
        })
        .collect()
}

async fn asked(answer: PermissionAnswer) -> (World, Vec<SessionEvent>) {
    let world = World::new();
    let server = server(planning()).await;
    let mut s = start(
        &world,
        &server,
        Approvals::Interactive,
        PermissionMode::Plan,
    )
    .await;
    s.handle.submit(Op::Prompt("plan it".into())).unwrap();
    let ask = s
        .until(|e| match e {
            SessionEvent::PermissionRequest(r) => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(ask.tool, "ExitPlanMode");
    assert_eq!(ask.target, PLAN, "the dialog shows the plan");
    assert_eq!(
        ask.always,
        Some(tine_session::AlwaysAllow::Mode(PermissionMode::AcceptEdits))
    );
    s.answer_permission(ask.id, answer).unwrap();
    // In default mode the Write asks in turn: refuse it; the turn then ends.
    loop {
        let next = s
            .until(|e| match e {
                SessionEvent::PermissionRequest(r) => Some(Some(r.clone())),
                SessionEvent::TurnEnded(_) => Some(None),
                _ => None,
            })
            .await;
        let Some(request) = next else { break };
        assert_eq!(request.tool, "Write");
        s.answer_permission(request.id, PermissionAnswer::Deny { feedback: None })
            .unwrap();
    }
    let (_, events) = s.shutdown().await;
    (world, events)
}

#[tokio::test]
async fn approving_the_plan_leaves_plan_mode_and_the_write_runs() {
    let (world, events) = asked(PermissionAnswer::Always).await;
    assert_eq!(mode_changes(&events), [PermissionMode::AcceptEdits]);
    let results = results(&events);
    assert!(!results[0].0, "{results:?}");
    assert!(
        results[0].1.starts_with("User has approved your plan"),
        "{results:?}"
    );
    // acceptEdits: the Write inside the project runs without another question.
    assert!(!results[1].0, "{results:?}");
    assert_eq!(
        std::fs::read_to_string(world.cwd.join("plan.txt")).unwrap(),
        "done\n"
    );
}

#[tokio::test]
async fn option_one_switches_to_default_mode() {
    let (_world, events) = asked(PermissionAnswer::Once).await;
    assert_eq!(mode_changes(&events), [PermissionMode::Default]);
}

#[tokio::test]
async fn no_keeps_plan_mode_and_the_model_reads_the_feedback() {
    let (world, events) = asked(PermissionAnswer::Deny {
        feedback: Some("also update the README".into()),
    })
    .await;
    assert!(mode_changes(&events).is_empty());
    let results = results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].0);
    assert!(results[0].1.contains("still in plan mode"), "{results:?}");
    assert!(
        results[0].1.contains("also update the README"),
        "{results:?}"
    );
    assert!(!world.cwd.join("plan.txt").exists());
}

#[tokio::test]
async fn headless_plan_mode_refuses_and_outside_plan_mode_there_is_nothing_to_leave() {
    for (mode, expected) in [
        (
            PermissionMode::Plan,
            "nobody can approve it in non-interactive mode",
        ),
        (PermissionMode::Default, "Not in plan mode"),
    ] {
        let world = World::new();
        let server = server(planning()).await;
        let mut s = start(&world, &server, Approvals::Headless, mode).await;
        s.handle.submit(Op::Prompt("plan it".into())).unwrap();
        s.turn_end().await;
        let (_, events) = s.shutdown().await;
        assert!(mode_changes(&events).is_empty());
        let results = results(&events);
        assert_eq!(results.len(), 1, "{results:?}");
        assert!(
            results[0].0 && results[0].1.contains(expected),
            "{results:?}"
        );
    }
}
