//! Issue 15 through the real binary: fork children of the turn in progress (their requests are
//! the parent's up to the directive and read its whole cached prefix; a child calling Agent
//! gets an error result, never a grandchild), `-p` waiting for background agents and giving
//! their notifications to the model as further turns, per-agent costs, sidechain transcripts
//! and task output files (a planted symlink refused), typed agents' prompts and tools.

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, RequestRecord, Rule, Scenario};

use super::{mock, tine, tool_names};

const REFUSED: &str = "not available inside a forked worker";

fn fork_call(directive: &str) -> Value {
    json!({"description": format!("{directive} part"), "prompt": directive})
}

/// The parent forks ALPHA and BETA; ALPHA tries to fork again first.
fn fork_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .marker(REFUSED)
                .named("alpha-after-refusal")
                .reply(Reply::text(
                    "Scope: alpha\nResult: refused to fork, did it myself",
                )),
        )
        .rule(
            Rule::new()
                .last_user_contains("Your directive: DIRECTIVE-ALPHA")
                .named("alpha")
                .reply(Reply::tool_use("Agent", fork_call("GRANDCHILD"))),
        )
        .rule(
            Rule::new()
                .last_user_contains("Your directive: DIRECTIVE-BETA")
                .named("beta")
                .reply(Reply::text("Scope: beta\nResult: done beta")),
        )
        .rule(
            Rule::new()
                .last_user_contains("Your directive: GRANDCHILD")
                .named("grandchild")
                .reply(Reply::text("a grandchild ran")),
        )
        .rule(
            Rule::new()
                .last_user_contains("<task-notification>")
                .named("notified")
                .reply(Reply::text("Both forks reported.")),
        )
        .rule(
            Rule::new().assistant_turns(0).named("parent").reply(
                Reply::text("Splitting the work.")
                    .with_tool_use("Agent", fork_call("DIRECTIVE-ALPHA"))
                    .with_tool_use("Agent", fork_call("DIRECTIVE-BETA")),
            ),
        )
        .default_reply(Reply::text("Waiting for the forks."))
}

fn named<'a>(log: &'a [RequestRecord], name: &str) -> Vec<&'a RequestRecord> {
    log.iter()
        .filter(|r| r.rule.as_deref() == Some(name))
        .collect()
}

/// A body with every `cache_control` removed (breakpoints are not part of the cache key).
fn unmarked(record: &RequestRecord) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("cache_control");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut body = record.json().unwrap();
    strip(&mut body);
    body
}

