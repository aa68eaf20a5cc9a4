//! The cache-break detector on real sessions against the mock: it names a changed system
//! prompt and a reordered tool, stays quiet when nothing changed (the cache expired), and a
//! resumed session (a new process) compares its first request with the run before.

use std::sync::Arc;
use std::time::Duration;

use tine_config::SessionId;
use tine_fork_runtime::{BreakCause, CACHE_HASHES_KIND, CacheBreak, CacheBreakDetector};
use tine_mock_api::{MockClock, MockConfig, MockServer, Reply, Scenario};
use tine_query_loop::{EngineConfig, QueryEngine, RequestMonitor, Terminal, read_transcript};
use tine_test_support::{client_for, engine_config, tool_setup};

/// ~2.5k tokens: past the minimum cacheable prefix.
fn system_prompt(variant: &str) -> String {
    let mut s = format!("You are tine ({variant}), a terminal coding agent.\n");
    for i in 0..200 {
        s.push_str(&format!("Guideline {i}: read before you edit.\n"));
    }
    s
}

struct Env {
    server: MockServer,
    home: tempfile::TempDir,
    cwd: tempfile::TempDir,
}

async fn env(clock: MockClock) -> Env {
    let scenario = Scenario::new().default_reply(Reply::text("Noted."));
    let server = MockServer::start(MockConfig::new(scenario).clock(clock))
        .await
        .unwrap();
    Env {
        server,
        home: tempfile::tempdir().unwrap(),
        cwd: tempfile::tempdir().unwrap(),
    }
}

fn config(
    env: &Env,
    system: &str,
    reverse_tools: bool,
    monitor: Arc<dyn RequestMonitor>,
) -> EngineConfig {
    let (tools, defs) = tool_setup();
    let mut defs = defs.to_vec();
    if reverse_tools {
        defs.swap(0, 1);
    }
    let mut config = engine_config(
        client_for(&env.server),
        env.home.path(),
        env.cwd.path(),
        tools,
        defs.into(),
    );
    config.system_prompt = Arc::from(system);
    config.max_turns = Some(4);
    config.monitor = Some(monitor);
    config
}

async fn turn(engine: &mut QueryEngine, prompt: &str) {
    let result = engine.submit(prompt, |_| {}).await;
    assert_eq!(result.terminal, Terminal::Completed, "{result:?}");
}

/// The mock's usage of its `n`th request (1-based): (read, creation).
fn mock_usage(env: &Env, n: usize) -> (u64, u64) {
    let usage = env.server.requests()[n - 1].usage.unwrap();
    (
        usage.cache_read_input_tokens,
        usage.cache_creation_input_tokens,
    )
}

