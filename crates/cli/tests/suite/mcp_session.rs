//! MCP servers in the session, through the real binary against the mock, with tine-mcp's stdio
//! test server as a real child process: the model calls `mcp__srv__echo` and reads the answer;
//! calls need approval unless `--allowedTools mcp__srv` (or `mcp__srv__*`) allows them; an
//! untrusted `.mcp.json` server never runs (its marker file is never written) until trusted; a
//! server that never answers costs at most `TINE_MCP_TIMEOUT` and hides no other server's
//! tools; every server's process is gone when tine exits; a server that dies mid-session is
//! reported and its tools answer with an error; the tool array puts the MCP tools after the
//! built-ins and keeps its bytes across requests and sessions (the cache reads it); an
//! oversized result's file under TINE_HOME is Read without asking; `/mcp` lists the servers.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario, When};
use tine_e2e::{Project, RunOutput, TineRun, request_bodies};

use super::{STREAM_JSON, TINE, mock, stream_json_input, tine, tool_names};

/// tine-mcp's stdio test server (`tine-mcp-test-server`), found or built once.
pub(super) fn server_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| tine_e2e::mcp_test_server(Path::new(TINE)))
}

/// `{"mcpServers": {name: the test server with args}}`, inline.
fn config(servers: &[(&str, Vec<String>)]) -> String {
    let mut map = serde_json::Map::new();
    for (name, args) in servers {
        map.insert(
            (*name).to_owned(),
            json!({"command": server_binary().display().to_string(), "args": args}),
        );
    }
    json!({ "mcpServers": map }).to_string()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// A marker file the server writes (its pid) when it starts.
fn marker(project: &Project, name: &str) -> PathBuf {
    project.root().join(format!("{name}.pid"))
}

fn marked(project: &Project, name: &str, more: &[&str]) -> Vec<String> {
    let mut list = vec![
        "--marker".to_owned(),
        marker(project, name).display().to_string(),
    ];
    list.extend(args(more));
    list
}

/// The model calls `tool` with `input` first, then answers "Done." after any tool result.
fn calling(tool: &str, input: Value) -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use(tool, input)),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("Anything else?"))
}

fn with_mcp(project: &Project, server: &MockServer, config: &str) -> TineRun {
    tine(project, server)
        .env("TINE_MCP_TIMEOUT", "30000")
        .args(["--mcp-config", config])
}

/// Runs a stream-json session of `prompts` in `project` with MCP server `late` allowed: the
/// test server failing its first start (writing `late.failed-once` in the project), so that
/// `/mcp restart late` brings it up. Checks the run succeeded.
pub(super) async fn late_server_session(
    project: &Project,
    server: &MockServer,
    prompts: &[&str],
) -> RunOutput {
    let flag = project.root().join("late.failed-once");
    let late = args(&[
        "--no-resources",
        "--fail-first",
        &flag.display().to_string(),
    ]);
    let out = with_mcp(project, server, &config(&[("late", late)]))
        .args(["--allowedTools", "mcp__late"])
        .args(STREAM_JSON)
        .stdin(stream_json_input(prompts))
        .run()
        .await;
    out.assert_success();
    out
}

