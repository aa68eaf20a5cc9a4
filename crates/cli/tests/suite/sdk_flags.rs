//! The command-line flags the Agent SDK passes, through the binary against the mock: an empty
//! `--system-prompt`, `--tools`, `--setting-sources`, `--max-budget-usd`, `--fork-session`,
//! `--resume-session-at`, `--thinking` / `--max-thinking-tokens`, `--effort`, `--betas`,
//! `--permission-prompt-tool stdio`, the SDK's whole command line, the Claude Code options tine
//! refuses by name, and `tine -v`. A run without these flags sends the bytes it always did.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, RunOutput, request_bodies, transcript_messages};

use super::{mock, model_calling, tine};

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

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

/// Reads a file, then (if asked again) answers.
async fn read_then_done(project: &Project) -> MockServer {
    project.write("notes.txt", "some notes\n");
    model_calling(&[(
        "Read",
        json!({"file_path": project.cwd().join("notes.txt")}),
    )])
    .await
}

#[tokio::test]
async fn max_budget_usd_ends_the_turn_between_requests_with_the_transcript_whole() {
    let project = Project::new();
    let server = read_then_done(&project).await;
    let out = tine(&project, &server)
        .args(["-p", "read the notes", "--output-format", "json"])
        .args(["--max-budget-usd", "0.0001"])
        .run()
        .await;
    assert!(!out.status.success(), "{}", out.stdout);
    let result = out.json();
    assert_eq!(result["subtype"], "error_max_budget_usd", "{result}");
    assert_eq!(result["is_error"], true);
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0001);
    // One request: its tool ran and its result is in the transcript, then no more.
    assert_eq!(request_bodies(&server).len(), 1);
    let id = result["session_id"].as_str().unwrap();
    let messages = transcript_messages(&project.transcript(id));
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");

    // A budget the run stays under changes nothing, not even the request bytes.
    let project = Project::new();
    let server = read_then_done(&project).await;
    let plain = run_json(&project, &server, &[]).await;
    let within = run_json(&project, &server, &["--max-budget-usd", "100"]).await;
    assert_eq!(within["subtype"], "success");
    assert_eq!(within["result"], plain["result"]);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        requests[0].body, requests[2].body,
        "the budget changed the bytes"
    );
    let bad = tine(&project, &server)
        .args(["-p", "hi", "--max-budget-usd=-1"])
        .run()
        .await;
    assert!(bad.stderr.contains("--max-budget-usd"), "{}", bad.stderr);
}

#[tokio::test]
async fn over_the_budget_a_later_turn_makes_no_request() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let line = |text: &str| {
        format!("{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n")
    };
    let out = tine(&project, &server)
        .args(["-p", "--input-format", "stream-json", "--output-format"])
        .args(["stream-json", "--verbose", "--max-budget-usd", "0.0001"])
        .stdin(format!("{}{}", line("first"), line("second")))
        .run()
        .await;
    let results: Vec<Value> = out
        .json_lines()
        .into_iter()
        .filter(|l| l["type"] == "result")
        .collect();
    assert_eq!(results.len(), 2, "{}", out.stdout);
    // The first turn ended as the model meant; it spent the budget, so the second asked nothing.
    assert_eq!(results[0]["subtype"], "success");
    assert_eq!(results[1]["subtype"], "error_max_budget_usd");
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(request_bodies(&server).len(), 1);
}

fn remember_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("what was the word")
                .first_user_contains("banana")
                .reply(Reply::text("The word was banana.")),
        )
        .rule(
            Rule::new()
                .last_user_contains("remember")
                .reply(Reply::text("Noted.")),
        )
        .default_reply(Reply::text("I do not know."))
}

/// A session told "banana" then "cherry": its id.
async fn two_words(project: &Project, server: &MockServer) -> String {
    let first = run_json_prompt(project, server, "remember banana", &[]).await;
    let id = first["session_id"].as_str().unwrap().to_owned();
    run_json_prompt(project, server, "remember cherry too", &["-r", &id]).await;
    id
}

async fn run_json_prompt(
    project: &Project,
    server: &MockServer,
    prompt: &str,
    args: &[&str],
) -> Value {
    let out = tine(project, server)
        .args(["-p", prompt, "--output-format", "json"])
        .args(args)
        .run()
        .await;
    out.assert_success();
    out.json()
}

fn transcript_bytes(project: &Project, id: &str) -> Vec<u8> {
    std::fs::read(project.transcripts_dir().join(format!("{id}.jsonl"))).unwrap()
}

