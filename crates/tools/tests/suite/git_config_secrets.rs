//! Git configuration that holds credentials is never printed unasked: through the real Bash
//! tool and the real permission engine, on a repository whose config carries a token the way
//! CI checkouts leave one (`url.https://TOKEN@host/.insteadOf`, `http.extraHeader`).

use std::process::Command;

use serde_json::json;
use tine_permissions::{PermissionContext, PermissionDecision, PermissionMode, PermissionQuery};
use tine_tools::{BashTool, Tool, ToolContext, run_tool};

const TOKEN: &str = "ghp_planted0123456789tokenABCDEF";

fn repo() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(&project)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["config", "user.name", "Dev"]);
    git(&[
        "config",
        &format!("url.https://{TOKEN}@github.com/.insteadOf"),
        "https://github.com/",
    ]);
    git(&[
        "config",
        "http.https://github.com/.extraheader",
        &format!("AUTHORIZATION: basic {TOKEN}"),
    ]);
    (dir, project)
}

fn decide(engine: &PermissionContext, ctx: &ToolContext, command: &str) -> PermissionDecision {
    let input = json!({ "command": command });
    let target = BashTool.permission_target(&input, ctx);
    let verdict = BashTool.check_permissions(&input, ctx);
    engine.decide(&PermissionQuery {
        tool: BashTool.name(),
        target: &target,
        verdict: &verdict,
        is_read_only: BashTool.is_read_only(&input),
    })
}

#[tokio::test]
async fn printing_git_configuration_wholesale_or_a_credential_key_needs_approval() {
    let (_dir, project) = repo();
    let ctx = ToolContext::new(&project);
    let engine = PermissionContext::new(PermissionMode::Default, &project);
    let dont_ask = PermissionContext::new(PermissionMode::DontAsk, &project);

    // What the commands would print if run: the token (so asking is what keeps it out).
    let listed = run_tool(
        &BashTool,
        json!({"command": "GIT_CONFIG_GLOBAL=/dev/null git config --list"}),
        &ctx,
    )
    .await;
    assert!(listed.content.contains(TOKEN), "{}", listed.content);

    for command in [
        "git config --list",
        "git config -l",
        "git config list",
        "git config --get-regexp url",
        "git config --get-urlmatch http https://github.com",
        "git config --get http.https://github.com/.extraheader",
        "git var -l",
        "git status && git config -l",
    ] {
        match decide(&engine, &ctx, command) {
            PermissionDecision::Ask { message, .. } => {
                // A compound line names the part; a single command says why.
                assert!(
                    message.contains("credentials") || message.contains("`git config -l`"),
                    "{command}: {message}"
                );
            }
            other => panic!("`{command}` did not ask: {other:?}"),
        }
        assert!(
            decide(&dont_ask, &ctx, command).is_deny(),
            "{command} in dontAsk"
        );
    }
    // One named, harmless key, and names alone, still pass.
    for command in [
        "git config --get user.name",
        "git config --name-only --get-regexp url",
        "git status",
    ] {
        assert!(decide(&engine, &ctx, command).is_allow(), "{command}");
    }
}
