//! A stuck model costs three requests, not a bill: the same failing call three times in a row
//! ends `-p` with an error naming the tool (`--max-turns` stays the hard cap).

use serde_json::json;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};

use super::{mock, tine};

/// Reads the file, then tries forever to edit text that is not in it.
fn stuck_editor(project: &Project) -> Scenario {
    let file = project.write("notes.txt", "the text is here\n");
    Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Read", json!({"file_path": file}))),
        )
        .default_reply(Reply::text("Fixing it.").with_tool_use(
            "Edit",
            json!({"file_path": file, "old_string": "text that is gone", "new_string": "new"}),
        ))
}

#[tokio::test]
async fn a_model_repeating_a_failing_edit_is_stopped_after_three_tries() {
    let project = Project::new();
    let server = mock(stuck_editor(&project)).await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "fix notes.txt",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
        ])
        .run()
        .await;
    assert_eq!(out.code(), Some(1), "{}", out.stderr);
    let result = out.json();
    assert_eq!(result["is_error"], true);
    // The Agent SDKs' subtype; why tine stopped is the terminal's type.
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["terminal"]["type"], "repeated_tool_failure");
    assert!(result["errors"][0].as_str().unwrap().contains("stuck"));
    let error = result["error"].as_str().unwrap();
    assert!(error.contains("stuck") && error.contains("Edit"), "{error}");
    assert_eq!(result["terminal"]["repeats"], 3);
    // One Read, then three Edits; no request after the third failure.
    assert_eq!(server.requests().len(), 4);
    assert_eq!(project.read("notes.txt"), "the text is here\n");
    server.stop().await;
}

#[tokio::test]
async fn text_mode_says_the_model_was_stuck_on_stderr() {
    let project = Project::new();
    let server = mock(stuck_editor(&project)).await;
    let out = tine(&project, &server)
        .args(["-p", "fix notes.txt", "--permission-mode", "acceptEdits"])
        .run()
        .await;
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr.contains("stuck"), "{}", out.stderr);
    assert!(out.stderr.contains("Edit"), "{}", out.stderr);
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn max_turns_stays_the_hard_cap() {
    let project = Project::new();
    let server = mock(stuck_editor(&project)).await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "fix notes.txt",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
            "--max-turns",
            "2",
        ])
        .run()
        .await;
    assert_eq!(out.code(), Some(1));
    assert_eq!(out.json()["subtype"], "error_max_turns");
    assert_eq!(server.requests().len(), 2);
}
