//! The UI wired to the real session on the in-process mock, driven through the app's event loop
//! (keys in, a `TestBackend` frame out): streaming with markdown, the permission dialog (once,
//! reject, always with the rule in the project's local settings), interrupt, the queue, slash
//! commands, and a resumed conversation replayed.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tine_api_client::{ClientConfig, Credentials, HttpClient, RetryPolicy};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_session::Resume;
use tine_tui::{App, LoopEnd, TurnEndReason, UiEvent, event_loop};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::driver::Ended;
use super::{Launch, Started, start};

#[path = "elicitation_tests.rs"]
mod elicitation;

const WAIT: Duration = Duration::from_secs(30);

struct World {
    _root: tempfile::TempDir,
    home: PathBuf,
    cwd: PathBuf,
    user_home: PathBuf,
}

impl World {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let (home, cwd, user_home) = (base.join("home"), base.join("project"), base.join("user"));
        for dir in [&home, &cwd, &user_home] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Self {
            _root: root,
            home,
            cwd,
            user_home,
        }
    }

    fn launch(&self, server: &MockServer) -> Launch {
        let config = ClientConfig::new(server.base_url(), Credentials::api_key("test-key"))
            .with_retry(RetryPolicy::none());
        Launch {
            cwd: self.cwd.clone(),
            home: self.home.clone(),
            user_home: Some(self.user_home.clone()),
            managed_settings: Some(self.home.join("no-managed-settings.json")),
            model: None,
            small_model: None,
            settings_flag: None,
            permission_mode: None,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            bare: true,
            max_turns: None,
            append_system_prompt: None,
            flags: crate::flags::SessionFlags::default(),
            sandbox_flag: false,
            mcp_configs: Vec::new(),
            strict_mcp_config: false,
            client: Some(Arc::new(HttpClient::new(config).unwrap())),
        }
    }
}

fn scenario() -> Scenario {
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
                .last_user_contains("slowly")
                .reply(Reply::text(&"word ".repeat(200)).chunk_delay_ms(50)),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .rule(
            Rule::new()
                .last_user_contains("review")
                .reply(Reply::text("Reviewed.")),
        )
        .default_reply(Reply::text("Here is **bold** text."))
}

/// The app's loop on a `TestBackend`, the driver beside it, and a tap on what the UI is told.
struct Ui {
    keys: UnboundedSender<io::Result<Event>>,
    seen: UnboundedReceiver<UiEvent>,
    ui: JoinHandle<(App, Terminal<TestBackend>, LoopEnd)>,
    driver: JoinHandle<Ended>,
}

impl Ui {
    fn start(started: Started) -> Self {
        let Started {
            mut driver,
            mut app,
            ui_events,
        } = started;
        driver.history = Some(driver.cwd.join("..").join("history.jsonl"));
        let (tap_tx, tap_rx) = mpsc::unbounded_channel();
        let (seen_tx, seen) = mpsc::unbounded_channel();
        let mut ui_events = ui_events;
        tokio::spawn(async move {
            while let Some(event) = ui_events.recv().await {
                let _ = seen_tx.send(event.clone());
                if tap_tx.send(event).is_err() {
                    break;
                }
            }
        });
        let (commands_tx, commands_rx) = mpsc::unbounded_channel();
        let driver = tokio::spawn(driver.run(commands_rx, CancellationToken::new()));
        let (keys, keys_rx) = mpsc::unbounded_channel();
        let ui = tokio::spawn(async move {
            let mut terminal = Terminal::new(TestBackend::new(100, 40)).unwrap();
            let input = Box::pin(futures::stream::unfold(keys_rx, |mut rx| async move {
                rx.recv().await.map(|event| (event, rx))
            }));
            let (end, _) = event_loop(&mut terminal, &mut app, tap_rx, input, &commands_tx)
                .await
                .unwrap();
            (app, terminal, end)
        });
        Self {
            keys,
            seen,
            ui,
            driver,
        }
    }

