//! Servers inside an Agent SDK app (`"type": "sdk"`), reached through an [`SdkMcpRelay`]: the
//! test server behind [`InProcessRelay`] (the SDK bridge's twin) listed, called and read;
//! relays that fail, answer wrongly or never answer; no relay at all; a cancelled call.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tine_mcp::test_server::{InProcessRelay, TestServer};
use tine_mcp::{
    LIST_RESOURCES_TOOL, McpServerConfig, McpServerStatus, READ_RESOURCE_TOOL, SdkMcpRelay,
};
use tine_permissions::RuleSource;
use tine_permissions::{PermissionContext, PermissionMode, PermissionRule, RuleBehavior};
use tine_tools::ToolContext;

use super::calls::decide;
use super::support::*;

/// `--mcp-config` as the Python SDK writes it for `create_sdk_mcp_server("calc")`.
fn sdk_config() -> String {
    mcp_config(json!({"calc": {"type": "sdk", "name": "calc"}}))
}

fn in_process(resources: bool) -> Arc<InProcessRelay> {
    let server = TestServer {
        exit_on_crash: false,
        resources,
        permission_prompt: false,
        extra_tools: 0,
    };
    Arc::new(InProcessRelay::start(server, "calc"))
}

/// A relay made of a function (to fail or hold chosen messages).
struct FnRelay<F>(F);

