//! Issue 14's contract through the real binary, item by item: the summary request is the
//! parent's request plus the instruction (and reads its whole cached prefix), the last file read
//! comes back, tools are refused to the summary, no cache break is reported for the new prefix
//! (in the turn and on `-c`), reactive compaction with a summary request too long itself, the
//! circuit breaker, the window variables, and PreCompact / PostCompact hooks. The summary's
//! contract holds over both wires (`both_wires!`): on chat completions its prefix is the
//! parent's chat request, read from the server's prefix cache.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{Fault, MockServer, Reply, RequestRecord, Rule, Scenario};
use tine_e2e::{Project, request_bodies};

use super::wire::{Wire, both_wires, tine_on};
use super::{mock, tine};

both_wires!(the_summary_is_the_parents_request_plus_the_instruction_and_the_last_file_comes_back);

const MARKER: &str = "Your task is to write a detailed summary of the conversation so far";
const CONTINUED: &str = "This session is being continued from an earlier conversation";
const SUMMARY: &str = "The user had the files read.";

fn summary_reply() -> Reply {
    Reply::text(&format!(
        "<analysis>SCRATCHPAD</analysis><summary>{SUMMARY}</summary>"
    ))
}

/// `reads` Read calls of `f0.txt`, `f1.txt`, ...; the summary; the continued turn.
fn scenario(reads: usize, summary: Rule) -> Scenario {
    let mut scenario = Scenario::new()
        .rule(summary)
        .rule(
            Rule::new()
                .last_user_contains("what next")
                .reply(Reply::text("Next: nothing.")),
        )
        .rule(
            Rule::new()
                .first_user_contains(CONTINUED)
                .last_user_contains(CONTINUED)
                .named("continued")
                .reply(Reply::text("Finished after compaction.")),
        );
    for i in 0..reads {
        scenario = scenario.rule(
            Rule::new()
                .assistant_turns(i)
                .named(&format!("read{i}"))
                .reply(Reply::tool_use(
                    "Read",
                    json!({"file_path": format!("f{i}.txt")}),
                )),
        );
    }
    scenario.default_reply(Reply::text("All read."))
}

fn summary_rule() -> Rule {
    Rule::new()
        .last_user_contains(MARKER)
        .named("summary")
        .reply(summary_reply())
}

/// `n` files of about 12k tokens each.
fn project_with_files(n: usize) -> Project {
    let project = Project::new();
    for i in 0..n {
        let mut text = String::new();
        let mut line = 0;
        while text.len() < 48_000 {
            text.push_str(&format!("f{i} line {line}: the content of a big file\n"));
            line += 1;
        }
        project.write(&format!("f{i}.txt"), &text);
    }
    project
}

fn rule(r: &RequestRecord) -> &str {
    r.rule.as_deref().unwrap_or("")
}

/// The request in Messages form (a chat request as the mock converted it).
fn body(r: &RequestRecord) -> Value {
    r.messages_form().unwrap()
}

fn prompt_tokens(r: &RequestRecord) -> u64 {
    r.usage.map_or(0, |u| u.prompt_tokens())
}

/// The messages with every `cache_control` removed (breakpoints are not part of the key).
fn unmarked(messages: &Value) -> Vec<Value> {
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
    let mut messages = messages.as_array().unwrap().clone();
    messages.iter_mut().for_each(strip);
    messages
}

/// A summary request (by its last message: a refused request has no rule).
fn is_summary(r: &RequestRecord) -> bool {
    r.messages_form()
        .and_then(|b| b["messages"].as_array()?.last().map(Value::to_string))
        .is_some_and(|last| last.contains(MARKER))
}

fn summaries(server: &MockServer) -> Vec<RequestRecord> {
    server.requests().into_iter().filter(is_summary).collect()
}