    fn key(&self, code: KeyCode, modifiers: KeyModifiers) {
        self.keys
            .send(Ok(Event::Key(KeyEvent::new(code, modifiers))))
            .unwrap();
    }

    fn type_line(&self, text: &str) {
        eprintln!("typing {text:?}");
        for c in text.chars() {
            self.key(KeyCode::Char(c), KeyModifiers::NONE);
        }
        self.key(KeyCode::Enter, KeyModifiers::NONE);
    }

    /// The first event `pick` accepts, and everything seen before it.
    async fn until<T>(&mut self, mut pick: impl FnMut(&UiEvent) -> Option<T>) -> (T, Vec<UiEvent>) {
        let mut before = Vec::new();
        loop {
            let event = match tokio::time::timeout(WAIT, self.seen.recv()).await {
                Ok(Some(event)) => event,
                Ok(None) => panic!("the UI's events ended; seen {before:#?}"),
                Err(_) => panic!("timed out; seen {before:#?}"),
            };
            if let Some(found) = pick(&event) {
                return (found, before);
            }
            before.push(event);
        }
    }

    async fn turn_end(&mut self) -> (TurnEndReason, Vec<UiEvent>) {
        self.until(|e| match e {
            UiEvent::TurnEnded { reason } => Some(reason.clone()),
            _ => None,
        })
        .await
    }

    async fn ask(&mut self) -> tine_tui::PermissionRequest {
        let ask = self
            .until(|e| match e {
                UiEvent::PermissionRequest(r) => Some(r.clone()),
                _ => None,
            })
            .await
            .0;
        settle().await;
        ask
    }

    async fn exit(self) -> (App, String, Ended) {
        settle().await;
        self.type_line("/exit");
        let (app, terminal, end) = tokio::time::timeout(WAIT, self.ui).await.unwrap().unwrap();
        assert_eq!(end, LoopEnd::Exit);
        let ended = tokio::time::timeout(WAIT, self.driver)
            .await
            .unwrap()
            .unwrap();
        (app, screen(&terminal), ended)
    }
}

/// The tap sees an event just before the app handles it: give the loop a moment so a key sent
/// next reaches the state the event made (a dialog open, a turn running). Ordering slack, not
/// a timing assertion.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

fn last_body(server: &MockServer) -> serde_json::Value {
    let requests = server.requests();
    serde_json::from_slice(&requests.last().unwrap().body).unwrap()
}

