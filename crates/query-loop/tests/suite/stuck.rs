//! A stuck model: the same call failing the same way three times in a row ends the turn, or
//! the host's handler is asked (the TUI's hook) and may let it go on.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::json;
use tine_api_client::{ContentBlock, Message, ScriptedClient, StopReason, reply};
use tine_query_loop::{
    QueryEvent, QueryParams, RepeatedFailure, RepeatedFailureHandler, StuckDecision, Terminal,
    query,
};

use super::support::params;

async fn terminal(p: QueryParams) -> Terminal {
    let events: Vec<QueryEvent> = query(p, vec![Message::user(vec![ContentBlock::text("go")])])
        .collect()
        .await;
    match events.last() {
        Some(QueryEvent::Terminal(t)) => t.clone(),
        other => panic!("last event is not terminal: {other:?}"),
    }
}

/// A reply calling Edit on a file that does not exist: the same failure every time.
fn failing_edit(dir: &std::path::Path, id: &str) -> tine_api_client::ResponseMessage {
    let input = json!({
        "file_path": dir.join("missing.txt"),
        "old_string": "gone",
        "new_string": "here",
    });
    reply(
        vec![ContentBlock::tool_use(id, "Edit", input)],
        StopReason::ToolUse,
    )
}

#[tokio::test]
async fn the_same_failing_call_three_times_ends_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    for i in 0..10 {
        client.push_message(failing_edit(dir.path(), &format!("t{i}")));
    }
    let terminal = terminal(params(&client, dir.path())).await;
    let Terminal::RepeatedToolFailure {
        tool,
        error,
        repeats,
    } = &terminal
    else {
        panic!("{terminal:?}");
    };
    assert_eq!((tool.as_str(), *repeats), ("Edit", 3));
    assert!(!error.is_empty());
    assert_eq!(
        client.requests().len(),
        3,
        "no request after the third failure"
    );
    assert_eq!(terminal.subtype(), "error_repeated_tool_failure");
    let said = terminal.describe();
    assert!(said.contains("stuck") && said.contains("Edit"), "{said}");
}

#[tokio::test]
async fn a_different_call_in_between_breaks_the_streak() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    client.push_message(failing_edit(dir.path(), "t1"));
    client.push_message(failing_edit(dir.path(), "t2"));
    client.push_message(reply(
        vec![ContentBlock::tool_use(
            "t3",
            "Glob",
            json!({"pattern": "*.txt"}),
        )],
        StopReason::ToolUse,
    ));
    client.push_message(failing_edit(dir.path(), "t4"));
    client.push_message(failing_edit(dir.path(), "t5"));
    client.push_message(ScriptedClient::text_reply("I give up."));
    assert_eq!(
        terminal(params(&client, dir.path())).await,
        Terminal::Completed
    );
}

struct CountingHandler {
    asked: AtomicU32,
    decision: StuckDecision,
}

impl RepeatedFailureHandler for CountingHandler {
    fn on_repeated_failure<'a>(
        &'a self,
        failure: &'a RepeatedFailure,
    ) -> BoxFuture<'a, StuckDecision> {
        assert_eq!(failure.tool, "Edit");
        self.asked.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move { self.decision })
    }
}

#[tokio::test]
async fn a_host_handler_may_let_the_model_go_on_until_max_turns() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    for i in 0..10 {
        client.push_message(failing_edit(dir.path(), &format!("t{i}")));
    }
    let handler = Arc::new(CountingHandler {
        asked: AtomicU32::new(0),
        decision: StuckDecision::KeepGoing,
    });
    let mut p = params(&client, dir.path());
    p.on_repeated_failure = Some(handler.clone());
    p.max_turns = Some(7);
    assert_eq!(terminal(p).await, Terminal::MaxTurns { turns: 7 });
    // Asked after failures 3 and 6: the count starts again each time.
    assert_eq!(handler.asked.load(Ordering::SeqCst), 2);
}
