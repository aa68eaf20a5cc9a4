use serde_json::json;
use tine_api_client::Usage;

use super::*;
use crate::fork_changes::billed_equivalent_input;
use crate::memdir::DirSource;

fn job() -> (tempfile::TempDir, ExtractionJob) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = MemoryDir::new(tmp.path().join("memory"), DirSource::Default);
    (tmp, ExtractionJob::new(dir).unwrap())
}

fn conversation(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(vec![ContentBlock::text(format!("question {i}"))])
            } else {
                Message::assistant(vec![ContentBlock::text(format!("answer {i}"))])
            }
        })
        .collect()
}

#[test]
fn the_cursor_counts_only_new_messages_and_all_after_compaction() {
    let (_tmp, job) = job();
    let inner = job.job.work();
    let mut messages = conversation(4);
    assert_eq!(inner.new_messages_start(&messages), 0);
    inner.move_cursor(&messages);
    assert_eq!(inner.new_messages_start(&messages), 4);
    messages.extend(conversation(2));
    assert_eq!(inner.new_messages_start(&messages), 4);
    // compaction: the history was rewritten, the message at the cursor is another one
    let compacted = vec![
        Message::user(vec![ContentBlock::text("summary of earlier work")]),
        Message::assistant(vec![ContentBlock::text("ok")]),
        Message::user(vec![ContentBlock::text("next")]),
        Message::assistant(vec![ContentBlock::text("done")]),
        Message::user(vec![ContentBlock::text("more")]),
    ];
    assert_eq!(inner.new_messages_start(&compacted), 0);
    // shorter than the cursor
    assert_eq!(inner.new_messages_start(&conversation(2)), 0);
}

#[test]
fn snapshots_diff_new_and_changed_markdown_files() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("a.md"), "a").unwrap();
    std::fs::write(d.join("b.md"), "b").unwrap();
    let before = snapshot(d);
    std::fs::write(d.join("b.md"), "b2").unwrap();
    std::fs::write(d.join("c.md"), "c").unwrap();
    std::fs::write(d.join(".lock.md"), "x").unwrap();
    std::fs::write(d.join("d.txt"), "x").unwrap();
    assert_eq!(diff(&before, &snapshot(d)), ["b.md", "c.md"]);
}

#[test]
fn the_outcome_names_the_saved_files_and_the_cache_figures() {
    let (_tmp, job) = job();
    let outcome = |reports: &[RunReport], error: Option<ExtractError>| {
        job.job.work().outcome(reports.to_vec(), error)
    };
    let run = |files: &[&str], read: u64| {
        RunReport::Extracted(Box::new(ForkRun {
            new_messages: 2,
            files: files.iter().map(|s| (*s).to_owned()).collect(),
            index_updated: true,
            usage: Usage {
                input_tokens: 100,
                cache_read_input_tokens: read,
                cache_creation_input_tokens: 50,
                output_tokens: 10,
                ..Usage::default()
            },
            first_request_usage: None,
            cost_usd: 0.01,
            requests: 2,
        }))
    };
    let o = outcome(&[run(&["project_stack.md", "user_role.md"], 5000)], None);
    assert_eq!(
        o.summary,
        "saved 2 memories: project_stack.md, user_role.md"
    );
    assert_eq!(
        o.data()["files"],
        json!(["project_stack.md", "user_role.md"])
    );
    assert_eq!(o.data()["usage"]["read_from_cache"], 5000);
    assert_eq!(o.data()["usage"]["billed_in_full"], 150);
    let o = outcome(&[run(&["a.md"], 1), run(&["a.md", "b.md"], 1)], None);
    assert_eq!(o.summary, "saved 2 memories: a.md, b.md");
    assert_eq!(o.data()["runs"].as_array().unwrap().len(), 2);
    let o = outcome(&[run(&["a.md"], 1)], None);
    assert_eq!(o.summary, "saved 1 memory: a.md");
    let o = outcome(
        &[RunReport::SkippedMainAgentWrote { new_messages: 3 }],
        None,
    );
    assert_eq!(o.summary, "");
    assert_eq!(o.data()["status"], "skipped_main_agent_wrote");
    assert_eq!(
        billed_equivalent_input(&Usage {
            input_tokens: 10,
            cache_creation_input_tokens: 100,
            cache_read_input_tokens: 1000,
            ..Usage::default()
        }),
        10.0 + 125.0 + 100.0
    );
}

