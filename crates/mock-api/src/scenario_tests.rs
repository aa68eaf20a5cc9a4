use super::*;
use crate::reply::ReplyBlock;

#[test]
fn parses_a_scenario_with_every_kind_of_rule() {
    let s = Scenario::from_json(
        r#"{
          "context_window": 5000,
          "rules": [
            {"name": "greet", "when": {"last_user_text": "hello"}, "reply": "Hi!", "times": 1},
            {"when": {"last_user_text": {"regex": "read (?P<path>\\S+)"}, "has_tool": "Read"},
             "reply": {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "${path}"}}]}},
            {"when": {"request": 3}, "fault": {"kind": "http", "status": 529, "retry_after": 1}},
            {"when": {"tool_results": true}, "reply": {"content": [
               {"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "done"}],
               "stop_reason": "end_turn", "chunk_delay_ms": 5}},
            {"when": {"system": {"equals": "x"}}, "fault": {"kind": "drop", "after_events": 2}}
          ],
          "default": {"text": "fallback"}
        }"#,
        "test",
    )
    .unwrap();
    assert_eq!(s.rules.len(), 5);
    assert_eq!(s.context_window, 5000);
    assert_eq!(s.rules[0].times, Some(1));
    let caps = s.rules[1]
        .when
        .last_user_text
        .as_ref()
        .unwrap()
        .matches("please read src/main.rs now")
        .unwrap();
    assert_eq!(
        caps.named.get("path").map(String::as_str),
        Some("src/main.rs")
    );
    assert_eq!(
        s.default_reply.content,
        vec![ReplyBlock::Text {
            text: "fallback".into()
        }]
    );
}

#[test]
fn unknown_fields_and_bad_regexes_are_errors() {
    let err = Scenario::from_json(r#"{"rulez": []}"#, "t").unwrap_err();
    assert!(err.to_string().contains("rulez"), "{err}");
    let err = Scenario::from_json(
        r#"{"rules": [{"when": {"last_user_text": {"regex": "("}}}]}"#,
        "t",
    )
    .unwrap_err();
    assert!(err.to_string().contains("scenario t is not valid"), "{err}");
}

#[test]
fn min_cacheable_by_model() {
    let s = Scenario::new().min_cacheable_tokens_for("haiku", 2048);
    assert_eq!(s.min_cacheable_for("claude-haiku-4"), 2048);
    assert_eq!(s.min_cacheable_for("claude-sonnet-4"), 1024);
}