/// The text of the `tool_result` blocks of a request's last message.
fn last_tool_results(body: &Value) -> String {
    let messages = body["messages"].as_array().expect("messages");
    let last = messages.last().expect("a message");
    last["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| b["content"].to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet), waiting a bounded while.
async fn gone(pid: i32) -> bool {
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        let alive = match stat {
            Err(_) => false,
            // `pid (comm) S ...`: the state follows the command's closing parenthesis.
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_none_or(|(_, rest)| !rest.starts_with('Z')),
        };
        if !alive {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

fn pid_of(project: &Project, name: &str) -> i32 {
    let path = marker(project, name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn the_model_calls_an_mcp_tool_allowed_by_a_server_rule_and_reads_its_answer() {
    let server = mock(calling("mcp__srv__echo", json!({"text": "hello from mcp"}))).await;
    let project = Project::new();
    let out = with_mcp(
        &project,
        &server,
        &config(&[("srv", marked(&project, "srv", &["--no-resources"]))]),
    )
    .args(["--allowedTools", "mcp__srv", "-p", "echo it"])
    .run()
    .await;
    out.assert_success();
    assert!(out.stdout.contains("Done."), "{}", out.stdout);
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 2, "{bodies:#?}");
    let results = last_tool_results(&bodies[1]);
    assert!(results.contains("hello from mcp"), "{results}");
    assert!(
        !bodies[1].to_string().contains("is_error\":true"),
        "{results}"
    );

    // The tools: the built-ins as without MCP, then the server's, sorted; the same bytes in
    // both requests.
    let names = tool_names(&bodies[0]);
    let first_mcp = names
        .iter()
        .position(|n| n.starts_with("mcp__"))
        .expect("MCP tools");
    assert!(
        names[..first_mcp].iter().all(|n| !n.starts_with("mcp__")),
        "{names:?}"
    );
    assert!(
        names[first_mcp..]
            .iter()
            .all(|n| n.starts_with("mcp__srv__")),
        "{names:?}"
    );
    let mcp: Vec<&String> = names[first_mcp..].iter().collect();
    let mut sorted = mcp.clone();
    sorted.sort();
    assert_eq!(mcp, sorted);
    assert!(mcp.iter().any(|n| *n == "mcp__srv__echo"), "{names:?}");
    assert_eq!(bodies[0]["tools"], bodies[1]["tools"]);
    assert_eq!(
        bodies[0]["tools"].to_string(),
        bodies[1]["tools"].to_string()
    );

    // Without MCP the built-ins are the same list: MCP only appends.
    let plain = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    tine(&project, &plain)
        .args(["-p", "hi"])
        .run()
        .await
        .assert_success();
    assert_eq!(tool_names(&request_bodies(&plain)[0]), names[..first_mcp]);

    // The server is gone with tine.
    assert!(
        gone(pid_of(&project, "srv")).await,
        "the MCP server outlived tine"
    );
}

#[tokio::test]
async fn mcp_calls_need_approval_unless_a_rule_allows_them() {
    let project = Project::new();
    let servers = config(&[("srv", args(&["--no-resources"]))]);

    let server = mock(calling("mcp__srv__echo", json!({"text": "secret"}))).await;
    let out = with_mcp(&project, &server, &servers)
        .args(["-p", "echo it", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    let result = out.json();
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{result}");
    assert_eq!(denials[0]["tool_name"], "mcp__srv__echo");
    let results = last_tool_results(&request_bodies(&server)[1]);
    assert!(!results.contains("secret\""), "{results}");
    assert!(results.contains("--allowedTools"), "{results}");

    // `mcp__srv__*` allows every tool of the server too.
    let server = mock(calling("mcp__srv__echo", json!({"text": "allowed now"}))).await;
    let out = with_mcp(&project, &server, &servers)
        .args(["--allowedTools", "mcp__srv__*", "-p", "echo it"])
        .args(["--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["permission_denials"], json!([]));
    let results = last_tool_results(&request_bodies(&server)[1]);
    assert!(results.contains("allowed now"), "{results}");
}

#[tokio::test]
async fn an_untrusted_project_server_never_runs_until_trusted() {
    let project = Project::new();
    project.write(
        ".mcp.json",
        &config(&[("repo", marked(&project, "repo", &["--no-resources"]))]),
    );
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let out = tine(&project, &server)
        .env("TINE_MCP_TIMEOUT", "30000")
        .args(["-p", "hi"])
        .run()
        .await;
    out.assert_success();
    assert!(
        !marker(&project, "repo").exists(),
        "the untrusted server ran"
    );
    assert!(
        out.stderr.contains("MCP server repo") && out.stderr.contains("enabledMcpjsonServers"),
        "{}",
        out.stderr
    );
    let names = tool_names(&request_bodies(&server)[0]);
    assert!(names.iter().all(|n| !n.starts_with("mcp__")), "{names:?}");

    // Trusted in user settings (a repository cannot write them), it starts.
    std::fs::write(
        project.home().join("settings.json"),
        json!({"enabledMcpjsonServers": ["repo"]}).to_string(),
    )
    .unwrap();
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let out = tine(&project, &server)
        .env("TINE_MCP_TIMEOUT", "30000")
        .args(["-p", "hi"])
        .run()
        .await;
    out.assert_success();
    assert!(marker(&project, "repo").exists(), "{}", out.stderr);
    let names = tool_names(&request_bodies(&server)[0]);
    assert!(names.iter().any(|n| n == "mcp__repo__echo"), "{names:?}");
    assert!(gone(pid_of(&project, "repo")).await);

    // `--strict-mcp-config`: only the flag's servers, the trusted one stays off.
    std::fs::remove_file(marker(&project, "repo")).unwrap();
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let out = tine(&project, &server)
        .env("TINE_MCP_TIMEOUT", "30000")
        .args(["--strict-mcp-config", "-p", "hi"])
        .run()
        .await;
    out.assert_success();
    assert!(!marker(&project, "repo").exists(), "{}", out.stderr);
}

#[tokio::test]
async fn a_server_that_never_answers_costs_at_most_the_timeout_and_hides_no_other_tools() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let servers = config(&[
        ("stuck", marked(&project, "stuck", &["--hang"])),
        ("good", args(&["--no-resources"])),
    ]);
    let started = std::time::Instant::now();
    let out = tine(&project, &server)
        .env("TINE_MCP_TIMEOUT", "1500")
        .args(["--mcp-config", &servers, "-p", "hi"])
        .run()
        .await;
    // A figure, not an assertion (the machine's load decides wall time).
    eprintln!(
        "tine with a hanging MCP server (TINE_MCP_TIMEOUT=1500) ran in {} ms",
        started.elapsed().as_millis()
    );
    out.assert_success();
    assert!(out.stderr.contains("MCP server stuck"), "{}", out.stderr);
    assert!(out.stderr.contains("1500"), "{}", out.stderr);
    let names = tool_names(&request_bodies(&server)[0]);
    assert!(names.iter().any(|n| n == "mcp__good__echo"), "{names:?}");
    assert!(
        names.iter().all(|n| !n.starts_with("mcp__stuck")),
        "{names:?}"
    );
    assert!(
        gone(pid_of(&project, "stuck")).await,
        "the hanging server outlived tine"
    );
}

#[tokio::test]
async fn a_server_that_dies_mid_session_is_reported_and_its_tools_answer_an_error() {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("mcp__srv__crash", json!({}))),
        )
        .rule(Rule::new().assistant_turns(1).reply(Reply::tool_use(
            "mcp__srv__echo",
            json!({"text": "still there?"}),
        )))
        .default_reply(Reply::text("The server is gone."));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = with_mcp(
        &project,
        &server,
        &config(&[("srv", args(&["--no-resources"]))]),
    )
    .args(["--allowedTools", "mcp__srv", "-p", "crash it"])
    .run()
    .await;
    out.assert_success();
    assert!(out.stdout.contains("The server is gone."), "{}", out.stdout);
    assert!(
        out.stderr.contains("MCP server srv stopped"),
        "{}",
        out.stderr
    );
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 3, "{bodies:#?}");
    for body in &bodies[1..] {
        let results = last_tool_results(body);
        let answer = &body["messages"].as_array().unwrap().last().unwrap()["content"][0];
        assert_eq!(answer["is_error"], json!(true), "{answer}");
        assert!(results.contains("srv"), "{results}");
    }
    assert!(
        last_tool_results(&bodies[2]).contains("not running"),
        "{}",
        last_tool_results(&bodies[2])
    );
}

#[tokio::test]
async fn an_oversized_result_is_saved_under_tine_home_and_read_without_asking() {
    let mut read_it = Rule::new().reply(Reply::tool_use("Read", json!({"file_path": "$1"})));
    read_it = read_it.when(When {
        last_user_any: Some(
            serde_json::from_value(json!({"regex": r"saved in (\S+\.txt)"})).unwrap(),
        ),
        assistant_turns: Some(1),
        ..When::default()
    });
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("mcp__srv__big", json!({"lines": 400}))),
        )
        .rule(read_it)
        .default_reply(Reply::text("Read it."));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = with_mcp(
        &project,
        &server,
        &config(&[("srv", args(&["--no-resources"]))]),
    )
    .env("MAX_MCP_OUTPUT_TOKENS", "200")
    .args([
        "--allowedTools",
        "mcp__srv",
        "-p",
        "big",
        "--output-format",
        "json",
    ])
    .run()
    .await;
    out.assert_success();
    let result = out.json();
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 3, "{bodies:#?}");
    let truncated = last_tool_results(&bodies[1]);
    assert!(truncated.contains("MCP output truncated"), "{truncated}");
    assert!(
        truncated.contains(&project.home().join("mcp-output").display().to_string()),
        "{truncated}"
    );
    let read = last_tool_results(&bodies[2]);
    assert!(read.contains("line 000399"), "{read}");
}

#[tokio::test]
async fn slash_mcp_lists_the_servers_and_their_state() {
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let project = Project::new();
    project.write(
        ".mcp.json",
        &config(&[("repo", marked(&project, "repo", &[]))]),
    );
    let out = with_mcp(
        &project,
        &server,
        &config(&[("srv", args(&["--no-resources"]))]),
    )
    .args(["-p", "/mcp"])
    .run()
    .await;
    out.assert_success();
    assert!(out.stdout.contains("srv (dynamic"), "{}", out.stdout);
    assert!(out.stdout.contains("connected (8 tools)"), "{}", out.stdout);
    assert!(out.stdout.contains("repo (project"), "{}", out.stdout);
    assert!(out.stdout.contains("needs trust"), "{}", out.stdout);
    assert!(request_bodies(&server).is_empty(), "/mcp asked the model");
    assert!(!marker(&project, "repo").exists());
}

/// The cache figure of a multi-turn session with an MCP tool (`--verbose`): every request sends
/// the same tool array, and each after the first reads the conversation so far from the cache,
/// in the turn and in the next session (`-c`).
#[tokio::test]
async fn the_tool_array_keeps_its_bytes_and_the_cache_reads_it_across_turns() {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("mcp__srv__add", json!({"a": 2, "b": 3}))),
        )
        .rule(
            Rule::new()
                .assistant_turns(1)
                .reply(Reply::tool_use("mcp__srv__echo", json!({"text": "five"}))),
        )
        .default_reply(Reply::text("It is five."));
    let server = mock(scenario).await;
    let project = Project::new();
    let servers = config(&[("srv", args(&["--no-resources"]))]);
    let first = with_mcp(&project, &server, &servers)
        .args(["--allowedTools", "mcp__srv", "--verbose", "-p", "add"])
        .run()
        .await;
    first.assert_success();
    let second = with_mcp(&project, &server, &servers)
        .args([
            "--allowedTools",
            "mcp__srv",
            "--verbose",
            "-c",
            "-p",
            "again",
        ])
        .run()
        .await;
    second.assert_success();
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 4, "{bodies:#?}");
    let tools = bodies[0]["tools"].to_string();
    for body in &bodies {
        assert_eq!(body["tools"].to_string(), tools);
    }
    let stderr = format!("{}{}", first.stderr, second.stderr);
    assert!(!stderr.contains("cache break"), "{stderr}");
    let usage: Vec<(u64, u64, u64)> = stderr
        .lines()
        .filter_map(|line| {
            line.split_once("[tine] usage (")?
                .1
                .split_once("): ")
                .map(|(_, r)| r)
        })
        .filter_map(|rest| {
            let numbers: Vec<u64> = rest
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse().ok())
                .collect();
            Some((*numbers.first()?, *numbers.get(1)?, *numbers.get(2)?))
        })
        .collect();
    assert_eq!(usage.len(), 4, "{stderr}");
    for (index, (input, write, read)) in usage.iter().enumerate() {
        let prompt = input + write + read;
        let share = *read as f64 / prompt as f64;
        eprintln!(
            "request {}: input {input} + cache write {write} + cache read {read}: {:.1}% read",
            index + 1,
            share * 100.0
        );
        if index > 0 {
            assert!(share > 0.9, "request {} read {share}: {stderr}", index + 1);
        }
    }
}

