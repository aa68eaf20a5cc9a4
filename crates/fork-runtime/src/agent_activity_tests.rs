use serde_json::json;
use tine_api_client::{Message, Usage};
use tine_tools::ChannelProgress;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::tasks::TaskKind;

fn reply(calls: &[(&str, serde_json::Value)], input_tokens: u64) -> QueryEvent {
    let mut blocks = vec![ContentBlock::text("Looking.")];
    for (i, (tool, input)) in calls.iter().enumerate() {
        blocks.push(ContentBlock::tool_use(
            format!("toolu_{i}"),
            *tool,
            input.clone(),
        ));
    }
    QueryEvent::AssistantMessage {
        message: Message::assistant(blocks),
        uuid: "u1".into(),
        id: "msg_1".into(),
        stop_reason: None,
        usage: Usage {
            input_tokens,
            output_tokens: 10,
            ..Usage::default()
        },
        model: "claude-haiku-4-5".into(),
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    tasks: TaskRegistry,
    id: String,
    reports: tokio::sync::mpsc::UnboundedReceiver<ToolProgress>,
    activity: Arc<AgentActivity>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let tasks = TaskRegistry::new(dir.path().join("tasks"));
    let (id, _output) = tasks
        .register(TaskKind::Agent, "find it", false, CancellationToken::new())
        .unwrap();
    let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
    let call = ToolContext::new(dir.path()).with_progress(Arc::new(ChannelProgress(tx)));
    let activity = AgentActivity::new(&id, tasks.clone(), Some(call));
    Fixture {
        _dir: dir,
        tasks,
        id,
        reports,
        activity,
    }
}

fn lines(activity: &SubagentActivity) -> Vec<String> {
    activity
        .recent
        .iter()
        .map(|c| format!("{}({})", c.tool, c.summary))
        .collect()
}

#[tokio::test]
async fn each_reply_tells_the_call_and_the_task_its_latest_calls() {
    let mut f = fixture();
    f.activity.observe(&reply(
        &[
            ("Read", json!({"file_path": "/p/src/config.rs"})),
            ("Grep", json!({"pattern": "load_settings"})),
        ],
        1200,
    ));
    let report = f.reports.try_recv().expect("the call hears of the reply");
    assert_eq!(report.tool, "Agent");
    let progress = report.subagent.expect("a sub-agent's progress");
    assert_eq!(progress.agent_id, f.id);
    assert_eq!(
        lines(&progress.activity),
        ["Read(/p/src/config.rs)", "Grep(load_settings)"]
    );
    assert_eq!(progress.activity.totals.tool_uses, 2);
    assert_eq!(progress.activity.totals.total_tokens, 1210);
    assert!(
        matches!(&progress.step, SubagentStep::Reply { id, model, .. }
            if id == "msg_1" && model == "claude-haiku-4-5"),
        "{:?}",
        progress.step
    );
    let task = f.tasks.get(&f.id).unwrap();
    assert_eq!(task.activity.as_ref(), Some(&progress.activity));

    // Tool results reach the call as a step of their own; the totals stay.
    f.activity.observe(&QueryEvent::UserMessage {
        message: Message::user(vec![ContentBlock::tool_result(
            "toolu_0",
            "fn load()",
            false,
        )]),
        uuid: "u2".into(),
    });
    let progress = f.reports.try_recv().unwrap().subagent.unwrap();
    assert!(matches!(progress.step, SubagentStep::User { .. }));
    assert_eq!(progress.activity.totals.tool_uses, 2);

    // Events that add no message tell nobody.
    f.activity
        .observe(&QueryEvent::TextDelta { text: "x".into() });
    assert!(f.reports.try_recv().is_err());
}

#[tokio::test]
async fn only_the_latest_calls_are_listed_the_rest_counted() {
    let mut f = fixture();
    for i in 0..5 {
        f.activity.observe(&reply(
            &[("Read", json!({"file_path": format!("f{i}.rs")}))],
            100,
        ));
    }
    let mut last = None;
    while let Ok(report) = f.reports.try_recv() {
        last = report.subagent;
    }
    let activity = &last.unwrap().activity;
    assert_eq!(
        lines(activity),
        ["Read(f2.rs)", "Read(f3.rs)", "Read(f4.rs)"]
    );
    assert_eq!(activity.totals.tool_uses, 5);
    assert_eq!(activity.more(), 2);
}

#[tokio::test]
async fn a_detached_agent_tells_only_its_task() {
    let mut f = fixture();
    f.activity.detach();
    f.activity
        .observe(&reply(&[("Glob", json!({"pattern": "**/*.rs"}))], 50));
    assert!(f.reports.try_recv().is_err(), "the call has returned");
    let task = f.tasks.get(&f.id).unwrap();
    assert_eq!(lines(task.activity.as_ref().unwrap()), ["Glob(**/*.rs)"]);
    assert_eq!(f.activity.totals().tool_uses, 1);
}

#[test]
fn a_long_or_multiline_argument_is_one_short_line() {
    assert_eq!(cut("cat <<EOF\nx\nEOF".to_owned()), "cat <<EOF x EOF");
    let long = cut("é".repeat(SUMMARY_CHARS + 5));
    assert_eq!(long.chars().count(), SUMMARY_CHARS + 1);
    assert!(long.ends_with('…'));
    assert_eq!(cut("ls".to_owned()), "ls");
}
