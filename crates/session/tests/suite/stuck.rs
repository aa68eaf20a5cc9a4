//! A stuck model (the same Read of a missing file failing the same way again and again): an
//! interactive session asks the person, who lets it go on (the loop sends more requests) or
//! stops it (none more); an interruption while asked ends the turn as interrupted; headless
//! sessions never ask.

use serde_json::json;
use tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_session::{Approvals, Op, SessionEvent, StuckDecision, StuckQuestion, TurnOutcome};

use super::support::{Running, World, http_client, server};

/// The model reads `missing.txt` whatever it is told, every time.
fn stuck_scenario(world: &World) -> Scenario {
    let read = || {
        Reply::text("Reading.")
            .with_tool_use("Read", json!({"file_path": world.cwd.join("missing.txt")}))
    };
    Scenario::new()
        .rule(Rule::new().tool_results(true).reply(read()))
        .rule(
            Rule::new()
                .last_user_contains("read the notes")
                .reply(read()),
        )
        .default_reply(Reply::text("Ok."))
}

async fn session(world: &World, server: &MockServer, approvals: Approvals) -> Running {
    let mut options = world.options(http_client(server));
    options.bare = true;
    options.approvals = approvals;
    Running::start(options).await
}

fn question(e: &SessionEvent) -> Option<StuckQuestion> {
    match e {
        SessionEvent::StuckModel(q) => Some(q.clone()),
        _ => None,
    }
}

fn requests(server: &MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/v1/messages"))
        .count()
}

#[tokio::test]
async fn the_person_lets_a_stuck_model_go_on_once_then_stops_it() {
    let world = World::new();
    let server = server(stuck_scenario(&world)).await;
    let mut s = session(&world, &server, Approvals::Interactive).await;
    s.handle
        .submit(Op::Prompt("read the notes".into()))
        .unwrap();
    let first = s.until(question).await;
    assert_eq!(first.tool, "Read");
    assert_eq!(first.repeats, 3);
    assert!(
        first.input["file_path"]
            .as_str()
            .unwrap()
            .ends_with("missing.txt")
    );
    assert!(!first.error.is_empty());
    assert_eq!(
        requests(&server),
        3,
        "three failing calls, then the question"
    );

    s.answer_stuck(first.id, StuckDecision::KeepGoing).unwrap();
    let second = s.until(question).await;
    assert_ne!(second.id, first.id);
    assert_eq!(requests(&server), 6, "the count started again");

    s.answer_stuck(second.id, StuckDecision::Stop).unwrap();
    let end = s.turn_end().await;
    match &end.outcome {
        TurnOutcome::Failed { message } => assert!(message.contains("stuck"), "{message}"),
        other => panic!("stopped as {other:?}"),
    }
    assert_eq!(requests(&server), 6, "no request after the stop");
    assert!(
        s.answer_stuck(second.id, StuckDecision::KeepGoing).is_err(),
        "an answered question takes no second answer"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn an_interruption_while_asked_ends_the_turn_as_interrupted() {
    let world = World::new();
    let server = server(stuck_scenario(&world)).await;
    let mut s = session(&world, &server, Approvals::Interactive).await;
    s.handle
        .submit(Op::Prompt("read the notes".into()))
        .unwrap();
    let asked = s.until(question).await;
    s.interrupt();
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    assert!(
        s.answer_stuck(asked.id, StuckDecision::KeepGoing).is_err(),
        "the question ended with its turn"
    );
    assert_eq!(requests(&server), 3);
    s.shutdown().await;
}

#[tokio::test]
async fn a_headless_session_stops_a_stuck_model_without_asking() {
    let world = World::new();
    let server = server(stuck_scenario(&world)).await;
    let mut s = session(&world, &server, Approvals::Headless).await;
    s.handle
        .submit(Op::Prompt("read the notes".into()))
        .unwrap();
    let end = s.turn_end().await;
    assert!(
        matches!(&end.outcome, TurnOutcome::Failed { message } if message.contains("stuck")),
        "{:?}",
        end.outcome
    );
    assert!(s.seen.iter().all(|e| question(e).is_none()));
    assert_eq!(requests(&server), 3);
    s.shutdown().await;
}
