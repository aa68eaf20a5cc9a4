//! The openai provider through the real binary: the key and model it needs, nothing sent to
//! Anthropic, the provider from settings (never the project's), Ollama's habits, a memory fork
//! on the parent's prefix cache, and `tine doctor` with and without `--check`.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{ChatDialect, MockConfig, MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, TineRun};

use super::wire::{LOCAL_MODEL, OPENAI_TEST_KEY, Wire, model_bodies, tine_on};
use super::{TINE, mock};

const ANTHROPIC_SECRET: &str = "sk-ant-must-not-travel-0123456789";

/// `tine` with only the openai provider's variables (and an Anthropic key that must not be used).
fn openai_run(project: &Project, server: &MockServer) -> TineRun {
    tine_on(Wire::OpenAi, project, server).env("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
}

/// `tine doctor ARGS --provider openai` in the environment of [`openai_run`] (`doctor` must be
/// the first argument).
fn openai_doctor(project: &Project, server: &MockServer, args: &[&str]) -> TineRun {
    TineRun::new(TINE, project, "http://127.0.0.1:9")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
        .env("OPENAI_BASE_URL", server.openai_base_url())
        .env("OPENAI_API_KEY", OPENAI_TEST_KEY)
        .env("OPENAI_MODEL", LOCAL_MODEL)
        .args(["doctor"])
        .args(args)
        .args(["--provider", "openai"])
}

#[tokio::test]
async fn no_openai_key_is_one_line_naming_the_variable() {
    let server = mock(Scenario::new()).await;
    let project = Project::new();
    let out = tine_on(Wire::OpenAi, &project, &server)
        .env_remove("OPENAI_API_KEY")
        .args(["-p", "hello"])
        .run()
        .await;
    assert_eq!(out.code(), Some(1));
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr.lines().count(), 1, "stderr: {}", out.stderr);
    assert!(out.stderr.contains("OPENAI_API_KEY"), "{}", out.stderr);
    assert!(out.stderr.contains("any non-empty value"), "{}", out.stderr);
    assert!(server.requests().is_empty());

    let out = tine_on(Wire::OpenAi, &project, &server)
        .env_remove("OPENAI_MODEL")
        .args(["-p", "hello"])
        .run()
        .await;
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr.contains("--model"), "{}", out.stderr);
}

#[tokio::test]
async fn nothing_is_sent_to_anthropic_and_the_model_name_goes_verbatim() {
    let project = Project::new();
    let file = project.write("a.txt", "alpha\n");
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Read", json!({"file_path": file}))),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("It says alpha.")),
        );
    let server = mock(scenario).await;
    let out = openai_run(&project, &server)
        .args(["-p", "read a.txt", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "It says alpha.");
    let log = server.requests();
    assert_eq!(log.len(), 2);
    for record in &log {
        assert_eq!(record.path, "/v1/chat/completions");
        assert_eq!(
            record.header("authorization"),
            Some(format!("Bearer {OPENAI_TEST_KEY}").as_str())
        );
        assert!(record.header("x-api-key").is_none());
        assert!(record.header("anthropic-version").is_none());
        let headers = format!("{:?}", record.headers);
        assert!(!headers.contains(ANTHROPIC_SECRET), "{headers}");
        let body = record.json().unwrap();
        assert_eq!(body["model"], LOCAL_MODEL);
        assert!(!body.to_string().contains("cache_control"));
    }
    // The second request is the first one plus the exchange: its prefix came from the cache.
    let first = log[0].usage.unwrap();
    let second = log[1].usage.unwrap();
    assert_eq!(second.cache_read_input_tokens, first.input_tokens);
}

