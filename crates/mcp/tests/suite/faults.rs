//! A server that dies mid-session: the call in flight and every later call get an error the
//! model reads, the front end is told, `restart` brings it back, and `shutdown` leaves no
//! process behind.

use serde_json::json;
use tine_mcp::{McpError, McpEvent, McpServerStatus};

use super::support::*;

#[tokio::test]
async fn a_crash_mid_call_is_an_error_result_until_restarted() {
    let scratch = Scratch::new();
    let marker = scratch.marker("srv");
    let marker_arg = marker.display().to_string();
    let config =
        mcp_config(json!({"srv": stdio_server(&["--no-resources", "--marker", &marker_arg])}));
    let (manager, tools, _) = scratch.start(vec![config], scratch.options()).await;
    let mut events = manager.subscribe();
    let ctx = scratch.context();
    let first_pid = marker_pid(&marker).unwrap_or_else(|| panic!("the server never ran"));

    let out = call(&tools, "mcp__srv__crash", json!({}), &ctx).await;
    assert!(out.is_error, "{out:?}");
    assert!(out.content.contains("MCP server srv"), "{}", out.content);

    let event = tokio::time::timeout(GUARD, events.recv())
        .await
        .unwrap_or_else(|_| panic!("no exit event"))
        .unwrap_or_else(|e| panic!("{e}"));
    let McpEvent::ServerExited { name, reason } = event else {
        panic!("{event:?}")
    };
    assert_eq!(name, "srv");
    assert!(reason.contains("exited"), "{reason}");
    assert!(matches!(
        manager.statuses()[0].status,
        McpServerStatus::Exited { .. }
    ));
    eventually("the crashed server is reaped", || {
        !process_exists(first_pid)
    })
    .await;

    let out = call(&tools, "mcp__srv__echo", json!({"text": "x"}), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.content.starts_with("MCP server srv is not running:"),
        "{}",
        out.content
    );

    let status = tokio::time::timeout(GUARD, manager.restart("srv"))
        .await
        .unwrap_or_else(|_| panic!("restart hung"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status, McpServerStatus::Connected { tools: 8 });
    // The same tool objects (the session's frozen array) work again.
    let out = call(&tools, "mcp__srv__echo", json!({"text": "back"}), &ctx).await;
    assert_eq!(out.content, "back");
    let second_pid = marker_pid(&marker).unwrap_or_else(|| panic!("no marker after restart"));
    assert_ne!(first_pid, second_pid);

    assert_eq!(
        manager.restart("nope").await,
        Err(McpError::UnknownServer("nope".into()))
    );
    manager.shutdown().await;
    eventually("the restarted server is gone after shutdown", || {
        !process_exists(second_pid)
    })
    .await;
    let out = call(&tools, "mcp__srv__echo", json!({"text": "x"}), &ctx).await;
    assert!(
        out.is_error && out.content.contains("shut down"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_server_that_cannot_start_is_a_status_not_a_failure() {
    let scratch = Scratch::new();
    let config = mcp_config(json!({
        "missing": {"command": "/nonexistent/tine-no-such-server"},
        "needs-env": {"command": SERVER, "env": {"TOKEN": "${TINE_TEST_SURELY_UNSET_VAR}"}},
        "ok": stdio_server(&["--no-resources"]),
        "bad": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
    }));
    let (manager, tools, warnings) = scratch.start(vec![config], scratch.options()).await;
    assert!(names(&tools).contains(&"mcp__ok__add".to_owned()));
    let statuses = manager.statuses();
    let status = |name: &str| {
        statuses
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.status.to_string())
            .unwrap_or_else(|| panic!("no {name} in {statuses:?}"))
    };
    assert!(
        status("missing").contains("cannot start"),
        "{}",
        status("missing")
    );
    assert!(
        status("needs-env").contains("TINE_TEST_SURELY_UNSET_VAR is not set"),
        "{}",
        status("needs-env")
    );
    assert!(statuses.iter().all(|s| s.name != "bad"));
    let sse = warnings
        .iter()
        .find(|w| w.server.as_deref() == Some("bad"))
        .unwrap_or_else(|| panic!("{warnings:?}"));
    assert!(sse.message.contains("use \"type\": \"http\""), "{sse}");
    manager.shutdown().await;
}
