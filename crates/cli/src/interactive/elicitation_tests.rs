//! An MCP server's elicitation through the real session and the UI: the test server's `ask`
//! tool asks "Which branch?"; the dialog shows it with its field, the typed value goes back to
//! the server (which answers with what it got), Decline and Esc say so, and an interruption
//! withdraws the question.

use super::*;

fn asking() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("ask me")
                .reply(Reply::text("Asking.").with_tool_use("mcp__web__ask", json!({}))),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("Hello."))
}

/// The text of the last tool result the model was sent.
fn last_tool_result(server: &MockServer) -> String {
    let body = last_body(server);
    let messages = body["messages"].as_array().unwrap();
    let content = &messages.last().unwrap()["content"];
    content
        .as_array()
        .and_then(|blocks| blocks.iter().find(|b| b["type"] == "tool_result"))
        .map(|block| block["content"].to_string())
        .unwrap_or_default()
}

async fn elicitation(ui: &mut Ui) -> tine_tui::ElicitationRequest {
    let (request, _) = ui
        .until(|e| match e {
            UiEvent::Elicitation(r) => Some(r.clone()),
            _ => None,
        })
        .await;
    settle().await;
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_servers_question_is_asked_in_the_ui_and_answered() {
    let world = World::new();
    let server = MockServer::start(MockConfig::new(asking())).await.unwrap();
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
    launch.allowed_tools = vec!["mcp__web".into()];
    let started = start(&launch, Resume::New).await.unwrap();
    let mut ui = Ui::start(started);

    // Accept with a typed value: the server gets it.
    ui.type_line("ask me");
    let request = elicitation(&mut ui).await;
    assert_eq!(request.server, "web");
    assert_eq!(request.message, "Which branch?");
    let names: Vec<&str> = request.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["branch"]);
    for c in "dev".chars() {
        ui.key(KeyCode::Char(c), KeyModifiers::NONE);
    }
    ui.key(KeyCode::Enter, KeyModifiers::NONE); // to Accept
    ui.key(KeyCode::Enter, KeyModifiers::NONE); // press it
    let (reason, _) = ui.turn_end().await;
    assert_eq!(reason, TurnEndReason::Completed);
    let result = last_tool_result(&server);
    assert!(
        result.contains(r#"accept:{\"branch\":\"dev\"}"#),
        "{result}"
    );

    // Decline.
    ui.type_line("ask me again");
    elicitation(&mut ui).await;
    ui.key(KeyCode::Up, KeyModifiers::NONE); // wraps to Decline
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.turn_end().await;
    let result = last_tool_result(&server);
    assert!(result.contains("decline:"), "{result}");

    // Esc cancels.
    ui.type_line("ask me once more");
    elicitation(&mut ui).await;
    ui.key(KeyCode::Esc, KeyModifiers::NONE);
    ui.turn_end().await;
    let result = last_tool_result(&server);
    assert!(result.contains("cancel:"), "{result}");

    // Ctrl+C interrupts the turn: the question is withdrawn, the dialog gone.
    ui.type_line("ask me a last time");
    elicitation(&mut ui).await;
    ui.key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let (reason, _) = ui.turn_end().await;
    assert_eq!(reason, TurnEndReason::Interrupted);
    let (app, screen, _) = ui.exit().await;
    assert!(!screen.contains("Which branch?"), "{screen}");
    drop(app);
    stop.cancel();
}
