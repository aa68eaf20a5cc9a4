//! The prompt cache across sessions: the system prompt depends only on settings and version
//! (git status and the date go in the first user message, frozen in the transcript), so two
//! sessions of a project share the cached system prompt, and `tine -c` after an edit sends the
//! previous session's last request again, byte for byte, and reads it from the cache. Over
//! both wires (`both_wires!`): on chat completions the server's automatic prefix cache gives
//! the same reads.

use std::path::Path;

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};

use super::mock;
use super::wire::{Wire, both_wires, model_bodies, tine_on};

both_wires!(
    continue_after_an_edit_replays_the_session_and_reads_it_from_the_cache,
    git_status_and_date_are_in_the_first_user_message_not_the_system_prompt,
);

fn git(dir: &Path, args: &[&str]) -> bool {
    std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A project that is a git repository with `notes.txt` committed; `None` without git.
fn repository() -> Option<Project> {
    let project = Project::new();
    project.write("notes.txt", "first line\n");
    let cwd = project.cwd();
    let ok = git(cwd, &["init", "-q"])
        && git(cwd, &["add", "notes.txt"])
        && git(cwd, &["commit", "-q", "-m", "start"]);
    if !ok {
        eprintln!("git not available; skipping");
        return None;
    }
    Some(project)
}

/// The model reads `notes.txt`, edits it, then answers; any later prompt gets "Anything else?".
fn editing_scenario(project: &Project) -> Scenario {
    let path = project.cwd().join("notes.txt").display().to_string();
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("fix the notes")
                .assistant_turns(0)
                .reply(Reply::tool_use("Read", json!({"file_path": path}))),
        )
        .rule(
            Rule::new()
                .assistant_turns(1)
                .first_user_contains("fix the notes")
                .reply(Reply::tool_use(
                    "Edit",
                    json!({"file_path": path, "old_string": "first", "new_string": "second"}),
                )),
        )
        .rule(
            Rule::new()
                .assistant_turns(2)
                .first_user_contains("fix the notes")
                .reply(Reply::text("Fixed the notes.")),
        )
        .default_reply(Reply::text("Anything else?"))
}

/// The request with every `cache_control` removed: breakpoints move from request to request
/// and are not part of the cache key.
fn without_breakpoints(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("cache_control");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

fn first_user_text(body: &Value) -> String {
    body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn system_text(body: &Value) -> String {
    body["system"].to_string()
}

async fn git_status_and_date_are_in_the_first_user_message_not_the_system_prompt(wire: Wire) {
    let Some(project) = repository() else { return };
    let server = mock(Scenario::new().default_reply(Reply::text("Hello."))).await;
    project.write("notes.txt", "changed before the first session\n");
    tine_on(wire, &project, &server)
        .args(["-p", "hi"])
        .run()
        .await
        .assert_success();
    // An edit between two new sessions of the project.
    project.write("notes.txt", "changed again\n");
    project.write("new.txt", "x\n");
    tine_on(wire, &project, &server)
        .args(["-p", "hi again"])
        .run()
        .await
        .assert_success();

    let bodies = model_bodies(&server);
    let (first, second) = (&bodies[0], &bodies[1]);
    let today = today_utc();
    for body in [first, second] {
        let system = system_text(body);
        assert!(!system.contains("notes.txt") && !system.contains("Status:"));
        assert!(!system.contains(&today), "no date in the system prompt");
        let context = first_user_text(body);
        assert!(context.contains(" M notes.txt"), "{context}");
        assert!(
            context.contains(&format!("Today's date: {today}")),
            "{context}"
        );
    }
    assert!(!first_user_text(first).contains("new.txt"));
    assert!(first_user_text(second).contains("?? new.txt"));
    // The system prompt (and the tool array) are the same bytes in both sessions.
    assert_eq!(
        without_breakpoints(first["system"].clone()),
        without_breakpoints(second["system"].clone())
    );
    assert_eq!(first["tools"], second["tools"]);
    // So the second session read the first one's cached tools and system prompt.
    let usage = server.requests()[1].usage.unwrap();
    assert!(usage.cache_read_input_tokens > 1024, "{usage:?}");
}

/// Today as tine writes it (UTC, `YYYY-MM-DD`).
fn today_utc() -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

async fn continue_after_an_edit_replays_the_session_and_reads_it_from_the_cache(wire: Wire) {
    let Some(project) = repository() else { return };
    let server = mock(editing_scenario(&project)).await;
    let first = tine_on(wire, &project, &server)
        .args([
            "-p",
            "fix the notes",
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    first.assert_success();
    assert_eq!(first.json()["result"], "Fixed the notes.");
    assert_eq!(project.read("notes.txt"), "second line\n");
    let before = server.requests().len();
    assert_eq!(before, 3);

    let next = tine_on(wire, &project, &server)
        .args(["-c", "-p", "thanks", "--output-format", "json"])
        .run()
        .await;
    next.assert_success();
    assert_eq!(next.json()["result"], "Anything else?");

    let log = server.requests();
    if wire == Wire::OpenAi {
        // The chat request itself: the previous one's messages (system first) and tools again.
        let (previous, resumed) = (log[before - 1].json().unwrap(), log[before].json().unwrap());
        let (old, new) = (
            previous["messages"].as_array().unwrap(),
            resumed["messages"].as_array().unwrap(),
        );
        assert_eq!(&new[..old.len()], &old[..]);
        assert_eq!(previous["tools"], resumed["tools"]);
    }
    let bodies = model_bodies(&server);
    let previous = without_breakpoints(bodies[before - 1].clone());
    let resumed = without_breakpoints(bodies[before].clone());
    // Byte for byte up to the end of the previous session's last request.
    assert_eq!(previous["system"], resumed["system"]);
    assert_eq!(previous["tools"], resumed["tools"]);
    let old = previous["messages"].as_array().unwrap();
    let new = resumed["messages"].as_array().unwrap();
    assert_eq!(
        new.len(),
        old.len() + 2,
        "the last reply and the new prompt"
    );
    assert_eq!(&new[..old.len()], &old[..]);
    // The frozen first message still shows the status from when the session began.
    let context = first_user_text(&resumed);
    assert!(context.contains("Status:\n(clean)"), "{context}");

    let usage = log[before].usage.unwrap();
    let prompt =
        usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.input_tokens;
    let share = usage.cache_read_input_tokens as f64 / prompt as f64;
    assert!(
        share >= 0.95,
        "read {share:.3} of the prompt from the cache: {usage:?}"
    );
}
