//! `tine doctor` through the real binary: what it reports, that it never prints a secret, and
//! that it exits non-zero only when something is broken, naming it.

use serde_json::json;
use tine_e2e::{Project, TineRun};

use super::TINE;

const KEY: &str = "sk-ant-doctor-secret-0123456789";

/// The value printed beside `label`.
fn value<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|line| {
            line.trim_start()
                .strip_prefix(label)
                .filter(|rest| rest.starts_with(' '))
        })
        .map(str::trim)
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{text}"))
}

fn doctor(project: &Project) -> TineRun {
    TineRun::new(TINE, project, "http://127.0.0.1:9")
        .env("ANTHROPIC_API_KEY", KEY)
        .args(["doctor"])
}

#[tokio::test]
async fn a_healthy_setup_exits_zero_and_never_shows_the_key() {
    let project = Project::new();
    project.write(".tine/settings.json", r#"{"model": "claude-opus-4-1"}"#);
    let out = doctor(&project).run().await;
    out.assert_success();
    let text = &out.stdout;
    assert!(
        text.starts_with(concat!("tine ", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    assert!(
        text.contains("claude-opus-4-1 (model in projectSettings)"),
        "{text}"
    );
    assert!(
        text.contains("http://127.0.0.1:9 (ANTHROPIC_BASE_URL)"),
        "{text}"
    );
    assert!(
        text.contains("from ANTHROPIC_API_KEY (value not shown)"),
        "{text}"
    );
    assert!(
        !text.contains(KEY) && !out.stderr.contains(KEY),
        "the key leaked"
    );
    let project_settings = project.cwd().join(".tine/settings.json");
    assert!(
        text.contains(&format!("{}: loaded", project_settings.display())),
        "{text}"
    );
    assert!(text.contains("userSettings"), "{text}");
    assert!(text.contains("bash sandbox"), "{text}");
    assert!(
        text.contains("Landlock") || text.contains("unavailable"),
        "{text}"
    );
    assert!(text.contains("none configured"), "{text}");
    assert_eq!(
        value(text, "TINE_HOME"),
        project.home().display().to_string()
    );
    assert!(
        text.contains("off (TINE_DISABLE_AUTO_MEMORY is set)"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("ok: nothing broken"), "{text}");
}

#[tokio::test]
async fn broken_credentials_and_settings_are_named_and_exit_one() {
    let project = Project::new();
    // (A trailing comma is fine now: JSONC.) A missing comma is not.
    project.write(".tine/settings.local.json", "{\"model\": \"x\" \"y\": 1}\n");
    let out = doctor(&project).env_remove("ANTHROPIC_API_KEY").run().await;
    assert_eq!(out.code(), Some(1), "{}", out.stdout);
    let text = &out.stdout;
    assert_eq!(value(text, "credentials"), "none");
    let local = project.cwd().join(".tine/settings.local.json");
    assert!(
        text.contains(&format!(
            "{}: error: not loaded (tine will not start)",
            local.display()
        )),
        "{text}"
    );
    assert!(text.contains("2 problem(s):"), "{text}");
    assert!(text.contains("set ANTHROPIC_API_KEY"), "{text}");
    assert!(
        text.contains(&format!("- tine will not start: {}:1", local.display())),
        "{text}"
    );
}

#[tokio::test]
async fn the_claude_code_settings_files_a_session_reads_are_listed() {
    let project = Project::new();
    project.write(".claude/settings.json", r#"{"model": "claude-opus-4-1"}"#);
    project.write(
        ".claude/settings.local.json",
        r#"{"permissions": {"deny": ["Read(./.env)"]}}"#,
    );
    // HOME is the scratch home: `~/.claude/settings.json` is there.
    std::fs::create_dir_all(project.home().join(".claude")).unwrap();
    std::fs::write(
        project.home().join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(ls:*)"]}}"#,
    )
    .unwrap();
    let out = doctor(&project).run().await;
    out.assert_success();
    let text = &out.stdout;
    for path in [
        project.cwd().join(".claude/settings.json"),
        project.cwd().join(".claude/settings.local.json"),
        project.home().join(".claude/settings.json"),
    ] {
        assert!(
            text.contains(&format!("{} (Claude Code's): loaded", path.display())),
            "{} not listed as loaded:\n{text}",
            path.display()
        );
    }
    // tine's own files of the same scopes are listed beside them.
    assert!(
        text.contains(&format!(
            "{}: not found",
            project.cwd().join(".tine/settings.local.json").display()
        )),
        "{text}"
    );
    assert!(
        text.contains("claude-opus-4-1 (model in projectSettings)"),
        "{text}"
    );
}

#[tokio::test]
async fn a_settings_error_that_stops_a_session_is_named_as_such() {
    let project = Project::new();
    // The rest of the file loads; the deny rule cannot be read, so tine refuses to start.
    project.write(
        ".claude/settings.json",
        r#"{"model": "claude-opus-4-1", "permissions": {"deny": ["Bash(rm:*"]}}"#,
    );
    let file = project.cwd().join(".claude/settings.json");
    let out = doctor(&project).run().await;
    assert_eq!(out.code(), Some(1), "{}", out.stdout);
    let text = &out.stdout;
    assert!(
        text.contains(&format!(
            "{} (Claude Code's): tine will not start: 1 error(s)",
            file.display()
        )),
        "{text}"
    );
    assert!(!text.contains("warning(s)"), "{text}");
    assert!(
        text.contains("tine will not start: 1 settings error(s) above"),
        "{text}"
    );
    assert!(text.contains("1 problem(s):"), "{text}");
    assert!(
        text.contains(&format!("- tine will not start: {}:1", file.display())),
        "{text}"
    );
    // And indeed: a session refuses to start on the same files.
    let run = TineRun::new(TINE, &project, "http://127.0.0.1:9")
        .args(["-p", "hi"])
        .run()
        .await;
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("not starting"), "{}", run.stderr);

    // A file with only warnings starts, and doctor says so.
    project.write(
        ".claude/settings.json",
        r#"{"model": "claude-opus-4-1", "noSuchKey": 1}"#,
    );
    let out = doctor(&project).run().await;
    out.assert_success();
    let text = &out.stdout;
    assert!(
        text.contains(&format!(
            "{} (Claude Code's): loaded with 1 warning(s)",
            file.display()
        )),
        "{text}"
    );
    assert!(!text.contains("will not start"), "{text}");
}

#[tokio::test]
async fn mcp_servers_that_cannot_start_are_listed_with_their_state() {
    let project = Project::new();
    project.write(
        ".mcp.json",
        &json!({"mcpServers": {"github": {"command": "gh-mcp"}}}).to_string(),
    );
    std::fs::write(
        project.home().join("settings.json"),
        json!({"mcpServers": {"db": {"command": "/nonexistent/db-mcp"}}}).to_string(),
    )
    .unwrap();
    let out = doctor(&project).run().await;
    out.assert_success();
    let text = &out.stdout;
    assert!(text.contains("2 configured"), "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} line in {text}"))
    };
    assert!(line("github").contains("needs trust"), "{text}");
    assert!(line("db").contains("failed"), "{text}");
}

#[tokio::test]
async fn the_sandbox_settings_are_reported() {
    let project = Project::new();
    std::fs::write(
        project.home().join("settings.json"),
        json!({"sandbox": {"enabled": true, "allowNetwork": true,
                           "filesystem": {"allowWrite": ["~/cache"]}}})
        .to_string(),
    )
    .unwrap();
    let out = doctor(&project).run().await;
    out.assert_success();
    let text = &out.stdout;
    assert!(
        text.contains("yes (sandbox.enabled in userSettings)"),
        "{text}"
    );
    assert!(text.contains("allowed (sandbox.allowNetwork)"), "{text}");
    assert!(
        text.contains(&project.cwd().display().to_string())
            && text.contains(&project.home().join("cache").display().to_string()),
        "{text}"
    );
}
