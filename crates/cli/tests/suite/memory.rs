//! Auto memory end to end (seed 001's acceptance scenario): a first session states the stack,
//! the extraction fork saves it on the parent's prompt cache, a second session knows it.

use serde_json::Value;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::Scenario;

use super::{mock, tine};

fn seed001() -> Scenario {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../memory/scenarios/seed001.json");
    Scenario::from_file(&path).unwrap()
}

#[tokio::test]
async fn one_session_states_the_stack_and_the_next_remembers_it() {
    let server = mock(seed001()).await;
    let project = Project::new();

    // Session 1: the user states the stack; the extraction fork writes a topic file + index line.
    let out = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args([
            "-p",
            "this project uses React 18 and PostgreSQL",
            "--output-format",
            "stream-json",
        ])
        .run()
        .await;
    out.assert_success();
    let lines = out.json_lines();
    let saved = lines
        .iter()
        .find(|l| l["type"] == "system" && l["subtype"] == "memory_saved")
        .unwrap_or_else(|| panic!("no memory_saved line in {lines:#?}"));
    assert!(
        saved["summary"]
            .as_str()
            .unwrap()
            .contains("project_stack.md"),
        "{saved}"
    );
    assert_eq!(lines.last().unwrap()["type"], "result");

    // The fork's first request read the parent's whole cached prefix from the cache.
    let log = server.requests();
    let parent = log[0].usage.unwrap();
    let fork = log
        .iter()
        .find(|r| String::from_utf8_lossy(&r.body).contains("<memory-extraction>"))
        .expect("an extraction request");
    let fork_usage = fork.usage.unwrap();
    let parent_cached = parent.cache_read_input_tokens + parent.cache_creation_input_tokens;
    assert!(parent_cached > 0, "{parent:?}");
    assert!(
        fork_usage.cache_read_input_tokens >= parent_cached,
        "fork read {} of the parent's {parent_cached} cached tokens",
        fork_usage.cache_read_input_tokens
    );

    // `tine memory list` shows it; `show` prints it.
    let list = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["memory", "list"])
        .run()
        .await;
    list.assert_success();
    assert!(list.stdout.contains("project_stack.md"), "{}", list.stdout);
    let shown = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["memory", "show", "project_stack"])
        .run()
        .await;
    shown.assert_success();
    assert!(shown.stdout.contains("PostgreSQL"), "{}", shown.stdout);

    // Session 2: the index is in the context, recall attaches the file, the model knows.
    let before = server.requests().len();
    let out = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args([
            "-p",
            "which database does this project use?",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    out.assert_success();
    let result = out.json();
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .contains("From memory: this project uses PostgreSQL"),
        "{result}"
    );
    let bodies: Vec<Value> = server.requests()[before..]
        .iter()
        .filter_map(|r| r.json())
        .collect();
    let main = bodies
        .iter()
        .find(|b| {
            let text = b.to_string();
            text.contains("which database") && !text.contains("<memory-recall>")
        })
        .expect("the main request");
    let first_user = main["messages"][0].to_string();
    assert!(
        first_user.contains("[Project stack](project_stack.md)"),
        "index in context"
    );
    assert!(
        first_user.contains("React 18 for the frontend"),
        "recalled file attached"
    );
}

#[tokio::test]
async fn memory_is_off_with_bare_and_with_the_env_switch() {
    let server = mock(seed001()).await;
    let project = Project::new();
    for args in [vec!["--bare"], vec![]] {
        let mut run = tine(&project, &server);
        if !args.is_empty() {
            run = run.env_remove("TINE_DISABLE_AUTO_MEMORY");
        }
        let mut all = vec!["-p", "this project uses React 18 and PostgreSQL"];
        all.extend(args);
        run.args(all).run().await.assert_success();
    }
    let bodies: Vec<String> = server
        .requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert_eq!(bodies.len(), 2, "no extraction fork ran");
    assert!(bodies.iter().all(|b| !b.contains("<memory-extraction>")));
    let path = tine(&project, &server).args(["memory", "path"]).run().await;
    // Only a path goes to stdout: with memory off there is none, and the why is a note.
    assert!(path.stdout.is_empty(), "{}", path.stdout);
    assert!(
        path.stderr.contains("auto memory is off"),
        "{}",
        path.stderr
    );
}

