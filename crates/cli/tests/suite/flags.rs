//! Issue 18's flags through the binary, against the mock, as Claude Code has them:
//! `--system-prompt` (replacing tine's, byte-identical across a session and its resumption,
//! the cache read), `--system-prompt-file` / `--append-system-prompt-file`, `--add-dir` and
//! settings' `additionalDirectories` (writes there pass under acceptEdits, writes elsewhere do
//! not), `--dangerously-skip-permissions` (bypass, deny rules still hold, refused as root
//! without IS_SANDBOX=1), `--session-id`, `--fallback-model` on overload, the `[1m]` suffix,
//! `--json-schema`, `--include-partial-messages` and `--permission-prompt-tool`.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{Fault, Reply, Rule, Scenario, TextMatch, When};
use tine_e2e::{Project, request_bodies};

use super::{mock, model_calling, tine, tool_results};

fn system_text(body: &Value) -> String {
    body["system"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn system_prompt_replaces_the_default_and_keeps_its_bytes_across_turns_and_resume() {
    let project = Project::new();
    project.write("notes.txt", "some notes\n");
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .assistant_turns(0)
                    .reply(Reply::text("Reading.").with_tool_use(
                        "Read",
                        json!({"file_path": project.cwd().join("notes.txt")}),
                    )),
            )
            .default_reply(Reply::text("Done.")),
    )
    .await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "read the notes",
            "--output-format",
            "json",
            "--system-prompt",
            "You are a terse pirate.",
            "--append-system-prompt",
            "Always say arr.",
            "--verbose",
        ])
        .run()
        .await;
    out.assert_success();
    let session = out.json()["session_id"].as_str().unwrap().to_owned();
    let out = tine(&project, &server)
        .args([
            "-p",
            "and again",
            "-r",
            &session,
            "--system-prompt",
            "You are a terse pirate.",
            "--append-system-prompt",
            "Always say arr.",
            "--verbose",
        ])
        .run()
        .await;
    out.assert_success();
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 3);
    let system = system_text(&bodies[0]);
    assert_eq!(system, "You are a terse pirate.\n\nAlways say arr.");
    for body in &bodies[1..] {
        assert_eq!(
            body["system"], bodies[0]["system"],
            "the system bytes changed"
        );
    }
    // The prefix written by the first request is read by the next one and by the resumed run.
    let requests = server.requests();
    for (i, request) in requests.iter().enumerate().skip(1) {
        let usage = request.usage.as_ref().unwrap();
        assert!(usage.cache_read_input_tokens > 0, "request {i}: {usage:?}");
    }
    // --verbose named no cache break.
    assert!(!out.stderr.contains("cache break"), "{}", out.stderr);
}

#[tokio::test]
async fn system_prompt_files_are_read() {
    let project = Project::new();
    let system = project.write("system.md", "You review Rust code.\n");
    let append = project.write("append.md", "Be brief.");
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    tine(&project, &server)
        .args(["-p", "hi", "--system-prompt-file"])
        .args([&system])
        .args(["--append-system-prompt-file"])
        .args([&append])
        .run()
        .await
        .assert_success();
    let bodies = request_bodies(&server);
    assert_eq!(
        system_text(&bodies[0]),
        "You review Rust code.\n\nBe brief."
    );
    let out = tine(&project, &server)
        .args(["-p", "hi", "--system-prompt-file", "missing.md"])
        .run()
        .await;
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("--system-prompt-file"),
        "{}",
        out.stderr
    );
}

/// A project, an added directory beside it, a directory beside both, and a link to the added
/// one inside the project's parent.
fn add_dir_project() -> (Project, std::path::PathBuf, std::path::PathBuf) {
    let project = Project::new();
    let added = project.root().join("added");
    let outside = project.root().join("outside");
    std::fs::create_dir_all(&added).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    (project, added, outside)
}

async fn write_both(
    project: &Project,
    added: &std::path::Path,
    outside: &std::path::Path,
    extra: &[&str],
) -> Vec<Value> {
    let server = model_calling(&[
        (
            "Write",
            json!({"file_path": added.join("in-added.txt"), "content": "ok\n"}),
        ),
        (
            "Write",
            json!({"file_path": outside.join("in-outside.txt"), "content": "no\n"}),
        ),
    ])
    .await;
    let mut args = vec!["-p", "write", "--permission-mode", "acceptEdits"];
    args.extend_from_slice(extra);
    tine(project, &server)
        .args(args)
        .run()
        .await
        .assert_success();
    tool_results(&server)
}

