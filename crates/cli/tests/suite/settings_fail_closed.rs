//! Settings fail closed, through the real binary: a damaged file keeps its deny rules or stops
//! the run, never drops them silently; a Claude Code user's deny rules apply unchanged.
//!
//! The runs use bypassPermissions, so nothing but the deny rule under test stands between the
//! model's `rm` and the file (a control run without the rule shows the file does go).

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, RunOutput};

use super::{mock, tine};

/// The model asks for each command in turn (one Bash call per reply), then says "done".
fn bash_scenario(commands: &[String]) -> Scenario {
    let mut scenario = Scenario::new();
    for (turn, command) in commands.iter().enumerate() {
        scenario = scenario.rule(
            Rule::new()
                .assistant_turns(turn)
                .reply(Reply::tool_use("Bash", json!({ "command": command }))),
        );
    }
    scenario.default_reply(Reply::text("done"))
}

/// `tine -p` in bypassPermissions with json output, the model running `commands`.
async fn run_bash(project: &Project, commands: &[String], extra: &[&str]) -> (RunOutput, usize) {
    let server = mock(bash_scenario(commands)).await;
    let mut args = vec![
        "-p",
        "clean up",
        "--output-format",
        "json",
        "--permission-mode",
        "bypassPermissions",
    ];
    args.extend_from_slice(extra);
    let out = tine(project, &server)
        .env("IS_SANDBOX", "1")
        .args(args)
        .run()
        .await;
    let requests = server.requests().len();
    server.stop().await;
    (out, requests)
}

fn denied_commands(out: &RunOutput) -> Vec<String> {
    out.json()["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_input"]["command"].as_str().unwrap().to_owned())
        .collect()
}

fn rm(project: &Project, name: &str) -> String {
    format!("rm {}", project.cwd().join(name).display())
}

#[tokio::test]
async fn without_a_deny_rule_the_control_run_does_delete_the_file() {
    let project = Project::new();
    let victim = project.write("keep.txt", "precious\n");
    let (out, _) = run_bash(&project, &[rm(&project, "keep.txt")], &[]).await;
    out.assert_success();
    assert!(
        !victim.exists(),
        "the control must show rm runs when not denied"
    );
}

#[tokio::test]
async fn a_trailing_comma_and_comments_do_not_drop_the_deny_rules() {
    let project = Project::new();
    let victim = project.write("keep.txt", "precious\n");
    project.write(
        ".tine/settings.json",
        "{\n  // nothing gets deleted here\n  \"permissions\": {\n    \"deny\": [\"Bash(rm:*)\",],\n  },\n}\n",
    );
    let (out, _) = run_bash(&project, &[rm(&project, "keep.txt")], &[]).await;
    out.assert_success();
    assert!(victim.exists(), "the deny rule must hold: {}", out.stderr);
    assert_eq!(denied_commands(&out), [rm(&project, "keep.txt")]);
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
}

