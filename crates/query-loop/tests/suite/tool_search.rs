//! Deferred tools in the loop: a ToolSearch result loads a tool (its `tool_reference` in the
//! result, "Tool loaded." beside it), every later request appends the tool to the session's
//! array bytes, and a call to a deferred tool not loaded yet whose input does not fit its
//! schema gets Claude Code's advice while the loop goes on.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::json;
use tine_api_client::{
    ContentBlock, Message, MessageContent, ScriptedClient, StopReason, ToolResultContent, reply,
};
use tine_query_loop::{QueryEvent, QueryParams, RequestTemplate, query, system_prompt_blocks};
use tine_tools::{
    NotebookEditTool, ReadTool, TOOL_LOADED, Tool, ToolContext, ToolSearchTool, WebFetchTool,
    defer_tools,
};

fn deferred_params(client: &ScriptedClient, dir: &std::path::Path) -> QueryParams {
    let deferred = ["NotebookEdit", "WebFetch"];
    let plain: Vec<Arc<dyn Tool>> = vec![
        Arc::new(NotebookEditTool),
        Arc::new(ReadTool),
        Arc::new(WebFetchTool),
    ];
    let catalog: Vec<_> = plain
        .iter()
        .filter(|t| deferred.contains(&t.name()))
        .map(|t| tine_tools::definition_of(t.as_ref()))
        .collect();
    let mut tools = plain;
    tools.push(Arc::new(ToolSearchTool::new(catalog)));
    let array = defer_tools(&tine_query_loop::tool_definitions(&tools), |name| {
        deferred.contains(&name)
    });
    let template = RequestTemplate {
        model: "claude-sonnet-4-5".into(),
        system: Arc::new(system_prompt_blocks("You are tine.")),
        tools: array,
        thinking: None,
        skip_cache_write: false,
        replacements: None,
        effort: None,
    };
    QueryParams::new(
        Arc::new(client.clone()),
        template,
        Arc::from(tools),
        ToolContext::new(dir),
    )
}

fn call(id: &str, name: &str, input: serde_json::Value) -> tine_api_client::ResponseMessage {
    reply(
        vec![ContentBlock::tool_use(id, name, input)],
        StopReason::ToolUse,
    )
}

fn blocks(message: &Message) -> &[ContentBlock] {
    match &message.content {
        MessageContent::Blocks(blocks) => blocks,
        MessageContent::Text(_) => &[],
    }
}

fn names(tools: &tine_api_client::ToolArray) -> Vec<(&str, bool)> {
    tools
        .iter()
        .map(|t| (t.name.as_str(), t.defer_loading))
        .collect()
}

#[tokio::test]
async fn a_tool_search_loads_the_tool_for_every_later_request() {
    let dir = tempfile::tempdir().unwrap();
    let notebook = dir.path().join("n.ipynb");
    std::fs::write(
        &notebook,
        r#"{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"#,
    )
    .unwrap();
    let client = ScriptedClient::new();
    // Unloaded and with a made-up input: the advice, and the loop goes on.
    client.push_message(call("t1", "NotebookEdit", json!({"path": "n.ipynb"})));
    client.push_message(call(
        "t2",
        "ToolSearch",
        json!({"query": "select:NotebookEdit"}),
    ));
    client.push_message(ScriptedClient::text_reply("loaded"));
    let params = deferred_params(&client, dir.path());
    let base = params.template.tools.json();
    let events: Vec<QueryEvent> = query(params, vec![Message::user("edit the notebook")])
        .collect()
        .await;
    assert!(matches!(
        events.last(),
        Some(QueryEvent::Terminal(tine_query_loop::Terminal::Completed))
    ));
    let requests = client.requests();
    assert_eq!(requests.len(), 3);
    // The first two requests send the session's array: NotebookEdit is not in it.
    for request in &requests[..2] {
        assert_eq!(request.tools.json(), base);
        assert_eq!(
            names(&request.tools),
            [
                ("DeferredToolPlaceholder", true),
                ("Read", false),
                ("ToolSearch", false)
            ]
        );
    }
    let advice = match &blocks(requests[1].messages.last().unwrap())[0] {
        ContentBlock::ToolResult(r) => {
            assert_eq!(r.is_error, Some(true));
            match &r.content {
                Some(ToolResultContent::Text(t)) => t.clone(),
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    };
    assert!(
        advice.starts_with("InputValidationError: NotebookEdit was called with"),
        "{advice}"
    );
    assert!(advice.contains("call ToolSearch with query \"select:NotebookEdit\", then retry"));
    // The ToolSearch result: the reference alone, "Tool loaded." beside it.
    let last = blocks(requests[2].messages.last().unwrap());
    match &last[0] {
        ContentBlock::ToolResult(r) => assert_eq!(
            r.content,
            Some(ToolResultContent::Blocks(vec![
                ContentBlock::tool_reference("NotebookEdit")
            ]))
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(&last[1], ContentBlock::Text(t) if t.text == TOOL_LOADED));
    // The request after it: the session's bytes, then NotebookEdit deferred.
    let sent = requests[2].tools.json();
    assert!(sent.starts_with(base.trim_end_matches(']')), "{sent}");
    assert_eq!(
        names(&requests[2].tools).last(),
        Some(&("NotebookEdit", true))
    );
    assert_eq!(requests[2].tools.len(), 4);
}

#[tokio::test]
async fn a_reference_the_array_cannot_load_is_dropped_from_the_request() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    client.push_message(ScriptedClient::text_reply("ok"));
    let params = deferred_params(&client, dir.path());
    // A history (a resumed session's) that loaded a tool this session has not got.
    let history = vec![
        Message::user("go"),
        Message::assistant(vec![ContentBlock::tool_use(
            "t1",
            "ToolSearch",
            json!({"query": "select:mcp__gone__tool,WebFetch"}),
        )]),
        Message::user(vec![
            ContentBlock::ToolResult(tine_api_client::ToolResultBlock {
                tool_use_id: "t1".into(),
                content: Some(ToolResultContent::Blocks(vec![
                    ContentBlock::tool_reference("mcp__gone__tool"),
                    ContentBlock::tool_reference("WebFetch"),
                ])),
                is_error: None,
                cache_control: None,
            }),
            ContentBlock::text(TOOL_LOADED),
            ContentBlock::text("go on"),
        ]),
    ];
    let _: Vec<QueryEvent> = query(params, history).collect().await;
    let request = &client.requests()[0];
    match &blocks(&request.messages[2])[0] {
        ContentBlock::ToolResult(r) => assert_eq!(
            r.content,
            Some(ToolResultContent::Blocks(vec![
                ContentBlock::tool_reference("WebFetch")
            ]))
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(names(&request.tools).last(), Some(&("WebFetch", true)));
}
