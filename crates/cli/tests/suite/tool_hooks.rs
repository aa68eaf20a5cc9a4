//! Claude Code's hooks through the real binary: PreToolUse guards (exit 2, JSON deny / allow /
//! ask), PostToolUse seeing the result, UserPromptSubmit refusing a prompt or adding context,
//! SessionStart context, a hanging hook killed at its timeout, a malformed hooks section
//! refused with its file and line, and the cache prefix (system + tools) untouched by hook
//! context.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};

use super::{mock, tine};

/// `{"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": ...}]}]}}`.
fn hooks(entries: &[(&str, &str, &str)]) -> String {
    let mut events = serde_json::Map::new();
    for (event, matcher, command) in entries {
        let list = events
            .entry(event.to_string())
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .unwrap();
        list.push(json!({"matcher": matcher, "hooks": [{"type": "command", "command": command}]}));
    }
    json!({ "hooks": events }).to_string()
}

/// A model that makes one call, then says it is done.
async fn model_calling(tool: &str, input: Value) -> MockServer {
    mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .assistant_turns(0)
                    .reply(Reply::text("Trying.").with_tool_use(tool, input)),
            )
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done."))),
    )
    .await
}

/// The one tool result of the second request.
fn tool_result(server: &MockServer) -> Value {
    let bodies = request_bodies(server);
    assert_eq!(bodies.len(), 2, "expected two requests");
    let last = bodies[1]["messages"].as_array().unwrap().last().unwrap();
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_result")
        .cloned()
        .expect("a tool_result")
}

fn result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The first request's last user message, as text.
fn first_user_message(server: &MockServer) -> String {
    let bodies = request_bodies(server);
    bodies[0]["messages"].as_array().unwrap()[0].to_string()
}

#[tokio::test]
async fn a_pretooluse_guard_exiting_2_blocks_rm_and_the_model_reads_why() {
    let project = Project::new();
    project.write("victim.txt", "keep me");
    // A Claude Code user's guard, in Claude Code's file: read unchanged.
    let guard = "cat > pre-input.json; if grep -q 'rm -f' pre-input.json; then \
                 echo 'rm is not allowed in this project' >&2; exit 2; fi";
    project.write(
        ".claude/settings.json",
        &hooks(&[("PreToolUse", "Bash|Edit", guard)]),
    );
    let server = model_calling("Bash", json!({"command": "rm -f victim.txt"})).await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "clean up",
            "--allowedTools",
            "Bash",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(project.read("victim.txt"), "keep me", "the command ran");
    let result = tool_result(&server);
    assert_eq!(result["is_error"], true);
    assert!(
        result_text(&result).contains("rm is not allowed in this project"),
        "{result}"
    );
    // Claude Code's input fields.
    let input: Value = serde_json::from_str(&project.read("pre-input.json")).unwrap();
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"]["command"], "rm -f victim.txt");
    assert_eq!(input["session_id"], out.json()["session_id"]);
    assert_eq!(input["cwd"], project.cwd().display().to_string());
    assert!(
        input["transcript_path"]
            .as_str()
            .unwrap()
            .ends_with(".jsonl")
    );
    assert!(input["tool_use_id"].is_string());
    // A hook's refusal is a permission denial of the run.
    assert_eq!(out.json()["permission_denials"][0]["tool_name"], "Bash");
}

#[tokio::test]
async fn a_guard_that_does_not_match_lets_the_call_run() {
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &hooks(&[("PreToolUse", "Write", "echo no >&2; exit 2")]),
    );
    let server = model_calling("Bash", json!({"command": "touch ran.txt"})).await;
    tine(&project, &server)
        .args(["-p", "go", "--allowedTools", "Bash"])
        .run()
        .await
        .assert_success();
    assert!(project.cwd().join("ran.txt").exists());
}

fn decision(answer: &str, reason: &str) -> String {
    format!(
        "echo '{}'",
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": answer, "permissionDecisionReason": reason}})
    )
}

#[tokio::test]
async fn a_json_deny_refuses_a_call_the_rules_allow() {
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &hooks(&[(
            "PreToolUse",
            "Write",
            &decision("deny", "no new files today"),
        )]),
    );
    let path = project.cwd().join("new.txt");
    let server = model_calling("Write", json!({"file_path": path, "content": "x"})).await;
    tine(&project, &server)
        .args(["-p", "write", "--allowedTools", "Write"])
        .run()
        .await
        .assert_success();
    assert!(!path.exists());
    let result = tool_result(&server);
    assert!(
        result_text(&result).contains("no new files today"),
        "{result}"
    );
}

