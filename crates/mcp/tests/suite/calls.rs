//! Calls end to end through `run_tool`, and the permission engine's answer for MCP tools:
//! approval needed by default, `mcp__SERVER`, `mcp__SERVER__*` and `mcp__SERVER__TOOL` rules
//! allow, and a read-only hint does not.

use std::os::unix::fs::PermissionsExt as _;

use serde_json::json;
use tine_permissions::{
    PermissionContext, PermissionMode, PermissionQuery, PermissionRule, RuleBehavior, RuleSource,
};
use tine_tools::{Tool, ToolContext};

use super::support::*;

#[tokio::test]
async fn a_call_runs_end_to_end() {
    let scratch = Scratch::new();
    let config = mcp_config(json!({"srv": stdio_server(&[])}));
    let (manager, tools, _) = scratch.start(vec![config], scratch.options()).await;
    let ctx = scratch.context();
    let out = call(&tools, "mcp__srv__add", json!({"a": 2, "b": 40}), &ctx).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.content, "42");
    let out = call(&tools, "mcp__srv__echo", json!({"text": "héllo"}), &ctx).await;
    assert_eq!(out.content, "héllo");
    // The schema is checked before the server sees the call.
    let out = call(&tools, "mcp__srv__echo", json!({}), &ctx).await;
    assert!(
        out.is_error && out.content.contains("InputValidationError"),
        "{out:?}"
    );
    let out = call(&tools, "mcp__srv__fail", json!({}), &ctx).await;
    assert!(out.is_error);
    assert_eq!(out.content, "it failed");
    let out = call(&tools, "mcp__srv__image", json!({}), &ctx).await;
    assert!(
        out.content.starts_with("a dot\n[image: image/png"),
        "{out:?}"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn a_cancelled_call_stops_and_the_server_keeps_serving() {
    let scratch = Scratch::new();
    let config = mcp_config(json!({"srv": stdio_server(&["--no-resources"])}));
    let (manager, tools, _) = scratch.start(vec![config], scratch.options()).await;
    let ctx = scratch.context();
    let cancel = ctx.cancellation().clone();
    let slow = find(&tools, "mcp__srv__slow").clone();
    let running = {
        let ctx = ctx.clone();
        tokio::spawn(async move {
            tine_tools::run_tool(slow.as_ref(), json!({"ms": 600_000}), &ctx).await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    cancel.cancel();
    let out = tokio::time::timeout(GUARD, running)
        .await
        .unwrap_or_else(|_| panic!("the cancelled call did not end"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.is_error && out.content.contains("cancelled"), "{out:?}");
    let fresh = ToolContext::new(&scratch.project);
    let out = call(&tools, "mcp__srv__add", json!({"a": 1, "b": 1}), &fresh).await;
    assert_eq!(out.content, "2");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_slow_call_times_out_with_a_readable_error() {
    let scratch = Scratch::new();
    let config = mcp_config(json!({"srv": stdio_server(&["--no-resources"])}));
    let mut options = scratch.options();
    options.tool_timeout = std::time::Duration::from_millis(300);
    let (manager, tools, _) = scratch.start(vec![config], options).await;
    let out = call(
        &tools,
        "mcp__srv__slow",
        json!({"ms": 600_000}),
        &scratch.context(),
    )
    .await;
    assert!(
        out.is_error && out.content.contains("MCP_TOOL_TIMEOUT"),
        "{out:?}"
    );
    manager.shutdown().await;
}

pub(super) fn decide(
    context: &PermissionContext,
    tool: &dyn Tool,
    ctx: &ToolContext,
) -> &'static str {
    let input = json!({"text": "x"});
    let target = tool.permission_target(&input, ctx);
    let verdict = tool.check_permissions(&input, ctx);
    let decision = context.decide(&PermissionQuery {
        tool: tool.name(),
        target: &target,
        verdict: &verdict,
        is_read_only: tool.is_read_only(&input),
    });
    if decision.is_allow() {
        "allow"
    } else if decision.is_deny() {
        "deny"
    } else {
        "ask"
    }
}

#[tokio::test]
async fn calls_need_approval_unless_a_server_or_tool_rule_allows_them() {
    let scratch = Scratch::new();
    let config = mcp_config(json!({"srv": stdio_server(&["--no-resources"])}));
    let (manager, tools, _) = scratch.start(vec![config], scratch.options()).await;
    let ctx = scratch.context();
    // `echo` carries readOnlyHint: still asked, but it may run beside other read-only calls.
    let echo = find(&tools, "mcp__srv__echo");
    assert!(echo.is_concurrency_safe(&json!({})));
    assert!(!find(&tools, "mcp__srv__add").is_concurrency_safe(&json!({})));
    let with_rule = |rule: Option<&str>, mode: PermissionMode| {
        let mut context = PermissionContext::new(mode, &scratch.project);
        if let Some(rule) = rule {
            let rule: PermissionRule = rule.parse().unwrap_or_else(|e| panic!("{rule}: {e}"));
            context.add_session_rule(rule, RuleBehavior::Allow, RuleSource::CliArg);
        }
        context
    };
    assert_eq!(
        decide(
            &with_rule(None, PermissionMode::Default),
            echo.as_ref(),
            &ctx
        ),
        "ask"
    );
    assert_eq!(
        decide(
            &with_rule(None, PermissionMode::DontAsk),
            echo.as_ref(),
            &ctx
        ),
        "deny"
    );
    for rule in ["mcp__srv", "mcp__srv__*", "mcp__srv__echo"] {
        let context = with_rule(Some(rule), PermissionMode::Default);
        assert_eq!(decide(&context, echo.as_ref(), &ctx), "allow", "{rule}");
    }
    for rule in ["mcp__other", "mcp__srv__add", "mcp__sr"] {
        let context = with_rule(Some(rule), PermissionMode::Default);
        assert_eq!(decide(&context, echo.as_ref(), &ctx), "ask", "{rule}");
    }
    // Plan mode: a tool with readOnlyHint is read-only there (asked, or allowed by a rule); one
    // without is refused even with a rule.
    let add = find(&tools, "mcp__srv__add");
    let plan = with_rule(None, PermissionMode::Plan);
    assert_eq!(decide(&plan, echo.as_ref(), &ctx), "ask");
    let plan = with_rule(Some("mcp__srv"), PermissionMode::Plan);
    assert_eq!(decide(&plan, echo.as_ref(), &ctx), "allow");
    assert_eq!(decide(&plan, add.as_ref(), &ctx), "deny");
    // A server-wide deny removes its tools from the pool.
    let mut deny = PermissionContext::new(PermissionMode::Default, &scratch.project);
    deny.add_session_rule(
        PermissionRule::tool("mcp__srv"),
        RuleBehavior::Deny,
        RuleSource::CliArg,
    );
    assert!(deny.is_tool_denied("mcp__srv__echo"));
    assert!(!deny.is_tool_denied("Read"));
    manager.shutdown().await;
}

#[tokio::test]
async fn a_large_result_is_cut_and_saved_whole_in_a_private_file() {
    let scratch = Scratch::new();
    let config = mcp_config(json!({"srv": stdio_server(&["--no-resources"])}));
    let mut options = scratch.options();
    options.max_output_tokens = 1_000;
    let (manager, tools, _) = scratch.start(vec![config], options).await;
    let out = call(
        &tools,
        "mcp__srv__big",
        json!({"lines": 2000}),
        &scratch.context(),
    )
    .await;
    assert!(!out.is_error);
    assert!(
        out.content.len() < 5_000,
        "{} bytes kept",
        out.content.len()
    );
    assert!(out.content.starts_with("line 000000\n"));
    assert!(
        out.content.contains("MAX_MCP_OUTPUT_TOKENS"),
        "{}",
        out.content
    );
    let dir = scratch.home.join("mcp-output");
    let start = out
        .content
        .find(&dir.display().to_string())
        .unwrap_or_else(|| panic!("the saved file is not named in {}", out.content));
    let path: String = out.content[start..]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .trim_end_matches(':')
        .to_owned();
    let whole = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let expected: String = (0..2000).map(|i| format!("line {i:06}\n")).collect();
    assert_eq!(whole, expected);
    let mode = |p: &std::path::Path| {
        std::fs::metadata(p)
            .unwrap_or_else(|e| panic!("{e}"))
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(std::path::Path::new(&path)), 0o600);
    assert_eq!(mode(&dir), 0o700);
    manager.shutdown().await;
}

struct Answers(
    tine_mcp::ElicitationAnswer,
    std::sync::Mutex<Vec<tine_mcp::ElicitationRequest>>,
);

impl tine_mcp::ElicitationHandler for Answers {
    fn elicit(
        &self,
        request: tine_mcp::ElicitationRequest,
    ) -> futures::future::BoxFuture<'static, tine_mcp::ElicitationAnswer> {
        self.1
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(request);
        let answer = self.0.clone();
        Box::pin(async move { answer })
    }
}

#[tokio::test]
async fn elicitation_is_declined_headless_and_asked_through_the_hook() {
    let scratch = Scratch::new();
    let config = mcp_config(json!({"srv": stdio_server(&["--no-resources"])}));
    let (manager, tools, _) = scratch.start(vec![config.clone()], scratch.options()).await;
    let out = call(&tools, "mcp__srv__ask", json!({}), &scratch.context()).await;
    assert_eq!(out.content, "decline:null");
    manager.shutdown().await;

    let handler = std::sync::Arc::new(Answers(
        tine_mcp::ElicitationAnswer::Accept(Some(json!({"branch": "main"}))),
        Default::default(),
    ));
    let mut options = scratch.options();
    options.elicitation = Some(handler.clone());
    let (manager, tools, _) = scratch.start(vec![config], options).await;
    let out = call(&tools, "mcp__srv__ask", json!({}), &scratch.context()).await;
    assert_eq!(out.content, r#"accept:{"branch":"main"}"#);
    let asked = handler.1.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (asked[0].server.as_str(), asked[0].message.as_str()),
        ("srv", "Which branch?")
    );
    assert!(asked[0].schema.is_some());
    manager.shutdown().await;
}
