//! Bare `tine` in a real terminal (a tmux pane, its own tmux server): the prompt typed, the
//! reply streamed with markdown rendered, a Write asked in the permission dialog and approved,
//! the file on disk, `/exit` restoring the terminal (modes as before, main screen, no mouse
//! reporting, cursor shown) with the transcript complete; then `tine -c` showing the
//! conversation again and Ctrl-D leaving it; Ctrl-Z from a shell with job control giving the
//! terminal back and `fg` bringing the UI back. Skipped, saying so, where tmux is not installed.
//!
//! Under load the pane is polled with a generous deadline; no sleep is an assertion.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tokio::process::Command;

use super::{TINE, mock};

/// How long any one thing may take to appear on the screen (a loaded machine is slow; a
/// broken build fails instead of hanging).
const PATIENCE: Duration = Duration::from_secs(90);
const POLL: Duration = Duration::from_millis(100);

/// A tmux server of this test alone (its own socket), with one session per `tine` run.
pub(super) struct Tmux {
    socket: PathBuf,
    /// Read when the server starts (with the first session).
    config: PathBuf,
}

impl Tmux {
    /// `None` (the test says it is skipped) when tmux cannot run here.
    pub(super) async fn start(dir: &Path) -> Option<Self> {
        let found = Command::new("tmux").arg("-V").output().await;
        if !matches!(&found, Ok(out) if out.status.success()) {
            eprintln!(
                "SKIPPED: tmux is not installed; the terminal test needs it for a real terminal"
            );
            return None;
        }
        let config = dir.join("tmux.conf");
        // The pane stays after tine exits, so its screen and modes can be read.
        std::fs::write(&config, "set -g remain-on-exit on\nset -g status off\n").unwrap();
        Some(Self {
            socket: dir.join("tmux.sock"),
            config,
        })
    }