#[tokio::test]
async fn a_json_allow_skips_the_question_but_not_a_deny_rule() {
    // Without the hook, `touch` would need approval (a denial in -p).
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &hooks(&[("PreToolUse", "Bash", &decision("allow", "fine by the hook"))]),
    );
    let server = model_calling("Bash", json!({"command": "touch allowed.txt"})).await;
    tine(&project, &server)
        .args(["-p", "go"])
        .run()
        .await
        .assert_success();
    assert!(project.cwd().join("allowed.txt").exists());

    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &hooks(&[("PreToolUse", "Bash", &decision("allow", "fine by the hook"))]),
    );
    let server = model_calling("Bash", json!({"command": "touch allowed.txt"})).await;
    tine(&project, &server)
        .args(["-p", "go", "--disallowedTools", "Bash(touch:*)"])
        .run()
        .await
        .assert_success();
    assert!(
        !project.cwd().join("allowed.txt").exists(),
        "a deny rule lost to a hook"
    );
}

#[tokio::test]
async fn a_json_ask_needs_a_person_even_where_rules_allow() {
    let project = Project::new();
    project.write("notes.txt", "secret plans");
    project.write(
        ".tine/settings.json",
        &hooks(&[("PreToolUse", "Read", &decision("ask", "reads need a look"))]),
    );
    let path = project.cwd().join("notes.txt");
    let server = model_calling("Read", json!({"file_path": path})).await;
    tine(&project, &server)
        .args(["-p", "read"])
        .run()
        .await
        .assert_success();
    let result = tool_result(&server);
    let text = result_text(&result);
    assert!(text.contains("reads need a look"), "{text}");
    assert!(!text.contains("secret plans"), "{text}");
}

#[tokio::test]
async fn an_unknown_permission_decision_is_a_denial() {
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &hooks(&[("PreToolUse", "*", &decision("maybe", "?"))]),
    );
    let server = model_calling("Bash", json!({"command": "touch x.txt"})).await;
    tine(&project, &server)
        .args(["-p", "go", "--allowedTools", "Bash"])
        .run()
        .await
        .assert_success();
    assert!(!project.cwd().join("x.txt").exists());
}

#[tokio::test]
async fn posttooluse_sees_the_response_and_its_feedback_reaches_the_model() {
    let project = Project::new();
    project.write("data.txt", "the file body");
    project.write(
        ".tine/settings.json",
        &hooks(&[(
            "PostToolUse",
            "Read",
            "cat > post-input.json; echo 'lint: 3 warnings' >&2; exit 2",
        )]),
    );
    let path = project.cwd().join("data.txt");
    let server = model_calling("Read", json!({"file_path": path})).await;
    tine(&project, &server)
        .args(["-p", "read"])
        .run()
        .await
        .assert_success();
    let input: Value = serde_json::from_str(&project.read("post-input.json")).unwrap();
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert_eq!(input["tool_name"], "Read");
    assert!(
        input["tool_response"]["content"]
            .as_str()
            .unwrap()
            .contains("the file body"),
        "{input}"
    );
    assert_eq!(
        input["tool_response"]["filePath"],
        path.display().to_string()
    );
    let text = result_text(&tool_result(&server));
    assert!(text.contains("the file body"), "{text}");
    assert!(text.contains("lint: 3 warnings"), "{text}");
}

#[tokio::test]
async fn userpromptsubmit_exit_2_refuses_the_prompt_before_any_request() {
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &hooks(&[(
            "UserPromptSubmit",
            "",
            "cat > ups-input.json; echo 'no secrets in prompts' >&2; exit 2",
        )]),
    );
    let server = mock(Scenario::new().default_reply(Reply::text("hi"))).await;
    let out = tine(&project, &server)
        .args(["-p", "my password is hunter2"])
        .run()
        .await;
    assert_eq!(out.code(), Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("no secrets in prompts"),
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty(), "a request was made");
    let input: Value = serde_json::from_str(&project.read("ups-input.json")).unwrap();
    assert_eq!(input["hook_event_name"], "UserPromptSubmit");
    assert_eq!(input["prompt"], "my password is hunter2");
}

