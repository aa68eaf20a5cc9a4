use serde_json::json;
use tine_api_client::{ContentBlock, Message, MessageContent, MessagesRequest, Role};

use super::*;

fn user_text(t: &str) -> Message {
    Message::user(vec![ContentBlock::text(t)])
}

fn calls(ids: &[&str]) -> Message {
    Message::assistant(
        ids.iter()
            .map(|id| ContentBlock::tool_use(*id, "Read", json!({"file_path": "/x"})))
            .collect::<Vec<_>>(),
    )
}

fn results(ids: &[&str]) -> Message {
    Message::user(
        ids.iter()
            .map(|id| ContentBlock::tool_result(*id, "ok", false))
            .collect::<Vec<_>>(),
    )
}

fn bytes(messages: &[Message]) -> Vec<u8> {
    MessagesRequest::new("m", 1, messages.to_vec()).to_json_bytes()
}

#[test]
fn a_well_formed_history_is_left_alone() {
    let h = vec![user_text("hi"), calls(&["a", "b"]), results(&["a", "b"])];
    assert!(is_well_paired(&h));
    assert!(repair_tool_pairing(&h).is_none());
}

#[test]
fn an_unanswered_tool_use_at_the_end_gets_an_interrupted_result() {
    let h = vec![user_text("hi"), calls(&["a"])];
    let fixed = repair_tool_pairing(&h).expect("repaired");
    assert_eq!(fixed.len(), 3);
    assert_eq!(fixed[2].role, Role::User);
    let MessageContent::Blocks(b) = &fixed[2].content else {
        panic!("blocks")
    };
    match &b[0] {
        ContentBlock::ToolResult(r) => {
            assert_eq!(r.tool_use_id, "a");
            assert_eq!(r.is_error, Some(true));
        }
        other => panic!("{other:?}"),
    }
    assert!(is_well_paired(&fixed));
}

#[test]
fn missing_results_are_filled_in_call_order_before_user_text() {
    // The turn was killed after one of two tools answered; then the user typed again.
    let mut next = results(&["b"]);
    if let MessageContent::Blocks(b) = &mut next.content {
        b.push(ContentBlock::text("carry on"));
    }
    let h = vec![user_text("hi"), calls(&["a", "b"]), next];
    let fixed = repair_tool_pairing(&h).expect("repaired");
    let MessageContent::Blocks(b) = &fixed[2].content else {
        panic!("blocks")
    };
    let ids: Vec<_> = b
        .iter()
        .map(|b| match b {
            ContentBlock::ToolResult(r) => r.tool_use_id.clone(),
            ContentBlock::Text(t) => t.text.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(ids, ["a", "b", "carry on"]);
    assert!(is_well_paired(&fixed));
}

#[test]
fn orphan_and_duplicate_results_are_dropped() {
    let h = vec![
        user_text("hi"),
        Message::assistant(vec![ContentBlock::text("no tools")]),
        results(&["ghost"]),
        user_text("again"),
        calls(&["a"]),
        results(&["a", "a", "zzz"]),
    ];
    let fixed = repair_tool_pairing(&h).expect("repaired");
    assert!(is_well_paired(&fixed));
    // the all-orphan message is gone; the duplicate and the stranger are gone
    assert_eq!(fixed.len(), 5);
    let MessageContent::Blocks(b) = &fixed[4].content else {
        panic!("blocks")
    };
    assert_eq!(b.len(), 1);
}

#[test]
fn an_assistant_after_an_unanswered_call_gets_a_result_message_between() {
    let h = vec![
        user_text("hi"),
        calls(&["a"]),
        Message::assistant(vec![ContentBlock::text("later")]),
    ];
    let fixed = repair_tool_pairing(&h).expect("repaired");
    assert_eq!(fixed.len(), 4);
    assert_eq!(fixed[2].role, Role::User);
    assert!(is_well_paired(&fixed));
}

#[test]
fn repair_is_idempotent_and_byte_stable() {
    let h = vec![
        user_text("hi"),
        calls(&["a", "b"]),
        results(&["b", "x"]),
        calls(&["c"]),
    ];
    let once = repair_tool_pairing(&h).expect("repaired");
    assert!(
        repair_tool_pairing(&once).is_none(),
        "second repair changes nothing"
    );
    let again = repair_tool_pairing(&h).expect("repaired");
    assert_eq!(bytes(&once), bytes(&again));
}