#[test]
fn memories_the_index_in_the_first_message_links_are_in_context() {
    let context = "# auto memory\n- [Project stack](project_stack.md) — React 18, PostgreSQL";
    let messages = vec![
        Message::user(vec![
            ContentBlock::text(context),
            ContentBlock::text("hello"),
        ]),
        Message::assistant(vec![ContentBlock::text("see [x](user_role.md)")]),
    ];
    assert!(listed_in_context(&messages, "project_stack.md"));
    // Only the first message holds the session's index; a link later on does not count.
    assert!(!listed_in_context(&messages, "user_role.md"));
    assert!(!listed_in_context(&messages, "stack.md"));
    assert!(!listed_in_context(&[], "project_stack.md"));
}

/// The outcome's JSON as `stream-json` printed it when the job built it by hand: the same keys
/// in the same order, the same numbers.
#[test]
fn the_outcome_prints_the_bytes_stream_json_has_always_shown() {
    fn usage_json(usage: &Usage) -> serde_json::Value {
        json!({
            "input_tokens": usage.input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "output_tokens": usage.output_tokens,
            "read_from_cache": usage.cache_read_input_tokens,
            "billed_in_full": usage.input_tokens + usage.cache_creation_input_tokens,
            "billed_equivalent_input": billed_equivalent_input(usage),
        })
    }
    fn report_json(report: &RunReport) -> serde_json::Value {
        match report {
            RunReport::NothingNew => json!({"status": "nothing_new"}),
            RunReport::SkippedMainAgentWrote { new_messages } => {
                json!({"status": "skipped_main_agent_wrote", "new_messages": new_messages})
            }
            RunReport::NothingToLearn { new_messages } => {
                json!({"status": "nothing_to_learn", "new_messages": new_messages})
            }
            RunReport::Extracted(run) => json!({
                "status": "extracted",
                "new_messages": run.new_messages,
                "files": run.files,
                "index_updated": run.index_updated,
                "requests": run.requests,
                "cost_usd": run.cost_usd,
                "usage": usage_json(&run.usage),
                "first_request_usage": run.first_request_usage.as_ref().map(usage_json),
            }),
        }
    }
    let usage = Usage {
        input_tokens: 120,
        cache_read_input_tokens: 9000,
        cache_creation_input_tokens: 40,
        output_tokens: 33,
        ..Usage::default()
    };
    let extracted = |first: Option<Usage>| {
        RunReport::Extracted(Box::new(ForkRun {
            new_messages: 4,
            files: vec!["project_stack.md".into()],
            index_updated: true,
            usage,
            first_request_usage: first,
            cost_usd: 0.012_345,
            requests: 1,
        }))
    };
    let (_tmp, job) = job();
    for (reports, error) in [
        (vec![extracted(Some(usage))], None),
        (
            vec![
                RunReport::NothingNew,
                RunReport::SkippedMainAgentWrote { new_messages: 2 },
                RunReport::NothingToLearn { new_messages: 3 },
                extracted(None),
            ],
            Some("the memory scan task failed: gone"),
        ),
    ] {
        let mut total = Usage::default();
        let mut files: Vec<String> = Vec::new();
        for report in &reports {
            if let RunReport::Extracted(run) = report {
                total += run.usage;
                files.extend(
                    run.files
                        .iter()
                        .filter(|f| !files.contains(f))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
            }
        }
        let old = json!({
            "status": "extracted",
            "files": files,
            "index_updated": true,
            "usage": usage_json(&total),
            "runs": reports.iter().map(report_json).collect::<Vec<_>>(),
            "error": error,
        });
        let outcome = job.job.work().outcome(
            reports,
            error.map(|e| {
                ExtractError::Join(
                    e.trim_start_matches("the memory scan task failed: ")
                        .to_owned(),
                )
            }),
        );
        assert_eq!(
            serde_json::to_string(&outcome.data()).unwrap(),
            serde_json::to_string(&old).unwrap()
        );
    }
    assert_eq!(
        serde_json::to_string(&tine_fork_runtime::JobOutcome::not_run("stashed").data()).unwrap(),
        r#"{"status":"stashed"}"#
    );
}