#[tokio::test]
async fn add_dir_makes_a_directory_writable_under_accept_edits_and_nothing_else() {
    let (project, added, outside) = add_dir_project();
    // Through a link: the resolver compares the real paths.
    let link = project.root().join("link-to-added");
    std::os::unix::fs::symlink(&added, &link).unwrap();
    let results = write_both(
        &project,
        &added,
        &outside,
        &["--add-dir", link.to_str().unwrap()],
    )
    .await;
    assert!(added.join("in-added.txt").exists(), "{results:#?}");
    assert!(!outside.join("in-outside.txt").exists());
    assert_eq!(results[1]["is_error"], true, "{results:#?}");

    // Without the flag, the added directory is outside too.
    std::fs::remove_file(added.join("in-added.txt")).unwrap();
    write_both(&project, &added, &outside, &[]).await;
    assert!(!added.join("in-added.txt").exists());

    // A directory that does not exist is an error before anything runs.
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let out = tine(&project, &server)
        .args(["-p", "hi", "--add-dir", "no-such-dir"])
        .run()
        .await;
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("--add-dir no-such-dir"),
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn settings_additional_directories_count_as_the_project() {
    let (project, added, outside) = add_dir_project();
    project.write(
        ".claude/settings.json",
        &json!({"permissions": {"additionalDirectories": [added]}}).to_string(),
    );
    write_both(&project, &added, &outside, &[]).await;
    assert!(added.join("in-added.txt").exists());
    assert!(!outside.join("in-outside.txt").exists());
}

/// The model is told the added directories in Claude Code's words, in the environment text of
/// the first message, whose bytes stay the same on every request and on resume (the cache is
/// read, `--verbose` names no break).
#[tokio::test]
async fn added_directories_are_in_the_environment_text_byte_for_byte_across_turns_and_resume() {
    let (project, added, _) = add_dir_project();
    project.write("notes.txt", "notes\n");
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .assistant_turns(0)
                    .reply(Reply::text("Reading.").with_tool_use(
                        "Read",
                        json!({"file_path": project.cwd().join("notes.txt")}),
                    )),
            )
            .default_reply(Reply::text("Done.")),
    )
    .await;
    let run = |prompt: &'static str, resume: Option<String>| {
        let mut run = tine(&project, &server)
            .args([
                "-p",
                prompt,
                "--output-format",
                "json",
                "--verbose",
                "--add-dir",
            ])
            .args([&added]);
        if let Some(id) = resume {
            run = run.args(["-r", &id]);
        }
        run.run()
    };
    let out = run("read", None).await;
    out.assert_success();
    let session = out.json()["session_id"].as_str().unwrap().to_owned();
    let out = run("again", Some(session)).await;
    out.assert_success();
    assert!(!out.stderr.contains("cache break"), "{}", out.stderr);
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 3);
    let first = &bodies[0]["messages"][0];
    let real = std::fs::canonicalize(&added).unwrap();
    let expected = format!(
        "\nAdditional working directories: {}\nPlatform: ",
        real.display()
    );
    let text: String = match &first["content"] {
        Value::String(text) => text.clone(),
        blocks => blocks
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["text"].as_str())
            .collect(),
    };
    assert!(text.contains(&expected), "{text}");
    // The same bytes but for the breakpoint, which moves to the last message.
    let without_breakpoints = |message: &Value| {
        let mut message = message.clone();
        for block in message["content"].as_array_mut().into_iter().flatten() {
            if let Some(block) = block.as_object_mut() {
                block.remove("cache_control");
            }
        }
        message
    };
    for body in &bodies[1..] {
        assert_eq!(
            without_breakpoints(&body["messages"][0]),
            without_breakpoints(first),
            "the first message's bytes changed"
        );
    }
    for (i, request) in server.requests().iter().enumerate().skip(1) {
        let usage = request.usage.as_ref().unwrap();
        assert!(usage.cache_read_input_tokens > 0, "request {i}: {usage:?}");
    }
    // Without the flag there is no such line.
    let plain = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    tine(&project, &plain)
        .args(["-p", "hi"])
        .run()
        .await
        .assert_success();
    assert!(
        !request_bodies(&plain)[0]
            .to_string()
            .contains("Additional working directories")
    );
}

