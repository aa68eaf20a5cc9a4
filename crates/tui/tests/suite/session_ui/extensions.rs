//! What the project and the user add, through the UI on the real session: hooks (a PreToolUse
//! guard, an ask, Notification, SessionStart and SessionEnd around `/clear` and the exit), an
//! MCP server (`/mcp`, its tools offered), skills as slash commands (`/help` drawn by the app,
//! `/NAME args`, `/skills`), and another provider's client (`/model` on it).

use crossterm::event::KeyEvent;
use ratatui::backend::TestBackend;
use tine_tui::App;
use tokio_util::sync::CancellationToken;

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_run_in_the_interactive_front_end_too() {
    let world = World::new();
    std::fs::write(world.cwd.join("notes.txt"), "the notes").unwrap();
    let append = |file: &str| format!("{{ cat; echo; }} >> {file}");
    let hook = |matcher: &str, command: String| json!([{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]);
    let ask = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "ask", "permissionDecisionReason": "reads need a look"}});
    let settings = json!({"hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command":
                "cat > pre.json; if grep -q touch pre.json; then echo 'no touching here' >&2; exit 2; fi"}]},
            {"matcher": "Read", "hooks": [{"type": "command", "command": format!("echo '{ask}'")}]}
        ],
        "Notification": hook("", append("notify.jsonl")),
        "SessionStart": hook("", append("start.jsonl")),
        "SessionEnd": hook("", append("end.jsonl")),
    }});
    std::fs::create_dir_all(world.cwd.join(".tine")).unwrap();
    std::fs::write(world.cwd.join(".tine/settings.json"), settings.to_string()).unwrap();
    let notes = world.cwd.join("notes.txt");
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .tool_results(false)
                    .last_user_contains("make it")
                    .reply(
                        Reply::text("Making it.")
                            .with_tool_use("Bash", json!({"command": "touch made.txt"})),
                    ),
            )
            .rule(
                Rule::new()
                    .tool_results(false)
                    .last_user_contains("read it")
                    .reply(
                        Reply::text("Reading.").with_tool_use("Read", json!({"file_path": notes})),
                    ),
            )
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
            .default_reply(Reply::text("ok")),
    )
    .await;
    // Bash is allowed outright: only the guard stands between the model and the command.
    let mut options = world.options(&server);
    options.allowed_tools = vec!["Bash".to_owned()];
    let mut ui = Ui::start(options).await;

    // The PreToolUse guard blocks the call: no dialog, no file, the model reads why.
    ui.type_line("make it");
    let (_, seen) = ui.turn_end().await;
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e.msg, SessionEvent::PermissionRequest(_))),
        "{seen:?}"
    );
    assert!(
        !world.cwd.join("made.txt").exists(),
        "the guard did not hold"
    );
    let last = last_body(&server).to_string();
    assert!(last.contains("no touching here"), "{last}");

    // A hook's "ask" asks the person even where the rules allow (a read in the project),
    // and Notification hooks hear about the question.
    ui.type_line("read it");
    let request = ui.ask().await;
    assert_eq!(request.tool, "Read");
    assert_eq!(request.reason, "reads need a look");
    assert!(ui.screen().contains("reads need a look"), "{}", ui.screen());
    let notified = hook_inputs_eventually(&world.cwd, "notify.jsonl", 1).await;
    assert_eq!(notified[0]["hook_event_name"], "Notification");
    assert_eq!(notified[0]["notification_type"], "permission_prompt");
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.turn_end().await;
    assert!(last_body(&server).to_string().contains("the notes"));

    // /clear ends one conversation and starts the next; leaving the prompt ends the last.
    ui.type_line("/clear");
    ui.type_line("after clear");
    ui.turn_end().await;
    ui.exit().await;
    let starts: Vec<_> = hook_inputs(&world.cwd, "start.jsonl")
        .iter()
        .map(|i| i["source"].clone())
        .collect();
    assert_eq!(starts, [json!("startup"), json!("clear")]);
    let ends: Vec<_> = hook_inputs(&world.cwd, "end.jsonl")
        .iter()
        .map(|i| i["reason"].clone())
        .collect();
    assert_eq!(ends, [json!("clear"), json!("prompt_input_exit")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_mcp_shows_the_servers_of_the_session_and_their_tools_are_offered() {
    let world = World::new();
    let server = mock(scenario()).await;
    let stop = CancellationToken::new();
    let addr = tine_mcp::test_server::serve_http(
        tine_mcp::test_server::TestServer::default(),
        stop.clone(),
    )
    .await
    .unwrap();
    let mut options = world.options(&server);
    options.mcp_configs = vec![
        json!({"mcpServers": {"web": {"type": "http", "url": format!("http://{addr}/mcp")}}})
            .to_string(),
    ];
    let mut ui = Ui::start(options).await;
    ui.type_line("/mcp");
    let (text, _) = ui.until(|e| command_text(e, "mcp")).await;
    assert!(text.contains("web (dynamic"), "{text}");
    assert!(text.contains("connected"), "{text}");
    ui.type_line("hello");
    ui.turn_end().await;
    let tools = last_body(&server)["tools"].to_string();
    assert!(tools.contains("mcp__web__echo"), "{tools}");
    ui.exit().await;
    stop.cancel();
}

fn write(world: &World, path: &str, text: &str) {
    let path = world.cwd.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The app's screen, drawn once on a `TestBackend` of its own.
fn drawn(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| app.render(f)).unwrap();
    let buffer = terminal.backend().buffer();
    let mut text = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            text.push_str(buffer[(x, y)].symbol());
        }
        text.push('\n');
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_slash_commands_in_the_ui_listed_by_help_and_by_slash_skills() {
    let world = World::new();
    write(
        &world,
        ".tine/skills/release/SKILL.md",
        "---\ndescription: Cut a release\n---\nRELEASE-BODY for $ARGUMENTS\n",
    );
    write(
        &world,
        ".tine/commands/release.md",
        "---\ndescription: The old release command\n---\nCOMMAND-BODY\n",
    );
    write(
        &world,
        ".tine/commands/lint.md",
        "---\ndescription: Lint the code\n---\nLINT-BODY\n",
    );
    let server = mock(Scenario::new().default_reply(Reply::text("Released."))).await;
    let mut options = world.options(&server);
    options.bare = false;
    let (session, mut events) = Session::start(options).await.unwrap();

    // `/help`, drawn by the UI from the session's table before anything runs.
    let mut app = App::new(AppConfig::default());
    let configured = events.recv().await.unwrap();
    assert!(matches!(configured.msg, SessionEvent::Configured(_)));
    app.handle(configured);
    for c in "/help".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let help = drawn(&mut app, 110, 70);
    assert!(help.contains("(skill) Cut a release"), "{help}");
    assert!(help.contains("/lint"), "{help}");
    assert!(!help.contains("The old release command"), "{help}");
    assert_eq!(help.matches("/release").count(), 1, "{help}");
    assert!(help.contains("/skills"), "{help}");
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));

    let mut ui = Ui::run(app, session, events);
    ui.type_line("/release v2");
    ui.turn_end().await;
    let sent = last_body(&server)["messages"].to_string();
    assert!(sent.contains("RELEASE-BODY for v2"), "{sent}");
    assert!(!sent.contains("COMMAND-BODY"), "{sent}");
    // The session's listing went with the first request (not bare).
    assert!(sent.contains("- release: Cut a release"), "{sent}");

    ui.type_line("/skills");
    let (text, _) = ui.until(|e| command_text(e, "skills")).await;
    assert!(text.contains("- release (project, "), "{text}");
    assert_eq!(server.requests().len(), 1, "/skills made no request");
    ui.exit().await;
}

