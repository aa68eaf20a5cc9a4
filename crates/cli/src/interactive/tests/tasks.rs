//! Background work through the UI on the real session: Notification `idle_prompt` once the
//! prompt has waited after a turn, a dream killed from the tasks panel (its lock's mtime
//! rolled back), a background agent listed in the panel and its report delivered as the next
//! turn's input.

use std::time::{Duration, SystemTime};

use crossterm::event::{KeyCode, KeyModifiers};
use serde_json::json;
use tine_memory::{Acquire, ConsolidationLock, DREAM_MARKER, default_memory_dir};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_session::Resume;
use tine_tui::{TaskKind, TaskStatus, UiEvent};

use super::super::start;
use super::{Ui, World, hook_inputs, hook_inputs_eventually, settle};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_prompt_after_a_turn_runs_the_notification_hook_once() {
    let world = World::new();
    let settings = json!({"hooks": {"Notification": [{"matcher": "idle_prompt", "hooks": [
        {"type": "command", "command": "{ cat; echo; } >> idle.jsonl"}]}]}});
    std::fs::create_dir_all(world.cwd.join(".tine")).unwrap();
    std::fs::write(world.cwd.join(".tine/settings.json"), settings.to_string()).unwrap();
    let server = MockServer::start(MockConfig::new(
        Scenario::new().default_reply(Reply::text("Hi.")),
    ))
    .await
    .unwrap();
    let mut started = start(&world.launch(&server), Resume::New).await.unwrap();
    // The minute of idleness, shortened; nothing asserts on how long it took.
    started.driver.idle_flush = Duration::from_millis(200);
    let mut ui = Ui::start(started);
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
    let server = MockServer::start(MockConfig::new(scenario)).await.unwrap();
    let mut launch = world.launch(&server);
    launch.bare = false;
    let started = start(&launch, Resume::New).await.unwrap();
    let mut ui = Ui::start(started);

    ui.type_line("this project uses React 18");
    let dreaming = |e: &UiEvent| match e {
        UiEvent::Task(task) if task.id == "auto_dream" && task.status == TaskStatus::Running => {
            Some(())
        }
        _ => None,
    };
    ui.until(dreaming).await;
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
        .until(|e| match e {
            UiEvent::Task(task)
                if task.id == "auto_dream" && task.status != TaskStatus::Running =>
            {
                Some(task.status.clone())
            }
            _ => None,
        })
        .await;
    assert!(
        seen.iter().any(|e| matches!(e,
            UiEvent::Notice { text, .. } if text == "dream killed; its lock was rolled back")),
        "{seen:#?}"
    );
    assert!(
        !matches!(ended, TaskStatus::Finished { ref summary } if summary.starts_with("improved")),
        "{ended:?}"
    );
    assert_eq!(
        lock_mtime(),
        before,
        "the next eligible session consolidates"
    );
    let (_, screen, _) = {
        // The panel has the keys until it is closed.
        ui.key(KeyCode::Esc, KeyModifiers::NONE);
        ui.exit().await
    };
    assert!(screen.contains("dream killed"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_agent_is_in_the_tasks_panel_and_its_report_is_the_next_turn() {
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
    let server = MockServer::start(MockConfig::new(scenario)).await.unwrap();
    let started = start(&world.launch(&server), Resume::New).await.unwrap();
    let mut ui = Ui::start(started);

    ui.type_line("delegate the survey");
    let (agent, _) = ui
        .until(|e| match e {
            UiEvent::Task(task) if task.kind == TaskKind::Agent => Some(task.clone()),
            _ => None,
        })
        .await;
    assert_eq!(agent.title, "module survey");
    assert!(agent.id.starts_with("a_"), "{agent:?}");
    // Listed as it runs or once it is done (a quick agent is done by the next look).
    let (_, seen) = ui
        .until(|e| match e {
            UiEvent::Notice { text, .. }
                if text == "agent \"module survey\" completed; its report goes to the model" =>
            {
                Some(())
            }
            _ => None,
        })
        .await;
    assert!(
        std::iter::once(&UiEvent::Task(agent.clone()))
            .chain(&seen)
            .any(|e| matches!(e, UiEvent::Task(t)
                if t.id == agent.id && matches!(t.status, TaskStatus::Finished { .. }))),
        "{seen:#?}"
    );
    // The report is the next turn's input, and the model answers it.
    let (_, turn) = ui.turn_end().await;
    assert!(turn.contains(&UiEvent::TurnStarted), "{turn:#?}");
    let text: String = turn
        .iter()
        .filter_map(|e| match e {
            UiEvent::TextDelta(t) => Some(t.as_str()),
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
    ui.exit().await;
}
