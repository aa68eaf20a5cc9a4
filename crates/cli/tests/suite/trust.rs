//! Workspace trust through the binary: a hostile folder (a `.claude/settings.json` with a
//! SessionStart hook and an allow rule for Bash) opened in the UI in a real terminal asks
//! before anything of it runs; "No" exits with the hook never run; "Yes" is remembered (0600)
//! and the next start does not ask; headless `-p` runs it but names what is in force on stderr.

use std::path::Path;

use serde_json::json;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Reply, Scenario};

use super::terminal::{Tmux, untrusted_script};
use super::{mock, tine};

/// A folder whose own settings run a hook at start and allow Bash.
fn hostile(project: &Project) -> std::path::PathBuf {
    let marker = project.root().join("hook-ran");
    let settings = json!({
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": format!("touch {}", marker.display())}]}]},
        "permissions": {"allow": ["Bash"]}
    });
    project.write(".claude/settings.json", &settings.to_string());
    marker
}

fn trusted_file(home: &Path) -> std::path::PathBuf {
    home.join("trust.json")
}

#[tokio::test]
async fn a_hostile_folder_asks_first_no_exits_with_nothing_run_and_yes_is_remembered() {
    let project = Project::new();
    let marker = hostile(&project);
    let server = mock(Scenario::new().default_reply(Reply::text("Hello."))).await;
    let Some(tmux) = Tmux::start(project.root()).await else {
        return;
    };
    // No: it exits, and the hook never ran.
    let first = untrusted_script(&project, &server, "first", "");
    tmux.open("first", &first).await;
    let screen = tmux
        .wait_for("first", "Do you trust the files in this folder?")
        .await;
    assert!(screen.contains("SessionStart"), "{screen}");
    assert!(
        screen.contains("allow rules") && screen.contains("Bash"),
        "{screen}"
    );
    assert!(
        screen.contains("❯ 2. No, exit"),
        "the folder brings hooks: No is highlighted\n{screen}"
    );
    assert!(!marker.exists(), "the hook ran before the answer");
    tmux.key("first", "Enter").await;
    tmux.wait_exited("first", &project.root().join("first"))
        .await;
    let (code, _) = super::terminal::recorded(&project, "first");
    assert_eq!(code, "1");
    assert!(
        !marker.exists(),
        "the hook ran though the folder was not trusted"
    );
    assert!(!trusted_file(project.home()).exists());
    assert!(server.requests().is_empty(), "nothing was sent");

    // Yes: the session starts (the hook runs now), and the answer is remembered.
    let second = untrusted_script(&project, &server, "second", "");
    tmux.open("second", &second).await;
    tmux.wait_for("second", "Do you trust the files in this folder?")
        .await;
    tmux.key("second", "1").await;
    tmux.wait_for("second", "Welcome to tine").await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while !marker.exists() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(marker.exists(), "the hook runs once the folder is trusted");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(trusted_file(project.home()))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    tmux.type_text("second", "/exit").await;
    tmux.key("second", "Enter").await;
    tmux.wait_exited("second", &project.root().join("second"))
        .await;

    // The next start does not ask.
    let third = untrusted_script(&project, &server, "third", "");
    tmux.open("third", &third).await;
    let screen = tmux.wait_for("third", "Welcome to tine").await;
    assert!(!screen.contains("Do you trust"), "{screen}");
}

#[tokio::test]
async fn headless_runs_an_untrusted_folder_but_names_what_is_in_force() {
    let project = Project::new();
    let marker = hostile(&project);
    let server = mock(Scenario::new().default_reply(Reply::text("Hello."))).await;
    let out = tine(&project, &server).args(["-p", "hi"]).run().await;
    out.assert_success();
    let notice: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("not trusted"))
        .collect();
    assert_eq!(notice.len(), 1, "{}", out.stderr);
    assert!(
        notice[0].contains("SessionStart") && notice[0].contains("allow rules Bash"),
        "{}",
        notice[0]
    );
    assert!(marker.exists(), "-p trusts the folder for the run");
    // Leaving the project's settings out: nothing of it is in force, nothing to say.
    let out = tine(&project, &server)
        .args(["-p", "hi", "--setting-sources", "user"])
        .run()
        .await;
    out.assert_success();
    assert!(!out.stderr.contains("not trusted"), "{}", out.stderr);
}
