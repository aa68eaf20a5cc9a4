//! The command-line flags the Agent SDK passes, through the binary against the mock: an empty
//! `--system-prompt`, `--tools`, `--setting-sources`, `--thinking` / `--max-thinking-tokens`,
//! `--effort`, `--betas`, `--permission-prompt-tool stdio`, the SDK's whole command line, the
//! Claude Code options tine refuses by name, and `tine -v`. A run without these flags sends the
//! bytes it always did. (`--max-budget-usd`, `--fork-session` and `--resume-session-at`:
//! `sdk_resume`.)

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, RunOutput, request_bodies};

use super::{mock, tine, tool_names};

/// The text of the first user message (the user context comes first in it).
fn first_user_text(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn run_json(project: &Project, server: &MockServer, args: &[&str]) -> Value {
    let out = tine(project, server)
        .args(["-p", "hi", "--output-format", "json"])
        .args(args)
        .run()
        .await;
    out.assert_success();
    out.json()
}

#[tokio::test]
async fn an_empty_system_prompt_sends_no_empty_text_block() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let result = run_json(&project, &server, &["--system-prompt", ""]).await;
    assert_eq!(result["result"], "ok");
    let body = &request_bodies(&server)[0];
    assert!(body.get("system").is_none(), "{}", body["system"]);
    assert_eq!(server.requests()[0].status, 200);
    // With text appended, the appended text is the whole prompt.
    run_json(
        &project,
        &server,
        &["--system-prompt", "", "--append-system-prompt", "Be brief."],
    )
    .await;
    let body = &request_bodies(&server)[1];
    assert_eq!(body["system"][0]["text"], "Be brief.");
}

#[tokio::test]
async fn tools_offers_only_the_built_ins_named() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    run_json(&project, &server, &[]).await;
    run_json(&project, &server, &["--tools", "default"]).await;
    run_json(&project, &server, &["--tools", "Read,Bash"]).await;
    run_json(&project, &server, &["--tools", ""]).await;
    let out = tine(&project, &server)
        .args(["-p", "hi", "--tools", "Task,Nope"])
        .run()
        .await;
    out.assert_success();
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 5);
    // `default` is every tool: the very bytes of a run without the flag.
    assert_eq!(bodies[0]["tools"], bodies[1]["tools"]);
    assert!(tool_names(&bodies[0]).len() > 8);
    assert_eq!(tool_names(&bodies[2]), ["Bash", "Read"]);
    assert!(bodies[3].get("tools").is_none(), "{}", bodies[3]["tools"]);
    // `Task` is the Agent tool's old name; a name tine lacks is said, not offered.
    assert_eq!(tool_names(&bodies[4]), ["Agent"]);
    assert!(
        out.stderr
            .contains("--tools Nope: tine has no built-in tool"),
        "{}",
        out.stderr
    );
}

/// Deny rules in every settings source (a bare deny rule takes the tool out of the array) and
/// an instruction file in each scope.
fn settings_everywhere(project: &Project) {
    let deny = |tool: &str| json!({"permissions": {"deny": [tool]}}).to_string();
    std::fs::write(project.home().join("settings.json"), deny("Write")).unwrap();
    project.write(".claude/settings.json", &deny("Edit"));
    project.write(".tine/settings.local.json", &deny("Glob"));
    std::fs::write(project.root().join("no-managed.json"), deny("NotebookEdit")).unwrap();
    std::fs::write(project.home().join("AGENTS.md"), "USER-MARK\n").unwrap();
    project.write("CLAUDE.md", "PROJECT-MARK\n");
    project.write("CLAUDE.local.md", "LOCAL-MARK\n");
}

