//! The loop against a scripted model: tool batches, denials, max_tokens recovery, stop hooks,
//! prompt too long, cancellation, and the breakpoints of consecutive requests.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tine_api_client::{
    ApiError, ApiErrorKind, ContentBlock, Message, MessageContent, ScriptedClient, StopReason,
    reply,
};
use tine_query_loop::hooks::StopHookOutcome;
use tine_query_loop::{
    BeforeRequest, CanUseTool, CompactBoundary, CompactContext, CompactTrigger, Compacted,
    Compactor, PermissionOutcome, QueryEvent, QueryParams, StopContext, StopHooks, Terminal,
    Transition, is_well_paired, query,
};
use tine_tools::{Tool, ToolContext};

use super::support::params;

async fn run(p: QueryParams, prompt: &str) -> Vec<QueryEvent> {
    query(p, vec![Message::user(vec![ContentBlock::text(prompt)])])
        .collect()
        .await
}

fn terminal(events: &[QueryEvent]) -> &Terminal {
    match events.last() {
        Some(QueryEvent::Terminal(t)) => t,
        other => panic!("last event is not terminal: {other:?}"),
    }
}

fn transitions(events: &[QueryEvent]) -> Vec<Transition> {
    events
        .iter()
        .filter_map(|e| match e {
            QueryEvent::Transition(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

fn tool_results(m: &Message) -> Vec<(String, bool, String)> {
    let MessageContent::Blocks(blocks) = &m.content else {
        return vec![];
    };
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult(r) => Some((
                r.tool_use_id.clone(),
                r.is_error.unwrap_or(false),
                match &r.content {
                    Some(tine_api_client::ToolResultContent::Text(t)) => t.clone(),
                    other => format!("{other:?}"),
                },
            )),
            _ => None,
        })
        .collect()
}

fn calls(items: &[(&str, &str, Value)]) -> tine_api_client::ResponseMessage {
    reply(
        items
            .iter()
            .map(|(id, name, input)| ContentBlock::tool_use(*id, *name, input.clone()))
            .collect(),
        StopReason::ToolUse,
    )
}

#[tokio::test]
async fn parallel_reads_then_a_serial_edit_then_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.txt");
    let b = dir.path().join("b.txt");
    std::fs::write(&a, "alpha\n").unwrap();
    std::fs::write(&b, "beta\n").unwrap();
    let client = ScriptedClient::new();
    client.push_message(calls(&[
        ("t1", "Read", json!({"file_path": a})),
        ("t2", "Read", json!({"file_path": b})),
    ]));
    client.push_message(calls(&[(
        "t3",
        "Edit",
        json!({"file_path": a, "old_string": "alpha", "new_string": "ALPHA"}),
    )]));
    client.push_message(ScriptedClient::text_reply("done"));

    let events = run(params(&client, dir.path()), "edit a").await;
    assert_eq!(terminal(&events), &Terminal::Completed);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "ALPHA\n");
    assert_eq!(
        transitions(&events),
        [
            Transition::ToolUse {
                tools: vec!["Read".into(), "Read".into()]
            },
            Transition::ToolUse {
                tools: vec!["Edit".into()]
            },
        ]
    );
    let requests = client.requests();
    assert_eq!(requests.len(), 3);
    // the second request carries both read results, in call order, not errors
    let results = tool_results(requests[1].messages.last().unwrap());
    assert_eq!(results.len(), 2);
    assert_eq!((results[0].0.as_str(), results[0].1), ("t1", false));
    assert_eq!((results[1].0.as_str(), results[1].1), ("t2", false));
    assert!(results[0].2.contains("alpha"));
    for r in &requests {
        assert!(is_well_paired(&r.messages));
    }
}

#[tokio::test]
async fn every_request_has_two_breakpoints_system_and_last_message() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x"), "x\n").unwrap();
    let client = ScriptedClient::new();
    client.push_message(calls(&[(
        "t1",
        "Read",
        json!({"file_path": dir.path().join("x")}),
    )]));
    client.push_message(ScriptedClient::text_reply("ok"));
    run(params(&client, dir.path()), "read x").await;
    for request in client.requests() {
        let body: Value = serde_json::from_slice(&request.to_json_bytes()).unwrap();
        let text = body.to_string();
        assert_eq!(text.matches("cache_control").count(), 2, "{text}");
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        assert!(last.to_string().contains("cache_control"));
        assert!(body["system"][0]["cache_control"].is_object());
    }
}

struct DenyBash;

impl CanUseTool for DenyBash {
    fn check<'a>(
        &'a self,
        tool: &'a dyn Tool,
        _input: &'a Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome> {
        Box::pin(async move {
            if tool.name() == "Bash" {
                PermissionOutcome::Deny {
                    reason: "needs approval and nobody can answer in -p mode".into(),
                }
            } else {
                PermissionOutcome::Allow {
                    updated_input: None,
                }
            }
        })
    }
}