impl<F> SdkMcpRelay for FnRelay<F>
where
    F: Fn(&str, Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync,
{
    fn send(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>> {
        (self.0)(server, message)
    }
}

/// The in-process server, except that `tools/call` gets `answer` instead.
fn calls_answered_with(
    inner: Arc<InProcessRelay>,
    answer: Result<Value, String>,
) -> Arc<dyn SdkMcpRelay> {
    Arc::new(FnRelay(move |server: &str, message: Value| {
        if message["method"] == "tools/call" {
            let answer = answer.clone();
            Box::pin(async move { answer }) as BoxFuture<'static, _>
        } else {
            inner.send(server, message)
        }
    }))
}

#[tokio::test]
async fn an_sdk_servers_tools_are_listed_and_called_through_the_relay() {
    let scratch = Scratch::new();
    let relay = in_process(true);
    let mut options = scratch.options();
    options.sdk_relay = Some(relay.clone());
    let (manager, tools, warnings) = scratch.start(vec![sdk_config()], options).await;
    assert!(warnings.is_empty(), "{warnings:?}");
    let listed = names(&tools);
    for name in ["mcp__calc__add", "mcp__calc__echo", LIST_RESOURCES_TOOL] {
        assert!(listed.contains(&name.to_owned()), "{listed:?}");
    }
    let ctx = scratch.context();
    let out = call(&tools, "mcp__calc__add", json!({"a": 2, "b": 3}), &ctx).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.content, "5");
    let out = call(&tools, "mcp__calc__echo", json!({"text": "héllo"}), &ctx).await;
    assert_eq!(out.content, "héllo");
    let out = call(&tools, "mcp__calc__fail", json!({}), &ctx).await;
    assert!(out.is_error && out.content == "it failed", "{out:?}");
    // A JSON-RPC error from the server is the call's error, and the server keeps serving.
    let out = call(&tools, "mcp__calc__crash", json!({}), &ctx).await;
    assert!(
        out.is_error && out.content.contains("crash requested"),
        "{out:?}"
    );
    let out = call(
        &tools,
        READ_RESOURCE_TOOL,
        json!({"server": "calc", "uri": "test://readme"}),
        &ctx,
    )
    .await;
    assert_eq!(out.content, "hello resource");

    // The MCP conversation went through the relay, to the server's key, in rmcp's order.
    let methods = relay.methods();
    assert_eq!(
        methods[..3],
        ["initialize", "notifications/initialized", "tools/list"],
        "{methods:?}"
    );
    assert!(methods.contains(&"tools/call".to_owned()), "{methods:?}");
    assert!(relay.received().iter().all(|(server, _)| server == "calc"));

    let status = &manager.statuses()[0];
    assert_eq!(status.name, "calc");
    assert_eq!(
        status.config,
        McpServerConfig::Sdk {
            name: "calc".into()
        }
    );
    assert_eq!(status.config.transport_name(), "sdk");
    assert!(matches!(status.status, McpServerStatus::Connected { .. }));
    assert_eq!(status.status.state_name(), "connected");
    let add = status
        .tools
        .iter()
        .find(|t| t.name == "add")
        .unwrap_or_else(|| panic!("{:?}", status.tools));
    assert_eq!(add.description.as_deref(), Some("Adds two numbers."));
    let echo = status.tools.iter().find(|t| t.name == "echo");
    assert_eq!(echo.and_then(|t| t.read_only_hint), Some(true));
    assert!(status.identity.is_some(), "{status:?}");
    manager.shutdown().await;
}

#[tokio::test]
async fn an_sdk_tool_is_asked_for_unless_a_rule_allows_its_server() {
    let scratch = Scratch::new();
    let mut options = scratch.options();
    options.sdk_relay = Some(in_process(false));
    let (manager, tools, _) = scratch.start(vec![sdk_config()], options).await;
    let ctx = scratch.context();
    let add = find(&tools, "mcp__calc__add");
    let with_rule = |rule: Option<&str>| {
        let mut context = PermissionContext::new(PermissionMode::Default, &scratch.project);
        if let Some(rule) = rule {
            let rule: PermissionRule = rule.parse().unwrap_or_else(|e| panic!("{rule}: {e}"));
            context.add_session_rule(rule, RuleBehavior::Allow, RuleSource::CliArg);
        }
        context
    };
    assert_eq!(decide(&with_rule(None), add.as_ref(), &ctx), "ask");
    assert_eq!(
        decide(&with_rule(Some("mcp__calc")), add.as_ref(), &ctx),
        "allow"
    );
    assert_eq!(
        decide(&with_rule(Some("mcp__other")), add.as_ref(), &ctx),
        "ask"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn without_a_relay_an_sdk_server_fails_saying_what_it_needs() {
    let scratch = Scratch::new();
    let (manager, tools, warnings) = scratch.start(vec![sdk_config()], scratch.options()).await;
    assert!(tools.is_empty(), "{:?}", names(&tools));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].server.as_deref(), Some("calc"));
    assert!(
        warnings[0]
            .message
            .contains("sdk MCP servers need the Agent SDK's control protocol"),
        "{}",
        warnings[0]
    );
    let status = &manager.statuses()[0].status;
    assert_eq!(status.state_name(), "failed");
    assert!(
        status
            .problem()
            .is_some_and(|p| p.contains("--input-format stream-json")),
        "{status:?}"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn a_relay_that_cannot_carry_the_handshake_is_a_failed_server() {
    let scratch = Scratch::new();
    let mut options = scratch.options();
    options.sdk_relay = Some(Arc::new(FnRelay(|_: &str, _: Value| {
        Box::pin(async { Err("the app closed its stdin".to_owned()) }) as BoxFuture<'static, _>
    })));
    let (manager, tools, warnings) = scratch.start(vec![sdk_config()], options).await;
    assert!(tools.is_empty());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].message.contains("the app closed its stdin")
            && warnings[0].message.contains("initialize"),
        "{}",
        warnings[0]
    );
    assert!(matches!(
        manager.statuses()[0].status,
        McpServerStatus::Failed { .. }
    ));
    manager.shutdown().await;
}

#[tokio::test]
async fn a_relay_that_never_answers_fails_within_the_startup_deadline() {
    let scratch = Scratch::new();
    let mut options = scratch.options();
    options.startup_timeout = Duration::from_millis(300);
    options.sdk_relay = Some(Arc::new(FnRelay(|_: &str, _: Value| {
        Box::pin(futures::future::pending()) as BoxFuture<'static, _>
    })));
    let (manager, tools, warnings) = scratch.start(vec![sdk_config()], options).await;
    assert!(tools.is_empty());
    assert!(
        warnings[0]
            .message
            .contains("no answer to `initialize` within 300 ms"),
        "{warnings:?}"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn a_call_the_relay_cannot_carry_or_answers_wrongly_is_an_error_result() {
    let scratch = Scratch::new();
    let ctx = scratch.context();
    let answers = [
        (
            Err("the app is gone".to_owned()),
            "could not relay `tools/call`: the app is gone",
        ),
        // The acknowledgement of a notification, not the call's response.
        (
            Ok(json!({"jsonrpc": "2.0", "result": {}})),
            "answer to `tools/call`",
        ),
        // Another request's response.
        (
            Ok(json!({"jsonrpc": "2.0", "id": 999, "result": {"content": []}})),
            "answered `tools/call` with something other than its JSON-RPC response",
        ),
    ];
    for (answer, expected) in answers {
        let mut options = scratch.options();
        options.sdk_relay = Some(calls_answered_with(in_process(false), answer));
        let (manager, tools, warnings) = scratch.start(vec![sdk_config()], options).await;
        assert!(warnings.is_empty(), "{warnings:?}");
        let out = call(&tools, "mcp__calc__add", json!({"a": 1, "b": 1}), &ctx).await;
        assert!(
            out.is_error && out.content.contains(expected),
            "{expected}: {out:?}"
        );
        // One request failed, not the server.
        assert!(matches!(
            manager.statuses()[0].status,
            McpServerStatus::Connected { .. }
        ));
        manager.shutdown().await;
    }
}

#[tokio::test]
async fn a_cancelled_call_drops_the_relayed_request_and_tells_the_server() {
    let scratch = Scratch::new();
    let inner = in_process(false);
    let dropped = Arc::new(AtomicBool::new(false));
    let relay = {
        let (inner, dropped) = (inner.clone(), dropped.clone());
        Arc::new(FnRelay(move |server: &str, message: Value| {
            let answer = inner.send(server, message.clone());
            if message["params"]["name"] != "slow" {
                return answer;
            }
            let guard = DropFlag(dropped.clone());
            Box::pin(async move {
                let _guard = guard;
                answer.await
            }) as BoxFuture<'static, _>
        }))
    };
    let mut options = scratch.options();
    options.sdk_relay = Some(relay);
    let (manager, tools, _) = scratch.start(vec![sdk_config()], options).await;
    let ctx = scratch.context();
    let slow = find(&tools, "mcp__calc__slow").clone();
    let running = {
        let ctx = ctx.clone();
        tokio::spawn(async move {
            tine_tools::run_tool(slow.as_ref(), json!({"ms": 600_000}), &ctx).await
        })
    };
    eventually("the slow call reaches the relay", || {
        inner.methods().contains(&"tools/call".to_owned())
    })
    .await;
    ctx.cancellation().cancel();
    let out = tokio::time::timeout(GUARD, running)
        .await
        .unwrap_or_else(|_| panic!("the cancelled call did not end"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.is_error && out.content.contains("cancelled"), "{out:?}");
    eventually("the relayed request is dropped", || {
        dropped.load(Ordering::SeqCst)
    })
    .await;
    eventually("the server is told", || {
        inner
            .methods()
            .contains(&"notifications/cancelled".to_owned())
    })
    .await;
    let fresh = ToolContext::new(&scratch.project);
    let out = call(&tools, "mcp__calc__add", json!({"a": 1, "b": 1}), &fresh).await;
    assert_eq!(out.content, "2");
    manager.shutdown().await;
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