#[tokio::test]
async fn setting_sources_reads_only_those_sources_and_always_managed_and_flag_settings() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    settings_everywhere(&project);
    let flag = r#"{"permissions":{"deny":["Grep"]}}"#;
    run_json(
        &project,
        &server,
        &["--setting-sources=project", "--settings", flag],
    )
    .await;
    run_json(
        &project,
        &server,
        &["--setting-sources=", "--settings", flag],
    )
    .await;
    run_json(&project, &server, &["--setting-sources", "user,local"]).await;
    run_json(&project, &server, &[]).await;
    let bodies = request_bodies(&server);
    let has = |i: usize, tool: &str| tool_names(&bodies[i]).iter().any(|t| t == tool);
    let marks = |i: usize| {
        let text = first_user_text(&bodies[i]);
        ["USER-MARK", "PROJECT-MARK", "LOCAL-MARK"].map(|m| text.contains(m))
    };
    // project: its deny rule, flag and managed ones; its instructions only.
    assert!(!has(0, "Edit") && has(0, "Write") && has(0, "Glob"));
    assert!(!has(0, "Grep") && !has(0, "NotebookEdit"));
    assert_eq!(marks(0), [false, true, false]);
    // none of the three: only flag and managed settings.
    assert!(has(1, "Edit") && has(1, "Write") && has(1, "Glob"));
    assert!(!has(1, "Grep") && !has(1, "NotebookEdit"));
    assert_eq!(marks(1), [false, false, false]);
    assert!(!has(2, "Write") && !has(2, "Glob") && has(2, "Edit"));
    assert_eq!(marks(2), [true, false, true]);
    // Without the flag, everything.
    assert!(!has(3, "Write") && !has(3, "Edit") && !has(3, "Glob"));
    assert!(!has(3, "NotebookEdit"));
    assert_eq!(marks(3), [true, true, true]);

    let out = tine(&project, &server)
        .args(["-p", "hi", "--setting-sources", "user,policy"])
        .run()
        .await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("--setting-sources"), "{}", out.stderr);
}

#[tokio::test]
async fn setting_sources_also_decide_which_skills_agents_and_commands_are_found() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let skill =
        |name: &str| format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody\n");
    project.write(".claude/skills/proj-skill/SKILL.md", &skill("proj-skill"));
    let user_skill = project.home().join("skills/user-skill/SKILL.md");
    std::fs::create_dir_all(user_skill.parent().unwrap()).unwrap();
    std::fs::write(&user_skill, skill("user-skill")).unwrap();
    project.write(
        ".claude/agents/proj-agent.md",
        "---\nname: proj-agent\ndescription: PROJECT-AGENT-MARK\n---\nYou review.\n",
    );
    project.write(".claude/commands/projcmd.md", "PROJECT-COMMAND-BODY");
    for (sources, project_read, user_read) in [
        ("--setting-sources=user", false, true),
        ("--setting-sources=project", true, false),
        ("--setting-sources=user,project,local", true, true),
    ] {
        let before = request_bodies(&server).len();
        tine(&project, &server)
            .args(["-p", "/projcmd", sources])
            .run()
            .await
            .assert_success();
        let body = &request_bodies(&server)[before];
        let context = first_user_text(body);
        let tools = body["tools"].to_string();
        assert_eq!(context.contains("proj-skill"), project_read, "{sources}");
        assert_eq!(context.contains("user-skill"), user_read, "{sources}");
        assert_eq!(
            tools.contains("PROJECT-AGENT-MARK"),
            project_read,
            "{sources}"
        );
        // Not found, the command is a prompt like any other `/word`.
        let prompt = body["messages"][0].to_string();
        assert_eq!(
            prompt.contains("PROJECT-COMMAND-BODY"),
            project_read,
            "{sources}"
        );
    }
}

#[tokio::test]
async fn a_project_file_that_is_not_read_cannot_refuse_the_start() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    // A deny rule that does not parse is fatal (fail closed) where it is read.
    project.write(
        ".tine/settings.json",
        r#"{"permissions":{"deny":["Bash(unclosed"]}}"#,
    );
    let out = tine(&project, &server).args(["-p", "hi"]).run().await;
    assert!(!out.status.success(), "{}", out.stderr);
    run_json(&project, &server, &["--setting-sources", "user,local"]).await;
}