fn screen(terminal: &Terminal<TestBackend>) -> String {
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
async fn a_session_through_the_ui_streams_asks_interrupts_queues_and_runs_commands() {
    let world = World::new();
    let server = MockServer::start(MockConfig::new(scenario()))
        .await
        .unwrap();
    std::fs::create_dir_all(world.cwd.join(".tine/commands")).unwrap();
    std::fs::write(
        world.cwd.join(".tine/commands/rev.md"),
        "---\ndescription: Review something\n---\nPlease review $ARGUMENTS",
    )
    .unwrap();
    let started = start(&world.launch(&server), Resume::New).await.unwrap();
    let mut ui = Ui::start(started);

    // Streaming: markdown rendered.
    ui.type_line("hello");
    let (reason, _) = ui.turn_end().await;
    assert_eq!(reason, TurnEndReason::Completed);

    // The dialog: Enter approves once.
    ui.type_line("make it");
    let ask = ui.ask().await;
    assert_eq!(ask.tool, "Bash");
    assert_eq!(ask.summary, "touch made.txt");
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.turn_end().await;
    assert!(world.cwd.join("made.txt").exists());
    std::fs::remove_file(world.cwd.join("made.txt")).unwrap();

    // Esc rejects: nothing runs.
    ui.type_line("make it");
    ui.ask().await;
    ui.key(KeyCode::Esc, KeyModifiers::NONE);
    let (_, seen) = ui.turn_end().await;
    assert!(!world.cwd.join("made.txt").exists());
    assert!(
        seen.iter()
            .any(|e| matches!(e, UiEvent::ToolFinished { result, .. }
            if result.is_error && result.summary == "Rejected by you")),
        "the refusal reads as the person's, not as the model's instructions: {seen:?}"
    );

    // "Yes, and don't ask again": the rule lands in .tine/settings.local.json, and the next
    // call is not asked.
    ui.type_line("make it");
    let ask = ui.ask().await;
    let rule = ask.always_rule.clone().expect("a rule to offer");
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
            .any(|e| matches!(e, UiEvent::PermissionRequest(_))),
        "asked again: {seen:?}"
    );
    assert!(world.cwd.join("made.txt").exists());

    // Esc while the model works interrupts the turn.
    ui.type_line("answer slowly");
    ui.until(|e| matches!(e, UiEvent::TextDelta(_)).then_some(()))
        .await;
    settle().await;
    ui.key(KeyCode::Esc, KeyModifiers::NONE);
    let (reason, _) = ui.turn_end().await;
    assert_eq!(reason, TurnEndReason::Interrupted);

    // A prompt typed while a turn runs is queued and sent when it ends.
    ui.type_line("answer slowly again");
    ui.until(|e| matches!(e, UiEvent::TextDelta(_)).then_some(()))
        .await;
    settle().await;
    ui.type_line("queued one");
    let (reason, _) = ui.turn_end().await;
    assert_eq!(reason, TurnEndReason::Completed);
    ui.turn_end().await;
    let last = last_body(&server).to_string();
    assert!(last.contains("queued one"), "{last}");

    // Slash commands: the session's /cost, a custom command with $ARGUMENTS, /clear.
    ui.type_line("/cost");
    let (text, _) = ui
        .until(|e| match e {
            UiEvent::CommandOutput { command, text } if command == "cost" => Some(text.clone()),
            _ => None,
        })
        .await;
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

    let (_, screen, ended) = ui.exit().await;
    assert!(screen.contains("after clear"), "{screen}");
    assert!(ended.summary.is_some());
    // The prompts are in the history file, private.
    let history = std::fs::read_to_string(world.cwd.join("../history.jsonl")).unwrap();
    assert!(history.contains("queued one") && history.contains("/rev the parser"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markdown_streams_without_its_asterisks_and_a_resumed_session_is_replayed() {
    let world = World::new();
    let server = MockServer::start(MockConfig::new(scenario()))
        .await
        .unwrap();
    let started = start(&world.launch(&server), Resume::New).await.unwrap();
    let mut ui = Ui::start(started);
    ui.type_line("first question");
    ui.turn_end().await;
    let (_, screen, ended) = ui.exit().await;
    assert!(screen.contains("Here is bold text."), "{screen}");
    assert!(!screen.contains("**"), "{screen}");
    let id = ended.summary.unwrap().session_id;

    // tine -c: the conversation comes back as it was, before any key.
    let started = start(&world.launch(&server), Resume::Latest).await.unwrap();
    let mut ui = Ui::start(started);
    let (prompt, _) = ui
        .until(|e| match e {
            UiEvent::UserMessage(text) => Some(text.clone()),
            _ => None,
        })
        .await;
    assert_eq!(prompt, "first question");
    let (_, replayed) = ui.turn_end().await;
    assert!(
        replayed
            .iter()
            .any(|e| matches!(e, UiEvent::TextDelta(t) if t.contains("**bold**"))),
        "{replayed:?}"
    );
    ui.type_line("second question");
    ui.turn_end().await;
    let (_, screen, ended) = ui.exit().await;
    assert_eq!(ended.summary.unwrap().session_id, id);
    assert!(screen.contains("first question"), "{screen}");
    assert!(screen.contains("second question"), "{screen}");
    let last = last_body(&server);
    assert_eq!(last["messages"].as_array().unwrap().len(), 3);
}

/// The UI on `--provider openai`: the launch's provider choice (from settings here) builds the
/// chat-completions client the session and its restarts use; the model goes out verbatim and
/// nothing is sent to the Messages API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_runs_on_the_openai_provider_with_its_model_verbatim() {
    let world = World::new();
    let server = MockServer::start(MockConfig::new(scenario()))
        .await
        .unwrap();
    let settings = json!({
        "provider": "openai",
        "openai": {
            "baseUrl": server.openai_base_url(),
            "apiKey": "test-key",
            "model": "qwen2.5-coder:7b",
        },
    })
    .to_string();
    let provider = crate::provider::for_session(
        None,
        None,
        &crate::provider::Place {
            cwd: &world.cwd,
            home: &world.home,
            user_home: Some(&world.user_home),
            settings_flag: Some(&settings),
            managed_settings: Some(&world.home.join("no-managed-settings.json")),
        },
    )
    .unwrap();
    assert_eq!(provider.provider, tine_api_client::Provider::OpenAi);
    let mut launch = world.launch(&server);
    launch.client = provider.client;
    launch.model = provider.model;
    launch.small_model = provider.small_model;
    let started = start(&launch, Resume::New).await.unwrap();
    let mut ui = Ui::start(started);

    ui.type_line("hello");
    let (reason, _) = ui.turn_end().await;
    assert_eq!(reason, TurnEndReason::Completed);
    // A tool call over the chat wire: asked, approved once, run, answered.
    ui.type_line("make it");
    let ask = ui.ask().await;
    assert_eq!(ask.summary, "touch made.txt");
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.turn_end().await;
    assert!(world.cwd.join("made.txt").exists());
    // /model restarts the session on the same client, the new name verbatim.
    ui.type_line("/model llama3.1:8b");
    settle().await;
    ui.type_line("after the switch");
    ui.turn_end().await;

    let (_, screen, _) = ui.exit().await;
    assert!(screen.contains("Here is bold text."), "{screen}");
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
    let server = MockServer::start(MockConfig::new(scenario)).await.unwrap();
    let started = start(&world.launch(&server), Resume::New).await.unwrap();
    let mut ui = Ui::start(started);
    let stuck = |e: &UiEvent| match e {
        UiEvent::StuckModel(q) => Some(q.clone()),
        _ => None,
    };

    ui.type_line("read the notes");
    let first = ui.until(stuck).await.0;
    assert_eq!((first.tool.as_str(), first.repeats), ("Read", 3));
    assert!(first.args.ends_with("missing.txt"), "{first:?}");
    settle().await;
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
    let (reason, _) = ui.turn_end().await;
    assert!(
        matches!(&reason, TurnEndReason::Failed { message } if message.contains("stuck")),
        "{reason:?}"
    );
    assert_eq!(messages(&server), 6, "Esc stopped it");
    let (_, screen, _) = ui.exit().await;
    assert!(screen.contains("stuck"), "{screen}");
}

/// Every JSON input a hook appending its stdin to `file` received, in order.
fn hook_inputs(dir: &std::path::Path, file: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join(file))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `file`'s inputs once there are `n` of them (a hook that runs beside the UI, not before it).
async fn hook_inputs_eventually(
    dir: &std::path::Path,
    file: &str,
    n: usize,
) -> Vec<serde_json::Value> {
    for _ in 0..300 {
        let inputs = hook_inputs(dir, file);
        if inputs.len() >= n {
            return inputs;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{file} never had {n} inputs: {:?}", hook_inputs(dir, file));
}

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
    let server = MockServer::start(MockConfig::new(
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
    ))
    .await
    .unwrap();
    // Bash is allowed outright: only the guard stands between the model and the command.
    let mut launch = world.launch(&server);
    launch.allowed_tools = vec!["Bash".to_owned()];
    let started = start(&launch, Resume::New).await.unwrap();
    let mut ui = Ui::start(started);

    // The PreToolUse guard blocks the call: no dialog, no file, the model reads why.
    ui.type_line("make it");
    let (_, seen) = ui.turn_end().await;
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, UiEvent::PermissionRequest(_))),
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
    assert_eq!(request.reason.as_deref(), Some("reads need a look"));
    let notified = hook_inputs_eventually(&world.cwd, "notify.jsonl", 1).await;
    assert_eq!(notified[0]["hook_event_name"], "Notification");
    assert_eq!(notified[0]["notification_type"], "permission_prompt");
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.turn_end().await;
    assert!(last_body(&server).to_string().contains("the notes"));

    // /clear ends one session and starts the next; leaving the prompt ends the last.
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
    let server = MockServer::start(MockConfig::new(scenario()))
        .await
        .unwrap();
    let stop = CancellationToken::new();
    let addr = tine_mcp::test_server::serve_http(
        tine_mcp::test_server::TestServer::default(),
        stop.clone(),
    )
    .await
    .unwrap();
    let mut launch = world.launch(&server);
    launch.mcp_configs = vec![
        json!({"mcpServers": {"web": {"type": "http", "url": format!("http://{addr}/mcp")}}})
            .to_string(),
    ];
    let started = start(&launch, Resume::New).await.unwrap();
    let mut ui = Ui::start(started);
    ui.type_line("/mcp");
    let (text, _) = ui
        .until(|e| match e {
            UiEvent::CommandOutput { command, text } if command == "mcp" => Some(text.clone()),
            _ => None,
        })
        .await;
    assert!(text.contains("web (dynamic"), "{text}");
    assert!(text.contains("connected"), "{text}");
    ui.type_line("hello");
    ui.turn_end().await;
    let tools = last_body(&server)["tools"].to_string();
    assert!(tools.contains("mcp__web__echo"), "{tools}");
    ui.exit().await;
    stop.cancel();
}

/// A background shell sits in the tasks panel until it ends; `/compact` is the session's (not
/// "not available"); `/clear` starts the status line again.
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
    let server = MockServer::start(MockConfig::new(scenario)).await.unwrap();
    let started = start(&world.launch(&server), Resume::New).await.unwrap();
    let mut ui = Ui::start(started);

    // `sleep` and `echo` read only: no question.
    ui.type_line("start the watcher");
    let (running, _) = ui
        .until(|e| match e {
            UiEvent::Task(task) if task.kind == tine_tui::TaskKind::Shell => Some(task.clone()),
            _ => None,
        })
        .await;
    assert_eq!(running.status, tine_tui::TaskStatus::Running);
    assert_eq!(running.title, "sleep 1; echo ready");
    ui.turn_end().await;
    let (ended, _) = ui
        .until(|e| match e {
            UiEvent::Task(task) if task.id == running.id && task.status != running.status => {
                Some(task.status.clone())
            }
            _ => None,
        })
        .await;
    assert!(
        matches!(ended, tine_tui::TaskStatus::Finished { .. }),
        "{ended:?}"
    );

    ui.type_line("/compact");
    let (card, seen) = ui
        .until(|e| match e {
            UiEvent::Compacted(view) => Some(Ok(view.clone())),
            UiEvent::Notice { text, .. } if text.contains("compact") => Some(Err(text.clone())),
            _ => None,
        })
        .await;
    let card = card.unwrap_or_else(|notice| panic!("{notice} after {seen:?}"));
    assert_eq!(card.trigger, "manual");
    assert!(card.messages_summarized > 0, "{card:?}");
    ui.turn_end().await;

    ui.type_line("/clear");
    ui.until(|e| match e {
        UiEvent::Usage(usage) if usage.session_cost_usd == 0.0 => Some(()),
        _ => None,
    })
    .await;
    let (_, screen, _) = ui.exit().await;
    let status = screen.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(
        status.contains("$0.00") && !status.contains("context"),
        "the status line still shows the previous session: {status}"
    );
}

mod modes;
mod resume;
mod skills;
mod tasks;