/// What the mock billed for `records`, at the default model's prices.
fn billed(records: &[&tine_e2e::tine_mock_api::RequestRecord]) -> (tine_api_client::Usage, f64) {
    let mut total = tine_api_client::Usage::default();
    let mut cost = 0.0;
    for record in records {
        let u = record.usage.unwrap();
        let usage = tine_api_client::Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
            cache_read_input_tokens: u.cache_read_input_tokens,
            ..Default::default()
        };
        total += usage;
        cost += tine_api_client::cost_usd(tine_session::DEFAULT_MODEL, &usage);
    }
    (total, cost)
}

#[tokio::test]
async fn json_cost_counts_every_request_of_the_run_by_source() {
    let server = mock(seed001()).await;
    let project = Project::new();
    let memory_dir = project.root().join("memory");
    let run = |prompt: &'static str| {
        tine(&project, &server)
            .env_remove("TINE_DISABLE_AUTO_MEMORY")
            .env("TINE_MEMORY_DIR", &memory_dir)
            .args(["-p", prompt, "--output-format", "json"])
            .run()
    };
    // Session 1 saves the stack (the extraction fork runs in the exit drain); session 2 asks,
    // so recall picks the file with a side query (a long runbook from another session makes
    // the memories too big to attach without asking), and extraction runs again at exit (the
    // question says "our": it is about the user's project, worth a run).
    run("this project uses React 18 and PostgreSQL")
        .await
        .assert_success();
    let runbook = "Restart the worker, then the API.\n".repeat(200);
    std::fs::write(
        memory_dir.join("reference_runbook.md"),
        format!("---\nname: Runbook\ndescription: how to restart production\ntype: reference\n---\n\n{runbook}"),
    )
    .unwrap();
    let before = server.requests().len();
    let out = run("which database does our project use?").await;
    out.assert_success();
    let result = out.json();
    let log = server.requests();
    let session: Vec<_> = log[before..].iter().collect();
    let is = |r: &&tine_e2e::tine_mock_api::RequestRecord, marker: &str| {
        String::from_utf8_lossy(&r.body).contains(marker)
    };
    let fork_requests: Vec<_> = session
        .iter()
        .copied()
        .filter(|r| is(r, "<memory-extraction>"))
        .collect();
    let recall_requests: Vec<_> = session
        .iter()
        .copied()
        .filter(|r| is(r, "<memory-recall>"))
        .collect();
    assert!(!fork_requests.is_empty() && !recall_requests.is_empty());

    // Every request the run made, as the server billed it: the total and the usage.
    let (usage, cost) = billed(&session);
    let total = result["total_cost_usd"].as_f64().unwrap();
    assert!(
        (total - cost).abs() < 1e-9,
        "{total} vs the server's {cost}"
    );
    for (key, value) in [
        ("input_tokens", usage.input_tokens),
        ("output_tokens", usage.output_tokens),
        ("cache_read_input_tokens", usage.cache_read_input_tokens),
        (
            "cache_creation_input_tokens",
            usage.cache_creation_input_tokens,
        ),
    ] {
        assert_eq!(result["usage"][key], value, "usage.{key}: {result}");
    }

    // The breakdown: each source as the server billed it, summing to the total.
    let by_source = result["usage_by_source"].as_object().unwrap();
    let mut keys: Vec<&str> = by_source.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["extract_memories", "main", "memory_recall"],
        "{result}"
    );
    for (source, records) in [
        ("extract_memories", &fork_requests),
        ("memory_recall", &recall_requests),
    ] {
        let (usage, cost) = billed(records);
        let entry = &by_source[source];
        assert_eq!(entry["requests"], records.len(), "{source}: {entry}");
        assert_eq!(entry["input_tokens"], usage.input_tokens, "{source}");
        assert_eq!(
            entry["cache_read_input_tokens"], usage.cache_read_input_tokens,
            "{source}"
        );
        assert!((entry["cost_usd"].as_f64().unwrap() - cost).abs() < 1e-9);
    }
    assert_eq!(
        by_source["main"]["requests"],
        session.len() - fork_requests.len() - recall_requests.len()
    );
    let sum: f64 = by_source
        .values()
        .map(|s| s["cost_usd"].as_f64().unwrap())
        .sum();
    assert!((sum - total).abs() < 1e-12, "{sum} vs {total}");
    let sum_input: u64 = by_source
        .values()
        .map(|s| s["input_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(result["usage"]["input_tokens"], sum_input);
}

/// The extraction requests among `records`, as JSON.
fn extraction_requests(records: &[tine_e2e::tine_mock_api::RequestRecord]) -> Vec<Value> {
    records
        .iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains("<memory-extraction>"))
        .filter_map(|r| r.json())
        .collect()
}

