//! Each row of seed 000's table 4.2, and a fork's isolation from its parent.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tine_api_client::{ContentBlock, Message, MessageContent, ScriptedClient, StopReason, reply};
use tine_config::SessionId;
use tine_fork_runtime::{
    AppStateStore, CacheSafeParams, ContentReplacementState, ForkParams, ParentContext,
    SessionLocation, SubagentOverrides, create_subagent_context, run_forked_agent,
};
use tine_query_loop::{
    CanUseTool, PermissionOutcome, RequestTemplate, Terminal, system_prompt_blocks,
};
use tine_tools::{Tool, ToolContext};

use super::harness::tool_setup;

fn parent(
    client: &ScriptedClient,
    cwd: &std::path::Path,
    store: Arc<AppStateStore>,
) -> ParentContext {
    let (tools, _) = tool_setup();
    ParentContext {
        client: Arc::new(client.clone()),
        tools,
        tool_context: ToolContext::new(cwd),
        session: SessionLocation {
            home: cwd.to_path_buf(),
            cwd: cwd.to_path_buf(),
            session_id: SessionId::new_random(),
        },
        app_state: store,
        prompter: None,
        content_replacements: Arc::new(Mutex::new(ContentReplacementState::default())),
        notifications: None,
        ledger: None,
    }
}

fn cache_safe() -> Arc<CacheSafeParams> {
    let (_, defs) = tool_setup();
    Arc::new(CacheSafeParams {
        template: RequestTemplate {
            model: "claude-sonnet-4-5".into(),
            system: Arc::new(system_prompt_blocks("sys")),
            tools: defs,
            thinking: None,
            skip_cache_write: false,
            replacements: None,
            effort: None,
        },
        messages: Arc::from(vec![
            Message::user(vec![ContentBlock::text("hi")]),
            Message::assistant(vec![ContentBlock::text("hello")]),
        ]),
    })
}

fn call(name: &str, input: Value) -> tine_api_client::ResponseMessage {
    reply(
        vec![ContentBlock::tool_use("f1", name, input)],
        StopReason::ToolUse,
    )
}

#[tokio::test]
async fn a_forks_file_reads_stay_out_of_the_parents_cache() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("secret.txt");
    std::fs::write(&file, "x\n").unwrap();
    let client = ScriptedClient::new();
    client.push_message(call("Read", json!({"file_path": file})));
    client.push_message(ScriptedClient::text_reply("read it"));
    let p = parent(&client, dir.path(), Arc::default());
    let r = run_forked_agent(
        &p,
        ForkParams::new(
            cache_safe(),
            vec![Message::user("read")],
            Arc::new(tine_query_loop::AllowAll),
            "t",
        ),
    )
    .await
    .unwrap();
    assert_eq!(r.terminal, Terminal::Completed);
    assert!(
        !p.tool_context.file_state().contains(&file),
        "parent cache untouched"
    );
    // and the other way: what the parent had read, the fork's copy had too
    p.tool_context.file_state().record(&file, b"x\n", None);
    let ctx = create_subagent_context(&p, &SubagentOverrides::default());
    assert!(ctx.tool_context.file_state().contains(&file));
    ctx.tool_context.file_state().forget(&file);
    assert!(p.tool_context.file_state().contains(&file));
}

#[tokio::test]
async fn cancelling_the_parent_stops_the_fork_but_not_the_reverse() {
    let dir = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new();
    client.push_message(call("Bash", json!({"command": "sleep 30"})));
    let p = parent(&client, dir.path(), Arc::default());
    let parent_token = p.tool_context.cancellation().clone();
    let t = parent_token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        t.cancel();
    });
    let started = std::time::Instant::now();
    let r = run_forked_agent(
        &p,
        ForkParams::new(
            cache_safe(),
            vec![Message::user("sleep")],
            Arc::new(tine_query_loop::AllowAll),
            "t",
        ),
    )
    .await
    .unwrap();
    assert_eq!(r.terminal, Terminal::Aborted);
    assert!(started.elapsed() < Duration::from_secs(20));

    // child cancelled alone: the parent goes on
    let p2 = parent(&ScriptedClient::new(), dir.path(), Arc::default());
    let child = create_subagent_context(&p2, &SubagentOverrides::default());
    child.tool_context.cancellation().cancel();
    assert!(!p2.tool_context.cancellation().is_cancelled());
    // shared on purpose: the fork's cancellation is the parent's
    let shared = create_subagent_context(
        &p2,
        &SubagentOverrides {
            share_cancellation: true,
            ..Default::default()
        },
    );
    shared.tool_context.cancellation().cancel();
    assert!(p2.tool_context.cancellation().is_cancelled());
}

