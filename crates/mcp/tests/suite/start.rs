//! Start-up: the tool names and their order, byte-identical across starts whatever order the
//! servers answer in, and a server that never answers `initialize` costs at most the timeout
//! without hiding the others' tools.

use std::time::Duration;

use serde_json::json;
use tine_mcp::{LIST_RESOURCES_TOOL, McpServerStatus, READ_RESOURCE_TOOL};
use tine_tools::ToolPool;

use super::support::*;

#[tokio::test]
async fn tools_are_named_per_server_and_sorted() {
    let scratch = Scratch::new();
    let config = mcp_config(json!({"srv": stdio_server(&[])}));
    let (manager, tools, warnings) = scratch.start(vec![config], scratch.options()).await;
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        names(&tools),
        [
            LIST_RESOURCES_TOOL,
            READ_RESOURCE_TOOL,
            "mcp__srv__add",
            "mcp__srv__ask",
            "mcp__srv__big",
            "mcp__srv__crash",
            "mcp__srv__echo",
            "mcp__srv__fail",
            "mcp__srv__image",
            "mcp__srv__slow",
        ]
    );
    let echo = find(&tools, "mcp__srv__echo");
    assert_eq!(echo.description(), "Answers its `text`.");
    assert_eq!(echo.input_schema()["required"], json!(["text"]));
    assert_eq!(
        manager.statuses()[0].status,
        McpServerStatus::Connected { tools: 8 }
    );
    // In the pool they come after every built-in, in the same order.
    let mcp_names = names(&tools);
    let builtins = tine_tools::builtin_tools().len();
    let pool = ToolPool::assemble(tine_tools::builtin_tools(), tools, |_| false);
    let pool_names: Vec<String> = pool.names().iter().map(|n| n.to_string()).collect();
    assert_eq!(pool_names[builtins..], mcp_names[..]);
    manager.shutdown().await;
}

#[tokio::test]
async fn the_tool_array_does_not_depend_on_which_server_answers_first() {
    let scratch = Scratch::new();
    let serialized = |delay_alpha: &str, delay_beta: &str| {
        mcp_config(json!({
            "alpha": stdio_server(&["--delay-ms", delay_alpha, "--no-resources"]),
            "beta": stdio_server(&["--delay-ms", delay_beta]),
        }))
    };
    let mut arrays = Vec::new();
    for (alpha, beta) in [("600", "0"), ("0", "600")] {
        let (manager, tools, warnings) = scratch
            .start(vec![serialized(alpha, beta)], scratch.options())
            .await;
        assert!(warnings.is_empty(), "{warnings:?}");
        let pool = ToolPool::assemble(tine_tools::builtin_tools(), tools, |_| false);
        arrays.push(pool.serialized_definitions().to_owned());
        manager.shutdown().await;
    }
    assert_eq!(arrays[0], arrays[1]);
    assert!(arrays[0].contains("mcp__alpha__add") && arrays[0].contains("mcp__beta__slow"));
}

#[tokio::test]
async fn a_server_that_never_answers_costs_the_timeout_and_hides_nothing() {
    let scratch = Scratch::new();
    let marker = scratch.marker("hang");
    let marker_arg = marker.display().to_string();
    let config = mcp_config(json!({
        "hang": stdio_server(&["--hang", "--marker", &marker_arg]),
        "ok": stdio_server(&["--no-resources"]),
    }));
    let mut options = scratch.options();
    options.startup_timeout = Duration::from_millis(1500);
    let (manager, tools, warnings) = scratch.start(vec![config], options).await;
    assert!(names(&tools).contains(&"mcp__ok__echo".to_owned()));
    assert!(!names(&tools).iter().any(|n| n.starts_with("mcp__hang")));
    let hang = &manager.statuses()[0];
    assert_eq!(hang.name, "hang");
    let McpServerStatus::Failed { reason } = &hang.status else {
        panic!("{:?}", hang.status)
    };
    assert!(
        reason.contains("no answer to `initialize` within 1500 ms"),
        "{reason}"
    );
    assert!(
        warnings.iter().any(|w| w.server.as_deref() == Some("hang")),
        "{warnings:?}"
    );
    // The stuck server was killed and reaped, not left behind.
    let pid = marker_pid(&marker).unwrap_or_else(|| panic!("the hanging server never ran"));
    eventually("the hanging server is gone", || !process_exists(pid)).await;
    manager.shutdown().await;
}