#[tokio::test]
async fn a_denied_call_becomes_an_error_result_and_the_loop_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("made");
    let client = ScriptedClient::new();
    client.push_message(calls(&[(
        "t1",
        "Bash",
        json!({"command": format!("touch {}", marker.display())}),
    )]));
    client.push_message(ScriptedClient::text_reply("I could not run it"));
    let mut p = params(&client, dir.path());
    p.can_use_tool = Arc::new(DenyBash);
    let events = run(p, "make a file").await;
    assert_eq!(terminal(&events), &Terminal::Completed);
    assert!(!marker.exists(), "the denied command must not run");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, QueryEvent::ToolDenied { tool, .. } if tool == "Bash"))
    );
    let results = tool_results(client.requests()[1].messages.last().unwrap());
    assert_eq!(results.len(), 1);
    assert!(results[0].1, "is_error");
    assert!(results[0].2.contains("denied"), "{}", results[0].2);
}

#[tokio::test]
async fn an_unknown_tool_gets_an_error_result() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    client.push_message(calls(&[("t1", "Teleport", json!({}))]));
    client.push_message(ScriptedClient::text_reply("ok"));
    let events = run(params(&client, dir.path()), "go").await;
    assert_eq!(terminal(&events), &Terminal::Completed);
    let results = tool_results(client.requests()[1].messages.last().unwrap());
    assert!(results[0].1 && results[0].2.contains("No such tool"));
    // The model is told what it can call.
    assert!(results[0].2.contains("Read, "), "{}", results[0].2);
}

#[tokio::test]
async fn arguments_that_are_not_a_json_object_are_refused_before_anything_runs() {
    // The OpenAI-compatible stream hands a model's unparseable arguments over as text.
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("made");
    let client = ScriptedClient::new();
    let garbage = format!("{{\"command\": touch {}}}", marker.display());
    client.push_message(calls(&[("t1", "Bash", json!(garbage))]));
    client.push_message(ScriptedClient::text_reply("sorry"));
    let events = run(params(&client, dir.path()), "make a file").await;
    assert_eq!(terminal(&events), &Terminal::Completed);
    assert!(!marker.exists(), "a malformed call must not run");
    let results = tool_results(client.requests()[1].messages.last().unwrap());
    assert!(results[0].1, "is_error");
    assert!(
        results[0].2.contains("not a JSON object") && results[0].2.contains("required: command"),
        "{}",
        results[0].2
    );
}

#[tokio::test]
async fn max_tokens_escalates_once_then_nudges_up_to_three_times() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    for _ in 0..5 {
        client.push_message(reply(
            vec![ContentBlock::text("partial...")],
            StopReason::MaxTokens,
        ));
    }
    let events = run(params(&client, dir.path()), "write a novel").await;
    let requests = client.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(requests[0].max_tokens, 8_000);
    assert_eq!(requests[1].max_tokens, 64_000);
    // the cut reply under the default limit was dropped, not kept
    assert_eq!(requests[1].messages.len(), 1);
    let last = requests[2].messages.last().unwrap();
    assert!(tine_query_loop::message_text(last).contains("Resume directly"));
    assert!(matches!(terminal(&events), Terminal::ModelError { .. }));
    let t = transitions(&events);
    assert_eq!(
        t[0],
        Transition::MaxOutputTokensEscalation {
            from: 8_000,
            to: 64_000
        }
    );
    assert_eq!(t[3], Transition::MaxOutputTokensRecovery { attempt: 3 });
}

#[tokio::test]
async fn max_tokens_recovery_succeeds_when_the_model_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    client.push_message(reply(vec![ContentBlock::text("a")], StopReason::MaxTokens));
    client.push_message(reply(vec![ContentBlock::text("b")], StopReason::MaxTokens));
    client.push_message(ScriptedClient::text_reply("c"));
    let events = run(params(&client, dir.path()), "go").await;
    assert_eq!(terminal(&events), &Terminal::Completed);
    assert_eq!(client.requests().len(), 3);
}

struct BlockTimes(Mutex<u32>);

impl StopHooks for BlockTimes {
    fn on_stop<'a>(&'a self, ctx: StopContext<'a>) -> BoxFuture<'a, StopHookOutcome> {
        Box::pin(async move {
            let mut left = self.0.lock().unwrap();
            if *left == 0 {
                return StopHookOutcome::Continue;
            }
            *left -= 1;
            assert!(ctx.messages.last().is_some());
            StopHookOutcome::Block {
                reason: "run the tests first".into(),
            }
        })
    }
}

#[tokio::test]
async fn a_blocking_stop_hook_continues_the_loop_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    client.push_message(ScriptedClient::text_reply("done"));
    client.push_message(ScriptedClient::text_reply("tests pass, done"));
    let mut p = params(&client, dir.path());
    p.stop_hooks = Some(Arc::new(BlockTimes(Mutex::new(1))));
    let events = run(p, "fix it").await;
    assert_eq!(terminal(&events), &Terminal::Completed);
    let requests = client.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].messages.last().unwrap();
    assert!(tine_query_loop::message_text(last).contains("run the tests first"));
}

