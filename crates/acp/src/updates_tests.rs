use serde_json::json;
use tine_session::PermissionMode;

use super::*;

fn wire(updates: Vec<SessionUpdate>) -> Vec<Value> {
    updates
        .into_iter()
        .map(|update| serde_json::to_value(update).unwrap())
        .collect()
}

#[test]
fn text_and_thinking_stream_as_chunks() {
    let mut t = Translator::default();
    let text = wire(t.updates(&SessionEvent::Query(QueryEvent::TextDelta {
        text: "Hello".into(),
    })));
    assert_eq!(text[0]["sessionUpdate"], "agent_message_chunk");
    assert_eq!(text[0]["content"]["text"], "Hello");
    let thought = wire(t.updates(&SessionEvent::Query(QueryEvent::ThinkingDelta {
        text: "hmm".into(),
    })));
    assert_eq!(thought[0]["sessionUpdate"], "agent_thought_chunk");
}

#[test]
fn a_call_is_announced_run_and_finished() {
    let mut t = Translator::default();
    let input = json!({"file_path": "/p/a.txt"});
    let call = wire(t.updates(&SessionEvent::ToolInput {
        id: "toolu_1".into(),
        tool: "Read".into(),
        input: input.clone(),
    }));
    assert_eq!(call[0]["sessionUpdate"], "tool_call");
    assert_eq!(call[0]["toolCallId"], "toolu_1");
    assert_eq!(call[0]["kind"], "read");
    let done = wire(t.updates(&SessionEvent::Query(QueryEvent::ToolResult {
        tool_use_id: "toolu_1".into(),
        tool: "Read".into(),
        output: ToolOutput::text("1\thello"),
    })));
    assert_eq!(done[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(done[0]["status"], "completed");
}

#[test]
fn todo_write_is_the_plan_and_no_tool_call() {
    let mut t = Translator::default();
    let input = json!({"todos": [
        {"content": "Write the test", "status": "completed", "activeForm": "Writing"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing"},
        {"content": "Ship", "status": "pending", "activeForm": "Shipping"}
    ]});
    let plan = wire(t.updates(&SessionEvent::ToolInput {
        id: "toolu_2".into(),
        tool: "TodoWrite".into(),
        input,
    }));
    assert_eq!(plan.len(), 1);
    assert_eq!(plan[0]["sessionUpdate"], "plan");
    let entries = plan[0]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["content"], "Write the test");
    assert_eq!(entries[0]["status"], "completed");
    assert_eq!(entries[1]["status"], "in_progress");
    assert_eq!(entries[2]["priority"], "medium");
    let result = t.updates(&SessionEvent::Query(QueryEvent::ToolResult {
        tool_use_id: "toolu_2".into(),
        tool: "TodoWrite".into(),
        output: ToolOutput::text("ok"),
    }));
    assert!(result.is_empty());
}

#[test]
fn a_mode_change_is_the_current_mode() {
    let mut t = Translator::default();
    let update = wire(t.updates(&SessionEvent::PermissionModeChanged(
        PermissionMode::AcceptEdits,
    )));
    assert_eq!(update[0]["sessionUpdate"], "current_mode_update");
    assert_eq!(update[0]["currentModeId"], "acceptEdits");
}

#[test]
fn history_replays_prompts_answers_and_calls() {
    let mut t = Translator::default();
    let updates = wire(t.replay(&[
        HistoryItem::Prompt("read a.txt".into()),
        HistoryItem::ToolCall {
            id: "toolu_1".into(),
            tool: "Read".into(),
            input: json!({"file_path": "/p/a.txt"}),
        },
        HistoryItem::ToolResult {
            id: "toolu_1".into(),
            is_error: false,
            content: "1\thello".into(),
        },
        HistoryItem::Text("It says hello.".into()),
    ]));
    let kinds: Vec<&str> = updates
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ]
    );
    assert_eq!(updates[0]["content"]["text"], "read a.txt");
    assert_eq!(updates[2]["status"], "completed");
}