/// The text of the last user message of an extraction request (its prompt).
fn extraction_prompt(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let last = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user" && m.to_string().contains("<memory-extraction>"))
        .unwrap();
    last.to_string()
}

#[tokio::test]
async fn a_continued_session_extracts_only_what_came_after_the_last_run() {
    let server = mock(seed001()).await;
    let project = Project::new();
    let run = |args: &[&str]| {
        tine(&project, &server)
            .env_remove("TINE_DISABLE_AUTO_MEMORY")
            .args(args.iter().copied())
            .args(["--output-format", "json"])
            .run()
    };
    // Session 1 states the stack; extraction runs in the exit drain over its 2 messages.
    let out = run(&["-p", "this project uses React 18 and PostgreSQL"]).await;
    out.assert_success();
    let session_id = out.json()["session_id"].as_str().unwrap().to_owned();
    let first = extraction_requests(&server.requests());
    assert!(!first.is_empty(), "session 1 extracted");
    assert!(
        extraction_prompt(&first[0]).contains("From the last ~2 messages"),
        "{}",
        extraction_prompt(&first[0])
    );
    let cursors: Vec<Value> = project
        .transcript(&session_id)
        .into_iter()
        .filter(|r| r["type"] == "memory_cursor")
        .collect();
    assert_eq!(cursors.len(), 1, "one cursor recorded per run");
    assert_eq!(cursors[0]["data"]["count"], 2, "{}", cursors[0]);

    // Session 2 continues it with something new: extraction looks only at the 2 new
    // messages, not at all 4 (the first two were covered by session 1's run).
    for (round, prompt) in [
        "the staging server is staging.example.com",
        "releases go out on Fridays after the standup",
    ]
    .into_iter()
    .enumerate()
    {
        let before = server.requests().len();
        let out = run(&["-c", "-p", prompt]).await;
        out.assert_success();
        assert_eq!(out.json()["session_id"], session_id.as_str());
        let log = server.requests();
        let session = &log[before..];
        let forks = extraction_requests(session);
        assert!(!forks.is_empty(), "round {round}: extraction ran");
        let text = extraction_prompt(&forks[0]);
        assert!(
            text.contains("From the last ~2 messages"),
            "round {round}: extraction should see only the new turn: {text}"
        );
        // The fork's first request reads the continued session's cached prefix.
        let main = session
            .iter()
            .find(|r| {
                let body = String::from_utf8_lossy(&r.body);
                body.contains(prompt)
                    && !body.contains("<memory-extraction>")
                    && !body.contains("<memory-recall>")
            })
            .expect("the main request");
        let main_usage = main.usage.unwrap();
        let fork = session
            .iter()
            .find(|r| String::from_utf8_lossy(&r.body).contains("<memory-extraction>"))
            .unwrap();
        let cached = main_usage.cache_read_input_tokens + main_usage.cache_creation_input_tokens;
        assert!(cached > 0, "{main_usage:?}");
        assert!(
            fork.usage.unwrap().cache_read_input_tokens >= cached,
            "round {round}: fork read {:?} of the parent's {cached} cached tokens",
            fork.usage.unwrap()
        );
    }
    let counts: Vec<Value> = project
        .transcript(&session_id)
        .into_iter()
        .filter(|r| r["type"] == "memory_cursor")
        .map(|r| r["data"]["count"].clone())
        .collect();
    assert_eq!(counts, [2, 4, 6], "each run recorded where it stopped");
}
