//! Background work through the UI on the real session: a background shell in the tasks panel
//! until it ends, `/compact`'s card, the status line starting over after `/clear`, the idle
//! hint (Notification `idle_prompt` once the prompt has waited after a turn), a dream killed
//! from the tasks panel (its lock's mtime rolled back), a background agent listed in the
//! panel and its report delivered as a turn of the session's own.

use std::time::SystemTime;

use tine_memory::{Acquire, ConsolidationLock, DREAM_MARKER, default_memory_dir};
use tine_session::{BackgroundEvent, CompactBoundary, StoppedTask, TaskKind, TaskState};

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_shells_compact_and_the_status_line_after_clear() {
    let world = World::new();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("start the watcher")
                .reply(Reply::text("Starting.").with_tool_use(
                    "Bash",
                    json!({"command": "sleep 1; echo ready", "run_in_background": true}),
                )),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("Started.")),
        )
        .rule(
            Rule::new()
                .last_user_contains("<summary>")
                .reply(Reply::text(
                    "<summary>1. The user started a watcher.</summary>",
                )),
        )
        .default_reply(Reply::text("Here is **bold** text."));
    let server = mock(scenario).await;
    let mut ui = Ui::start(world.options(&server)).await;

    // `sleep` and `echo` read only: no question.
    ui.type_line("start the watcher");
    let (running, _) = ui
        .until(|e| match &e.msg {
            SessionEvent::Task(task) if task.kind == TaskKind::Shell => Some(task.clone()),
            _ => None,
        })
        .await;
    assert_eq!(running.state, TaskState::Running);
    assert_eq!(running.title, "sleep 1; echo ready");
    ui.turn_end().await;
    settle().await;
    assert!(
        ui.screen().contains("1 background task (ctrl+t)"),
        "{}",
        ui.screen()
    );
    let (ended, _) = ui
        .until(|e| match &e.msg {
            SessionEvent::Task(task) if task.id == running.id && task.state != running.state => {
                Some(task.state.clone())
            }
            _ => None,
        })
        .await;
    assert_eq!(ended, TaskState::Completed);

    ui.type_line("/compact");
    let (card, seen) = ui
        .until(|e| match &e.msg {
            SessionEvent::CommandOutput(output) if output.command == "compact" => {
                let boundary = output.data["compact_boundary"].clone();
                Some(
                    serde_json::from_value::<CompactBoundary>(boundary)
                        .map_err(|_| output.text.clone()),
                )
            }
            _ => None,
        })
        .await;
    let card = card.unwrap_or_else(|text| panic!("{text} after {seen:?}"));
    assert_eq!(card.trigger.as_str(), "manual");
    assert!(card.messages_summarized > 0, "{card:?}");
    ui.turn_end().await;
    settle().await;
    assert!(
        ui.screen().contains("✻ Conversation compacted (/compact)"),
        "{}",
        ui.screen()
    );

    ui.type_line("/clear");
    ui.until(|e| match &e.msg {
        SessionEvent::Usage(usage) if usage.cost.total().cost_usd == 0.0 => Some(()),
        _ => None,
    })
    .await;
    let (_, ended) = ui.exit().await;
    let status = ended
        .screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap();
    assert!(
        status.contains("$0.00") && !status.contains("context"),
        "the status line still shows the previous conversation: {status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_prompt_after_a_turn_runs_the_notification_hook_once() {
    let world = World::new();
    let settings = json!({"hooks": {"Notification": [{"matcher": "idle_prompt", "hooks": [
        {"type": "command", "command": "{ cat; echo; } >> idle.jsonl"}]}]}});
    std::fs::create_dir_all(world.cwd.join(".tine")).unwrap();
    std::fs::write(world.cwd.join(".tine/settings.json"), settings.to_string()).unwrap();
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    // The minute of idleness, shortened; nothing asserts on how long it took.
    let config = AppConfig {
        idle_after: Duration::from_millis(200),
        ..AppConfig::default()
    };
    let mut ui = Ui::start_with(world.options(&server), config).await;
    settle().await;
    assert!(
        hook_inputs(&world.cwd, "idle.jsonl").is_empty(),
        "no turn has ended yet: nothing to wait for"
    );

    ui.type_line("hello");
    ui.turn_end().await;
    let inputs = hook_inputs_eventually(&world.cwd, "idle.jsonl", 1).await;
    assert_eq!(inputs[0]["hook_event_name"], "Notification");
    assert_eq!(inputs[0]["notification_type"], "idle_prompt");
    assert_eq!(inputs[0]["message"], "tine is waiting for your input");
    settle().await;
    ui.exit().await;
    assert_eq!(
        hook_inputs(&world.cwd, "idle.jsonl").len(),
        1,
        "once per idle stretch"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dream_killed_from_the_tasks_panel_rolls_its_lock_back() {
    let world = World::new();
    let mem = default_memory_dir(&world.home, &world.cwd);
    std::fs::create_dir_all(&mem).unwrap();
    let before = SystemTime::now() - Duration::from_secs(48 * 3_600);
    match ConsolidationLock::try_acquire(&mem, |_| true).unwrap() {
        Acquire::Acquired(lock) => lock.commit(before).unwrap(),
        other => panic!("{other:?}"),
    }
    let lock_mtime = || {
        std::fs::metadata(ConsolidationLock::path(&mem))
            .unwrap()
            .modified()
            .unwrap()
    };
    let before = lock_mtime();
    // Five earlier sessions of the project since that consolidation.
    let transcripts = tine_config::transcript_path(
        &world.home,
        &world.cwd,
        &tine_config::SessionId::new_random(),
    );
    let dir = transcripts.parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    for _ in 0..5 {
        let id = tine_config::SessionId::new_random();
        std::fs::write(dir.join(format!("{id}.jsonl")), "").unwrap();
    }
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(DREAM_MARKER)
                .reply(Reply::text(&"pondering ".repeat(400)).chunk_delay_ms(50)),
        )
        .default_reply(Reply::text("Noted."));
    let server = mock(scenario).await;
    let mut options = world.options(&server);
    options.bare = false;
    let mut ui = Ui::start(options).await;

    ui.type_line("this project uses React 18");
    ui.until(|e| match &e.msg {
        SessionEvent::Background(BackgroundEvent::Started { job }) if job == "auto_dream" => {
            Some(())
        }
        _ => None,
    })
    .await;
    // The dream's request is streaming when the person stops it.
    for _ in 0..300 {
        let asked = server
            .requests()
            .iter()
            .any(|r| String::from_utf8_lossy(&r.body).contains(DREAM_MARKER));
        if asked {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    settle().await;
    ui.key(KeyCode::Char('t'), KeyModifiers::CONTROL);
    ui.key(KeyCode::Char('k'), KeyModifiers::NONE);
    let (ended, seen) = ui
        .until(|e| match &e.msg {
            SessionEvent::Background(event @ BackgroundEvent::Finished { job, .. })
            | SessionEvent::Background(event @ BackgroundEvent::Failed { job, .. })
            | SessionEvent::Background(event @ BackgroundEvent::Cancelled { job })
                if job == "auto_dream" =>
            {
                Some(event.clone())
            }
            _ => None,
        })
        .await;
    assert!(
        seen.iter()
            .any(|e| matches!(e.msg, SessionEvent::TaskStopped(StoppedTask::Dream))),
        "{seen:#?}"
    );
    assert!(
        !matches!(&ended, BackgroundEvent::Finished { outcome, .. }
            if outcome.summary.starts_with("improved")),
        "{ended:?}"
    );
    assert_eq!(
        lock_mtime(),
        before,
        "the next eligible session consolidates"
    );
    // The panel has the keys until it is closed.
    ui.key(KeyCode::Esc, KeyModifiers::NONE);
    let (_, ended) = ui.exit().await;
    assert!(
        ended
            .screen
            .contains("dream killed; its lock was rolled back"),
        "{}",
        ended.screen
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_agent_is_in_the_tasks_panel_and_its_report_is_a_turn_of_its_own() {
    let world = World::new();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("<task-notification>")
                .reply(Reply::text("The survey found three modules.")),
        )
        .rule(
            Rule::new()
                .last_user_contains("survey the modules")
                .reply(Reply::text("Three modules: a, b, c.")),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("The survey runs in the background.")),
        )
        .rule(Rule::new().last_user_contains("delegate").reply(
            Reply::text("Delegating.").with_tool_use(
                "Agent",
                json!({"description": "module survey", "prompt": "survey the modules",
                        "subagent_type": "general-purpose", "run_in_background": true}),
            ),
        ))
        .default_reply(Reply::text("OK."));
    let server = mock(scenario).await;
    let mut ui = Ui::start(world.options(&server)).await;

    ui.type_line("delegate the survey");
    let (agent, _) = ui
        .until(|e| match &e.msg {
            SessionEvent::Task(task) if task.kind == TaskKind::Agent => Some(task.clone()),
            _ => None,
        })
        .await;
    assert_eq!(agent.title, "module survey");
    assert!(agent.id.starts_with("a_"), "{agent:?}");
    // Listed as it runs or once it is done (a quick agent is done by the next look).
    let (reports, seen) = ui
        .until(|e| match &e.msg {
            SessionEvent::AgentReports(reports) => Some(reports.clone()),
            _ => None,
        })
        .await;
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].description, "module survey");
    assert_eq!(reports[0].state, TaskState::Completed);
    // The report is the model's next input, in a turn the session starts itself.
    let (_, turn) = ui.turn_end().await;
    // The panel hears of the end too (the session watches its tasks beside the reports).
    let done =
        |task: &tine_session::TaskUpdate| task.id == agent.id && task.state == TaskState::Completed;
    assert!(
        done(&agent)
            || seen
                .iter()
                .chain(&turn)
                .any(|e| matches!(&e.msg, SessionEvent::Task(t) if done(t))),
        "{seen:#?} {turn:#?}"
    );
    assert!(
        turn.iter()
            .any(|e| matches!(e.msg, SessionEvent::TurnStarted)),
        "{turn:#?}"
    );
    let text: String = turn
        .iter()
        .filter_map(|e| match &e.msg {
            SessionEvent::Query(tine_session::QueryEvent::TextDelta { text }) => {
                Some(text.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(text, "The survey found three modules.");
    let report = server
        .requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .find(|b| b.contains("<task-id>"))
        .expect("the report reached the model");
    assert!(report.contains(&agent.id), "{report}");
    assert!(report.contains("Three modules: a, b, c."), "{report}");
    let (_, ended) = ui.exit().await;
    assert!(
        ended
            .screen
            .contains("agent \"module survey\" completed; its report goes to the model"),
        "{}",
        ended.screen
    );
}