#[tokio::test]
async fn stop_hook_continuations_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    for _ in 0..10 {
        client.push_message(ScriptedClient::text_reply("done"));
    }
    let mut p = params(&client, dir.path());
    p.stop_hooks = Some(Arc::new(BlockTimes(Mutex::new(100))));
    p.max_stop_hook_continuations = 2;
    let events = run(p, "fix it").await;
    assert_eq!(terminal(&events), &Terminal::Completed);
    assert_eq!(client.requests().len(), 3, "first reply + 2 continuations");
}

#[tokio::test]
async fn max_turns_stops_a_tool_loop() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    for i in 0..5 {
        client.push_message(calls(&[(
            &format!("t{i}"),
            "Glob",
            json!({"pattern": "*"}),
        )]));
    }
    let mut p = params(&client, dir.path());
    p.max_turns = Some(2);
    let events = run(p, "loop").await;
    assert_eq!(terminal(&events), &Terminal::MaxTurns { turns: 2 });
}

#[tokio::test]
async fn end_after_tools_ends_the_loop_once_the_tools_ran() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("note.md");
    let client = ScriptedClient::new();
    client.push_message(calls(&[("t1", "Glob", json!({"pattern": "*"}))]));
    client.push_message(calls(&[(
        "t2",
        "Write",
        json!({"file_path": file, "content": "saved"}),
    )]));
    client.push_message(ScriptedClient::text_reply("Saved."));
    let mut p = params(&client, dir.path());
    p.end_after_tools = Some(Arc::new(|uses, results| {
        uses.iter().all(|u| u.name == "Write") && !tool_results(results).iter().any(|r| r.1)
    }));
    let events = run(p, "save it").await;
    assert_eq!(terminal(&events), &Terminal::Completed);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "saved");
    // The Glob turn went on; the Write turn ended the loop without asking for "Saved.".
    assert_eq!(client.requests().len(), 2);
}

struct DropHalf;

impl Compactor for DropHalf {
    fn before_request<'a>(&'a self, _ctx: CompactContext<'a>) -> BoxFuture<'a, BeforeRequest> {
        Box::pin(async { BeforeRequest::default() })
    }
    fn on_prompt_too_long<'a>(
        &'a self,
        _ctx: CompactContext<'a>,
    ) -> BoxFuture<'a, Option<Compacted>> {
        Box::pin(async {
            Some(Compacted {
                messages: vec![Message::user(vec![ContentBlock::text("summary")])],
                transition: Transition::ReactiveCompact,
                boundary: CompactBoundary {
                    trigger: CompactTrigger::Reactive,
                    tokens_before: 210_000,
                    tokens_after: 10,
                    messages_summarized: 1,
                    rounds_dropped: 0,
                    dropped: Default::default(),
                    focus: None,
                    files_reattached: Vec::new(),
                    summary_prompt_tokens: 0,
                    summary_cache_read_tokens: 0,
                },
            })
        })
    }
}

fn too_long_error() -> ApiError {
    ApiError::Status {
        status: 400,
        kind: ApiErrorKind::InvalidRequest,
        message: "prompt is too long: 210000 tokens > 200000 maximum".into(),
        request_id: None,
        retry_after: None,
        should_retry: None,
    }
}

#[tokio::test]
async fn prompt_too_long_compacts_once_then_gives_up() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    client.push_error(too_long_error());
    client.push_message(ScriptedClient::text_reply("fine now"));
    let mut p = params(&client, dir.path());
    p.compactor = Some(Arc::new(DropHalf));
    let events = run(p.clone(), "go").await;
    assert_eq!(terminal(&events), &Terminal::Completed);
    assert!(transitions(&events).contains(&Transition::ReactiveCompact));

    let client = ScriptedClient::new();
    client.push_error(too_long_error());
    client.push_error(too_long_error());
    let mut p = params(&client, dir.path());
    p.compactor = Some(Arc::new(DropHalf));
    let events = run(p, "go").await;
    assert_eq!(
        terminal(&events),
        &Terminal::PromptTooLong {
            tokens: Some(210_000),
            maximum: Some(200_000)
        }
    );
}

#[tokio::test]
async fn cancellation_kills_a_running_command_and_ends_aborted() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    client.push_message(calls(&[("t1", "Bash", json!({"command": "sleep 30"}))]));
    let p = params(&client, dir.path());
    let cancel = p.tool_context.cancellation().clone();
    let started = std::time::Instant::now();
    let mut stream = query(p, vec![Message::user("sleep")]);
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        if matches!(e, QueryEvent::ToolUseStart { .. }) {
            let c = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                c.cancel();
            });
        }
        events.push(e);
    }
    assert_eq!(terminal(&events), &Terminal::Aborted);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // the interrupted call still got its result, so the history stays well formed
    let last_user = events
        .iter()
        .rev()
        .find_map(|e| match e {
            QueryEvent::UserMessage { message, .. } => Some(message.clone()),
            _ => None,
        })
        .expect("tool results appended");
    assert_eq!(tool_results(&last_user).len(), 1);
}