fn thinking_of(out: &RunOutput, server: &MockServer) -> Value {
    out.assert_success();
    request_bodies(server)
        .last()
        .unwrap()
        .get("thinking")
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn thinking_flags_set_the_thinking_at_start_over_the_environment() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let run = |args: &'static [&'static str]| {
        tine(&project, &server)
            .env("ANTHROPIC_MODEL", "claude-sonnet-4-5")
            .env("MAX_THINKING_TOKENS", "12000")
            .args(["-p", "hi"])
            .args(args)
            .run()
    };
    let out = run(&["--max-thinking-tokens", "5000"]).await;
    assert_eq!(
        thinking_of(&out, &server),
        json!({"type": "enabled", "budget_tokens": 5000})
    );
    let out = run(&["--thinking", "adaptive"]).await;
    assert_eq!(thinking_of(&out, &server), json!({"type": "adaptive"}));
    let out = run(&["--thinking", "disabled"]).await;
    assert_eq!(thinking_of(&out, &server), Value::Null);
    let out = run(&["--max-thinking-tokens", "0"]).await;
    assert_eq!(thinking_of(&out, &server), Value::Null);
    let out = run(&["--thinking", "enabled"]).await;
    assert_eq!(
        thinking_of(&out, &server),
        json!({"type": "enabled", "budget_tokens": 31999})
    );
    let out = run(&["--thinking", "disabled", "--max-thinking-tokens", "4000"]).await;
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("--max-thinking-tokens"),
        "{}",
        out.stderr
    );
}

/// The parent forks one child in the background, which reports; the parent then answers.
fn one_fork() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("Your directive: CHILD-WORK")
                .named("child")
                .reply(Reply::text("Scope: child\nResult: done")),
        )
        .rule(
            Rule::new()
                .last_user_contains("<task-notification>")
                .named("notified")
                .reply(Reply::text("The child reported.")),
        )
        .rule(Rule::new().assistant_turns(0).named("parent").reply(
            Reply::text("Forking.").with_tool_use(
                "Agent",
                json!({"description": "child part", "prompt": "CHILD-WORK"}),
            ),
        ))
        .default_reply(Reply::text("Waiting."))
}

#[tokio::test]
async fn effort_and_betas_go_on_every_request_forks_included() {
    let server = mock(one_fork()).await;
    let project = Project::new();
    let result = run_json(
        &project,
        &server,
        &["--effort", "low", "--betas", "beta-one,beta-two"],
    )
    .await;
    assert_eq!(result["result"], "The child reported.", "{result}");
    let requests = server.requests();
    let messages: Vec<_> = requests
        .iter()
        .filter(|r| r.path.ends_with("/v1/messages"))
        .collect();
    assert!(messages.iter().any(|r| r.rule.as_deref() == Some("child")));
    for request in &messages {
        assert_eq!(
            request.header("anthropic-beta"),
            Some("beta-one,beta-two"),
            "{:?}",
            request.rule
        );
        let body = request.json().unwrap();
        assert_eq!(body["output_config"], json!({"effort": "low"}), "{body}");
    }
    // The child still reads the parent's cached prefix (same effort, same bytes).
    let child = messages
        .iter()
        .find(|r| r.rule.as_deref() == Some("child"))
        .unwrap();
    assert!(child.usage.unwrap().cache_read_input_tokens > 0);

    // Without them: no header, no output_config.
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    run_json(&project, &server, &[]).await;
    let request = &server.requests()[0];
    assert_eq!(request.header("anthropic-beta"), None);
    assert!(request.json().unwrap().get("output_config").is_none());

    // The openai provider has neither; a level tine does not know is refused.
    for args in [
        vec!["--effort", "low", "--provider", "openai"],
        vec!["--betas", "x", "--provider", "openai"],
        vec!["--effort", "extreme"],
    ] {
        let out = tine(&project, &server)
            .env("OPENAI_API_KEY", "k")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.base_url()))
            .args(["-p", "hi", "--model", "m"])
            .args(&args)
            .run()
            .await;
        assert!(!out.status.success());
        assert!(out.stderr.contains(args[0]), "{}", out.stderr);
    }
}

