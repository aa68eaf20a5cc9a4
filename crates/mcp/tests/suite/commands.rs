//! `tine mcp add|get|remove|trust|list` on a scratch project: the files they write and the
//! text they print.

use serde_json::{Value, json};
use tine_mcp::{McpCommandEnv, McpSources, parse_mcp_args, run_mcp_command};

use super::support::*;

fn env(scratch: &Scratch) -> McpCommandEnv {
    McpCommandEnv {
        sources: McpSources::new(&scratch.project),
        settings_paths: scratch.paths(),
        options: scratch.options(),
    }
}

async fn run(scratch: &Scratch, line: &[&str]) -> Result<String, String> {
    let args: Vec<String> = line.iter().map(|s| s.to_string()).collect();
    let command = parse_mcp_args(&args).map_err(|e| e.to_string())?;
    tokio::time::timeout(GUARD, run_mcp_command(&command, &env(scratch)))
        .await
        .unwrap_or_else(|_| panic!("{line:?} hung"))
        .map_err(|e| e.to_string())
}

fn read(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn add_get_list_remove() {
    let scratch = Scratch::new();
    let local = scratch.project.join(".tine/settings.local.json");
    std::fs::write(&local, r#"{"model": "keep-me"}"#).unwrap_or_else(|e| panic!("{e}"));
    let out = run(
        &scratch,
        &["add", "-e", "K=V", "srv", "--", SERVER, "--no-resources"],
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("Added stdio MCP server srv"), "{out}");
    let written = read(&local);
    assert_eq!(written["model"], "keep-me");
    assert_eq!(
        written["mcpServers"]["srv"]["args"],
        json!(["--no-resources"])
    );
    assert_eq!(written["mcpServers"]["srv"]["env"]["K"], "V");
    let again = run(&scratch, &["add", "srv", "--", SERVER]).await;
    assert!(again.is_err_and(|e| e.contains("already exists")));

    let out = run(&scratch, &["get", "srv"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.contains("scope: local") && out.contains("env: K") && !out.contains("=V"),
        "{out}"
    );

    let out = run(&scratch, &["list"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.contains("srv: ") && out.contains("connected (8 tools)"),
        "{out}"
    );

    let out = run(
        &scratch,
        &[
            "add",
            "--transport",
            "http",
            "-s",
            "user",
            "web",
            "http://127.0.0.1:9/mcp",
        ],
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("user scope"), "{out}");
    assert_eq!(
        read(&scratch.home.join("settings.json"))["mcpServers"]["web"]["type"],
        "http"
    );

    let out = run(&scratch, &["remove", "srv"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("Removed MCP server srv"), "{out}");
    assert_eq!(read(&local)["mcpServers"], json!({}));
    assert!(run(&scratch, &["remove", "srv"]).await.is_err());
}

#[tokio::test]
async fn trust_lets_a_project_server_start() {
    let scratch = Scratch::new();
    let out = run(
        &scratch,
        &[
            "add",
            "-s",
            "project",
            "repo",
            "--",
            SERVER,
            "--no-resources",
        ],
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("starts once trusted"), "{out}");
    let out = run(&scratch, &["list"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.contains("needs trust") && out.contains("tine mcp trust repo"),
        "{out}"
    );
    let out = run(&scratch, &["trust", "repo"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("Trusted MCP server repo"), "{out}");
    assert_eq!(
        read(&scratch.project.join(".tine/settings.local.json"))["enabledMcpjsonServers"],
        json!(["repo"])
    );
    let out = run(&scratch, &["get", "repo"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.contains("trust: trusted (enabledMcpjsonServers in localSettings)"),
        "{out}"
    );
    let out = run(&scratch, &["list"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("connected (8 tools)"), "{out}");
}
