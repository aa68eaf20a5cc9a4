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
