//! Stop hooks from settings: a block makes the model continue, with a cap on continuations.

use serde_json::json;
use tine_e2e::Project;
use tine_e2e::request_bodies;
use tine_e2e::tine_mock_api::{Reply, Scenario};

use super::{mock, tine};

fn stop_hook_settings(command: &str) -> String {
    json!({"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": command}]}]}})
        .to_string()
}

#[tokio::test]
async fn a_blocking_stop_hook_makes_the_model_continue_once() {
    let project = Project::new();
    // Blocks the first stop (exit 2, reason on stderr), lets the second through.
    let script = "if [ -e hook-ran ]; then exit 0; fi; touch hook-ran; echo 'run the tests first' >&2; exit 2";
    project.write(".tine/settings.json", &stop_hook_settings(script));
    let server = mock(Scenario::new().default_reply(Reply::text("Finished."))).await;
    let out = tine(&project, &server)
        .args(["-p", "work", "--output-format", "json", "--verbose"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["num_turns"], 2);
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 2);
    let last = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(last.contains("Stop hook feedback"), "{last}");
    assert!(last.contains("run the tests first"), "{last}");
    assert!(
        out.stderr.contains("transition: stop_hook"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_stop_hook_that_always_blocks_is_capped() {
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &stop_hook_settings("echo 'not yet' >&2; exit 2"),
    );
    let server = mock(Scenario::new().default_reply(Reply::text("Trying again."))).await;
    let out = tine(&project, &server)
        .args(["-p", "work", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    // The first stop plus 5 continuations, then the turn ends anyway.
    assert_eq!(server.requests().len(), 6);
    assert_eq!(out.json()["subtype"], "success");
}

#[tokio::test]
async fn hooks_from_the_settings_flag_run_too() {
    let project = Project::new();
    let settings = stop_hook_settings(
        "if [ -e flag-hook ]; then exit 0; fi; touch flag-hook; echo 'from the flag' >&2; exit 2",
    );
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "work",
            "--output-format",
            "json",
            "--settings",
            settings.as_str(),
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(server.requests().len(), 2);
    assert!(project.cwd().join("flag-hook").exists());
}