#[tokio::test]
async fn the_provider_can_come_from_settings_but_never_from_the_project() {
    let server = mock(Scenario::new().default_reply(Reply::text("from chat completions"))).await;
    let project = Project::new();
    std::fs::write(
        project.home().join("settings.json"),
        json!({"provider": "openai", "model": LOCAL_MODEL, "openai": {"baseUrl": server.openai_base_url()}})
            .to_string(),
    )
    .unwrap();
    // The project tries to send the conversation elsewhere.
    project.write(
        ".tine/settings.json",
        &json!({"provider": "anthropic", "openai": {"baseUrl": "http://127.0.0.1:9/v1"}})
            .to_string(),
    );
    let out = tine_e2e::TineRun::new(TINE, &project, "http://127.0.0.1:9")
        .env_remove("ANTHROPIC_API_KEY")
        .env("OPENAI_API_KEY", OPENAI_TEST_KEY)
        .args(["-p", "hi"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.stdout, "from chat completions\n");
    assert!(
        out.stderr
            .contains("`provider` in the project's settings is ignored"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("`openai` in the project's settings is ignored"),
        "{}",
        out.stderr
    );
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");
}

#[tokio::test]
async fn ollama_parallel_calls_at_index_zero_all_run_in_order() {
    let project = Project::new();
    let a = project.write("a.txt", "apple\n");
    let b = project.write("b.txt", "banana\n");
    let scenario = Scenario::new()
        .rule(
            Rule::new().assistant_turns(0).reply(
                Reply::text("Reading both.")
                    .with_tool_use("Read", json!({"file_path": a}))
                    .with_tool_use("Read", json!({"file_path": b})),
            ),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("Both read.")),
        );
    let server = MockServer::start(MockConfig::new(scenario).chat_dialect(ChatDialect::Ollama))
        .await
        .unwrap();
    let out = openai_run(&project, &server)
        .args(["-p", "read both", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Both read.");
    let bodies = model_bodies(&server);
    let results = bodies[1]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0]["content"].to_string().contains("apple"));
    assert!(results[1]["content"].to_string().contains("banana"));
    // Ollama reports no `cached_tokens` (its usage rides on the finish chunk): whatever the
    // server reused, tine counts every prompt token as input.
    let usage = &out.json()["usage"];
    assert_eq!(usage["cache_read_input_tokens"], 0, "{usage}");
    let prompts: u64 = server
        .requests()
        .iter()
        .filter_map(|r| r.usage)
        .map(|u| u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens)
        .sum();
    assert!(prompts > 0);
    assert_eq!(usage["input_tokens"], prompts, "{usage}");
}

#[tokio::test]
async fn the_memory_fork_reads_the_parent_prefix_from_the_server_cache() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../memory/scenarios/seed001.json");
    let server = mock(Scenario::from_file(&path).unwrap()).await;
    let project = Project::new();
    let out = openai_run(&project, &server)
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
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "system" && l["subtype"] == "memory_saved"),
        "{lines:#?}"
    );
    let log = server.requests();
    let parent = log[0].usage.unwrap();
    let fork = log
        .iter()
        .find(|r| String::from_utf8_lossy(&r.body).contains("<memory-extraction>"))
        .expect("an extraction request");
    let body = fork.json().unwrap();
    assert_eq!(
        body["model"], LOCAL_MODEL,
        "the fork uses the session's model"
    );
    // Byte-identical up to the divergence: the fork's prompt starts with the parent's whole one.
    let usage = fork.usage.unwrap();
    println!(
        "openai extraction fork: read {} of its {} prompt tokens from the cache; the parent's \
         prompt was {}",
        usage.cache_read_input_tokens,
        usage.prompt_tokens(),
        parent.input_tokens
    );
    assert!(
        fork.usage.unwrap().cache_read_input_tokens >= parent.input_tokens,
        "fork read {:?} of the parent's {} prompt tokens",
        fork.usage,
        parent.input_tokens
    );
}

fn value<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|line| {
            line.trim_start()
                .strip_prefix(label)
                .filter(|rest| rest.starts_with(' '))
        })
        .map(str::trim)
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{text}"))
}

#[tokio::test]
async fn doctor_names_provider_model_endpoint_and_checks_a_request() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let out = openai_doctor(&project, &server, &[]).run().await;
    out.assert_success();
    let text = &out.stdout;
    assert!(
        value(text, "provider").starts_with("openai (--provider)"),
        "{text}"
    );
    assert_eq!(
        value(text, "model"),
        format!("{LOCAL_MODEL} (OPENAI_MODEL)")
    );
    assert_eq!(
        value(text, "endpoint"),
        format!("{} (OPENAI_BASE_URL)", server.openai_base_url())
    );
    assert_eq!(
        value(text, "credentials"),
        "from OPENAI_API_KEY (value not shown)"
    );
    assert!(
        value(text, "context window").starts_with("128000 tokens (assumed"),
        "{text}"
    );
    assert!(
        value(text, "prices").contains("not a Claude model: tine has no price for it"),
        "{text}"
    );
    assert!(
        value(text, "small model").starts_with(LOCAL_MODEL),
        "{text}"
    );
    assert!(server.requests().is_empty(), "no network without --check");

    let out = openai_doctor(&project, &server, &["--check"])
        .env("TINE_CONTEXT_WINDOW", "32768")
        .run()
        .await;
    out.assert_success();
    assert_eq!(
        value(&out.stdout, "context window"),
        "32768 tokens (TINE_CONTEXT_WINDOW)"
    );
    assert!(
        value(&out.stdout, "check").starts_with("ok: "),
        "{}",
        out.stdout
    );
    assert_eq!(server.requests().len(), 1);
    assert!(!out.stdout.contains(OPENAI_TEST_KEY) && !out.stdout.contains(ANTHROPIC_SECRET));
}

#[tokio::test]
async fn doctor_check_against_nothing_fails_fast_and_names_the_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let project = Project::new();
    let out = TineRun::new(TINE, &project, "http://127.0.0.1:9")
        .env("OPENAI_BASE_URL", &url)
        .env("OPENAI_API_KEY", OPENAI_TEST_KEY)
        .args([
            "doctor",
            "--provider",
            "openai",
            "--model",
            LOCAL_MODEL,
            "--check",
        ])
        .run()
        .await;
    assert_eq!(out.code(), Some(1), "{}", out.stdout);
    assert!(
        value(&out.stdout, "check").starts_with("failed"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("nothing is listening"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(&url), "{}", out.stdout);
}

#[tokio::test]
async fn doctor_defaults_to_anthropic_and_says_so() {
    let project = Project::new();
    let out = TineRun::new(TINE, &project, "http://127.0.0.1:9")
        .args(["doctor"])
        .run()
        .await;
    out.assert_success();
    let provider = value(&out.stdout, "provider");
    assert_eq!(provider, "anthropic (default): Anthropic Messages API");
    let v: Value = json!(value(&out.stdout, "check"));
    assert!(v.as_str().unwrap().starts_with("not run"), "{v}");
}
