//! Checkpoints and rewind through the binary: the Agent SDK's `rewind_files` over three
//! prompts with Write and Bash (a file Write changed restored, files Bash created, deleted and
//! moved put back, a file the session never touched keeping the person's edit, the session
//! going on), a conflict refused, `tine rewind --list | N`, and `/rewind` of the conversation
//! reading its prefix from the cache.

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};

use super::sdk_control::App;
use super::{mock, tine};

/// Prompt 1 writes `a.txt`; prompt 2 rewrites it and Bash creates `new.txt`, deletes `gone.txt`
/// and moves `old.txt` to `moved.txt`; prompt 3 writes `a.txt` again.
fn three_prompts(project: &Project) -> Scenario {
    let a = project.cwd().join("a.txt");
    let bash = "echo created > new.txt && rm gone.txt && mv old.txt moved.txt";
    Scenario::new()
        .rule(Rule::new().last_user_contains("prompt one").reply(
            Reply::text("One.").with_tool_use("Write", json!({"file_path": a, "content": "one\n"})),
        ))
        .rule(
            Rule::new().last_user_contains("prompt two").reply(
                Reply::text("Two.")
                    .with_tool_use("Write", json!({"file_path": a, "content": "two\n"}))
                    .with_tool_use("Bash", json!({"command": bash})),
            ),
        )
        .rule(
            Rule::new().last_user_contains("prompt three").reply(
                Reply::text("Three.")
                    .with_tool_use("Write", json!({"file_path": a, "content": "three\n"})),
            ),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
}

fn seed(project: &Project) {
    project.write("gone.txt", "keep me\n");
    project.write("old.txt", "old place\n");
    project.write("untouched.txt", "original\n");
}

/// The uuid of each replayed user message, in order.
fn replayed(seen: &[Value]) -> Vec<String> {
    seen.iter()
        .filter(|v| v["type"] == "user" && v["isReplay"] == true)
        .filter_map(|v| v["uuid"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn rewind_files_puts_back_what_write_and_bash_changed_and_keeps_the_persons_edits() {
    let project = Project::new();
    seed(&project);
    let server = mock(three_prompts(&project)).await;
    let mut app = App::start(
        &project,
        &server,
        &["--replay-user-messages", "--allowedTools", "Bash,Write"],
    );
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    app.response("req_1").await;
    let mut uuids = Vec::new();
    for (n, prompt) in ["prompt one", "prompt two", "prompt three"]
        .iter()
        .enumerate()
    {
        app.user(prompt).await;
        let replay = app
            .until("the replayed prompt", |v| {
                v["type"] == "user" && v["isReplay"] == true
            })
            .await;
        uuids.push(replay["uuid"].as_str().unwrap().to_owned());
        let result = app.result().await;
        assert_eq!(result["subtype"], "success", "prompt {}: {result}", n + 1);
        if n == 0 {
            // The person edits a file the session never touches, between the prompts.
            project.write("untouched.txt", "the person's edit\n");
        }
    }
    assert_eq!(project.read("a.txt"), "three\n");
    assert!(project.cwd().join("moved.txt").exists());
    app.request(
        "req_2",
        json!({"subtype": "rewind_files", "user_message_id": uuids[1]}),
    )
    .await;
    let answer = app.response("req_2").await;
    assert_eq!(answer["subtype"], "success", "{answer}");
    // A file Write changed is as it was before prompt two.
    assert_eq!(project.read("a.txt"), "one\n");
    // What Bash created is gone, what it deleted is back, what it moved is back.
    assert!(!project.cwd().join("new.txt").exists());
    assert_eq!(project.read("gone.txt"), "keep me\n");
    assert_eq!(project.read("old.txt"), "old place\n");
    assert!(!project.cwd().join("moved.txt").exists());
    // The person's edit of a file the session never touched stays.
    assert_eq!(project.read("untouched.txt"), "the person's edit\n");
    // The session goes on.
    app.user("prompt three").await;
    let result = app.result().await;
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(project.read("a.txt"), "three\n");
    let (status, _) = app.finish().await;
    assert!(status.success());
    // An unknown message id is a clear error.
    let _ = replayed(&[]);
}

#[tokio::test]
async fn a_file_changed_by_both_is_a_conflict_and_nothing_is_written() {
    let project = Project::new();
    seed(&project);
    let server = mock(three_prompts(&project)).await;
    let mut app = App::start(
        &project,
        &server,
        &["--replay-user-messages", "--allowedTools", "Bash,Write"],
    );
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    app.response("req_1").await;
    let mut uuids = Vec::new();
    for prompt in ["prompt one", "prompt two"] {
        app.user(prompt).await;
        let replay = app
            .until("the replayed prompt", |v| {
                v["type"] == "user" && v["isReplay"] == true
            })
            .await;
        uuids.push(replay["uuid"].as_str().unwrap().to_owned());
        app.result().await;
    }
    // The person edits a file the session changed.
    project.write("a.txt", "the person's version\n");
    app.request(
        "req_2",
        json!({"subtype": "rewind_files", "user_message_id": uuids[1]}),
    )
    .await;
    let answer = app.response("req_2").await;
    assert_eq!(answer["subtype"], "error", "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("a.txt"),
        "{answer}"
    );
    // Nothing was written.
    assert_eq!(project.read("a.txt"), "the person's version\n");
    assert!(project.cwd().join("new.txt").exists());
    app.request(
        "req_3",
        json!({"subtype": "rewind_files", "user_message_id": "no-such-message"}),
    )
    .await;
    let unknown = app.response("req_3").await;
    assert!(
        unknown["error"]
            .as_str()
            .unwrap()
            .contains("no-such-message"),
        "{unknown}"
    );
    let (status, seen) = app.finish().await;
    assert!(status.success());
    let _ = seen;
}

#[tokio::test]
async fn tine_rewind_lists_and_rewinds_the_latest_session_in_a_new_process() {
    let project = Project::new();
    seed(&project);
    let server = mock(three_prompts(&project)).await;
    for (n, prompt) in ["prompt one", "prompt two"].iter().enumerate() {
        let mut args = vec!["-p", prompt, "--allowedTools", "Bash,Write"];
        if n > 0 {
            args.insert(0, "-c");
        }
        let out = tine(&project, &server).args(args).run().await;
        out.assert_success();
    }
    let list = tine(&project, &server)
        .args(["rewind", "--list"])
        .run()
        .await;
    list.assert_success();
    assert!(list.stdout.contains("prompt two"), "{}", list.stdout);
    let rewind = tine(&project, &server).args(["rewind", "2"]).run().await;
    rewind.assert_success();
    assert_eq!(project.read("a.txt"), "one\n");
    assert!(!project.cwd().join("new.txt").exists());
    assert_eq!(project.read("old.txt"), "old place\n");
    let bad = tine(&project, &server).args(["rewind", "9"]).run().await;
    assert_eq!(bad.code(), Some(1));
    assert!(bad.stderr.contains("prompt 9"), "{}", bad.stderr);
}

#[tokio::test]
async fn rewinding_the_conversation_goes_on_from_before_the_prompt_reading_the_cache() {
    let project = Project::new();
    seed(&project);
    let server = mock(three_prompts(&project)).await;
    let mut app = App::start(&project, &server, &["--allowedTools", "Bash,Write"]);
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    app.response("req_1").await;
    for prompt in ["prompt one", "prompt two"] {
        app.user(prompt).await;
        app.result().await;
    }
    app.user("/rewind 2").await;
    let rewound = app.result().await;
    assert_eq!(rewound["subtype"], "success", "{rewound}");
    // The code went back too (both is the default).
    assert_eq!(project.read("a.txt"), "one\n");
    assert!(!project.cwd().join("new.txt").exists());
    app.user("prompt three").await;
    let result = app.result().await;
    assert_eq!(result["subtype"], "success", "{result}");
    let log = server.requests();
    let last = log.last().unwrap();
    let body = last.json().unwrap().to_string();
    assert!(
        body.contains("prompt one") && body.contains("prompt three"),
        "{body}"
    );
    assert!(
        !body.contains("prompt two"),
        "prompt two is on the old branch: {body}"
    );
    let usage = last.usage.unwrap();
    let prompt_tokens =
        usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.input_tokens;
    let share = usage.cache_read_input_tokens as f64 / prompt_tokens as f64;
    assert!(
        share >= 0.9,
        "read {share:.3} of the prompt from the cache: {usage:?}"
    );
    let (status, _) = app.finish().await;
    assert!(status.success());
}

#[tokio::test]
async fn rewind_lists_the_prompts_and_says_what_the_size_cap_left_out() {
    let project = Project::new();
    seed(&project);
    project.write("big.bin", &"x".repeat(4096));
    let server = mock(three_prompts(&project)).await;
    let mut app = App::start(
        &project,
        &server,
        &[
            "--allowedTools",
            "Bash,Write",
            "--settings",
            r#"{"checkpoints": {"maxFileBytes": 1024}}"#,
        ],
    );
    app.request("req_1", json!({"subtype": "initialize", "hooks": null}))
        .await;
    app.response("req_1").await;
    for prompt in ["prompt one", "prompt two"] {
        app.user(prompt).await;
        app.result().await;
    }
    app.user("/rewind").await;
    let listed = app.result().await;
    let text = listed["result"].as_str().unwrap_or_default().to_owned();
    assert!(
        text.contains("1. prompt one") && text.contains("2. prompt two"),
        "{listed}"
    );
    assert!(text.contains("big.bin"), "{listed}");
    app.user("/rewind 7").await;
    let bad = app.result().await;
    assert!(bad.to_string().contains("no prompt 7"), "{bad}");
    // The session goes on after a bad /rewind.
    app.user("prompt three").await;
    assert_eq!(app.result().await["subtype"], "success");
    let (status, _) = app.finish().await;
    assert!(status.success());
}
