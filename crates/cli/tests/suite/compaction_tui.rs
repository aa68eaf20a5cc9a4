//! `/compact FOCUS` typed in the real binary's UI reaches the session's compaction: the binary
//! runs on a pseudo-terminal (`script`), resumes a conversation with `-c`, and gets
//! `/compact keep the parser design` as keystrokes. The mock sees the summary request with the
//! focus in its instruction, the transcript gets its boundary, and `/exit` ends the UI.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{TINE, mock, tine};

const MARKER: &str = "Your task is to write a detailed summary of the conversation so far";
/// Generous bounds so a broken build fails instead of hanging; nothing asserts on durations.
const PATIENCE: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(25);

fn scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(MARKER)
                .named("summary")
                .reply(Reply::text(
                    "<analysis>notes</analysis><summary>The user designs a parser.</summary>",
                )),
        )
        .rule(
            Rule::new()
                .last_user_contains("the parser")
                .reply(Reply::text("Noted: a recursive-descent parser.")),
        )
        .default_reply(Reply::text("OK."))
}

async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(POLL).await;
    }
}

fn summary_requests(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .filter(|b| b.contains(MARKER))
        .collect()
}

#[tokio::test]
#[ignore = "fails on main since the last landings (the typed command is never found on the pty screen); the driver test covers /compact in the UI; see the issue 13/14 note"]
async fn compact_typed_in_the_ui_compacts_the_session_with_its_focus() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("this test needs `script` (util-linux) to give tine a terminal");
    }
    let server = mock(scenario()).await;
    let project = Project::new();
    tine(&project, &server)
        .args(["-p", "we are writing the parser"])
        .run()
        .await
        .assert_success();

    // The UI on a 120x40 pseudo-terminal, resuming that conversation.
    let mut child = tokio::process::Command::new("script")
        .args([
            "-qfec",
            &format!("stty rows 40 cols 120; exec '{TINE}' -c"),
            "/dev/null",
        ])
        .current_dir(project.cwd())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", project.home())
        .env("TINE_HOME", project.home())
        .env(
            "TINE_MANAGED_SETTINGS",
            project.root().join("no-managed.json"),
        )
        .env("TINE_DISABLE_AUTO_MEMORY", "1")
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("TERM", "xterm-256color")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // The test is the terminal: it keeps what tine draws and answers its queries (cursor
    // position, device attributes), as a terminal emulator would.
    let screen = Arc::new(Mutex::new(Vec::<u8>::new()));
    let (keys, mut to_tty) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let mut stdin = child.stdin.take().unwrap();
    tokio::spawn(async move {
        while let Some(bytes) = to_tty.recv().await {
            if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
    });
    let mut stdout = child.stdout.take().unwrap();
    let sink = Arc::clone(&screen);
    let answers = keys.clone();
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let chunk = &buf[..n];
            for (query, answer) in [
                (&b"\x1b[6n"[..], &b"\x1b[1;1R"[..]),
                (b"\x1b[c", b"\x1b[?62;22c"),
            ] {
                let asked = chunk.windows(query.len()).filter(|w| *w == query).count();
                for _ in 0..asked {
                    let _ = answers.send(answer.to_vec());
                }
            }
            sink.lock().unwrap().extend_from_slice(chunk);
        }
    });
    let shown = |text: &str| String::from_utf8_lossy(&screen.lock().unwrap()).contains(text);
    // The replayed conversation is on the screen: the UI is up.
    eventually("the replayed reply on the screen", || {
        shown("recursive-descent")
    })
    .await;

    keys.send(b"/compact keep the parser design".to_vec())
        .unwrap();
    eventually("the command typed", || shown("keep the parser design")).await;
    keys.send(b"\r".to_vec()).unwrap();

    eventually("the summary request", || {
        !summary_requests(&server).is_empty()
    })
    .await;
    let summaries = summary_requests(&server);
    assert_eq!(summaries.len(), 1);
    assert!(summaries[0].contains("keep the parser design"), "the focus");
    // The session's compaction wrote its boundary to the transcript.
    eventually("the boundary in the transcript", || {
        std::fs::read_dir(project.transcripts_dir())
            .unwrap()
            .flatten()
            .any(|e| {
                std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("compact_boundary"))
            })
    })
    .await;

    keys.send(b"/exit\r".to_vec()).unwrap();
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("the UI did not exit on /exit")
        .unwrap();
    assert!(status.success(), "{status:?}");
}