fn is_root() -> bool {
    nix::unistd::getuid().is_root()
}

#[tokio::test]
async fn dangerously_skip_permissions_bypasses_asks_but_not_deny_rules() {
    let project = Project::new();
    project.write("keep.txt", "keep\n");
    let server = model_calling(&[
        ("Bash", json!({"command": "touch made.txt"})),
        ("Bash", json!({"command": "rm keep.txt"})),
    ])
    .await;
    let out = tine(&project, &server)
        .env("IS_SANDBOX", "1")
        .args([
            "-p",
            "go",
            "--dangerously-skip-permissions",
            "--disallowedTools",
            "Bash(rm:*)",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json_lines()[0]["permissionMode"], "bypassPermissions");
    assert!(project.cwd().join("made.txt").exists(), "{}", out.stderr);
    assert!(
        project.cwd().join("keep.txt").exists(),
        "a deny rule was bypassed"
    );
    assert_eq!(tool_results(&server)[1]["is_error"], true);
}

#[tokio::test]
async fn bypass_as_root_is_refused_without_is_sandbox() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    for flags in [
        vec!["--dangerously-skip-permissions"],
        vec!["--permission-mode", "bypassPermissions"],
    ] {
        let out = tine(&project, &server)
            .args(["-p", "hi"])
            .args(&flags)
            .run()
            .await;
        if is_root() {
            assert!(!out.status.success(), "{flags:?}");
            assert!(
                out.stderr
                    .contains("cannot be used with root/sudo privileges"),
                "{}",
                out.stderr
            );
        } else {
            out.assert_success();
        }
    }
    if is_root() {
        assert!(server.requests().is_empty());
    }
}

#[tokio::test]
async fn session_id_names_the_new_session_once() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let out = tine(&project, &server)
        .args(["-p", "hi", "--output-format", "json", "--session-id", id])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["session_id"], id);
    assert!(!project.transcript(id).is_empty());

    let out = tine(&project, &server)
        .args(["-p", "hi", "--session-id", id])
        .run()
        .await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("already in use"), "{}", out.stderr);

    let out = tine(&project, &server)
        .args(["-p", "hi", "--session-id", "not-a-uuid"])
        .run()
        .await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("UUID"), "{}", out.stderr);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_overloaded_model_falls_back_to_the_fallback_model() {
    let project = Project::new();
    let overloaded = Rule::new()
        .when(When {
            model: Some(TextMatch::Contains("sonnet".into())),
            ..When::default()
        })
        .fault(Fault::http_retry_after(529, 0));
    let server = mock(
        Scenario::new()
            .rule(overloaded)
            .default_reply(Reply::text("Answered by the fallback.")),
    )
    .await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "hi",
            "--output-format",
            "json",
            "--model",
            "sonnet",
            "--fallback-model",
            "haiku",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Answered by the fallback.");
    assert!(
        out.stderr.contains("fallback model claude-haiku-5-5"),
        "{}",
        out.stderr
    );
    let models: Vec<String> = request_bodies(&server)
        .iter()
        .map(|b| b["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        models,
        [
            "claude-sonnet-5-5",
            "claude-sonnet-5-5",
            "claude-sonnet-5-5",
            "claude-haiku-5-5"
        ]
    );

    // The fallback must be another model.
    let out = tine(&project, &server)
        .args([
            "-p",
            "hi",
            "--model",
            "sonnet",
            "--fallback-model",
            "sonnet",
        ])
        .run()
        .await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("cannot be the same"), "{}", out.stderr);
}