#[tokio::test]
async fn a_wrong_typed_key_keeps_the_files_deny_rules_and_warns_with_file_and_line() {
    let project = Project::new();
    let victim = project.write("keep.txt", "precious\n");
    let settings = project.write(
        ".tine/settings.json",
        "{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\"]},\n  \"model\": 5\n}\n",
    );
    let (out, _) = run_bash(&project, &[rm(&project, "keep.txt")], &[]).await;
    out.assert_success();
    assert!(victim.exists(), "the deny rule must hold: {}", out.stderr);
    let expected = format!("tine: warning: {}:3:", settings.display());
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("`model` must be a string, found a number"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn settings_flag_naming_a_missing_file_exits_1_before_any_request() {
    let project = Project::new();
    let (out, requests) = run_bash(&project, &[], &["--settings", "/nonexistent/tine.json"]).await;
    assert_eq!(out.code(), Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("cannot read settings file /nonexistent/tine.json"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("not starting"), "{}", out.stderr);
    assert_eq!(requests, 0);
}

#[tokio::test]
async fn an_unparseable_file_refuses_to_run_naming_file_line_and_column() {
    let project = Project::new();
    let victim = project.write("keep.txt", "precious\n");
    let settings = project.write(
        ".tine/settings.json",
        "{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\"]}\n  \"model\": \"x\"\n}\n",
    );
    let (out, requests) = run_bash(&project, &[rm(&project, "keep.txt")], &[]).await;
    assert_eq!(out.code(), Some(1), "{}", out.stderr);
    // The comma is missing at the end of line 2.
    let expected = format!(
        "tine: error: {}:2:42: invalid settings JSON: Expected comma",
        settings.display()
    );
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    assert!(out.stderr.contains("fix the file"), "{}", out.stderr);
    assert_eq!(requests, 0, "nothing runs");
    assert!(victim.exists());
    assert_eq!(out.stdout, "");
}

#[tokio::test]
async fn a_deny_rule_that_cannot_be_understood_refuses_to_run() {
    let project = Project::new();
    let settings = project.write(
        ".tine/settings.local.json",
        "{\"permissions\": {\n  \"deny\": [\"Bash(rm:*\"],\n  \"allow\": [\"Read\"]}}\n",
    );
    let (out, requests) = run_bash(&project, &[], &[]).await;
    assert_eq!(out.code(), Some(1), "{}", out.stderr);
    let expected = format!(
        "{}:2:12: invalid permission rule `Bash(rm:*`",
        settings.display()
    );
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    assert_eq!(requests, 0);
}

#[tokio::test]
async fn a_bad_allow_rule_is_dropped_with_a_warning_and_the_run_goes_on() {
    let project = Project::new();
    let victim = project.write("keep.txt", "precious\n");
    project.write(
        ".tine/settings.json",
        r#"{"permissions": {"allow": ["Bash("], "deny": ["Bash(rm:*)"]}, "colour": "red"}"#,
    );
    let (out, _) = run_bash(&project, &[rm(&project, "keep.txt")], &[]).await;
    out.assert_success();
    assert!(victim.exists());
    assert!(
        out.stderr.contains("invalid permission rule `Bash(`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("unknown setting `colour`"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn claude_code_users_deny_rules_apply_unchanged() {
    let project = Project::new();
    let victim = project.write("keep.txt", "precious\n");
    // Claude Code's three files: the project's, the local one, and ~/.claude/ (HOME is the
    // project's home in these runs).
    project.write(
        ".claude/settings.json",
        r#"{"permissions": {"deny": ["Bash(rm:*)"]}, "includeCoAuthoredBy": false}"#,
    );
    project.write(
        ".claude/settings.local.json",
        r#"{"permissions": {"deny": ["Bash(mkdir:*)"]}}"#,
    );
    let user_claude = project.home().join(".claude");
    std::fs::create_dir_all(&user_claude).unwrap();
    std::fs::write(
        user_claude.join("settings.json"),
        r#"{"permissions": {"deny": ["Bash(touch:*)"]}, "statusLine": {"type": "command", "command": "x"}}"#,
    )
    .unwrap();
    let made = project.cwd().join("made");
    let dir = project.cwd().join("dir");
    let commands = [
        rm(&project, "keep.txt"),
        format!("touch {}", made.display()),
        format!("mkdir {}", dir.display()),
    ];
    let (out, _) = run_bash(&project, &commands, &[]).await;
    out.assert_success();
    assert!(victim.exists() && !made.exists() && !dir.exists());
    assert_eq!(denied_commands(&out), commands);
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    // Read, never written: nothing was added to Claude Code's files.
    let value: Value = serde_json::from_str(&project.read(".claude/settings.local.json")).unwrap();
    assert_eq!(value, json!({"permissions": {"deny": ["Bash(mkdir:*)"]}}));
}

#[tokio::test]
async fn tines_own_file_wins_over_claude_codes_for_a_scalar() {
    let project = Project::new();
    project.write(".claude/settings.json", r#"{"model": "claude-side-model"}"#);
    project.write(".tine/settings.json", r#"{"model": "tine-side-model"}"#);
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let out = tine(&project, &server).args(["-p", "hi"]).run().await;
    out.assert_success();
    let bodies = tine_e2e::request_bodies(&server);
    assert_eq!(bodies[0]["model"], "tine-side-model");
    server.stop().await;
}

#[tokio::test]
async fn managed_disable_bypass_mode_refuses_the_flag() {
    let project = Project::new();
    let managed = project.root().join("managed.json");
    std::fs::write(
        &managed,
        r#"{"permissions": {"disableBypassPermissionsMode": "disable"}}"#,
    )
    .unwrap();
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let out = tine(&project, &server)
        .env("IS_SANDBOX", "1")
        .env("TINE_MANAGED_SETTINGS", &managed)
        .args(["-p", "hi", "--permission-mode", "bypassPermissions"])
        .run()
        .await;
    assert_eq!(out.code(), Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("bypassPermissions is disabled by"),
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
    server.stop().await;
}

#[tokio::test]
async fn the_model_cannot_grant_itself_rules_through_claude_codes_files() {
    let project = Project::new();
    let target = project.cwd().join(".claude/settings.local.json");
    let scenario = Scenario::new()
        .rule(Rule::new().assistant_turns(0).reply(Reply::tool_use(
            "Write",
            json!({
                "file_path": target,
                "content": "{\"permissions\": {\"allow\": [\"Bash\"]}}",
            }),
        )))
        .default_reply(Reply::text("done"));
    let server = mock(scenario).await;
    // acceptEdits allows writes in the project, but not into a settings directory.
    let out = tine(&project, &server)
        .args(["-p", "go", "--output-format", "json"])
        .args(["--permission-mode", "acceptEdits"])
        .run()
        .await;
    out.assert_success();
    assert!(
        !target.exists(),
        "the write must be refused: {}",
        out.stdout
    );
    let denials = out.json()["permission_denials"].clone();
    assert_eq!(denials[0]["tool_name"], "Write", "{denials}");
    server.stop().await;
}