fn last_text(body: &Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    last["content"].as_array().unwrap().last().unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn run_forks(project: &Project, server: &MockServer) -> Value {
    let out = tine(project, server)
        .args(["-p", "split the work", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    out.json()
}

#[tokio::test]
async fn fork_children_share_the_parents_prefix_up_to_their_directives() {
    let server = mock(fork_scenario()).await;
    let project = Project::new();
    let result = run_forks(&project, &server).await;
    // -p waited for both children and gave their reports to the model as a further turn.
    assert_eq!(result["result"], "Both forks reported.", "{result}");

    let log = server.requests();
    let parent = named(&log, "parent");
    let (alpha, beta) = (named(&log, "alpha"), named(&log, "beta"));
    assert_eq!((parent.len(), alpha.len(), beta.len()), (1, 1, 1));
    let (parent, alpha, beta) = (parent[0], alpha[0], beta[0]);
    let (p, a, b) = (unmarked(parent), unmarked(alpha), unmarked(beta));

    // The parent's rendered system prompt, its exact tool array (Agent still listed), model.
    for child in [&a, &b] {
        assert_eq!(child["system"], p["system"]);
        assert_eq!(child["tools"], p["tools"]);
        assert_eq!(child["model"], p["model"]);
        assert_eq!(child.get("thinking"), p.get("thinking"));
    }
    assert!(
        a["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "Agent")
    );

    // The parent's messages, its reply with both calls, then placeholders + the directive.
    let parent_messages = p["messages"].as_array().unwrap();
    let a_messages = a["messages"].as_array().unwrap();
    let b_messages = b["messages"].as_array().unwrap();
    assert_eq!(a_messages.len(), parent_messages.len() + 2);
    assert_eq!(a_messages[..parent_messages.len()], parent_messages[..]);
    let reply = &a_messages[parent_messages.len()];
    assert_eq!(reply["role"], "assistant");
    let calls: Vec<&Value> = reply["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "tool_use")
        .collect();
    assert_eq!(calls.len(), 2);
    let placeholders = a_messages.last().unwrap()["content"].as_array().unwrap();
    for (block, call) in placeholders.iter().zip(&calls) {
        assert_eq!(block["type"], "tool_result");
        assert_eq!(block["tool_use_id"], call["id"]);
        assert_eq!(block["content"], "Fork started — processing in background");
    }

    // Two children's requests are identical up to the directive.
    let mut a_head = a.clone();
    let mut b_head = b.clone();
    for head in [&mut a_head, &mut b_head] {
        let last = head["messages"].as_array_mut().unwrap().last_mut().unwrap();
        last["content"].as_array_mut().unwrap().pop();
    }
    assert_eq!(a_head, b_head);
    assert_eq!(a_messages.len(), b_messages.len());
    let (a_text, b_text) = (last_text(&a), last_text(&b));
    assert_ne!(a_text, b_text);
    for text in [&a_text, &b_text] {
        assert!(text.starts_with("<fork-boilerplate>"), "{text}");
        for rule in [
            "Do not fork",
            "Scope:",
            "Result:",
            "Key files:",
            "Files changed:",
        ] {
            assert!(text.contains(rule), "missing {rule}: {text}");
        }
    }

    // Each child's first request reads the parent's whole cached prefix.
    let parent_prompt = parent.usage.unwrap().prompt_tokens();
    for child in [alpha, beta] {
        let usage = child.usage.unwrap();
        assert!(
            usage.cache_read_input_tokens >= parent_prompt,
            "child read {} of the parent's {parent_prompt}",
            usage.cache_read_input_tokens
        );
    }
}

#[tokio::test]
async fn a_child_calling_agent_gets_an_error_never_a_grandchild() {
    let server = mock(fork_scenario()).await;
    let project = Project::new();
    let result = run_forks(&project, &server).await;
    let log = server.requests();
    assert!(named(&log, "grandchild").is_empty(), "a grandchild ran");
    let after = named(&log, "alpha-after-refusal");
    assert_eq!(after.len(), 1);
    let body = after[0].json().unwrap();
    let results = body["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert_eq!(results[0]["is_error"], true, "{results}");

    // The notification turn carries both reports; costs are per agent.
    let notified = named(&log, "notified");
    let texts: String = notified
        .iter()
        .map(|r| last_text(&r.json().unwrap()))
        .collect();
    assert!(texts.contains("Result: done beta"), "{texts}");
    assert!(texts.contains("refused to fork"), "{texts}");
    let sources = result["usage_by_source"].as_object().unwrap();
    let agents: Vec<&String> = sources
        .keys()
        .filter(|k| k.starts_with("agent:fork:a_"))
        .collect();
    assert_eq!(agents.len(), 2, "{sources:?}");

    // Sidechain transcripts and 0600 output files, one per child.
    let tasks: Vec<_> = std::fs::read_dir(project.home().join("tasks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(tasks.len(), 2);
    for path in &tasks {
        let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
        let id = path.file_stem().unwrap().to_str().unwrap();
        let sidechain = project
            .transcripts_dir()
            .join(result["session_id"].as_str().unwrap())
            .join("subagents")
            .join(format!("agent-{id}.jsonl"));
        assert!(sidechain.exists(), "{}", sidechain.display());
    }
}

#[tokio::test]
async fn a_planted_symlink_for_task_output_is_refused() {
    let server = mock(fork_scenario()).await;
    let project = Project::new();
    let elsewhere = project.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, project.home().join("tasks")).unwrap();
    let out = tine(&project, &server)
        .args(["-p", "split the work", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    // No child ran; the model was told why.
    let log = server.requests();
    assert!(named(&log, "alpha").is_empty() && named(&log, "beta").is_empty());
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    let body = log.last().unwrap().json().unwrap();
    let results = body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(results.contains("symbolic link"), "{results}");
}

const REVIEWER: &str = "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: claude-haiku-4-5\n---\nYou are REVIEWER-PROMPT.\n";

fn typed_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .system_contains("REVIEWER-PROMPT")
                .named("reviewer")
                .reply(Reply::text("review done: looks fine")),
        )
        .rule(
            Rule::new()
                .system_contains("file search specialist")
                .tool_results(false)
                .named("explore")
                .reply(Reply::tool_use(
                    "Bash",
                    json!({"command": "touch explore-wrote"}),
                )),
        )
        .rule(
            Rule::new()
                .system_contains("file search specialist")
                .named("explore-after")
                .reply(Reply::text("explored")),
        )
        .rule(
            Rule::new().assistant_turns(0).named("parent").reply(
                Reply::text("Asking two agents.")
                    .with_tool_use(
                        "Agent",
                        json!({"description": "review", "prompt": "REVIEW-TASK", "subagent_type": "reviewer"}),
                    )
                    .with_tool_use(
                        "Agent",
                        json!({"description": "explore", "prompt": "EXPLORE-TASK", "subagent_type": "Explore"}),
                    ),
            ),
        )
        .default_reply(Reply::text("Parent done."))
}

#[tokio::test]
async fn typed_agents_get_their_own_prompt_tools_and_model() {
    let server = mock(typed_scenario()).await;
    let project = Project::new();
    project.write(".tine/agents/reviewer.md", REVIEWER);
    project.write("CLAUDE.md", "PROJECT-RULE-XYZ: tabs, never spaces.\n");
    let out = tine(&project, &server)
        .env("IS_SANDBOX", "1")
        .args([
            "-p",
            "review it",
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
        ])
        .run()
        .await;
    out.assert_success();
    let result = out.json();
    assert_eq!(result["result"], "Parent done.", "{result}");
    let log = server.requests();

    let reviewer = named(&log, "reviewer");
    assert_eq!(reviewer.len(), 1);
    let body = reviewer[0].json().unwrap();
    assert!(
        body["system"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("You are REVIEWER-PROMPT.")
    );
    assert_eq!(tool_names(&body), ["Grep", "Read"]);
    assert_eq!(body["model"], "claude-haiku-4-5");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    // The session's user context first (environment, CLAUDE.md), then the task.
    let first = messages[0].to_string();
    assert!(first.contains("REVIEW-TASK"), "{first}");
    assert!(first.contains("Working directory"), "{first}");
    assert!(first.contains("PROJECT-RULE-XYZ"), "{first}");
    let blocks = messages[0]["content"].as_array().unwrap();
    assert!(blocks.last().unwrap()["text"] == "REVIEW-TASK", "{first}");

    // Explore: read-only tools, and a writing command refused even in bypass mode.
    let explore = named(&log, "explore");
    assert_eq!(explore.len(), 1);
    let body = explore[0].json().unwrap();
    assert_eq!(
        tool_names(&body),
        ["Bash", "Glob", "Grep", "Read", "WebFetch"]
    );
    // Explore, as Claude Code's, gets the environment but no CLAUDE.md.
    let first = body["messages"][0].to_string();
    assert!(first.contains("Working directory"), "{first}");
    assert!(!first.contains("PROJECT-RULE-XYZ"), "{first}");
    assert!(!project.cwd().join("explore-wrote").exists());
    let after = named(&log, "explore-after");
    assert_eq!(after.len(), 1);
    let results = after[0].json().unwrap()["messages"][2].to_string();
    assert!(results.contains("read-only"), "{results}");

    // The parent read both reports as the calls' results; each agent's cost is its own.
    let parent_after = log
        .iter()
        .find(|r| r.rule.as_deref() == Some("default"))
        .unwrap();
    let results = parent_after.json().unwrap()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(results.contains("review done: looks fine"), "{results}");
    assert!(results.contains("explored"), "{results}");
    let sources = result["usage_by_source"].as_object().unwrap();
    assert!(sources.keys().any(|k| k.starts_with("agent:reviewer:a_")));
    assert!(sources.keys().any(|k| k.starts_with("agent:Explore:a_")));
}

/// A typed agent runs with thinking off, as Claude Code's (`thinkingConfig: disabled` for
/// every sub-agent but a fork child, whose config is in the cache key), while the parent's
/// requests carry the session's budget.
#[tokio::test]
async fn a_typed_agent_runs_without_the_parents_thinking() {
    let project = Project::new();
    project.write(".tine/agents/reviewer.md", REVIEWER);
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .system_contains("REVIEWER-PROMPT")
                .named("reviewer")
                .reply(Reply::text("review done")),
        )
        .rule(
            Rule::new().assistant_turns(0).named("parent").reply(
                Reply::new().with_thinking("Delegate it.").with_tool_use(
                    "Agent",
                    json!({"description": "review", "prompt": "REVIEW-TASK", "subagent_type": "reviewer"}),
                ),
            ),
        )
        .default_reply(Reply::text("Parent done."));
    let server = mock(scenario).await;
    let out = tine(&project, &server)
        // A model that takes a budget (the default thinks adaptively).
        .env("ANTHROPIC_MODEL", "claude-sonnet-4-5")
        .env("MAX_THINKING_TOKENS", "4096")
        .args(["-p", "review it"])
        .run()
        .await;
    out.assert_success();
    let log = server.requests();
    let parent = named(&log, "parent")[0].json().unwrap();
    assert_eq!(
        parent["thinking"],
        json!({"type": "enabled", "budget_tokens": 4096})
    );
    let reviewer = named(&log, "reviewer");
    assert_eq!(reviewer.len(), 1);
    let body = reviewer[0].json().unwrap();
    assert!(body.get("thinking").is_none(), "{}", body["thinking"]);
}

/// A SubagentStop hook that blocks (exit 2, the reason on stderr) makes the sub-agent go on
/// with the reason as its next input, as Claude Code does; the parent reads the report it gave
/// after that.
#[tokio::test]
async fn a_blocking_subagent_stop_hook_makes_the_agent_continue() {
    let project = Project::new();
    project.write(".tine/agents/reviewer.md", REVIEWER);
    let script = "cat >> sub-hook-inputs.jsonl; echo >> sub-hook-inputs.jsonl; \
                  if [ -e sub-hook-ran ]; then exit 0; fi; touch sub-hook-ran; \
                  echo 'cite the file you checked' >&2; exit 2";
    // The matcher is the agent type, as in Claude Code.
    let settings = json!({"hooks": {"SubagentStop": [
        {"matcher": "reviewer", "hooks": [{"type": "command", "command": script}]},
        {"matcher": "Explore", "hooks": [{"type": "command", "command": "touch explore-hook-ran"}]}
    ]}});
    project.write(".tine/settings.json", &settings.to_string());
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .system_contains("REVIEWER-PROMPT")
                .last_user_contains("Stop hook feedback")
                .named("reviewer-again")
                .reply(Reply::text("second report: checked src/a.rs")),
        )
        .rule(
            Rule::new()
                .system_contains("REVIEWER-PROMPT")
                .named("reviewer")
                .reply(Reply::text("first report")),
        )
        .rule(
            Rule::new().assistant_turns(0).named("parent").reply(Reply::tool_use(
                "Agent",
                json!({"description": "review", "prompt": "REVIEW-TASK", "subagent_type": "reviewer"}),
            )),
        )
        .default_reply(Reply::text("Parent done."));
    let server = mock(scenario).await;
    let out = tine(&project, &server)
        .args(["-p", "review it", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    let log = server.requests();
    assert_eq!(named(&log, "reviewer").len(), 1);
    let again = named(&log, "reviewer-again");
    assert_eq!(again.len(), 1, "the agent did not continue");
    let feedback = again[0].json().unwrap()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(feedback.contains("cite the file you checked"), "{feedback}");
    let parent_after = log
        .iter()
        .find(|r| r.rule.as_deref() == Some("default"))
        .unwrap();
    let results = parent_after.json().unwrap()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(results.contains("second report"), "{results}");

    // Claude Code's SubagentStop input: who the agent is, its transcript, its last reply.
    assert!(!project.cwd().join("explore-hook-ran").exists());
    let inputs: Vec<Value> = std::fs::read_to_string(project.cwd().join("sub-hook-inputs.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    let (first, second) = (&inputs[0], &inputs[1]);
    assert_eq!(first["hook_event_name"], "SubagentStop");
    assert_eq!(first["agent_type"], "reviewer");
    assert_eq!(first["stop_hook_active"], false);
    assert_eq!(second["stop_hook_active"], true);
    assert_eq!(first["last_assistant_message"], "first report");
    assert_eq!(
        second["last_assistant_message"],
        "second report: checked src/a.rs"
    );
    let id = first["agent_id"].as_str().unwrap();
    assert!(id.starts_with("a_") && id.len() == 10, "{id}");
    assert_eq!(second["agent_id"], id);
    let transcript = first["agent_transcript_path"].as_str().unwrap();
    assert!(
        transcript.ends_with(&format!("subagents/agent-{id}.jsonl")),
        "{transcript}"
    );
    assert!(std::path::Path::new(transcript).exists(), "{transcript}");
    let session = first["session_id"].as_str().unwrap();
    assert!(transcript.contains(session), "{transcript}");
    assert!(
        first["transcript_path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{session}.jsonl"))
    );
}

/// With `--input-format stream-json`, a background agent's report is delivered as a turn as
/// soon as the turn before it has ended, while the input is still open (as `-p` does), not
/// only when the input ends.
#[tokio::test]
async fn stream_json_input_delivers_an_agents_report_while_the_input_is_open() {
    use tokio::io::AsyncWriteExt;
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("Your directive: BG-WORK")
                .named("child")
                .reply(Reply::text("Scope: bg\nResult: BG-RESULT")),
        )
        .rule(
            Rule::new()
                .last_user_contains("<task-notification>")
                .named("notified")
                .reply(Reply::text("Got the report.")),
        )
        .rule(
            Rule::new()
                .last_user_contains("SECOND-LINE")
                .named("second")
                .reply(Reply::text("Second answered.")),
        )
        .rule(
            Rule::new()
                .last_user_contains("start the work")
                .tool_results(false)
                .named("start")
                .reply(Reply::tool_use("Agent", fork_call("BG-WORK"))),
        )
        .default_reply(Reply::text("Started."));
    let server = mock(scenario).await;
    let project = Project::new();
    let line = |text: &str| {
        json!({"type": "user", "message": {"role": "user", "content": text}}).to_string() + "\n"
    };
    let mut child = tine(&project, &server)
        .args(["-p", "--input-format", "stream-json"])
        .args(["--output-format", "stream-json", "--verbose"])
        .stdin_open()
        .spawn();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(line("start the work").as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    // The report's turn runs with the input still open (bounded wait, not a timing check).
    let mut delivered = false;
    for _ in 0..600 {
        if !named(&server.requests(), "notified").is_empty() {
            delivered = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(delivered, "no report while the input was open");
    stdin
        .write_all(line("SECOND-LINE").as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        child.wait_with_output(),
    )
    .await
    .expect("tine did not finish")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let log = server.requests();
    let position = |name: &str| log.iter().position(|r| r.rule.as_deref() == Some(name));
    let order: Vec<Option<&str>> = log.iter().map(|r| r.rule.as_deref()).collect();
    assert!(position("notified") < position("second"), "{order:?}");
    assert!(stdout.contains("Got the report."), "{stdout}");
    assert!(stdout.contains("Second answered."), "{stdout}");
}

/// After `/mcp restart` offers a server's tools, a fork child (which sends the turn's tool
/// array) and a typed agent (all tools) can call them: they run the turn's tools, not the
/// session's first set, which had none of that server's.
#[tokio::test]
async fn sub_agents_call_mcp_tools_offered_by_mcp_restart() {
    let echo = |text: &str| Reply::tool_use("mcp__late__echo", json!({"text": text}));
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .marker("from the fork")
                .named("child-after")
                .reply(Reply::text("Scope: echo\nResult: echoed")),
        )
        .rule(
            Rule::new()
                .marker("from the typed agent")
                .named("typed-after")
                .reply(Reply::text("typed agent done")),
        )
        .rule(
            Rule::new()
                .last_user_contains("Your directive: CALL-ECHO")
                .named("child")
                .reply(echo("from the fork")),
        )
        .rule(
            Rule::new()
                .system_contains("You are an agent for tine")
                .named("typed")
                .reply(echo("from the typed agent")),
        )
        .rule(
            Rule::new()
                .last_user_contains("<task-notification>")
                .named("notified")
                .reply(Reply::text("Reported.")),
        )
        .rule(
            Rule::new()
                .last_user_contains("delegate it")
                .named("parent")
                .reply(
                    Reply::text("Delegating.")
                        .with_tool_use("Agent", fork_call("CALL-ECHO"))
                        .with_tool_use(
                            "Agent",
                            json!({"description": "echo", "prompt": "echo it", "subagent_type": "general-purpose"}),
                        ),
                ),
        )
        .default_reply(Reply::text("ok"));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = super::mcp_session::late_server_session(
        &project,
        &server,
        &["hello", "/mcp restart late", "delegate it"],
    )
    .await;
    assert!(out.stdout.contains("connected (8 tools)"), "{}", out.stdout);
    let log = server.requests();
    for (name, text) in [
        ("child-after", "from the fork"),
        ("typed-after", "from the typed agent"),
    ] {
        let after = named(&log, name);
        assert_eq!(
            after.len(),
            1,
            "{name}: {:?}",
            log.iter().map(|r| &r.rule).collect::<Vec<_>>()
        );
        let body = after[0].json().unwrap();
        let results = body["messages"].as_array().unwrap().last().unwrap()["content"].clone();
        let result = results
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] == "tool_result")
            .unwrap();
        assert_ne!(result["is_error"], true, "{name}: {result}");
        assert!(
            result["content"].to_string().contains(text),
            "{name}: {result}"
        );
    }
}

/// An Explore agent that reads, then greps, then reports (with a word before each call).
fn exploring_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .system_contains("file search specialist")
                .tool_results(false)
                .reply(
                    Reply::text("SUB-TEXT reading.")
                        .with_tool_use("Read", json!({"file_path": "src/config.rs"})),
                ),
        )
        .rule(
            Rule::new()
                .system_contains("file search specialist")
                .assistant_turns(1)
                .reply(Reply::tool_use("Grep", json!({"pattern": "load_settings"}))),
        )
        .rule(
            Rule::new()
                .system_contains("file search specialist")
                .reply(Reply::text("SUB-REPORT: load_settings in src/config.rs")),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("It is load_settings.")),
        )
        .default_reply(Reply::text("Looking.").with_tool_use(
            "Agent",
            json!({"description": "Find the config loader",
                   "prompt": "Find where settings are loaded.", "subagent_type": "Explore"}),
        ))
}

fn exploring_project() -> Project {
    let project = Project::new();
    project.write("src/config.rs", "pub fn load_settings() {}\n");
    project
}

/// The id of the main thread's Agent call.
fn agent_call_id(lines: &[Value]) -> String {
    lines
        .iter()
        .filter(|l| l["type"] == "assistant" && l["parent_tool_use_id"].is_null())
        .flat_map(|l| {
            l["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|b| b["type"] == "tool_use" && b["name"] == "Agent")
        .and_then(|b| b["id"].as_str().map(str::to_owned))
        .expect("the Agent call")
}

/// Each line's blocks as `type` or `type:name`.
fn block_kinds(line: &Value) -> Vec<String> {
    line["message"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| match b["name"].as_str() {
            Some(name) => format!("{}:{name}", b["type"].as_str().unwrap()),
            None => b["type"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// Stream-json, as Claude Code's: a foreground sub-agent's tool calls and results are
/// `assistant` / `user` lines whose `parent_tool_use_id` is the Agent call's, streamed while
/// the call runs (before its result); its text is not (the SDKs' default).
#[tokio::test]
async fn stream_json_shows_a_sub_agents_calls_under_its_agent_call() {
    let server = mock(exploring_scenario()).await;
    let project = exploring_project();
    let out = tine(&project, &server)
        .args([
            "-p",
            "find the config loader",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .run()
        .await;
    out.assert_success();
    let lines = out.json_lines();
    let agent = agent_call_id(&lines);
    let nested: Vec<&Value> = lines
        .iter()
        .filter(|l| l["parent_tool_use_id"] == agent.as_str())
        .collect();
    let shape: Vec<(String, Vec<String>)> = nested
        .iter()
        .map(|l| (l["type"].as_str().unwrap().to_owned(), block_kinds(l)))
        .collect();
    let shape: Vec<(&str, Vec<&str>)> = shape
        .iter()
        .map(|(t, b)| (t.as_str(), b.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        shape,
        [
            ("assistant", vec!["tool_use:Read"]),
            ("user", vec!["tool_result"]),
            ("assistant", vec!["tool_use:Grep"]),
            ("user", vec!["tool_result"]),
        ],
        "{lines:#?}"
    );
    // What the SDK's parser requires of an assistant line.
    assert!(nested[0]["message"]["model"].is_string(), "{}", nested[0]);
    assert!(
        nested[1].to_string().contains("load_settings"),
        "{}",
        nested[1]
    );
    let text = out.stdout.clone();
    assert!(!text.contains("SUB-TEXT"), "the sub-agent's text stays out");
    // All of it before the Agent call's result reached the main thread.
    let result_at = lines
        .iter()
        .position(|l| {
            l["type"] == "user"
                && l["parent_tool_use_id"].is_null()
                && l["message"]["content"][0]["tool_use_id"] == agent.as_str()
        })
        .expect("the Agent call's result");
    let last_nested = lines
        .iter()
        .rposition(|l| l["parent_tool_use_id"] == agent.as_str())
        .unwrap();
    assert!(last_nested < result_at, "{lines:#?}");
    assert!(
        lines[result_at].to_string().contains("SUB-REPORT"),
        "{}",
        lines[result_at]
    );
}

/// Through the SDK's control protocol: `forwardSubagentText` in `initialize` brings the
/// sub-agent's text too, and the task's lines say its progress (`task_progress` with Claude
/// Code's usage: tool uses, tokens, time; the last tool's name) and end.
#[tokio::test]
async fn the_sdk_hears_a_sub_agents_progress_and_with_forward_subagent_text_its_text() {
    let server = mock(exploring_scenario()).await;
    let project = exploring_project();
    let mut app = super::sdk_control::App::start(&project, &server, &[]);
    app.request(
        "req_1",
        json!({"subtype": "initialize", "hooks": null, "forwardSubagentText": true}),
    )
    .await;
    app.response("req_1").await;
    app.user("find the config loader").await;
    let result = app.result().await;
    assert_eq!(result["result"], "It is load_settings.", "{result}");
    let (status, lines) = app.finish().await;
    assert!(status.success());
    let agent = agent_call_id(&lines);
    let nested: Vec<&Value> = lines
        .iter()
        .filter(|l| l["parent_tool_use_id"] == agent.as_str())
        .collect();
    let kinds: Vec<Vec<String>> = nested.iter().map(|l| block_kinds(l)).collect();
    assert_eq!(
        kinds,
        [
            vec!["text", "tool_use:Read"],
            vec!["tool_result"],
            vec!["tool_use:Grep"],
            vec!["tool_result"],
            vec!["text"],
        ],
        "{lines:#?}"
    );
    assert!(nested[4].to_string().contains("SUB-REPORT"));
    let progress: Vec<&Value> = lines
        .iter()
        .filter(|l| l["subtype"] == "task_progress")
        .collect();
    let uses: Vec<u64> = progress
        .iter()
        .map(|p| p["usage"]["tool_uses"].as_u64().unwrap())
        .collect();
    // One per reply, though updates close together may arrive as one.
    assert!(uses.windows(2).all(|w| w[0] <= w[1]), "{progress:#?}");
    let last = progress.last().expect("a task_progress line");
    assert_eq!(last["usage"]["tool_uses"], 2, "{last}");
    assert_eq!(last["last_tool_name"], "Grep", "{last}");
    assert_eq!(progress[0]["description"], "Find the config loader");
    assert!(progress[0]["usage"]["total_tokens"].as_u64().unwrap() > 0);
    assert!(progress[0]["usage"]["duration_ms"].is_u64());
    let task = progress[0]["task_id"].as_str().unwrap();
    let ended = lines
        .iter()
        .find(|l| l["subtype"] == "task_notification" && l["task_id"] == task)
        .expect("the task's end");
    assert_eq!(ended["status"], "completed");
    assert_eq!(ended["usage"]["tool_uses"], 2);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l["subtype"] == "task_started")
            .count(),
        1,
        "started once"
    );
}
