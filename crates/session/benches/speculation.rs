//! `cargo xtask bench speculation`: a scripted interactive session on the mock (each request
//! 150 ms to its first byte, like a fast real endpoint), ten prompts that each need a file read.
//! While the person "types" (1.5 s), the draft is handed to the session; eight drafts are the
//! prompt then submitted (hits), two are not (misses). Measured: the time from submitting a
//! prompt to the first token of the answer, with speculation on and off, the hit rate, and the
//! time saved per hit. Target: a hit saves at least one model round trip (>= 150 ms here).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tine_api_client::{ClientConfig, Credentials, HttpClient, RetryPolicy};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_query_loop::QueryEvent;
use tine_session::speculation::SPECULATION_MARKER;
use tine_session::{Event, Op, Session, SessionEvent, SessionOptions};

const LATENCY_MS: u64 = 150;
const TYPING: Duration = Duration::from_millis(1500);
const PROMPTS: usize = 10;

fn scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(SPECULATION_MARKER)
                .reply(Reply::text("Answered from the attached read.")),
        )
        .rule(
            Rule::new()
                .last_user_regex(r"explain (?P<file>src/f\d+\.rs)")
                .unwrap()
                .tool_results(false)
                .reply(Reply::tool_use(
                    "Read",
                    serde_json::json!({"file_path": "${file}"}),
                )),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("Answered after reading.")),
        )
        .default_reply(Reply::text("Hello."))
        .latency_ms(LATENCY_MS)
}

struct World {
    _root: tempfile::TempDir,
    home: PathBuf,
    cwd: PathBuf,
}

fn world(speculation: bool) -> World {
    let root = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(root.path()).unwrap();
    let (home, cwd) = (base.join("home"), base.join("project"));
    std::fs::create_dir_all(cwd.join("src")).unwrap();
    std::fs::create_dir_all(cwd.join(".tine")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    for i in 0..PROMPTS {
        std::fs::write(
            cwd.join(format!("src/f{i}.rs")),
            format!("pub fn f{i}() {{}}\n").repeat(50),
        )
        .unwrap();
    }
    std::fs::write(
        cwd.join(".tine/settings.json"),
        format!(r#"{{"speculationEnabled": {speculation}}}"#),
    )
    .unwrap();
    World {
        _root: root,
        home,
        cwd,
    }
}

/// The ten drafts and prompts: every fourth draft is not what gets submitted.
fn script() -> Vec<(String, String)> {
    (0..PROMPTS)
        .map(|i| {
            let prompt = format!("explain src/f{i}.rs");
            let draft = if i % 4 == 3 {
                format!("summarize the tests of src/f{i}.rs")
            } else {
                prompt.clone()
            };
            (draft, prompt)
        })
        .collect()
}

struct Run {
    first_token: Vec<Duration>,
    started: u64,
    hits: u64,
}

async fn run(server: &MockServer, speculation: bool) -> Run {
    let world = world(speculation);
    let config = ClientConfig::new(server.base_url(), Credentials::api_key("bench"))
        .with_retry(RetryPolicy::none());
    let mut options = SessionOptions::new(&world.cwd);
    options.home = Some(world.home.clone());
    options.user_home = Some(world.home.join("user"));
    options.managed_settings = Some(world.home.join("none.json"));
    options.client = Some(Arc::new(HttpClient::new(config).unwrap()));
    let (handle, mut events) = Session::start(options).await.unwrap();
    let turn = |prompt: String| {
        handle.submit(Op::Prompt(prompt)).unwrap();
    };
    turn("hello".into());
    wait_end(&mut events).await;
    let mut first_token = Vec::new();
    let (mut started, mut hits) = (0, 0);
    for (draft, prompt) in script() {
        if speculation {
            handle.submit(Op::Speculate(draft.clone())).unwrap();
            started += 1;
            if tine_session::speculation::matches_draft(&prompt, &draft) {
                hits += 1;
            }
        }
        tokio::time::sleep(TYPING).await;
        let sent = Instant::now();
        turn(prompt);
        let mut seen = None;
        loop {
            match events.recv().await.unwrap().msg {
                SessionEvent::Query(QueryEvent::TextDelta { .. }) if seen.is_none() => {
                    seen = Some(sent.elapsed());
                }
                SessionEvent::TurnEnded(_) => break,
                _ => {}
            }
        }
        first_token.push(seen.unwrap());
    }
    let _ = handle.shutdown().await;
    Run {
        first_token,
        started,
        hits,
    }
}

async fn wait_end(events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) {
    while let Some(event) = events.recv().await {
        if matches!(event.msg, SessionEvent::TurnEnded(_)) {
            return;
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn mean(values: &[Duration]) -> f64 {
    values.iter().map(|d| ms(*d)).sum::<f64>() / values.len() as f64
}

#[tokio::main]
async fn main() {
    let server = MockServer::start(MockConfig::new(scenario()))
        .await
        .unwrap();
    let off = run(&server, false).await;
    let on = run(&server, true).await;
    let hit_rate = on.hits as f64 / on.started as f64;
    let hit_indices: Vec<usize> = script()
        .iter()
        .enumerate()
        .filter(|(_, (d, p))| tine_session::speculation::matches_draft(p, d))
        .map(|(i, _)| i)
        .collect();
    let saved: Vec<f64> = hit_indices
        .iter()
        .map(|&i| ms(off.first_token[i]) - ms(on.first_token[i]))
        .collect();
    let saved_mean = saved.iter().sum::<f64>() / saved.len() as f64;
    let misses: Vec<f64> = (0..PROMPTS)
        .filter(|i| !hit_indices.contains(i))
        .map(|i| ms(on.first_token[i]) - ms(off.first_token[i]))
        .collect();
    println!(
        "speculation: {PROMPTS} prompts, mock latency {LATENCY_MS} ms per request, {} ms typing",
        TYPING.as_millis()
    );
    println!(
        "  hit rate                 {:>5.0}% ({} of {} drafts)",
        hit_rate * 100.0,
        on.hits,
        on.started
    );
    println!(
        "  first token, off         {:>7.1} ms mean",
        mean(&off.first_token)
    );
    println!(
        "  first token, on          {:>7.1} ms mean",
        mean(&on.first_token)
    );
    println!(
        "  saved per hit            {saved_mean:>7.1} ms mean (target >= {LATENCY_MS} ms: one round trip)"
    );
    println!(
        "  cost of a miss           {:>7.1} ms mean (target ~0)",
        misses.iter().sum::<f64>() / misses.len().max(1) as f64
    );
}