/// The uuid of the first assistant record of `id`'s transcript (the reply to "banana").
fn first_reply_uuid(project: &Project, id: &str) -> String {
    project
        .transcript(id)
        .iter()
        .find(|r| r["type"] == "assistant")
        .and_then(|r| r["uuid"].as_str())
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn fork_session_goes_on_in_a_new_transcript_and_leaves_the_old_one_as_it_was() {
    let server = mock(remember_scenario()).await;
    let project = Project::new();
    let id = two_words(&project, &server).await;
    let before = transcript_bytes(&project, &id);
    let forked = run_json_prompt(
        &project,
        &server,
        "what was the word?",
        &["-r", &id, "--fork-session"],
    )
    .await;
    let fork = forked["session_id"].as_str().unwrap().to_owned();
    assert_ne!(fork, id);
    assert_eq!(
        transcript_bytes(&project, &id),
        before,
        "the old one changed"
    );
    // The fork has the whole conversation, its own id on every record, and the new turn.
    let records = project.transcript(&fork);
    // (Annotations carry no session id.)
    assert!(
        records
            .iter()
            .all(|r| r.get("sessionId").is_none_or(|s| s == fork.as_str()))
    );
    assert!(
        records
            .iter()
            .filter(|r| r.get("sessionId").is_some())
            .count()
            >= 4
    );
    let texts: Vec<String> = transcript_messages(&records)
        .iter()
        .map(|m| m.to_string())
        .collect();
    assert_eq!(texts.len(), 6, "{texts:?}");
    assert!(texts[2].contains("remember cherry"));
    assert!(texts[4].contains("what was the word"));
    // Its first request repeats the old session's prefix: read from the cache.
    let bodies = request_bodies(&server);
    assert_eq!(bodies[2]["messages"].as_array().unwrap().len(), 5);
    let requests = server.requests();
    assert!(requests[2].usage.unwrap().cache_read_input_tokens > 0);

    // --session-id names the fork.
    let chosen = "6f2a6c1e-0000-4000-8000-00000000abcd";
    let named = run_json_prompt(
        &project,
        &server,
        "what was the word?",
        &["-r", &id, "--fork-session", "--session-id", chosen],
    )
    .await;
    assert_eq!(named["session_id"], chosen);
}

#[tokio::test]
async fn resume_session_at_resumes_up_to_that_message() {
    let server = mock(remember_scenario()).await;
    let project = Project::new();
    let id = two_words(&project, &server).await;
    let at = first_reply_uuid(&project, &id);
    // Forked at the reply to "banana": cherry was never said.
    let before = transcript_bytes(&project, &id);
    let forked = run_json_prompt(
        &project,
        &server,
        "what was the word?",
        &["-r", &id, "--fork-session", "--resume-session-at", &at],
    )
    .await;
    assert_eq!(forked["result"], "The word was banana.");
    assert_eq!(transcript_bytes(&project, &id), before);
    let bodies = request_bodies(&server);
    let sent = bodies.last().unwrap()["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(!Value::Array(sent.clone()).to_string().contains("cherry"));

    // In the same session: the branch goes on from that message, and later resumes follow it.
    let same = run_json_prompt(
        &project,
        &server,
        "what was the word?",
        &["-r", &id, "--resume-session-at", &at],
    )
    .await;
    assert_eq!(same["session_id"], id.as_str());
    assert_eq!(same["result"], "The word was banana.");
    let again = run_json_prompt(&project, &server, "and now?", &["-r", &id]).await;
    assert_eq!(again["session_id"], id.as_str());
    let bodies = request_bodies(&server);
    let sent = bodies.last().unwrap()["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 5, "{sent:?}");
    assert!(!Value::Array(sent.clone()).to_string().contains("cherry"));

    // A uuid the session does not have, or no session to resume: said, nothing sent.
    let count = request_bodies(&server).len();
    for args in [
        vec!["-r", id.as_str(), "--resume-session-at", "nope"],
        vec!["--resume-session-at", at.as_str()],
    ] {
        let out = tine(&project, &server)
            .args(["-p", "hi"])
            .args(&args)
            .run()
            .await;
        assert!(!out.status.success());
        assert!(out.stderr.contains("--resume-session-at"), "{}", out.stderr);
    }
    assert_eq!(request_bodies(&server).len(), count);
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
        ("--plugin-dir", vec!["--plugin-dir", "plugins"]),
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
