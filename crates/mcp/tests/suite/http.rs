//! The same server over streamable HTTP, in-process on 127.0.0.1: listing, a call, resources.

use serde_json::json;
use tine_mcp::test_server::{TestServer, serve_http};
use tine_mcp::{LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL};
use tokio_util::sync::CancellationToken;

use super::support::*;

#[tokio::test]
async fn an_http_server_lists_calls_and_reads_resources() {
    let scratch = Scratch::new();
    let stop = CancellationToken::new();
    let server = TestServer {
        exit_on_crash: false,
        resources: true,
        permission_prompt: false,
        extra_tools: 0,
    };
    let addr = serve_http(server, stop.clone())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let config = mcp_config(json!({"web": {
        "type": "http",
        "url": format!("http://{addr}/mcp"),
        "headers": {"X-Test": "1"}
    }}));
    let (manager, tools, warnings) = scratch.start(vec![config], scratch.options()).await;
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(
        names(&tools).contains(&"mcp__web__add".to_owned()),
        "{:?}",
        names(&tools)
    );
    let ctx = scratch.context();
    let out = call(&tools, "mcp__web__add", json!({"a": 1.5, "b": 2}), &ctx).await;
    assert_eq!(out.content, "3.5");
    let out = call(&tools, "mcp__web__crash", json!({}), &ctx).await;
    assert!(
        out.is_error && out.content.contains("crash requested"),
        "{out:?}"
    );

    let out = call(&tools, LIST_RESOURCES_TOOL, json!({}), &ctx).await;
    assert!(!out.is_error, "{out:?}");
    let listed: serde_json::Value =
        serde_json::from_str(&out.content).unwrap_or_else(|e| panic!("{e}: {}", out.content));
    assert_eq!(listed[0]["uri"], "test://readme");
    assert_eq!(listed[0]["server"], "web");
    let out = call(
        &tools,
        READ_RESOURCE_TOOL,
        json!({"server": "web", "uri": "test://readme"}),
        &ctx,
    )
    .await;
    assert_eq!(out.content, "hello resource");
    let out = call(
        &tools,
        READ_RESOURCE_TOOL,
        json!({"server": "web", "uri": "test://nothing"}),
        &ctx,
    )
    .await;
    assert!(out.is_error, "{out:?}");
    manager.shutdown().await;
    stop.cancel();
}
