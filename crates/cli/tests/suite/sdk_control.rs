//! The Agent SDK's control protocol through the binary, as an SDK app speaks it:
//! `--input-format stream-json --output-format stream-json`, `initialize` first, user
//! messages, control requests both ways. The test plays the app: it writes lines on tine's
//! stdin and reads its stdout line by line.

use std::time::Duration;

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::{mock, tine};

/// A scripted SDK app on the other end of tine's stdio.
pub(super) struct App {
    child: Child,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    stdin: Option<ChildStdin>,
    stdout: tokio::io::Lines<BufReader<ChildStdout>>,
    seen: Vec<Value>,
}

impl App {
    pub(super) fn start(project: &Project, server: &MockServer, extra: &[&str]) -> Self {
        let mut args = vec![
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ];
        args.extend_from_slice(extra);
        let mut child = tine(project, server).args(args).stdin_open().spawn();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut pipe = BufReader::new(child.stderr.take().unwrap()).lines();
        let sink = std::sync::Arc::clone(&stderr);
        tokio::spawn(async move {
            while let Ok(Some(line)) = pipe.next_line().await {
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        Self {
            child,
            stderr,
            stdin,
            stdout,
            seen: Vec::new(),
        }
    }

    pub(super) async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        let written = stdin.write_all(format!("{line}\n").as_bytes()).await;
        if written.is_err() {
            tokio::time::sleep(Duration::from_millis(200)).await;
            panic!(
                "tine stopped reading; its stderr:\n{}",
                self.stderr.lock().unwrap()
            );
        }
        let _ = stdin.flush().await;
    }

    pub(super) async fn send_json(&mut self, value: Value) {
        self.send(&value.to_string()).await;
    }

    pub(super) async fn request(&mut self, id: &str, request: Value) {
        self.send_json(json!({"type": "control_request", "request_id": id, "request": request}))
            .await;
    }

    pub(super) async fn user(&mut self, text: &str) {
        self.send_json(
            json!({"type": "user", "message": {"role": "user", "content": text},
                              "parent_tool_use_id": null, "session_id": ""}),
        )
        .await;
    }

    /// The next line for which `pick` says yes (every line kept in `seen`).
    pub(super) async fn until(&mut self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(60), self.stdout.next_line())
                .await
                .unwrap_or_else(|_| panic!("no {what} within 60 s; saw {:#?}", self.seen))
                .unwrap()
                .unwrap_or_else(|| {
                    panic!(
                        "stdout ended before {what}; stderr:\n{}\nsaw {:#?}",
                        self.stderr.lock().unwrap(),
                        self.seen
                    )
                });
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|_| panic!("not a JSON line on stdout: {line}"));
            self.seen.push(value.clone());
            if pick(&value) {
                return value;
            }
        }
    }

    pub(super) async fn response(&mut self, id: &str) -> Value {
        let id = id.to_owned();
        self.until(&format!("the response to {id}"), move |v| {
            v["type"] == "control_response" && v["response"]["request_id"] == id.as_str()
        })
        .await["response"]
            .clone()
    }

    pub(super) async fn result(&mut self) -> Value {
        self.until("a result", |v| v["type"] == "result").await
    }

    /// Closes stdin and waits for the exit.
    pub(super) async fn finish(mut self) -> (std::process::ExitStatus, Vec<Value>) {
        self.stdin.take();
        let mut rest = Vec::new();
        while let Ok(Ok(Some(line))) =
            tokio::time::timeout(Duration::from_secs(60), self.stdout.next_line()).await
        {
            if let Ok(value) = serde_json::from_str::<Value>(&line) {
                rest.push(value);
            }
        }
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .unwrap()
            .unwrap();
        self.seen.extend(rest);
        (status, self.seen)
    }
}

fn write_scenario(file: &str, content: &str) -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("write it")
                .reply(Reply::tool_use(
                    "Write",
                    json!({"file_path": file, "content": content}),
                )),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("Hello from the model."))
}

