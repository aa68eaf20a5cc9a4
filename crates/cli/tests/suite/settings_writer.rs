//! tine's one settings writer through the real binary: `tine mcp add|remove|trust` edit a
//! settings file that has comments and trailing commas in place (they stay, the file stays
//! readable by tine and private), and the session reads back what was written.

use std::os::unix::fs::PermissionsExt;

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

/// Local settings as a person writes them: comments, a blank line, trailing commas.
const LOCAL: &str = r#"{
  // The model for this checkout only.
  "model": "claude-sonnet-4-5",

  /* Rules I trust here. */
  "permissions": {
    "allow": ["Read",],
  },
}
"#;

#[tokio::test]
async fn mcp_add_and_remove_keep_the_comments_of_local_settings() {
    let (url, stop) = http_server().await;
    let project = Project::new();
    let path = project.write(".tine/settings.local.json", LOCAL);

    let out = tine_mcp(&project, &["add", "--transport", "http", "web", &url])
        .run()
        .await;
    out.assert_success();
    assert!(
        out.stdout.contains("Added http MCP server web"),
        "{}",
        out.stdout
    );
    let written = std::fs::read_to_string(&path).unwrap();
    for kept in [
        "  // The model for this checkout only.\n  \"model\": \"claude-sonnet-4-5\",\n\n  /* Rules I trust here. */",
        "\"allow\": [\"Read\",],",
    ] {
        assert!(written.contains(kept), "lost {kept:?}:\n{written}");
    }
    assert!(written.contains("\"mcpServers\""), "{written}");
    assert!(written.contains(&url), "{written}");

    let out = tine_mcp(&project, &["list"]).run().await;
    out.assert_success();
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("web:"))
        .unwrap_or_else(|| panic!("web is not listed: {}", out.stdout));
    assert!(
        line.contains("local") && line.contains("connected"),
        "{line}"
    );

    tine_mcp(&project, &["remove", "web"])
        .run()
        .await
        .assert_success();
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(!after.contains(&url), "{after}");
    assert!(
        after.contains("  // The model for this checkout only.") && after.contains("[\"Read\",]"),
        "{after}"
    );
    // The session still reads the file: its rule and model are there.
    let out = tine_mcp(&project, &["list"]).run().await;
    out.assert_success();
    assert!(!out.stdout.contains("web:"), "{}", out.stdout);
    assert!(
        !out.stderr.contains("invalid settings JSON"),
        "{}",
        out.stderr
    );
    stop.cancel();
}

#[tokio::test]
async fn mcp_add_to_user_settings_with_comments_keeps_them_and_the_file_private() {
    let (url, stop) = http_server().await;
    let project = Project::new();
    let user = project.home().join("settings.json");
    std::fs::write(
        &user,
        "// my settings, by hand\n{\n  \"model\": \"claude-sonnet-4-5\", // the usual\n}\n",
    )
    .unwrap();
    std::fs::set_permissions(&user, std::fs::Permissions::from_mode(0o600)).unwrap();

    tine_mcp(
        &project,
        &[
            "add",
            "--scope",
            "user",
            "--transport",
            "http",
            "mine",
            &url,
        ],
    )
    .run()
    .await
    .assert_success();
    let written = std::fs::read_to_string(&user).unwrap();
    assert!(
        written.starts_with("// my settings, by hand\n{"),
        "{written}"
    );
    assert!(
        written.contains("\"model\": \"claude-sonnet-4-5\", // the usual"),
        "{written}"
    );
    let mode = std::fs::metadata(&user).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the file keeps its mode");

    let out = tine_mcp(&project, &["get", "mine"]).run().await;
    out.assert_success();
    assert!(out.stdout.contains("scope: user"), "{}", out.stdout);
    let out = tine_mcp(&project, &["list"]).run().await;
    out.assert_success();
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("mine:") && l.contains("connected")),
        "{}",
        out.stdout
    );
    stop.cancel();
}

#[tokio::test]
async fn mcp_trust_records_the_server_in_local_settings_with_comments() {
    let (url, stop) = http_server().await;
    let project = Project::new();
    project.write(
        ".mcp.json",
        &json!({"mcpServers": {"proj": {"type": "http", "url": url}}}).to_string(),
    );
    let path = project.write(".tine/settings.local.json", LOCAL);
    tine_mcp(&project, &["trust", "proj"])
        .run()
        .await
        .assert_success();
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(
        written.contains("/* Rules I trust here. */")
            && written.contains("\"enabledMcpjsonServers\""),
        "{written}"
    );
    let out = tine_mcp(&project, &["list"]).run().await;
    out.assert_success();
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("proj:") && l.contains("connected")),
        "{}",
        out.stdout
    );
    stop.cancel();
}
