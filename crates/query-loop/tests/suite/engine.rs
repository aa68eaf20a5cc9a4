//! The session: messages and usage across turns, the transcript, resume.

use std::sync::Arc;

use serde_json::json;
use tine_api_client::{
    ContentBlock, MessageContent, ModelClient, Role, ScriptedClient, StopReason, ToolDefinition,
    Usage, reply,
};
use tine_query_loop::{AllowAll, EngineConfig, QueryEngine, Terminal, read_transcript};
use tine_tools::Tool;
use tine_tools::builtin_tools;

fn config(client: &ScriptedClient, home: &std::path::Path, cwd: &std::path::Path) -> EngineConfig {
    let tools: Vec<Arc<dyn Tool>> = builtin_tools();
    let defs: Vec<ToolDefinition> = tine_query_loop::tool_definitions(&tools).to_vec();
    let client: Arc<dyn ModelClient> = Arc::new(client.clone());
    EngineConfig {
        client,
        model: "claude-sonnet-4-5".into(),
        cwd: cwd.to_path_buf(),
        home: home.to_path_buf(),
        system_prompt: Arc::from("You are tine."),
        user_context: Some(Arc::from("<system-reminder>ctx</system-reminder>")),
        tools: Arc::from(tools),
        tool_definitions: defs.into(),
        thinking: None,
        max_turns: None,
        can_use_tool: Arc::new(AllowAll),
        prompter: None,
        tool_context: None,
        stop_hooks: None,
        hooks: None,
        compactor: None,
        post_sampling: None,
        on_request: None,
        monitor: None,
        persist: true,
    }
}

fn with_usage(
    mut m: tine_api_client::ResponseMessage,
    input: u64,
    read: u64,
) -> tine_api_client::ResponseMessage {
    m.usage = Usage {
        input_tokens: input,
        output_tokens: 10,
        cache_read_input_tokens: read,
        ..Usage::default()
    };
    m
}

#[tokio::test]
async fn a_session_keeps_messages_usage_and_a_transcript_and_resumes() {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("f.txt"), "hello\n").unwrap();
    let client = ScriptedClient::new();
    client.push_message(with_usage(
        reply(
            vec![ContentBlock::tool_use(
                "t1",
                "Read",
                json!({"file_path": cwd.path().join("f.txt")}),
            )],
            StopReason::ToolUse,
        ),
        100,
        0,
    ));
    client.push_message(with_usage(
        ScriptedClient::text_reply("it says hello"),
        20,
        100,
    ));
    let mut engine = QueryEngine::new(config(&client, home.path(), cwd.path()))
        .await
        .unwrap();
    let mut seen = 0;
    let turn = engine.submit("what is in f.txt?", |_| seen += 1).await;
    assert_eq!(turn.terminal, Terminal::Completed);
    assert_eq!(turn.result, "it says hello");
    assert_eq!(turn.num_turns, 2);
    assert_eq!(turn.usage.input_tokens, 120);
    assert_eq!(turn.usage.cache_read_input_tokens, 100);
    assert!(turn.cost_usd > 0.0);
    assert!(seen > 4);
    assert_eq!(engine.messages().len(), 4);
    // the first user message carries the user context before the prompt
    let MessageContent::Blocks(first) = &engine.messages()[0].content else {
        panic!()
    };
    assert_eq!(first.len(), 2);

    // transcript: 4 messages + 1 transition, all in the chain
    let read = read_transcript(engine.transcript_path()).await.unwrap();
    let kinds: Vec<_> = read
        .records
        .iter()
        .map(|r| r.kind.as_str().to_owned())
        .collect();
    assert_eq!(
        kinds,
        ["user", "assistant", "user", "transition", "assistant"]
    );
    let id = engine.session_id().clone();
    drop(engine);

    // resume: the conversation is back and the next request carries it
    let before = client.requests().pop().unwrap();
    client.push_message(ScriptedClient::text_reply("still hello"));
    // A later process renders another context (a new date, a new git status): the resumed
    // session replays the frozen one from the transcript instead.
    let mut later = config(&client, home.path(), cwd.path());
    later.user_context = Some(Arc::from(
        "<system-reminder>ctx of a later day</system-reminder>",
    ));
    let mut resumed = QueryEngine::resume(later, id).await.unwrap();
    assert_eq!(resumed.messages().len(), 4);
    let turn = resumed.submit("and now?", |_| {}).await;
    assert_eq!(turn.terminal, Terminal::Completed);
    let last = client.requests().pop().unwrap();
    assert_eq!(last.messages.len(), 5);
    // byte for byte the previous run's last request (breakpoints aside, they are not part of
    // the cache key), then its reply and the new prompt
    let bytes = |messages: &[tine_api_client::Message]| {
        let text = serde_json::to_string(messages).unwrap();
        text.replace(r#","cache_control":{"type":"ephemeral"}"#, "")
    };
    assert_eq!(bytes(&last.messages[..3]), bytes(&before.messages));
    let sent = serde_json::to_string(&last.messages).unwrap();
    assert!(sent.contains("<system-reminder>ctx</system-reminder>"));
    assert!(!sent.contains("later day"));
    // no user context repeated on a resumed session
    let MessageContent::Blocks(b) = &last.messages[4].content else {
        panic!()
    };
    assert_eq!(b.len(), 1);
    assert_eq!(last.messages[4].role, Role::User);
}

#[tokio::test]
async fn a_session_killed_mid_turn_resumes_with_its_pairing_repaired() {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    // The model calls a tool; the process "dies" before the result is written: simulate by
    // writing the transcript of such a session by hand through the engine's writer.
    let id = tine_config::SessionId::new_random();
    {
        let path = tine_config::transcript_path(home.path(), cwd.path(), &id);
        let mut w = tine_query_loop::TranscriptWriter::open(
            path.clone(),
            tine_query_loop::WriterOptions {
                session_id: id.clone(),
                cwd: cwd.path().to_path_buf(),
                agent_id: None,
                parent_uuid: None,
            },
        )
        .await
        .unwrap();
        w.append_message(&tine_api_client::Message::user(vec![ContentBlock::text(
            "run it",
        )]))
        .await
        .unwrap();
        w.append_message(&tine_api_client::Message::assistant(vec![
            ContentBlock::tool_use("t9", "Bash", json!({"command": "sleep 100"})),
        ]))
        .await
        .unwrap();
        // and a torn last line, as a kill mid-write leaves
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"type\":\"user\",\"uuid\":\"x").unwrap();
    }
    client.push_message(ScriptedClient::text_reply("ok, it was interrupted"));
    let mut engine = QueryEngine::resume(config(&client, home.path(), cwd.path()), id)
        .await
        .unwrap();
    assert_eq!(engine.resume_warnings().len(), 1);
    let turn = engine.submit("what happened?", |_| {}).await;
    assert_eq!(turn.terminal, Terminal::Completed);
    let sent = client.requests().pop().unwrap();
    assert!(tine_query_loop::is_well_paired(&sent.messages));
    let MessageContent::Blocks(b) = &sent.messages[2].content else {
        panic!()
    };
    assert!(matches!(&b[0], ContentBlock::ToolResult(r) if r.tool_use_id == "t9"));
}