    pub(super) async fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg(&self.config)
            .args(args)
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A 100×30 session `name` running `script` (a shell script's path).
    pub(super) async fn open(&self, name: &str, script: &Path) {
        self.run(&[
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            "100",
            "-y",
            "30",
            script.to_str().unwrap(),
        ])
        .await;
    }

    pub(super) async fn screen(&self, name: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", name]).await
    }

    /// The screen with its attributes as escape sequences.
    async fn styled_screen(&self, name: &str) -> String {
        self.run(&["capture-pane", "-p", "-e", "-t", name]).await
    }

    async fn pane(&self, name: &str, format: &str) -> String {
        self.run(&["display-message", "-p", "-t", name, format])
            .await
            .trim()
            .to_owned()
    }

    pub(super) async fn type_text(&self, name: &str, text: &str) {
        self.run(&["send-keys", "-t", name, "-l", text]).await;
    }

    pub(super) async fn key(&self, name: &str, key: &str) {
        self.run(&["send-keys", "-t", name, key]).await;
    }

    /// Polls the screen until `wanted` is on it; returns that screen.
    pub(super) async fn wait_for(&self, name: &str, wanted: &str) -> String {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let screen = self.screen(name).await;
            if screen.contains(wanted) {
                return screen;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "`{wanted}` never appeared; the screen:\n{screen}"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Polls until the pane's `format` reads `wanted` (and the screen shows `text`).
    async fn wait_pane(&self, name: &str, format: &str, wanted: &str, text: &str) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let value = self.pane(name, format).await;
            let screen = self.screen(name).await;
            if value == wanted && screen.contains(text) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{format} is {value}, not {wanted} (or no `{text}`); the screen:\n{screen}"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Polls until `tine` in session `name` has exited (the script wrote its exit code).
    pub(super) async fn wait_exited(&self, name: &str, dir: &Path) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while !dir.join("code").exists() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "tine did not exit; the screen:\n{}",
                self.screen(name).await
            );
            tokio::time::sleep(POLL).await;
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// A shell script that records the terminal's modes, runs `tine ARGS` in `project` with a
/// clean environment against `server`, then records the modes again and its exit code, and
/// stays (a dead pane's cursor reads as hidden, so the shell keeps the pane alive).
pub(super) fn script(project: &Project, server: &MockServer, name: &str, args: &str) -> PathBuf {
    // The person trusted this folder before (the trust question is `trust`'s to test).
    project.trust();
    untrusted_script(project, server, name, args)
}

/// [`script`] without trusting the folder first.
pub(super) fn untrusted_script(
    project: &Project,
    server: &MockServer,
    name: &str,
    args: &str,
) -> PathBuf {
    let dir = project.root().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let q = |p: &Path| format!("'{}'", p.display());
    let text = format!(
        "#!/bin/sh\n\
         cd {cwd}\n\
         stty -g > {dir}/before\n\
         env -i PATH=\"$PATH\" TERM=\"$TERM\" HOME={home} TINE_HOME={home} \
         TINE_MANAGED_SETTINGS={managed} TINE_DISABLE_AUTO_MEMORY=1 \
         ANTHROPIC_API_KEY=test-key ANTHROPIC_BASE_URL={url} {tine} {args}\n\
         status=$?\n\
         stty -g > {dir}/after\n\
         echo $status > {dir}/code.part && mv {dir}/code.part {dir}/code\n\
         exec sleep 3600\n",
        cwd = q(project.cwd()),
        dir = q(&dir),
        home = q(project.home()),
        managed = q(&project.root().join("no-managed.json")),
        url = server.base_url(),
        tine = TINE,
    );
    let path = dir.join("run.sh");
    std::fs::write(&path, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// What `script` recorded: the exit code, and whether the modes after equal those before.
pub(super) fn recorded(project: &Project, name: &str) -> (String, bool) {
    let dir = project.root().join(name);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    let (before, after) = (read("before"), read("after"));
    assert!(
        !before.trim().is_empty(),
        "the terminal modes were not recorded"
    );
    (read("code").trim().to_owned(), before == after)
}

/// The terminal is the shell's again: the main screen, no mouse reporting, the cursor shown.
async fn assert_restored(tmux: &Tmux, project: &Project, name: &str) {
    let (code, same_modes) = recorded(project, name);
    assert_eq!(code, "0", "tine's exit code");
    assert!(
        same_modes,
        "the terminal's modes (stty -g) differ after tine"
    );
    let flags = tmux
        .pane(
            name,
            "#{alternate_on} #{mouse_any_flag} #{mouse_sgr_flag} #{cursor_flag}",
        )
        .await;
    assert_eq!(
        flags, "0 0 0 1",
        "alternate screen, mouse reporting, SGR mouse, cursor shown"
    );
}

fn scenario(file: &Path) -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("write the notes")
                .reply(Reply::text("Writing the notes.").with_tool_use(
                    "Write",
                    json!({"file_path": file, "content": "hello from tine\n"}),
                )),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("The notes are written.")),
        )
        .default_reply(Reply::text("Hello **there**, I am the model.").chunk_delay_ms(5))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tine_in_a_terminal_streams_asks_writes_and_restores_the_terminal() {
    let project = Project::new();
    let Some(tmux) = Tmux::start(project.root()).await else {
        return;
    };
    let file = project.cwd().join("notes.txt");
    let server = mock(scenario(&file)).await;

    let run = script(&project, &server, "first", "");
    tmux.open("first", &run).await;
    tmux.wait_for("first", "shift+tab to cycle").await;

    // A prompt; the reply streams in with **bold** shown bold, without the asterisks.
    tmux.type_text("first", "say hi").await;
    tmux.key("first", "Enter").await;
    let screen = tmux.wait_for("first", "I am the model.").await;
    assert!(
        screen.contains("> say hi"),
        "the prompt is in the transcript:\n{screen}"
    );
    assert!(screen.contains("Hello there, I am the model."), "{screen}");
    assert!(!screen.contains("**"), "markdown rendered:\n{screen}");
    let styled = tmux.styled_screen("first").await;
    assert!(
        styled.contains("\u{1b}[1mthere"),
        "`there` is drawn bold:\n{styled:?}"
    );

    // A Write needs approval: the dialog names the tool and the file; Enter approves once.
    tmux.type_text("first", "please write the notes").await;
    tmux.key("first", "Enter").await;
    let dialog = tmux.wait_for("first", "Do you want to proceed?").await;
    assert!(dialog.contains("Write file"), "{dialog}");
    // The file as the call line shows it: relative to the project.
    assert!(dialog.contains("  notes.txt"), "{dialog}");
    assert!(dialog.contains("Write(notes.txt)"), "{dialog}");
    assert!(dialog.contains("1. Yes"), "{dialog}");
    assert!(
        dialog.contains("+ hello from tine"),
        "the preview shows the content:\n{dialog}"
    );
    assert!(!file.exists(), "nothing is written before the answer");
    tmux.key("first", "Enter").await;
    let screen = tmux.wait_for("first", "The notes are written.").await;
    assert!(!screen.contains("Do you want to proceed?"), "{screen}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello from tine\n");

    // /exit: the terminal is restored and the way back is printed.
    tmux.type_text("first", "/exit").await;
    tmux.key("first", "Enter").await;
    tmux.wait_exited("first", &project.root().join("first"))
        .await;
    assert_restored(&tmux, &project, "first").await;
    let after = tmux.screen("first").await;
    let id = after
        .lines()
        .find_map(|l| l.trim().strip_prefix("tine -r "))
        .unwrap_or_else(|| panic!("no resume line after exit:\n{after}"))
        .trim()
        .to_owned();

    // The transcript is complete: both prompts, the Write and its result, the last reply.
    let records = project.transcript(&id);
    let text: Vec<String> = records.iter().map(Value::to_string).collect();
    let has = |needle: &str| text.iter().any(|line| line.contains(needle));
    for needle in [
        "say hi",
        "please write the notes",
        "\"name\":\"Write\"",
        "tool_result",
        "The notes are written.",
    ] {
        assert!(has(needle), "the transcript lacks {needle}");
    }

    // `tine -c` opens the UI with the conversation shown; Ctrl-D on the empty prompt leaves.
    let again = script(&project, &server, "second", "-c");
    tmux.open("second", &again).await;
    let screen = tmux.wait_for("second", "The notes are written.").await;
    assert!(screen.contains("> please write the notes"), "{screen}");
    tmux.key("second", "C-d").await;
    tmux.wait_exited("second", &project.root().join("second"))
        .await;
    assert_restored(&tmux, &project, "second").await;

    // Ctrl-Z from an interactive shell: the terminal is the shell's while tine is stopped,
    // `fg` brings the UI back as it was.
    let third = script(&project, &server, "third", "-c");
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "third",
        "-x",
        "100",
        "-y",
        "30",
        "sh -i",
    ])
    .await;
    tmux.type_text("third", &format!("'{}'", third.display()))
        .await;
    tmux.key("third", "Enter").await;
    tmux.wait_for("third", "The notes are written.").await;
    tmux.key("third", "C-z").await;
    tmux.wait_pane("third", "#{alternate_on}", "0", "Stopped")
        .await;
    assert!(
        !project.root().join("third/code").exists(),
        "tine ended instead of stopping"
    );
    tmux.type_text("third", "fg").await;
    tmux.key("third", "Enter").await;
    tmux.wait_pane("third", "#{alternate_on}", "1", "The notes are written.")
        .await;
    tmux.key("third", "C-d").await;
    tmux.wait_exited("third", &project.root().join("third"))
        .await;
    assert_restored(&tmux, &project, "third").await;
    server.stop().await;
}