/// After the switch, what names the model names the one in use: a `model_fallback` system
/// line, the assistant lines, `modelUsage` of each result, and the engine (`/model`, the next
/// turn's request) — the init line, printed before, names the main model.
#[tokio::test]
async fn after_a_fallback_the_reported_model_is_the_fallback() {
    let project = Project::new();
    let overloaded = Rule::new()
        .when(When {
            model: Some(TextMatch::Contains("sonnet".into())),
            ..When::default()
        })
        .fault(Fault::http_retry_after(529, 0));
    let server = mock(
        Scenario::new()
            .rule(overloaded)
            .default_reply(Reply::text("Answered by the fallback.")),
    )
    .await;
    let line = |text: &str| json!({"type": "user", "message": {"role": "user", "content": text}});
    let out = tine(&project, &server)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .args([
            "--verbose",
            "--model",
            "sonnet",
            "--fallback-model",
            "haiku",
        ])
        .stdin(format!(
            "{}\n{}\n{}\n",
            line("hi"),
            line("/model"),
            line("again")
        ))
        .run()
        .await;
    out.assert_success();
    let lines = out.json_lines();
    let of = |kind: &str, subtype: Option<&str>| -> Vec<&Value> {
        lines
            .iter()
            .filter(|l| l["type"] == kind && subtype.is_none_or(|s| l["subtype"] == s))
            .collect()
    };
    assert_eq!(of("system", Some("init"))[0]["model"], "claude-sonnet-5-5");
    let switched = of("system", Some("model_fallback"));
    assert_eq!(switched.len(), 1, "{lines:#?}");
    assert_eq!(switched[0]["from"], "claude-sonnet-5-5");
    assert_eq!(switched[0]["model"], "claude-haiku-5-5");
    for assistant in of("assistant", None) {
        assert_eq!(assistant["message"]["model"], "claude-haiku-5-5");
    }
    let results = of("result", None);
    assert_eq!(results.len(), 3, "{lines:#?}");
    // The prompt turns' modelUsage: the fallback's, and no tokens of the overloaded model.
    for result in [results[0], results[2]] {
        let usage = result["modelUsage"].as_object().unwrap();
        assert_eq!(
            usage.keys().collect::<Vec<_>>(),
            ["claude-haiku-5-5"],
            "{result}"
        );
        assert!(usage["claude-haiku-5-5"]["outputTokens"].as_u64().unwrap() > 0);
        assert!(usage["claude-haiku-5-5"]["costUSD"].as_f64().unwrap() > 0.0);
    }
    // The engine itself asks the fallback now: /model names it, and the next turn's request
    // goes straight to it (no overloaded attempt first).
    assert!(
        results[1]["result"]
            .as_str()
            .unwrap()
            .starts_with("Model: claude-haiku-5-5\n"),
        "{}",
        results[1]
    );
    let models: Vec<String> = request_bodies(&server)
        .iter()
        .map(|b| b["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(models.last().map(String::as_str), Some("claude-haiku-5-5"));
    assert_eq!(
        models.iter().filter(|m| m.contains("sonnet")).count(),
        3,
        "{models:?}"
    );
}

#[tokio::test]
async fn a_1m_model_is_sent_without_its_suffix_with_the_beta_header() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "hi",
            "--model",
            "sonnet[1m]",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .run()
        .await;
    out.assert_success();
    let requests = server.requests();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["model"], "claude-sonnet-5-5");
    let beta = requests[0]
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("anthropic-beta"))
        .map(|(_, value)| value.clone())
        .unwrap_or_default();
    assert!(beta.contains("context-1m-2025-08-07"), "{beta:?}");
    // Inside tine the model keeps its suffix: compaction's window is the 1M one.
    let lines = out.json_lines();
    let assistant = lines.iter().find(|l| l["type"] == "assistant").unwrap();
    assert_eq!(assistant["message"]["model"], "claude-sonnet-5-5[1m]");
    // A plain model gets no such header.
    let out = tine(&project, &server).args(["-p", "hi"]).run().await;
    out.assert_success();
    let plain = &server.requests()[1];
    assert!(
        !plain
            .headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("anthropic-beta") && v.contains("context-1m"))
    );
}

const SCHEMA: &str =
    r#"{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}"#;

