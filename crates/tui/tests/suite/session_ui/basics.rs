//! A session through the UI: streaming, the permission dialog (once, reject, always with the
//! rule saved), interrupt, the queue, the session's commands, `/clear`, the prompt history
//! file; a stuck model asked about.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_through_the_ui_streams_asks_interrupts_queues_and_runs_commands() {
    let world = World::new();
    let server = mock(scenario()).await;
    std::fs::create_dir_all(world.cwd.join(".tine/commands")).unwrap();
    std::fs::write(
        world.cwd.join(".tine/commands/rev.md"),
        "---\ndescription: Review something\n---\nPlease review $ARGUMENTS",
    )
    .unwrap();
    let mut ui = Ui::start(world.options(&server)).await;

    // Streaming: markdown rendered.
    ui.type_line("hello");
    let (outcome, _) = ui.turn_end().await;
    assert_eq!(outcome, TurnOutcome::Completed);

    // The dialog: Enter approves once.
    ui.type_line("make it");
    let ask = ui.ask().await;
    assert_eq!(ask.tool, "Bash");
    assert_eq!(ask.target, "touch made.txt");
    assert!(ui.screen().contains("touch made.txt"), "{}", ui.screen());
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.turn_end().await;
    assert!(world.cwd.join("made.txt").exists());
    std::fs::remove_file(world.cwd.join("made.txt")).unwrap();

    // Esc rejects: nothing runs, and the refusal reads as the person's, not as the model's
    // instructions.
    ui.type_line("make it");
    ui.ask().await;
    ui.key(KeyCode::Esc, KeyModifiers::NONE);
    ui.turn_end().await;
    assert!(!world.cwd.join("made.txt").exists());
    settle().await;
    let shown = ui.screen();
    assert!(shown.contains("⎿  Rejected by you"), "{shown}");
    assert!(!shown.contains("doesn't want to proceed"), "{shown}");

    // "Yes, and don't ask again": the rule lands in .tine/settings.local.json, and the next
    // call is not asked.
    ui.type_line("make it");
    let ask = ui.ask().await;
    let rule = ask.always.as_ref().expect("a rule to offer").to_string();
    ui.key(KeyCode::Char('2'), KeyModifiers::NONE);
    ui.turn_end().await;
    let local = std::fs::read_to_string(world.cwd.join(".tine/settings.local.json")).unwrap();
    assert!(local.contains(&rule), "{local}");
    std::fs::remove_file(world.cwd.join("made.txt")).unwrap();
    ui.type_line("make it");
    let (_, seen) = ui.turn_end().await;
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e.msg, SessionEvent::PermissionRequest(_))),
        "asked again: {seen:?}"
    );
    assert!(world.cwd.join("made.txt").exists());

    // Esc while the model works interrupts the turn.
    let text = |e: &Event| {
        matches!(
            e.msg,
            SessionEvent::Query(tine_session::QueryEvent::TextDelta { .. })
        )
        .then_some(())
    };
    ui.type_line("answer slowly");
    ui.until(text).await;
    settle().await;
    ui.key(KeyCode::Esc, KeyModifiers::NONE);
    let (outcome, _) = ui.turn_end().await;
    assert_eq!(outcome, TurnOutcome::Interrupted);

    // A prompt typed while a turn runs is queued and sent when it ends.
    ui.type_line("answer slowly again");
    ui.until(text).await;
    settle().await;
    ui.type_line("queued one");
    let (outcome, _) = ui.turn_end().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    ui.turn_end().await;
    let last = last_body(&server).to_string();
    assert!(last.contains("queued one"), "{last}");

    // Slash commands: the session's /cost, a custom command with $ARGUMENTS, /clear.
    ui.type_line("/cost");
    let (text, _) = ui.until(|e| command_text(e, "cost")).await;
    assert!(text.contains("Total cost: $"), "{text}");
    ui.type_line("/rev the parser");
    ui.turn_end().await;
    let last = last_body(&server);
    assert!(
        last.to_string().contains("Please review the parser"),
        "{last}"
    );
    ui.type_line("/clear");
    ui.type_line("after clear");
    ui.turn_end().await;
    let last = last_body(&server);
    assert_eq!(last["messages"].as_array().unwrap().len(), 1, "{last}");

    let (_, ended) = ui.exit().await;
    assert!(ended.screen.contains("after clear"), "{}", ended.screen);
    assert!(ended.info.is_some());
    // The prompts are in the history file, private.
    let history = std::fs::read_to_string(world.home.join("history.jsonl")).unwrap();
    assert!(history.contains("queued one") && history.contains("/rev the parser"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_model_is_asked_about_enter_lets_it_go_on_and_esc_stops_it() {
    let world = World::new();
    let read = || {
        Reply::text("Reading.")
            .with_tool_use("Read", json!({"file_path": world.cwd.join("missing.txt")}))
    };
    let scenario = Scenario::new()
        .rule(Rule::new().tool_results(true).reply(read()))
        .rule(
            Rule::new()
                .last_user_contains("read the notes")
                .reply(read()),
        )
        .default_reply(Reply::text("Ok."));
    let server = mock(scenario).await;
    let mut ui = Ui::start(world.options(&server)).await;
    let stuck = |e: &Event| match &e.msg {
        SessionEvent::StuckModel(q) => Some(q.clone()),
        _ => None,
    };

    ui.type_line("read the notes");
    let first = ui.until(stuck).await.0;
    assert_eq!((first.tool.as_str(), first.repeats), ("Read", 3));
    let file = first.input["file_path"].as_str().unwrap_or_default();
    assert!(file.ends_with("missing.txt"), "{first:?}");
    settle().await;
    assert!(
        ui.screen().contains("The model seems stuck"),
        "{}",
        ui.screen()
    );
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.until(stuck).await;
    let messages = |server: &MockServer| {
        server
            .requests()
            .iter()
            .filter(|r| r.path.ends_with("/v1/messages"))
            .count()
    };
    assert_eq!(messages(&server), 6, "Yes let the model go on");
    settle().await;
    ui.key(KeyCode::Esc, KeyModifiers::NONE);
    let (outcome, _) = ui.turn_end().await;
    assert!(
        matches!(&outcome, TurnOutcome::Failed { message } if message.contains("stuck")),
        "{outcome:?}"
    );
    assert_eq!(messages(&server), 6, "Esc stopped it");
    let (_, ended) = ui.exit().await;
    assert!(ended.screen.contains("stuck"), "{}", ended.screen);
}
