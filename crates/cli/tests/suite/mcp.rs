//! MCP servers through the real binary, against tine-mcp's test server over streamable HTTP
//! (in this process): `tine mcp list|trust|add|get|remove`, and `tine doctor`'s MCP lines.

use serde_json::json;
use tine_e2e::{Project, TineRun};
use tine_mcp::test_server::{TestServer, serve_http};
use tokio_util::sync::CancellationToken;

use super::TINE;

/// The test server on a free port, until the token is cancelled.
async fn http_server() -> (String, CancellationToken) {
    let stop = CancellationToken::new();
    let addr = serve_http(TestServer::default(), stop.clone())
        .await
        .unwrap();
    (format!("http://{addr}/mcp"), stop)
}

fn tine_mcp(project: &Project, args: &[&str]) -> TineRun {
    TineRun::new(TINE, project, "http://127.0.0.1:9")
        .env("TINE_MCP_TIMEOUT", "30000")
        .args(std::iter::once("mcp").chain(args.iter().copied()))
}

#[tokio::test]
async fn list_shows_a_project_server_as_needing_trust_until_trusted() {
    let (url, stop) = http_server().await;
    let project = Project::new();
    project.write(
        ".mcp.json",
        &json!({"mcpServers": {"test": {"type": "http", "url": url}}}).to_string(),
    );
    let out = tine_mcp(&project, &["list"]).run().await;
    out.assert_success();
    assert!(out.stdout.contains("test"), "{}", out.stdout);
    assert!(out.stdout.contains("needs trust"), "{}", out.stdout);
    assert!(!out.stdout.contains("connected"), "{}", out.stdout);

    tine_mcp(&project, &["trust", "test"])
        .run()
        .await
        .assert_success();
    let out = tine_mcp(&project, &["list"]).run().await;
    out.assert_success();
    assert!(out.stdout.contains("connected"), "{}", out.stdout);
    assert!(!out.stdout.contains("needs trust"), "{}", out.stdout);
    stop.cancel();
}

#[tokio::test]
async fn add_get_and_remove_a_server() {
    let (url, stop) = http_server().await;
    let project = Project::new();
    tine_mcp(&project, &["add", "--transport", "http", "web", &url])
        .run()
        .await
        .assert_success();
    let out = tine_mcp(&project, &["get", "web"]).run().await;
    out.assert_success();
    assert!(out.stdout.contains(&url), "{}", out.stdout);
    let out = tine_mcp(&project, &["list"]).run().await;
    out.assert_success();
    assert!(out.stdout.contains("connected"), "{}", out.stdout);

    tine_mcp(&project, &["remove", "web"])
        .run()
        .await
        .assert_success();
    let out = tine_mcp(&project, &["get", "web"]).run().await;
    assert!(!out.status.success(), "{}", out.stdout);
    assert!(
        out.stderr.contains("no MCP server named `web`"),
        "{}",
        out.stderr
    );
    stop.cancel();
}

#[tokio::test]
async fn an_unknown_command_prints_the_usage() {
    let project = Project::new();
    let out = tine_mcp(&project, &["frobnicate"]).run().await;
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("usage: tine mcp list"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn doctor_reports_each_server_state() {
    let (url, stop) = http_server().await;
    let project = Project::new();
    project.write(
        ".mcp.json",
        &json!({"mcpServers": {"proj": {"type": "http", "url": url}}}).to_string(),
    );
    std::fs::write(
        project.home().join("settings.json"),
        json!({"mcpServers": {"web": {"type": "http", "url": url}}}).to_string(),
    )
    .unwrap();
    let out = TineRun::new(TINE, &project, "http://127.0.0.1:9")
        .args(["doctor"])
        .run()
        .await;
    out.assert_success();
    let text = &out.stdout;
    assert!(text.contains("2 configured"), "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} line in {text}"))
            .to_owned()
    };
    assert!(line("proj").contains("needs trust"), "{text}");
    assert!(line("web").contains("connected"), "{text}");
    assert!(!text.contains("not supported yet"), "{text}");
    stop.cancel();
}