#[tokio::test]
async fn userpromptsubmit_and_sessionstart_output_reach_the_request_as_context() {
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &hooks(&[
            (
                "UserPromptSubmit",
                "",
                "echo 'ticket ABC-123 is in progress'",
            ),
            (
                "SessionStart",
                "startup",
                "cat > start-input.json; echo 'branch: feature/hooks'",
            ),
            ("SessionStart", "resume", "echo 'only on resume'"),
        ]),
    );
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    tine(&project, &server)
        .args(["-p", "what next?"])
        .run()
        .await
        .assert_success();
    let first = first_user_message(&server);
    assert!(first.contains("ticket ABC-123 is in progress"), "{first}");
    assert!(first.contains("branch: feature/hooks"), "{first}");
    assert!(first.contains("system-reminder"), "{first}");
    assert!(!first.contains("only on resume"), "{first}");
    let input: Value = serde_json::from_str(&project.read("start-input.json")).unwrap();
    assert_eq!(input["hook_event_name"], "SessionStart");
    assert_eq!(input["source"], "startup");
    // Context never goes into the system prompt.
    let system = request_bodies(&server)[0]["system"].to_string();
    assert!(!system.contains("ABC-123") && !system.contains("feature/hooks"));
}

#[tokio::test]
async fn hook_context_leaves_the_cached_prefix_unchanged() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let plain = Project::new();
    tine(&plain, &server)
        .args(["-p", "hello"])
        .run()
        .await
        .assert_success();
    let hooked = Project::new();
    hooked.write(
        ".tine/settings.json",
        &hooks(&[
            ("UserPromptSubmit", "", "echo 'extra context'"),
            ("SessionStart", "", "echo 'start context'"),
            ("PreToolUse", "*", "exit 0"),
        ]),
    );
    tine(&hooked, &server)
        .args(["-p", "hello"])
        .run()
        .await
        .assert_success();
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 2);
    // The two projects differ in their path (in the user context), never in these.
    assert_eq!(bodies[0]["tools"], bodies[1]["tools"]);
    let system = |b: &Value| {
        b["system"]
            .to_string()
            .replace(&*plain.cwd().display().to_string(), "")
    };
    let hooked_system = bodies[1]["system"]
        .to_string()
        .replace(&*hooked.cwd().display().to_string(), "");
    assert_eq!(system(&bodies[0]), hooked_system);
    assert!(bodies[1]["messages"].to_string().contains("extra context"));
}

#[tokio::test]
async fn a_hanging_hook_is_killed_at_its_timeout_with_what_it_started() {
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "sleep 300 & echo $! > sleep.pid; wait", "timeout": 1}]}]}})
        .to_string(),
    );
    let server = model_calling("Bash", json!({"command": "touch after.txt"})).await;
    let out = tine(&project, &server)
        .args(["-p", "go", "--allowedTools", "Bash"])
        .run()
        .await;
    out.assert_success();
    assert!(out.stderr.contains("timed out after 1s"), "{}", out.stderr);
    // A hook that fails (a timeout too) does not block, as in Claude Code.
    assert!(project.cwd().join("after.txt").exists());
    let pid: i32 = project.read("sleep.pid").trim().parse().unwrap();
    // The hook's group was killed: its `sleep` is gone (reaped once init adopts it).
    let mut alive = true;
    for _ in 0..100 {
        alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| stat.contains(") Z "));
        if !alive {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!alive, "the hook's sleep {pid} outlived its timeout");
}

#[tokio::test]
async fn a_malformed_hooks_section_stops_tine_naming_file_and_line() {
    let cases = [
        // A command hook without its command.
        (
            "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [\n        {\"type\": \"command\"}\n      ]}\n    ]\n  }\n}\n",
            ":5:",
        ),
        // A typo in the event: a guard that would never run.
        (
            "{\n  \"hooks\": {\n    \"PreTooluse\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}\n    ]\n  }\n}\n",
            ":3:",
        ),
        // A matcher that is not a regex.
        (
            "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash(\",\n       \"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}\n    ]\n  }\n}\n",
            ":4:",
        ),
        // Hooks not an object.
        ("{\n  \"hooks\": [\"./guard.sh\"]\n}\n", ":2:"),
    ];
    for (text, line) in cases {
        let project = Project::new();
        project.write(".claude/settings.json", text);
        let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
        let out = tine(&project, &server).args(["-p", "hi"]).run().await;
        assert_eq!(out.code(), Some(1), "{text}\n{}", out.stderr);
        let named = format!(".claude/settings.json{line}");
        assert!(out.stderr.contains(&named), "{named} not in {}", out.stderr);
        assert!(server.requests().is_empty());
    }
}

#[tokio::test]
async fn sessionend_runs_at_exit() {
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &hooks(&[("SessionEnd", "", "cat > end-input.json")]),
    );
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    tine(&project, &server)
        .args(["-p", "hi"])
        .run()
        .await
        .assert_success();
    let input: Value = serde_json::from_str(&project.read("end-input.json")).unwrap();
    assert_eq!(input["hook_event_name"], "SessionEnd");
    assert_eq!(input["reason"], "other");
}
