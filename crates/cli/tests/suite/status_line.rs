//! The settings' `statusLine` command through the `tine` binary: in a real terminal (a tmux
//! pane) its line is on screen, above tine's own with the mode, and updated after a turn; the
//! command's environment has no credential of tine's; headless `-p` never runs it. Skipped,
//! saying so, where tmux is not installed.

use std::path::Path;

use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Reply, Scenario};

use super::terminal::{Tmux, untrusted_script};
use super::{mock, tine};

/// A status line script that keeps its environment and each input in `dir`, and prints a
/// coloured line naming the model and the session's cost.
fn settings_with_status_line(project: &Project, dir: &Path) {
    let script = dir.join("statusline.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ninput=$(cat)\nenv > '{env}'\nprintf '%s\\n' \"$input\" >> '{inputs}'\n\
             model=$(printf '%s' \"$input\" | sed 's/.*\"display_name\":\"\\([^\"]*\\)\".*/\\1/')\n\
             cost=$(printf '%s' \"$input\" | sed 's/.*\"total_cost_usd\":\\([0-9.e-]*\\).*/\\1/')\n\
             printf '\\033[35mMY STATUS\\033[0m %s cost=%s\\n' \"$model\" \"$cost\"\n",
            env = dir.join("env").display(),
            inputs = dir.join("inputs.jsonl").display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let settings = serde_json::json!({
        "statusLine": {"type": "command", "command": script.display().to_string(), "padding": 1}
    });
    std::fs::write(project.home().join("settings.json"), settings.to_string()).unwrap();
}

/// The `cost=` figure the script printed.
fn cost_of(line: &str) -> Option<f64> {
    line.split("cost=")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_line_command_is_on_screen_in_a_terminal_and_never_headless() {
    let project = Project::new();
    let dir = project.root().join("status");
    std::fs::create_dir_all(&dir).unwrap();
    settings_with_status_line(&project, &dir);
    let server = mock(Scenario::new().default_reply(Reply::text("Hello from the model."))).await;

    // Headless: the same settings, no run.
    tine(&project, &server)
        .args(["-p", "hello"])
        .run()
        .await
        .assert_success();
    assert!(
        !dir.join("inputs.jsonl").exists(),
        "-p ran the status line command"
    );

    let Some(tmux) = Tmux::start(project.root()).await else {
        return;
    };
    project.trust();
    let run = untrusted_script(&project, &server, "ui", "");
    tmux.open("ui", &run).await;
    let screen = tmux.wait_for("ui", "MY STATUS").await;
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows.iter().position(|r| r.contains("MY STATUS")).unwrap();
    // 2 + `padding` columns in; tine's line with the mode under it.
    assert!(rows[at].starts_with("   MY STATUS "), "{screen}");
    assert_eq!(cost_of(rows[at]), Some(0.0), "{screen}");
    assert!(
        rows.get(at + 1).is_some_and(|r| r.contains("shift+tab")),
        "{screen}"
    );

    // Its environment: the terminal's size, no credential of tine's.
    let env = std::fs::read_to_string(dir.join("env")).unwrap();
    assert!(env.lines().any(|l| l == "COLUMNS=100"), "{env}");
    assert!(!env.contains("ANTHROPIC_API_KEY"), "{env}");
    assert!(!env.contains("test-key"), "{env}");

    // A turn changes the figures; the line follows.
    tmux.type_text("ui", "hello").await;
    tmux.key("ui", "Enter").await;
    tmux.wait_for("ui", "Hello from the model.").await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let screen = tmux.screen("ui").await;
        let line = screen.lines().find(|l| l.contains("MY STATUS"));
        if line.and_then(cost_of).is_some_and(|cost| cost > 0.0) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the line kept the first figures:\n{screen}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    tmux.type_text("ui", "/exit").await;
    tmux.key("ui", "Enter").await;
    tmux.wait_exited("ui", &project.root().join("ui")).await;
}