async fn resume(
    env: &Env,
    id: &SessionId,
    system: &str,
    reverse_tools: bool,
    detector: &Arc<CacheBreakDetector>,
) -> QueryEngine {
    let monitor: Arc<dyn RequestMonitor> = detector.clone();
    QueryEngine::resume(config(env, system, reverse_tools, monitor), id.clone())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_changed_system_prompt_on_the_next_turn_is_named() {
    let env = env(MockClock::system()).await;
    let detector = Arc::new(CacheBreakDetector::new());
    let s1 = system_prompt("one");
    let mut engine = QueryEngine::new(config(&env, &s1, false, detector.clone()))
        .await
        .unwrap();
    turn(&mut engine, "first question").await;
    turn(&mut engine, "second question").await;
    let (_, created) = mock_usage(&env, 1);
    let (read, _) = mock_usage(&env, 2);
    assert!(
        created > 1024 && read >= created,
        "healthy turn: {created} {read}"
    );
    assert!(detector.take_breaks().is_empty());

    // The same session, the next turn with one changed word in the system prompt.
    let (read2, created2) = mock_usage(&env, 2);
    let id = engine.session_id().clone();
    drop(engine);
    let mut engine = resume(&env, &id, &system_prompt("two"), false, &detector).await;
    turn(&mut engine, "third question").await;
    let (read3, _) = mock_usage(&env, 3);
    assert_eq!(read3, 0, "the mock missed the cache");
    assert_eq!(
        detector.take_breaks(),
        vec![CacheBreak {
            expected_tokens: read2 + created2,
            read_tokens: 0,
            cause: BreakCause::System,
        }]
    );

    // the transcript keeps one cache_hashes record per request, hashes only
    let read = read_transcript(engine.transcript_path()).await.unwrap();
    let notes: Vec<_> = read
        .records
        .iter()
        .filter(|r| r.kind.as_str() == CACHE_HASHES_KIND)
        .collect();
    assert_eq!(notes.len(), 3);
    let text = serde_json::to_string(&notes[2].data).unwrap();
    assert!(!text.contains("Guideline") && !text.contains("question"));
}

#[tokio::test]
async fn a_reordered_tool_is_named() {
    let env = env(MockClock::system()).await;
    let detector = Arc::new(CacheBreakDetector::new());
    let s = system_prompt("one");
    let mut engine = QueryEngine::new(config(&env, &s, false, detector.clone()))
        .await
        .unwrap();
    turn(&mut engine, "first question").await;
    let id = engine.session_id().clone();
    drop(engine);
    let mut engine = resume(&env, &id, &s, true, &detector).await;
    turn(&mut engine, "second question").await;
    assert_eq!(mock_usage(&env, 2).0, 0);
    let breaks = detector.take_breaks();
    assert_eq!(breaks.len(), 1);
    let BreakCause::Tools {
        changed,
        added,
        removed,
        reordered,
    } = &breaks[0].cause
    else {
        panic!("expected a tools break, got {:?}", breaks[0]);
    };
    assert!(reordered);
    assert!(changed.is_empty() && added.is_empty() && removed.is_empty());
    assert!(breaks[0].to_string().contains("reordered"));
}

#[tokio::test]
async fn no_alarm_when_the_cache_expired_and_nothing_changed() {
    let clock = MockClock::manual();
    let env = env(clock.clone()).await;
    let detector = Arc::new(CacheBreakDetector::new());
    let s = system_prompt("one");
    let mut engine = QueryEngine::new(config(&env, &s, false, detector.clone()))
        .await
        .unwrap();
    turn(&mut engine, "first question").await;
    clock.advance(Duration::from_secs(301));
    turn(&mut engine, "second question").await;
    assert_eq!(mock_usage(&env, 2).0, 0, "the entry expired on the mock");
    assert!(mock_usage(&env, 1).1 > 0);
    assert!(detector.take_breaks().is_empty());
}

#[tokio::test]
async fn a_resumed_session_compares_its_first_request_with_the_run_before() {
    let env = env(MockClock::system()).await;
    let s = system_prompt("one");
    let first_process = Arc::new(CacheBreakDetector::new());
    let mut engine = QueryEngine::new(config(&env, &s, false, first_process.clone()))
        .await
        .unwrap();
    turn(&mut engine, "first question").await;
    let id = engine.session_id().clone();
    drop(engine);

    // A new process: a fresh detector; nothing changed, so no alarm.
    let second_process = Arc::new(CacheBreakDetector::new());
    let mut engine = resume(&env, &id, &s, false, &second_process).await;
    let reference = second_process
        .reference()
        .expect("loaded from the transcript");
    let (read1, created1) = mock_usage(&env, 1);
    assert_eq!(
        reference.usage.cache_read_input_tokens + reference.usage.cache_creation_input_tokens,
        read1 + created1
    );
    turn(&mut engine, "second question").await;
    assert!(mock_usage(&env, 2).0 >= read1 + created1);
    assert!(second_process.take_breaks().is_empty());
    drop(engine);

    // Another process, with a changed system prompt: named against the last request before.
    let (read2, created2) = mock_usage(&env, 2);
    let third_process = Arc::new(CacheBreakDetector::new());
    let mut engine = resume(&env, &id, &system_prompt("two"), false, &third_process).await;
    turn(&mut engine, "third question").await;
    assert_eq!(
        third_process.take_breaks(),
        vec![CacheBreak {
            expected_tokens: read2 + created2,
            read_tokens: mock_usage(&env, 3).0,
            cause: BreakCause::System,
        }]
    );
}

/// The `cache_hashes` lines of a transcript, as written.
fn hashes_lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&format!("\"type\":\"{CACHE_HASHES_KIND}\"")))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn the_annotation_of_a_request_does_not_grow_with_the_session() {
    let env = env(MockClock::system()).await;
    let detector = Arc::new(CacheBreakDetector::new());
    let s = system_prompt("one");
    let mut engine = QueryEngine::new(config(&env, &s, false, detector.clone()))
        .await
        .unwrap();
    for i in 0..60 {
        turn(&mut engine, &format!("question {i}")).await;
    }
    let lines = hashes_lines(engine.transcript_path());
    assert_eq!(lines.len(), 60);
    // The envelope differs only by fixed-size ids; the payload by a few digits.
    let (at_10, at_60) = (lines[9].len(), lines[59].len());
    assert!(at_10.abs_diff(at_60) <= 8, "{at_10} vs {at_60} bytes");
    assert!(at_60 < 1000, "{at_60} bytes per request");
    assert!(detector.take_breaks().is_empty());

    // A new process still compares against the last request, rebuilt from those records.
    let id = engine.session_id().clone();
    drop(engine);
    let next = Arc::new(CacheBreakDetector::new());
    let mut engine = resume(&env, &id, &system_prompt("two"), false, &next).await;
    assert_eq!(next.reference().unwrap().fingerprint.messages.len(), 119);
    turn(&mut engine, "one more").await;
    let breaks = next.take_breaks();
    assert_eq!(breaks.len(), 1);
    assert_eq!(breaks[0].cause, BreakCause::System);
}

#[tokio::test]
async fn a_transcript_with_the_old_full_records_still_resumes_and_compares() {
    let env = env(MockClock::system()).await;
    let s = system_prompt("one");
    let live = Arc::new(CacheBreakDetector::new());
    let mut engine = QueryEngine::new(config(&env, &s, false, live.clone()))
        .await
        .unwrap();
    turn(&mut engine, "first question").await;
    turn(&mut engine, "second question").await;
    let path = engine.transcript_path().clone();
    let id = engine.session_id().clone();
    drop(engine);

    // Rewrite the file as the old format had it: each record a whole fingerprint.
    let reference = live.reference().unwrap();
    let old = serde_json::json!({
        "fingerprint": reference.fingerprint,
        "usage": reference.usage,
    });
    let rewritten: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            if value["type"] == CACHE_HASHES_KIND {
                value["data"] = old.clone();
            }
            value.to_string()
        })
        .collect();
    std::fs::write(&path, rewritten.join("\n") + "\n").unwrap();

    let next = Arc::new(CacheBreakDetector::new());
    let mut engine = resume(&env, &id, &system_prompt("two"), false, &next).await;
    assert_eq!(next.reference().unwrap(), reference);
    assert_eq!(engine.messages().len(), 4);
    turn(&mut engine, "third question").await;
    let breaks = next.take_breaks();
    assert_eq!(breaks.len(), 1, "{breaks:?}");
    assert_eq!(breaks[0].cause, BreakCause::System);
}