#[tokio::test]
async fn json_schema_gives_a_validated_structured_output() {
    let project = Project::new();
    let server = mock(
        Scenario::new()
            // Ends without the tool: reminded.
            .rule(
                Rule::new()
                    .request(1)
                    .reply(Reply::text("There are three.")),
            )
            // Invalid against the schema: the model reads the error.
            .rule(Rule::new().request(2).reply(Reply::tool_use(
                "StructuredOutput",
                json!({"count": "three"}),
            )))
            .rule(
                Rule::new()
                    .request(3)
                    .reply(Reply::tool_use("StructuredOutput", json!({"count": 3}))),
            )
            .default_reply(Reply::text("Three.")),
    )
    .await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "how many?",
            "--output-format",
            "json",
            "--json-schema",
            SCHEMA,
        ])
        .run()
        .await;
    out.assert_success();
    let result = out.json();
    assert_eq!(result["structured_output"], json!({"count": 3}), "{result}");
    assert_eq!(result["subtype"], "success");
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 4);
    let tool = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "StructuredOutput")
        .expect("the StructuredOutput tool");
    assert_eq!(
        tool["input_schema"],
        serde_json::from_str::<Value>(SCHEMA).unwrap()
    );
    assert!(
        bodies[1]["messages"]
            .to_string()
            .contains("You MUST call the StructuredOutput tool")
    );
    let third = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(third.contains("InputValidationError"), "{third}");
    // The tool array is the same in every request.
    for body in &bodies[1..] {
        assert_eq!(body["tools"], bodies[0]["tools"]);
    }
}

#[tokio::test]
async fn json_schema_fails_when_the_model_never_answers_with_the_tool() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("No."))).await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "how many?",
            "--output-format",
            "json",
            "--json-schema",
            SCHEMA,
        ])
        .run()
        .await;
    assert!(!out.status.success());
    let result = out.json();
    assert_eq!(result["subtype"], "error_max_structured_output_retries");
    assert_eq!(result["is_error"], true);
    // The first request and five reminders.
    assert_eq!(server.requests().len(), 6);

    let out = tine(&project, &server)
        .args(["-p", "x", "--json-schema", r#"{"type":"array"}"#])
        .run()
        .await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("--json-schema"), "{}", out.stderr);
}

#[tokio::test]
async fn include_partial_messages_prints_the_raw_stream_events() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Hello there."))).await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "hi",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ])
        .run()
        .await;
    out.assert_success();
    let lines = out.json_lines();
    let events: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "stream_event")
        .map(|l| &l["event"])
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"message_stop"), "{kinds:?}");
    let text: String = events
        .iter()
        .filter(|e| e["delta"]["type"] == "text_delta")
        .map(|e| e["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello there.");
    // The events come before the assistant message they build.
    let first_event = lines
        .iter()
        .position(|l| l["type"] == "stream_event")
        .unwrap();
    let assistant = lines.iter().position(|l| l["type"] == "assistant").unwrap();
    assert!(first_event < assistant);
    // Without the flag: none.
    let out = tine(&project, &server)
        .args(["-p", "hi", "--output-format", "stream-json", "--verbose"])
        .run()
        .await;
    assert!(!out.stdout.contains("stream_event"));
}

#[tokio::test]
async fn a_permission_prompt_tool_answers_headless_asks() {
    let project = Project::new();
    let config = json!({"mcpServers": {"perm": {
        "command": super::mcp_session::server_binary().display().to_string(),
        "args": ["--permission-prompt", "--no-resources"],
    }}})
    .to_string();
    let server = model_calling(&[
        ("Bash", json!({"command": "touch asked.txt"})),
        ("Bash", json!({"command": "touch deny-me.txt"})),
    ])
    .await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "go",
            "--mcp-config",
            &config,
            "--permission-prompt-tool",
            "mcp__perm__approve",
        ])
        .run()
        .await;
    out.assert_success();
    let results = tool_results(&server);
    // Allowed, with the tool's updated input (which names the call's id).
    assert!(project.cwd().join("asked.txt").exists(), "{results:#?}");
    let id = request_bodies(&server)[0]["messages"].to_string();
    let approved: Vec<String> = std::fs::read_dir(project.cwd())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("approved-toolu_"))
        .collect();
    assert_eq!(approved.len(), 1, "{approved:?} {id}");
    // Denied with the tool's message.
    assert!(!project.cwd().join("deny-me.txt").exists());
    assert_eq!(results[1]["is_error"], true);
    assert!(
        results[1]["content"]
            .to_string()
            .contains("the approve tool refused the Bash call toolu_"),
        "{results:#?}"
    );

    // A tool that is not there is an error at start.
    let out = tine(&project, &server)
        .args([
            "-p",
            "go",
            "--mcp-config",
            &config,
            "--permission-prompt-tool",
            "mcp__perm__nope",
        ])
        .run()
        .await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("mcp__perm__approve"), "{}", out.stderr);
}