#[tokio::test]
async fn the_sdks_command_line_runs_and_unsupported_options_are_refused_by_name() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    // What `_build_command` passes for a plain query() (plus a few options it may add).
    let out = tine(&project, &server)
        .args(["--output-format", "stream-json", "--verbose"])
        .args(["--system-prompt", "", "--tools", "default"])
        .args(["--max-budget-usd", "5", "--permission-prompt-tool", "stdio"])
        .args([
            "--setting-sources=user,project,local",
            "--include-hook-events",
        ])
        .args(["--max-thinking-tokens", "2048", "--effort", "high"])
        .args(["--include-partial-messages", "--replay-user-messages"])
        .args(["--input-format", "stream-json"])
        .stdin("{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n")
        .run()
        .await;
    out.assert_success();
    let result = out
        .json_lines()
        .into_iter()
        .find(|line| line["type"] == "result")
        .unwrap();
    assert_eq!(result["subtype"], "success", "{result}");
    assert!(request_bodies(&server)[0].get("system").is_none());

    let asked = request_bodies(&server).len();
    for (flag, args) in [
        ("--task-budget", vec!["--task-budget", "1000"]),
        ("--session-mirror", vec!["--session-mirror"]),
        (
            "--thinking-display",
            vec!["--thinking-display", "summarized"],
        ),
        ("--agents", vec!["--agents", "{}"]),
        ("--resume-drops-turn", vec!["--resume-drops-turn=x"]),
        ("--some-future-flag", vec!["--some-future-flag"]),
        (
            "--permission-prompt-tool",
            vec!["--permission-prompt-tool", "ask"],
        ),
    ] {
        let out = tine(&project, &server)
            .args(["-p", "hi"])
            .args(&args)
            .run()
            .await;
        assert!(!out.status.success(), "{flag} was accepted");
        assert!(out.stderr.contains(flag), "{flag}: {}", out.stderr);
        if !flag.contains("future") && flag != "--permission-prompt-tool" {
            assert!(
                out.stderr.contains("tine does not support"),
                "{}",
                out.stderr
            );
        }
    }
    assert_eq!(
        request_bodies(&server).len(),
        asked,
        "a refused run asked the model"
    );
}

#[tokio::test]
async fn include_hook_events_reports_each_hook_run_on_the_stream() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let hooks = json!({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "echo noted"}]}
    ]}});
    project.write(".tine/settings.json", &hooks.to_string());
    let hook_lines = |out: &RunOutput| -> Vec<Value> {
        out.assert_success();
        out.json_lines()
            .into_iter()
            .filter(|l| l["type"] == "system" && l.get("hook_event").is_some())
            .collect()
    };
    let args = ["-p", "hi", "--output-format", "stream-json", "--verbose"];
    let out = tine(&project, &server)
        .args(args)
        .args(["--include-hook-events"])
        .run()
        .await;
    let lines = hook_lines(&out);
    let subtypes: Vec<&str> = lines
        .iter()
        .map(|l| l["subtype"].as_str().unwrap())
        .collect();
    assert_eq!(
        subtypes,
        ["hook_started", "hook_response"],
        "{}",
        out.stdout
    );
    assert!(lines.iter().all(|l| l["hook_event"] == "UserPromptSubmit"));
    assert_eq!(lines[1]["stdout"], "noted\n");
    let out = tine(&project, &server).args(args).run().await;
    assert!(hook_lines(&out).is_empty(), "{}", out.stdout);
}

#[tokio::test]
async fn version_leads_with_the_claude_code_protocol_version() {
    for flag in ["-v", "--version"] {
        let out = tine_e2e::TineRun::new(super::TINE, &Project::new(), "http://127.0.0.1:9")
            .args([flag])
            .run()
            .await;
        out.assert_success();
        let line = out.stdout.trim();
        let expected = format!(
            "{v} (tine {}; speaks Claude Code {v}'s stream-json protocol)",
            env!("CARGO_PKG_VERSION"),
            v = tine_session::CLAUDE_CODE_PROTOCOL_VERSION
        );
        assert_eq!(line, expected);
        // The SDK's check: the first X.Y.Z at the start, at least its minimum 2.0.0.
        let first: Vec<u32> = line
            .split_whitespace()
            .next()
            .unwrap()
            .split('.')
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(first.len(), 3);
        assert!(first >= vec![2, 0, 0]);
    }
}
