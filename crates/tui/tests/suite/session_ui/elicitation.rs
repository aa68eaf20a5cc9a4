//! An MCP server's elicitation through the real session and the UI: the test server's `ask`
//! tool asks "Which branch?"; the dialog shows it with its field, the typed value goes back to
//! the server (which answers with what it got), Decline and Esc say so, and an interruption
//! withdraws the question.

use tine_session::ElicitationQuestion;
use tokio_util::sync::CancellationToken;

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

async fn elicitation(ui: &mut Ui) -> ElicitationQuestion {
    let (question, _) = ui
        .until(|e| match &e.msg {
            SessionEvent::Elicitation(q) => Some(q.clone()),
            _ => None,
        })
        .await;
    settle().await;
    question
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_servers_question_is_asked_in_the_ui_and_answered() {
    let world = World::new();
    let server = mock(asking()).await;
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
    options.allowed_tools = vec!["mcp__web".into()];
    let mut ui = Ui::start(options).await;

    // Accept with a typed value: the server gets it.
    ui.type_line("ask me");
    let question = elicitation(&mut ui).await;
    assert_eq!(question.server, "web");
    assert_eq!(question.message, "Which branch?");
    let schema = question.schema.clone().unwrap_or_default();
    let names: Vec<&String> = schema["properties"]
        .as_object()
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    assert_eq!(names, ["branch"]);
    let shown = ui.screen();
    assert!(shown.contains("MCP server web asks"), "{shown}");
    assert!(shown.contains("branch"), "the field is shown: {shown}");
    for c in "dev".chars() {
        ui.key(KeyCode::Char(c), KeyModifiers::NONE);
    }
    ui.key(KeyCode::Enter, KeyModifiers::NONE); // to Accept
    ui.key(KeyCode::Enter, KeyModifiers::NONE); // press it
    let (outcome, _) = ui.turn_end().await;
    assert_eq!(outcome, TurnOutcome::Completed);
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
    let (outcome, _) = ui.turn_end().await;
    assert_eq!(outcome, TurnOutcome::Interrupted);
    let (_, ended) = ui.exit().await;
    assert!(!ended.screen.contains("Which branch?"), "{}", ended.screen);
    stop.cancel();
}