#[tokio::test]
async fn writing_mcp_json_asks_even_in_accept_edits() {
    let project = Project::new();
    let path = project.write(".mcp.json", r#"{"mcpServers": {}}"#);
    let evil = json!({"mcpServers": {"x": {"command": "sh", "args": ["-c", "echo pwned"]}}});
    let server = mock(calling(
        "Write",
        json!({"file_path": path.display().to_string(), "content": evil.to_string()}),
    ))
    .await;
    let out = tine(&project, &server)
        .args([
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Write",
        ])
        .args(["-p", "rewrite it", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    let result = out.json();
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{result}");
    assert_eq!(denials[0]["tool_name"], "Write");
    assert_eq!(project.read(".mcp.json"), r#"{"mcpServers": {}}"#);
    let results = last_tool_results(&request_bodies(&server)[1]);
    assert!(results.contains("MCP server list"), "{results}");

    // Another file of the project is written as acceptEdits says.
    let other = project.cwd().join("notes.json");
    let server = mock(calling(
        "Write",
        json!({"file_path": other.display().to_string(), "content": "{}"}),
    ))
    .await;
    tine(&project, &server)
        .args(["--permission-mode", "acceptEdits", "-p", "write notes"])
        .run()
        .await
        .assert_success();
    assert_eq!(project.read("notes.json"), "{}");
}

#[tokio::test]
async fn slash_mcp_restart_brings_a_crashed_server_back_for_the_same_tools() {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("crash it")
                .reply(Reply::tool_use("mcp__srv__crash", json!({}))),
        )
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("echo it")
                .reply(Reply::tool_use(
                    "mcp__srv__echo",
                    json!({"text": "back again"}),
                )),
        )
        .default_reply(Reply::text("ok"));
    let server = mock(scenario).await;
    let project = Project::new();
    let input = stream_json_input(&["crash it", "/mcp restart srv", "echo it"]);
    let out = with_mcp(
        &project,
        &server,
        &config(&[("srv", args(&["--no-resources"]))]),
    )
    .args(["--allowedTools", "mcp__srv"])
    .args(STREAM_JSON)
    .stdin(input)
    .run()
    .await;
    out.assert_success();
    assert!(
        out.stderr.contains("MCP server srv stopped"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("connected (8 tools)"), "{}", out.stdout);
    let bodies = request_bodies(&server);
    let last = bodies.last().unwrap();
    let results = last_tool_results(last);
    assert!(results.contains("back again"), "{results}");
    let answer = &last["messages"].as_array().unwrap().last().unwrap()["content"][0];
    assert_ne!(answer["is_error"], json!(true), "{answer}");
    for body in &bodies {
        assert_eq!(body["tools"].to_string(), bodies[0]["tools"].to_string());
    }
}

/// Headless, nobody can answer a server's question: tine does not advertise elicitation and
/// declines, and the tool's answer says so (the run neither hangs nor fails).
#[tokio::test]
async fn an_elicitation_is_declined_headless() {
    let server = mock(calling("mcp__srv__ask", json!({}))).await;
    let project = Project::new();
    let out = with_mcp(
        &project,
        &server,
        &config(&[("srv", marked(&project, "srv", &["--no-resources"]))]),
    )
    .args(["--allowedTools", "mcp__srv", "-p", "ask"])
    .run()
    .await;
    out.assert_success();
    let bodies = request_bodies(&server);
    let results = last_tool_results(bodies.last().expect("a request"));
    assert!(results.contains("decline:"), "{results}");
}

/// A server that failed at start-up has no tools in the array; `/mcp restart` connects it and
/// its tools are offered from the next request on, after the built-ins and sorted, as at
/// start-up (the array changes once, on this explicit action; the built-ins keep their bytes).
#[tokio::test]
async fn slash_mcp_restart_of_a_server_that_failed_at_start_offers_its_tools() {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("echo it")
                .reply(Reply::tool_use(
                    "mcp__late__echo",
                    json!({"text": "late but here"}),
                )),
        )
        .default_reply(Reply::text("ok"));
    let server = mock(scenario).await;
    let project = Project::new();
    // Without tool search the array changes once (with it, the catalog does: see
    // tool_search::a_restart_with_tool_search_defers_the_new_tools_and_keeps_the_array).
    project.write(
        ".tine/settings.json",
        &json!({"toolSearch": "never"}).to_string(),
    );
    let out = late_server_session(
        &project,
        &server,
        &["hello", "/mcp restart late", "echo it"],
    )
    .await;
    assert!(
        project.root().join("late.failed-once").exists(),
        "the server never started"
    );
    assert!(out.stdout.contains("connected (8 tools)"), "{}", out.stdout);
    let bodies = request_bodies(&server);
    let first = tool_names(&bodies[0]);
    assert!(first.iter().all(|n| !n.starts_with("mcp__")), "{first:?}");
    let last_body = bodies.last().unwrap();
    let results = last_tool_results(last_body);
    assert!(results.contains("late but here"), "{results}");
    // The built-ins as they were, byte for byte, then the server's tools, sorted.
    let before = bodies[0]["tools"].as_array().unwrap();
    let after = last_body["tools"].as_array().unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    let added = tool_names(last_body)[before.len()..].to_vec();
    let mut sorted = added.clone();
    sorted.sort();
    assert_eq!(added, sorted);
    assert_eq!(added.len(), 8, "{added:?}");
    assert!(
        added.iter().all(|n| n.starts_with("mcp__late__")),
        "{added:?}"
    );
}
