//! What a Claude Code user reaches for in a working day, through the binary: `outputStyle`
//! changing the next session's system prompt, `/output-style NAME` keeping it for the next
//! session, `/export` writing the conversation, an unknown `/word` reaching the model as text.

use serde_json::Value;
use tine_e2e::Project;
use tine_e2e::request_bodies;
use tine_e2e::tine_mock_api::{Reply, Scenario};

use super::{mock, tine};

fn system_text(body: &Value) -> String {
    match &body["system"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[tokio::test]
async fn an_output_style_changes_the_next_sessions_system_prompt() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Noted."))).await;
    tine(&project, &server)
        .args(["-p", "hi"])
        .run()
        .await
        .assert_success();
    let plain = system_text(&request_bodies(&server)[0]);
    assert!(!plain.contains("Output style"), "{plain}");
    // Chosen with the command: kept in local settings for the next session.
    let out = tine(&project, &server)
        .args(["-p", "/output-style Explanatory"])
        .run()
        .await;
    out.assert_success();
    assert!(out.stdout.contains("next session"), "{}", out.stdout);
    assert!(
        project
            .read(".tine/settings.local.json")
            .contains("Explanatory")
    );
    server.clear_requests();
    tine(&project, &server)
        .args(["-p", "hello"])
        .run()
        .await
        .assert_success();
    let styled = system_text(&request_bodies(&server)[0]);
    assert!(styled.contains("Output style: Explanatory"), "{styled}");
    assert!(styled.contains("Insight"), "{styled}");
}

#[tokio::test]
async fn export_writes_the_conversation_and_an_unknown_word_is_text() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("The answer is 42."))).await;
    tine(&project, &server)
        .args(["-p", "what is the answer?"])
        .run()
        .await
        .assert_success();
    let out = tine(&project, &server)
        .args(["-c", "-p", "/export talk.txt"])
        .run()
        .await;
    out.assert_success();
    let text = project.read("talk.txt");
    assert!(text.contains("> what is the answer?"), "{text}");
    assert!(text.contains("The answer is 42."), "{text}");
    server.clear_requests();
    let out = tine(&project, &server)
        .args(["-p", "/frobnicate the thing"])
        .run()
        .await;
    out.assert_success();
    let body = request_bodies(&server)[0].to_string();
    assert!(body.contains("/frobnicate the thing"), "{body}");
}

#[tokio::test]
async fn context_shows_the_parts_of_the_window_with_numbers() {
    let project = Project::new();
    project.write("AGENTS.md", "Always run the tests.\n");
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    tine(&project, &server)
        .args(["-p", "hi"])
        .run()
        .await
        .assert_success();
    let out = tine(&project, &server)
        .args(["-c", "-p", "/context"])
        .run()
        .await;
    out.assert_success();
    for part in [
        "System prompt",
        "Tools",
        "Memory and instruction files",
        "Messages",
        "Free space",
    ] {
        assert!(out.stdout.contains(part), "{part}: {}", out.stdout);
    }
    assert!(out.stdout.contains("tokens ("), "{}", out.stdout);
    assert!(out.stdout.contains("🟦"), "{}", out.stdout);
}