struct AlwaysAsk;
impl CanUseTool for AlwaysAsk {
    fn check<'a>(
        &'a self,
        _tool: &'a dyn Tool,
        _input: &'a Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome> {
        Box::pin(async {
            PermissionOutcome::Ask {
                reason: "writing needs approval".into(),
            }
        })
    }
}

#[tokio::test]
async fn a_fork_asking_permission_gets_a_denial() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("new.txt");
    let client = ScriptedClient::new();
    client.push_message(call("Write", json!({"file_path": target, "content": "x"})));
    client.push_message(ScriptedClient::text_reply("could not"));
    let p = parent(&client, dir.path(), Arc::default());
    let ctx = create_subagent_context(&p, &SubagentOverrides::default());
    assert!(ctx.avoids_permission_prompts());
    let r = run_forked_agent(
        &p,
        ForkParams::new(
            cache_safe(),
            vec![Message::user("write")],
            Arc::new(AlwaysAsk),
            "t",
        ),
    )
    .await
    .unwrap();
    assert_eq!(r.terminal, Terminal::Completed);
    assert!(!target.exists());
    let results = r
        .messages
        .iter()
        .find_map(|m| match &m.content {
            MessageContent::Blocks(b) => b.iter().find_map(|b| match b {
                ContentBlock::ToolResult(r) => Some(r.clone()),
                _ => None,
            }),
            MessageContent::Text(_) => None,
        })
        .unwrap();
    assert_eq!(results.is_error, Some(true));
    assert!(format!("{:?}", results.content).contains("denied"));
}

#[test]
fn app_state_is_a_no_op_unless_shared() {
    let store = Arc::new(AppStateStore::default());
    let p = parent(
        &ScriptedClient::new(),
        std::path::Path::new("/tmp"),
        Arc::clone(&store),
    );
    let isolated = create_subagent_context(&p, &SubagentOverrides::default());
    isolated.app_state.set("tokens", json!(5));
    assert_eq!(store.get("tokens"), None);
    let shared = create_subagent_context(
        &p,
        &SubagentOverrides {
            share_app_state: true,
            ..Default::default()
        },
    );
    shared.app_state.set("tokens", json!(7));
    assert_eq!(store.get("tokens"), Some(json!(7)));
}

#[test]
fn content_replacements_are_cloned_not_shared() {
    let p = parent(
        &ScriptedClient::new(),
        std::path::Path::new("/tmp"),
        Arc::default(),
    );
    p.content_replacements
        .lock()
        .unwrap()
        .decisions
        .insert("toolu_1".into(), Some("[large output saved]".into()));
    let mut ctx = create_subagent_context(&p, &SubagentOverrides::default());
    assert_eq!(
        ctx.content_replacements.decisions.get("toolu_1"),
        Some(&Some("[large output saved]".to_owned()))
    );
    ctx.content_replacements
        .decisions
        .insert("toolu_2".into(), None);
    assert!(
        !p.content_replacements
            .lock()
            .unwrap()
            .decisions
            .contains_key("toolu_2")
    );
    // a custom file-state cache replaces the clone
    let custom = Arc::new(tine_tools::FileStateCache::new());
    let ctx = create_subagent_context(
        &p,
        &SubagentOverrides {
            file_state: Some(Arc::clone(&custom)),
            ..Default::default()
        },
    );
    assert!(Arc::ptr_eq(ctx.tool_context.file_state(), &custom));
}