#[tokio::test]
async fn initialize_then_a_prompt_gives_claude_codes_messages() {
    let server = mock(Scenario::new().default_reply(Reply::text("Hello from the model."))).await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &[]);
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    let answer = app.response("req_1").await;
    assert_eq!(answer["subtype"], "success", "{answer}");
    let commands = answer["response"]["commands"].as_array().unwrap();
    assert!(commands.iter().any(|c| c["name"] == "compact"), "{answer}");
    let init = app.until("init", |v| v["subtype"] == "init").await;
    for key in [
        "session_id",
        "cwd",
        "tools",
        "mcp_servers",
        "model",
        "permissionMode",
        "slash_commands",
        "apiKeySource",
        "output_style",
        "claude_code_version",
        "tine_version",
    ] {
        assert!(!init[key].is_null(), "init lacks {key}: {init}");
    }
    app.user("hello").await;
    let assistant = app.until("the reply", |v| v["type"] == "assistant").await;
    assert_eq!(
        assistant["message"]["content"][0]["text"],
        "Hello from the model."
    );
    let result = app.result().await;
    assert_eq!(result["subtype"], "success");
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0);
    assert!(result["duration_ms"].is_u64() && result["num_turns"] == 1);
    let (status, _) = app.finish().await;
    assert!(status.success());
}

#[tokio::test]
async fn can_use_tool_denies_and_the_model_reads_why() {
    let server = mock(write_scenario("denied.txt", "x")).await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &["--permission-prompt-tool", "stdio"]);
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    app.response("req_1").await;
    app.user("write it").await;
    let ask = app
        .until("can_use_tool", |v| {
            v["type"] == "control_request" && v["request"]["subtype"] == "can_use_tool"
        })
        .await;
    assert_eq!(ask["request"]["tool_name"], "Write");
    assert_eq!(ask["request"]["input"]["file_path"], "denied.txt");
    assert!(ask["request"]["tool_use_id"].is_string(), "{ask}");
    let id = ask["request_id"].as_str().unwrap().to_owned();
    app.send_json(
        json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": id, "response": {"behavior": "deny", "message": "no writes today"}}}),
    )
    .await;
    let result = app.result().await;
    assert_eq!(result["subtype"], "success");
    assert!(
        !project.cwd().join("denied.txt").exists(),
        "the denied Write ran"
    );
    let bodies = tine_e2e::request_bodies(&server);
    assert!(
        bodies
            .last()
            .unwrap()
            .to_string()
            .contains("no writes today"),
        "the model reads the app's words"
    );
    assert_eq!(
        result["permission_denials"][0]["tool_name"], "Write",
        "{result}"
    );
    app.finish().await;
}

#[tokio::test]
async fn can_use_tool_allows_with_the_input_it_gives() {
    let server = mock(write_scenario("out.txt", "from the model")).await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &["--permission-prompt-tool", "stdio"]);
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    app.response("req_1").await;
    app.user("write it").await;
    let ask = app
        .until("can_use_tool", |v| {
            v["request"]["subtype"] == "can_use_tool"
        })
        .await;
    let id = ask["request_id"].as_str().unwrap().to_owned();
    app.send_json(
        json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": id, "response": {"behavior": "allow",
        "updatedInput": {"file_path": "out.txt", "content": "from the app"},
        "updatedPermissions": [{"type": "addRules", "rules": [{"toolName": "Write"}],
                                "behavior": "allow", "destination": "session"}]}}}),
    )
    .await;
    app.result().await;
    assert_eq!(project.read("out.txt"), "from the app");
    app.finish().await;
}

#[tokio::test]
async fn an_interrupt_stops_the_turn_and_the_next_prompt_runs() {
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .last_user_contains("be slow")
                    .reply(Reply::text(&"slow ".repeat(200)).chunk_delay_ms(1_000)),
            )
            .default_reply(Reply::text("Quick answer.")),
    )
    .await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &["--include-partial-messages"]);
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    app.response("req_1").await;
    app.user("be slow").await;
    // The reply has begun streaming: the turn runs.
    app.until("the reply streaming", |v| v["type"] == "stream_event")
        .await;
    app.request("req_2", json!({"subtype": "interrupt"})).await;
    assert_eq!(app.response("req_2").await["subtype"], "success");
    let interrupted = app.result().await;
    assert_eq!(interrupted["is_error"], true, "{interrupted}");
    app.user("now be quick").await;
    let result = app.result().await;
    assert_eq!(result["result"], "Quick answer.");
    app.finish().await;
}

#[tokio::test]
async fn control_requests_change_the_mode_and_the_model() {
    let server = mock(write_scenario("mode.txt", "ok")).await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &[]);
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    app.response("req_1").await;
    app.request(
        "req_2",
        json!({"subtype": "set_permission_mode", "mode": "acceptEdits"}),
    )
    .await;
    assert_eq!(app.response("req_2").await["subtype"], "success");
    app.request(
        "req_3",
        json!({"subtype": "set_model", "model": "claude-haiku-4-5"}),
    )
    .await;
    assert_eq!(app.response("req_3").await["subtype"], "success");
    app.user("write it").await;
    app.result().await;
    assert_eq!(
        project.read("mode.txt"),
        "ok",
        "acceptEdits let the Write run"
    );
    let bodies = tine_e2e::request_bodies(&server);
    assert_eq!(bodies[0]["model"], "claude-haiku-4-5");
    app.request(
        "req_4",
        json!({"subtype": "set_permission_mode", "mode": "sideways"}),
    )
    .await;
    assert_eq!(app.response("req_4").await["subtype"], "error");
    app.finish().await;
}

