//! Auto dream through the real binary: after five sessions of a project (transcripts present,
//! the last consolidation two days old), the sixth `-p` run consolidates on its own prompt
//! cache and says so in stream-json; `tine memory dream` consolidates on demand, shows its
//! progress, and refuses while another session holds the lock. The auto dream runs over both
//! wires (`both_wires!`): on chat completions with the session's model, read from the server's
//! prefix cache.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_memory::{Acquire, ConsolidationLock, DREAM_MARKER, INDEX_FILE, default_memory_dir};

use super::wire::{Wire, both_wires, tine_on};
use super::{mock, tine};

both_wires!(the_sixth_session_dreams_on_its_cache_and_says_so_in_stream_json);

/// The model: a dream writes one merged memory and the index, then says it is done.
fn dreaming_model() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_regex(r"Consolidate the auto memory in `(?P<dir>[^`]+)`")
                .unwrap()
                .reply(
                    Reply::text("Consolidating.")
                        .with_tool_use(
                            "Write",
                            json!({
                                "file_path": "${dir}/project_stack.md",
                                "content": "---\nname: Project stack\ndescription: React 18, PostgreSQL\ntype: project\n---\n\nReact 18 frontend, PostgreSQL database (as of 2026-04-20).\n",
                            }),
                        )
                        .with_tool_use(
                            "Write",
                            json!({
                                "file_path": format!("${{dir}}/{INDEX_FILE}"),
                                "content": "- [Project stack](project_stack.md) — React 18, PostgreSQL\n",
                            }),
                        ),
                ),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("Merged the stack memories.")),
        )
        .default_reply(Reply::text("OK."))
}

fn memory_dir(project: &Project) -> PathBuf {
    default_memory_dir(project.home(), project.cwd())
}

fn dream_requests(server: &MockServer) -> Vec<tine_e2e::tine_mock_api::RequestRecord> {
    server
        .requests()
        .into_iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains(DREAM_MARKER))
        .collect()
}

/// A consolidation two days ago, recorded as a dream records it.
fn consolidated_two_days_ago(mem: &std::path::Path) -> SystemTime {
    std::fs::create_dir_all(mem).unwrap();
    let when = SystemTime::now() - Duration::from_secs(48 * 3_600);
    match ConsolidationLock::try_acquire(mem, |_| true).unwrap() {
        Acquire::Acquired(lock) => lock.commit(when).unwrap(),
        other => panic!("{other:?}"),
    }
    when
}