/// The UI on `provider: openai`: the session's provider choice (from settings here) builds the
/// chat-completions client; the model goes out verbatim, `/model` switches it on the same
/// client, and nothing is sent to the Messages API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_runs_on_the_openai_provider_with_its_model_verbatim() {
    let world = World::new();
    let server = mock(scenario()).await;
    let settings = json!({
        "provider": "openai",
        "openai": {
            "baseUrl": server.openai_base_url(),
            "apiKey": "test-key",
            "model": "qwen2.5-coder:7b",
        },
    })
    .to_string();
    let mut options = world.options(&server);
    options.client = None;
    options.settings_flag = Some(settings);
    let mut ui = Ui::start(options).await;

    ui.type_line("hello");
    let (outcome, _) = ui.turn_end().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    // A tool call over the chat wire: asked, approved once, run, answered.
    ui.type_line("make it");
    let ask = ui.ask().await;
    assert_eq!(ask.target, "touch made.txt");
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.turn_end().await;
    assert!(world.cwd.join("made.txt").exists());
    // /model switches the model on the same client, the new name verbatim.
    ui.type_line("/model llama3.1:8b");
    let (model, _) = ui
        .until(|e| match &e.msg {
            SessionEvent::ModelChanged(model) => Some(model.clone()),
            _ => None,
        })
        .await;
    assert_eq!(model, "llama3.1:8b");
    ui.type_line("after the switch");
    ui.turn_end().await;

    let (_, ended) = ui.exit().await;
    assert!(
        ended.screen.contains("Here is bold text."),
        "{}",
        ended.screen
    );
    assert!(
        ended.screen.contains("llama3.1:8b"),
        "the status line's model"
    );
    let requests = server.requests();
    assert!(
        requests.iter().all(|r| r.path == "/v1/chat/completions"),
        "{:?}",
        requests.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    let models: Vec<String> = requests
        .iter()
        .map(|r| r.json().unwrap()["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(models.first().map(String::as_str), Some("qwen2.5-coder:7b"));
    assert_eq!(models.last().map(String::as_str), Some("llama3.1:8b"));
    let last = requests.last().unwrap().json().unwrap();
    assert!(last.to_string().contains("after the switch"), "{last}");
    assert!(
        last["stream_options"]["include_usage"] == json!(true),
        "{last}"
    );
}
