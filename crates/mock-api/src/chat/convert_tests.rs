use serde_json::json;

use super::*;

fn chat() -> Value {
    json!({
        "model": "qwen2.5-coder:7b",
        "stream": true,
        "stream_options": {"include_usage": true},
        "tools": [{"type": "function", "function": {"name": "Read", "description": "Reads", "parameters": {"type": "object"}}}],
        "messages": [
            {"role": "system", "content": "You are tine."},
            {"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"a\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "Read", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "alpha"},
            {"role": "tool", "tool_call_id": "call_2", "content": "beta"},
            {"role": "user", "content": "and now?"},
        ],
        "max_tokens": 500,
    })
}

#[test]
fn converts_to_the_messages_form_the_rules_read() {
    let body = chat();
    check_body(&body).unwrap();
    let converted = to_messages_form(&body);
    assert_eq!(converted["system"], "You are tine.");
    assert_eq!(converted["max_tokens"], 500);
    assert_eq!(converted["tools"][0]["name"], "Read");
    assert_eq!(
        converted["tools"][0]["input_schema"],
        json!({"type": "object"})
    );
    let messages = converted["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(
        messages[0]["content"][1]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": "AAAA"})
    );
    assert_eq!(
        messages[1]["content"][0]["input"],
        json!({"file_path": "a"})
    );
    // Tool results and the user's words after them are one user message.
    let last = messages[2]["content"].as_array().unwrap();
    assert_eq!(last[0]["type"], "tool_result");
    assert_eq!(last[1]["tool_use_id"], "call_2");
    assert_eq!(last[2], json!({"type": "text", "text": "and now?"}));
    let texts = crate::prompt::RequestTexts::from_body(&converted);
    assert!(texts.last_user_has_tool_results);
    // And it passes the Messages checks the scenario's body would.
    crate::validate::check_body(&converted, crate::validate::Endpoint::Messages).unwrap();
}

#[test]
fn refuses_what_openai_refuses() {
    let mut unknown = chat();
    unknown["thinking"] = json!({"type": "enabled"});
    assert_eq!(
        check_body(&unknown).unwrap_err().message,
        "Unrecognized request argument supplied: thinking"
    );
    let mut unanswered = chat();
    unanswered["messages"].as_array_mut().unwrap().remove(4);
    let err = check_body(&unanswered).unwrap_err();
    assert!(
        err.message
            .contains("did not have response messages: call_2"),
        "{}",
        err.message
    );
    let mut stray = chat();
    stray["messages"].as_array_mut().unwrap().remove(2);
    let err = check_body(&stray).unwrap_err();
    assert!(
        err.message
            .contains("must be a response to a preceeding message"),
        "{}",
        err.message
    );
    let mut options = chat();
    options["stream"] = json!(false);
    assert!(
        check_body(&options)
            .unwrap_err()
            .message
            .contains("stream_options")
    );
    let mut bad_args = chat();
    bad_args["messages"][2]["tool_calls"][0]["function"]["arguments"] = json!("{\"file_path\":");
    assert!(
        check_body(&bad_args)
            .unwrap_err()
            .message
            .contains("not valid JSON")
    );
}

#[test]
fn prefixes_are_shared_up_to_the_first_changed_message() {
    let first = chat();
    let mut longer = chat();
    longer["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "assistant", "content": "Done."}));
    let mut cache = PrefixCache::default();
    let a = analyze(&first);
    assert_eq!(cache.cached_tokens(&a), 0);
    cache.commit(&a);
    let b = analyze(&longer);
    assert_eq!(cache.cached_tokens(&b), a.total_tokens);
    // A tool call's arguments re-serialized differently is a miss from that message on.
    let mut respaced = longer.clone();
    respaced["messages"][2]["tool_calls"][1]["function"]["arguments"] = json!("{ }");
    let c = analyze(&respaced);
    let before_call = a
        .blocks
        .iter()
        .find(|b| b.message == Some(2))
        .unwrap()
        .prefix_tokens
        - a.blocks
            .iter()
            .find(|b| b.message == Some(2))
            .unwrap()
            .tokens;
    assert_eq!(cache.cached_tokens(&c), before_call);
    // The model is part of every key.
    let mut other_model = first;
    other_model["model"] = json!("llama3");
    assert_eq!(cache.cached_tokens(&analyze(&other_model)), 0);
}

#[test]
fn the_key_is_the_bearer_token() {
    let mut headers = HeaderMap::new();
    assert_eq!(check_headers(&headers).unwrap_err().status, 401);
    headers.insert("authorization", "Bearer ".parse().unwrap());
    assert!(check_headers(&headers).is_err());
    headers.insert("authorization", "Bearer ollama".parse().unwrap());
    check_headers(&headers).unwrap();
}