async fn the_sixth_session_dreams_on_its_cache_and_says_so_in_stream_json(wire: Wire) {
    let server = mock(dreaming_model()).await;
    let project = Project::new();
    let mem = memory_dir(&project);
    let before = consolidated_two_days_ago(&mem);

    for i in 0..5 {
        tine_on(wire, &project, &server)
            .env_remove("TINE_DISABLE_AUTO_MEMORY")
            .args(["-p", &format!("session {i}: this project uses React 18")])
            .run()
            .await
            .assert_success();
    }
    assert!(
        dream_requests(&server).is_empty(),
        "too few sessions so far"
    );
    let sessions = std::fs::read_dir(project.transcripts_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .count();
    assert_eq!(sessions, 5);

    let out = tine_on(wire, &project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args([
            "-p",
            "and PostgreSQL for the database",
            "--output-format",
            "stream-json",
        ])
        .run()
        .await;
    out.assert_success();
    let lines = out.json_lines();
    let dream = lines
        .iter()
        .find(|l| l["type"] == "system" && l["subtype"] == "dream")
        .unwrap_or_else(|| panic!("no dream line in {lines:#?}"));
    assert_eq!(dream["status"], "finished", "{dream}");
    assert_eq!(dream["data"]["status"], "completed", "{dream}");
    assert_eq!(dream["data"]["sessions_reviewed"], 5, "{dream}");
    assert_eq!(
        dream["summary"],
        "improved 1 memory and the index: project_stack.md"
    );
    assert_eq!(lines.last().unwrap()["type"], "result");
    // The result counts the dream's requests under their own source.
    let result = lines.last().unwrap();
    assert!(
        result["usage_by_source"]["auto_dream"]["requests"].as_u64() >= Some(2),
        "{result}"
    );

    // Dated now; the memory is there.
    let mtime = std::fs::metadata(ConsolidationLock::path(&mem))
        .unwrap()
        .modified()
        .unwrap();
    assert!(mtime > before + Duration::from_secs(47 * 3_600));
    let index = std::fs::read_to_string(mem.join(INDEX_FILE)).unwrap();
    assert_eq!(
        index,
        "- [Project stack](project_stack.md) — React 18, PostgreSQL\n"
    );

    // Its first request read the parent's whole cached prefix.
    let log = server.requests();
    let dreams = dream_requests(&server);
    let first = &dreams[0];
    let parent = log
        .iter()
        .rev()
        .find(|r| {
            r.number < first.number
                && String::from_utf8_lossy(&r.body).contains("and PostgreSQL for the database")
                && !String::from_utf8_lossy(&r.body).contains("<memory-")
        })
        .expect("the parent's request")
        .usage
        .unwrap();
    // What the server holds of the parent's prompt once it answered: on the Messages API the
    // prefix up to its breakpoints, on chat completions (automatic prefix caching) all of it.
    let parent_cached = match wire {
        Wire::Anthropic => parent.cache_read_input_tokens + parent.cache_creation_input_tokens,
        Wire::OpenAi => parent.prompt_tokens(),
    };
    assert_eq!(
        first.json().unwrap()["model"],
        wire.model(),
        "the dream uses the session's model"
    );
    let usage = first.usage.unwrap();
    assert!(parent_cached > 0, "{parent:?}");
    assert!(
        usage.cache_read_input_tokens >= parent_cached,
        "the dream read {} of the parent's {parent_cached} cached tokens",
        usage.cache_read_input_tokens
    );
    let total =
        usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.input_tokens;
    println!(
        "tine -p dream ({wire:?}), first request: {} of {total} prompt tokens read from the cache ({:.1}%)",
        usage.cache_read_input_tokens,
        100.0 * usage.cache_read_input_tokens as f64 / total as f64
    );

    // The next session: just consolidated, no dream.
    tine_on(wire, &project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["-p", "thanks"])
        .run()
        .await
        .assert_success();
    assert_eq!(dream_requests(&server).len(), dreams.len());

    // Two days later, in text mode: the dream's line is on stderr.
    consolidated_two_days_ago(&mem);
    let out = tine_on(wire, &project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["-p", "anything new?"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(dream_requests(&server).len(), dreams.len() + 2);
    assert!(out.stderr.contains("tine: dream: "), "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "OK.");
}

#[tokio::test]
async fn tine_memory_dream_runs_now_shows_progress_and_respects_the_lock() {
    let server = mock(dreaming_model()).await;
    let project = Project::new();
    let mem = memory_dir(&project);
    let before = consolidated_two_days_ago(&mem);
    let dream = || {
        tine(&project, &server)
            .env_remove("TINE_DISABLE_AUTO_MEMORY")
            .args(["memory", "dream"])
    };

    // Another session holds the lock: refused, naming it.
    let held = match ConsolidationLock::try_acquire(&mem, |_| true).unwrap() {
        Acquire::Acquired(lock) => lock,
        other => panic!("{other:?}"),
    };
    let out = dream().run().await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "another tine session is consolidating this memory now (PID {})",
            std::process::id()
        )),
        "{}",
        out.stderr
    );
    assert!(dream_requests(&server).is_empty());
    drop(held);

    // No sessions at all and consolidated two days ago: it runs anyway.
    let out = dream().run().await;
    out.assert_success();
    assert!(
        out.stderr.contains("no session's prompt cache to share"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("dream: reviewing 0 session(s)"));
    assert!(out.stderr.contains("dream: updating project_stack.md"));
    assert!(out.stderr.contains("dream: updating MEMORY.md"));
    assert!(
        out.stdout
            .starts_with("dream: improved 1 memory and the index: project_stack.md (2 request(s)"),
        "{}",
        out.stdout
    );
    let mtime = std::fs::metadata(ConsolidationLock::path(&mem))
        .unwrap()
        .modified()
        .unwrap();
    assert!(mtime > before + Duration::from_secs(47 * 3_600));
    let bodies: Vec<Value> = dream_requests(&server)
        .iter()
        .filter_map(|r| r.json())
        .collect();
    // The real system prompt and tool array, no conversation before the prompt.
    assert_eq!(bodies[0]["messages"].as_array().unwrap().len(), 1);
    assert!(bodies[0]["tools"].as_array().unwrap().len() >= 5);
    assert!(bodies[0]["system"].to_string().contains("tine"));
    // No transcript: a dream is not a session.
    assert!(
        !project.transcripts_dir().exists()
            || std::fs::read_dir(project.transcripts_dir())
                .unwrap()
                .flatten()
                .all(|e| e.path().extension().is_none_or(|x| x != "jsonl"))
    );
}