async fn the_summary_is_the_parents_request_plus_the_instruction_and_the_last_file_comes_back(
    wire: Wire,
) {
    // The summary's reply also asks for a tool: the fork must refuse it.
    let summary = Rule::new()
        .last_user_contains(MARKER)
        .named("summary")
        .reply(
            summary_reply().with_tool_use("Bash", json!({"command": "touch summary-ran-a-tool"})),
        );
    let server = mock(scenario(8, summary)).await;
    let project = project_with_files(8);
    let out = tine_on(wire, &project, &server)
        .env("TINE_AUTO_COMPACT_WINDOW", "75000")
        .args([
            "-p",
            "read the files",
            "--output-format",
            "json",
            "--verbose",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Finished after compaction.");

    let log = server.requests();
    let at = log.iter().position(is_summary).unwrap();
    assert_eq!(
        summaries(&server).len(),
        1,
        "max_turns 1: one summary request"
    );
    let (parent, summary, after) = (&log[at - 1], &log[at], &log[at + 1]);
    assert!(rule(parent).starts_with("read"), "{}", rule(parent));
    assert_eq!(rule(after), "continued");

    // Same system, tools, model, thinking and max_tokens (no output limit of its own), the
    // parent's messages byte for byte, then the instruction as the last user message.
    let (p, q) = (body(parent), body(summary));
    for key in [
        "system",
        "tools",
        "model",
        "thinking",
        "max_tokens",
        "tool_choice",
    ] {
        assert_eq!(p.get(key), q.get(key), "{key}");
    }
    let (pm, qm) = (unmarked(&p["messages"]), unmarked(&q["messages"]));
    assert_eq!(pm[..], qm[..pm.len()]);
    if wire == Wire::OpenAi {
        // The chat requests themselves: the parent's messages (system first) and tools again.
        let (p, q) = (parent.json().unwrap(), summary.json().unwrap());
        let (pm, qm) = (
            p["messages"].as_array().unwrap(),
            q["messages"].as_array().unwrap(),
        );
        assert_eq!(pm[..], qm[..pm.len()]);
        for key in [
            "tools",
            "model",
            "max_tokens",
            "max_completion_tokens",
            "tool_choice",
        ] {
            assert_eq!(p.get(key), q.get(key), "{key}");
        }
    }
    let instruction = qm.last().unwrap().to_string();
    assert!(instruction.contains(MARKER));
    for section in [
        "Primary request and intent",
        "Key technical concepts",
        "Files and code sections",
        "Errors and fixes",
        "Problem solving",
        "All user messages",
        "Pending tasks",
        "Current work",
        "Optional next step",
        "verbatim",
        "<analysis>",
    ] {
        assert!(instruction.contains(section), "{section}");
    }
    // Its first request read the parent's whole prompt from the cache.
    let usage = summary.usage.unwrap();
    assert_eq!(usage.cache_read_input_tokens, prompt_tokens(parent));
    // Only what came after the parent's request is not read (the last round and the
    // instruction), and none of it is written: the summary's breakpoint is where the parent's
    // was, since no later request reads this history again.
    assert_eq!(usage.cache_creation_input_tokens, 0, "{usage:?}");
    assert_eq!(
        usage.input_tokens,
        prompt_tokens(summary) - prompt_tokens(parent),
        "{usage:?}"
    );
    // The fork's tool call was refused: nothing ran.
    assert!(!project.cwd().join("summary-ran-a-tool").exists());

    // The new history: the summary without its scratchpad, then the last file read (numbered
    // as Read numbers lines), all in one user message. The last file read is in the last
    // round, which the summary request has and the parent's request did not.
    let last_read = qm
        .iter()
        .rev()
        .find_map(|m| {
            let text = m.to_string();
            (0..8)
                .rev()
                .find(|i| text.contains(&format!("f{i} line 0")))
        })
        .unwrap();
    let messages = body(after)["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let text = messages[0].to_string();
    assert!(
        text.contains(SUMMARY) && !text.contains("SCRATCHPAD"),
        "{text}"
    );
    assert!(
        text.contains(&format!("1\\tf{last_read} line 0")),
        "f{last_read}.txt is re-attached"
    );
    // An older file read, 12k tokens like the others, is named by a reference, not cut.
    let older = last_read - 1;
    assert!(
        text.contains(&format!(
            "f{older}.txt was read before the conversation was compacted; at"
        )),
        "f{older}.txt is referenced: {text}"
    );
    assert!(!text.contains(&format!("f{older} line 0")));
    assert!(
        prompt_tokens(after) < prompt_tokens(summary),
        "the context shrank"
    );

    // The deliberate change of prefix is not a cache break; the UI saw the compaction.
    assert!(!out.stderr.contains("cache break"), "{}", out.stderr);
    assert!(
        out.stderr.contains("[tine] compacted (auto)"),
        "{}",
        out.stderr
    );

    // A resumed session reads the compacted prefix back from the cache, with no break either.
    let resumed = tine_on(wire, &project, &server)
        .env("TINE_AUTO_COMPACT_WINDOW", "75000")
        .args(["-c", "-p", "what next?", "--verbose"])
        .run()
        .await;
    resumed.assert_success();
    assert!(
        !resumed.stderr.contains("cache break"),
        "{}",
        resumed.stderr
    );
    let log = server.requests();
    let resumed_request = log.last().unwrap();
    let read = resumed_request.usage.unwrap().cache_read_input_tokens;
    assert!(
        read >= prompt_tokens(after),
        "the resumed request read {read} of the {} the continued request cached",
        prompt_tokens(after)
    );

    // `-r ID` resumes the same way: from the boundary; what came before it is never sent.
    let id = out.json()["session_id"].as_str().unwrap().to_owned();
    let by_id = tine(&project, &server)
        .env("TINE_AUTO_COMPACT_WINDOW", "75000")
        .args(["-r", &id, "-p", "what next, once more?"])
        .run()
        .await;
    by_id.assert_success();
    let sent = body(server.requests().last().unwrap())["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert!(sent[0].to_string().contains(CONTINUED), "{:?}", sent[0]);
    // The turn's prompt was kept after the summary (compaction never summarizes it); the
    // rounds before the boundary are not sent again.
    assert!(
        sent.iter().all(|m| !m.to_string().contains("f0 line 0")),
        "the rounds before the boundary are not sent again"
    );
    assert_eq!(
        sent.iter()
            .filter(|m| m.to_string().contains("read the files"))
            .count(),
        1,
        "the kept prompt is sent once, after the summary"
    );
}

#[tokio::test]
async fn the_claude_code_window_variable_is_honoured_and_disable_autocompact_turns_it_off() {
    let server = mock(scenario(8, summary_rule())).await;
    let project = project_with_files(8);
    let out = tine(&project, &server)
        .env("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "75000")
        .args(["-p", "read the files"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.stdout.trim(), "Finished after compaction.");
    assert_eq!(summaries(&server).len(), 1);

    let server = mock(scenario(8, summary_rule())).await;
    let out = tine(&project, &server)
        .env("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "75000")
        .env("DISABLE_AUTOCOMPACT", "1")
        .args(["-p", "read the files"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.stdout.trim(), "All read.");
    assert!(summaries(&server).is_empty());
}

#[tokio::test]
async fn prompt_too_long_compacts_once_and_a_summary_too_long_drops_the_oldest_rounds() {
    // The API's window is 40k: the fourth request (~48k) is refused, and so is the summary on
    // the same history; without the oldest rounds it fits.
    let server = mock(scenario(3, summary_rule()).context_window(40_000)).await;
    let project = project_with_files(3);
    let out = tine(&project, &server)
        .args([
            "-p",
            "read the three files",
            "--output-format",
            "json",
            "--verbose",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Finished after compaction.");
    assert!(
        out.stderr.contains("transition: reactive_compact"),
        "{}",
        out.stderr
    );
    let statuses: Vec<(bool, u16)> = server
        .requests()
        .iter()
        .map(|r| (is_summary(r), r.status))
        .collect();
    assert_eq!(
        statuses,
        [
            (false, 200),
            (false, 200),
            (false, 200),
            (false, 400), // prompt is too long
            (true, 400),  // the summary on the same history: too long too
            (true, 200),  // without the oldest rounds
            (false, 200), // the turn goes on from the summary
        ]
    );
    // The retry left out whole rounds from the start: the first file's call and its result.
    let retry = &request_bodies(&server)[5];
    let messages = retry["messages"].as_array().unwrap();
    assert_eq!(messages[1]["role"], "assistant");
    assert!(!retry.to_string().contains("f0 line 0"));
    assert!(retry.to_string().contains("f2 line 0"));

    let log = tine(&project, &server).args(["compact", "log"]).run().await;
    log.assert_success();
    assert!(log.stdout.contains("(reactive)"), "{}", log.stdout);
    assert!(log.stdout.contains("not even summarized"), "{}", log.stdout);
}

#[tokio::test]
async fn three_failed_compactions_in_a_row_stop_auto_compaction_for_the_session() {
    // Every summary request fails; every request after the first read is over the threshold
    // (window 40k: effective 20k, auto at 7k).
    let summary = Rule::new()
        .last_user_contains(MARKER)
        .named("summary")
        .fault(Fault::http(400));
    let server = mock(scenario(6, summary)).await;
    let project = project_with_files(6);
    let out = tine(&project, &server)
        .env("TINE_AUTO_COMPACT_WINDOW", "40000")
        .args(["-p", "read the files", "--verbose"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.stdout.trim(), "All read.");
    assert_eq!(summaries(&server).len(), 3, "three attempts, then none");
    let main = server.requests().iter().filter(|r| !is_summary(r)).count();
    assert_eq!(main, 7, "six reads and the answer all went through");
    // Once tripped, the warning says compaction is up to the user.
    assert!(
        out.stderr.contains("auto compaction is off: run /compact"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn precompact_and_postcompact_hooks_shape_the_summary_and_the_new_history() {
    let server = mock(scenario(2, summary_rule())).await;
    let project = project_with_files(2);
    let hooks = json!({"hooks": {
        "PreCompact": [{"matcher": "manual", "hooks": [{"type": "command",
            "command": "cat > pre-input.json; echo 'keep the widget names'"}]}],
        "PostCompact": [{"matcher": "", "hooks": [{"type": "command",
            "command": "echo 'after compaction: the widgets live in f1.txt'"}]}],
    }});
    project.write(".tine/settings.json", &hooks.to_string());
    tine(&project, &server)
        .args(["-p", "read the files"])
        .run()
        .await
        .assert_success();
    let out = tine(&project, &server)
        .args(["-c", "-p", "/compact the plan too"])
        .run()
        .await;
    out.assert_success();
    let summary = summaries(&server);
    assert_eq!(summary.len(), 1);
    let instruction = body(&summary[0]).to_string();
    assert!(instruction.contains("the plan too"), "the focus");
    assert!(
        instruction.contains("keep the widget names"),
        "PreCompact's output"
    );
    let input: Value = serde_json::from_str(&project.read("pre-input.json")).unwrap();
    assert_eq!(input["hook_event_name"], "PreCompact");
    assert_eq!(input["trigger"], "manual");
    assert_eq!(input["custom_instructions"], "the plan too");

    // The next turn starts from the summary and what PostCompact added.
    tine(&project, &server)
        .args(["-c", "-p", "what next?"])
        .run()
        .await
        .assert_success();
    let first = request_bodies(&server).last().unwrap()["messages"][0].to_string();
    assert!(
        first.contains(CONTINUED) && first.contains(SUMMARY),
        "{first}"
    );
    assert!(first.contains("the widgets live in f1.txt"), "{first}");
}