#[tokio::test]
async fn bad_input_is_said_and_the_session_goes_on() {
    let server = mock(Scenario::new().default_reply(Reply::text("Still here."))).await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &[]);
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    app.response("req_1").await;
    app.send("this is not json").await;
    let said = app
        .until("the bad line said", |v| v["subtype"] == "input_error")
        .await;
    assert!(
        said["error"]
            .as_str()
            .unwrap()
            .contains("not a JSON object"),
        "{said}"
    );
    app.send(r#"{"type":"telepathy"}"#).await;
    app.until("the unknown type said", |v| {
        v["subtype"] == "input_error" && v["error"].as_str().unwrap_or("").contains("telepathy")
    })
    .await;
    app.request("req_2", json!({"subtype": "read_minds"})).await;
    let answer = app.response("req_2").await;
    assert_eq!(answer["subtype"], "error");
    assert!(answer["error"].as_str().unwrap().contains("read_minds"));
    // An answer to nothing tine asked is ignored.
    app.send_json(
        json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": "nobody", "response": {}}}),
    )
    .await;
    app.user("hello").await;
    assert_eq!(app.result().await["result"], "Still here.");
    let (status, seen) = app.finish().await;
    assert!(status.success());
    assert!(
        seen.iter().all(|v| v["type"] != "error"),
        "no error line the SDK would raise on"
    );
}

#[tokio::test]
async fn an_unanswered_can_use_tool_is_denied_when_stdin_closes() {
    let server = mock(write_scenario("never.txt", "x")).await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &["--permission-prompt-tool", "stdio"]);
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    app.response("req_1").await;
    app.user("write it").await;
    app.until("can_use_tool", |v| {
        v["request"]["subtype"] == "can_use_tool"
    })
    .await;
    let (status, seen) = app.finish().await;
    assert!(status.success(), "the run ends cleanly");
    assert!(!project.cwd().join("never.txt").exists());
    assert!(
        seen.iter().any(|v| v["type"] == "result"),
        "the turn still ends: {seen:#?}"
    );
}

#[tokio::test]
async fn initialize_registers_agents_and_the_other_requests_answer() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &[]);
    app.request(
        "req_1",
        json!({"subtype": "initialize", "hooks": null, "agents": {
            "reviewer": {"description": "reviews a diff", "prompt": "You review diffs."}}}),
    )
    .await;
    let answer = app.response("req_1").await;
    assert_eq!(
        answer["response"]["agents"],
        json!(["reviewer"]),
        "{answer}"
    );
    app.user("hello").await;
    app.result().await;
    // The model is told of the app's agent in the Agent tool's description.
    let bodies = tine_e2e::request_bodies(&server);
    assert!(
        bodies[0].to_string().contains("reviews a diff"),
        "the agent is offered"
    );
    app.request("req_2", json!({"subtype": "get_context_usage"}))
        .await;
    let usage = app.response("req_2").await;
    assert!(
        usage["response"]["totalTokens"].as_u64().unwrap() > 0,
        "{usage}"
    );
    app.request("req_3", json!({"subtype": "mcp_status"})).await;
    assert_eq!(
        app.response("req_3").await["response"],
        json!({"mcpServers": []})
    );
    app.request(
        "req_4",
        json!({"subtype": "stop_task", "task_id": "a_nothing1"}),
    )
    .await;
    assert_eq!(app.response("req_4").await["subtype"], "error");
    app.request(
        "req_5",
        json!({"subtype": "rewind_files", "user_message_id": "u"}),
    )
    .await;
    let rewind = app.response("req_5").await;
    assert!(
        rewind["error"].as_str().unwrap().contains("message id u"),
        "{rewind}"
    );
    app.request(
        "req_6",
        json!({"subtype": "set_max_thinking_tokens", "max_thinking_tokens": 4096}),
    )
    .await;
    assert_eq!(app.response("req_6").await["subtype"], "success");
    app.user("think now").await;
    app.result().await;
    let bodies = tine_e2e::request_bodies(&server);
    // The default model (Opus 5.5) thinks adaptively: a budget asks for adaptive thinking.
    assert_eq!(bodies.last().unwrap()["thinking"]["type"], "adaptive");
    app.finish().await;
}
