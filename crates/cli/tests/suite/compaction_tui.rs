//! `/compact FOCUS` typed in the real binary's UI reaches the session's compaction: the binary
//! runs on a pseudo-terminal (`script`), resumes a conversation with `-c`, and gets
//! `/compact keep the parser design` as keystrokes. The mock sees the summary request with the
//! focus in its instruction, the transcript gets its boundary, and `/exit` ends the UI.
//!
//! The test is the terminal, so it reads what tine draws as a terminal does ([`Screen`]): ratatui
//! writes only the cells that changed, moving the cursor over the ones that did not (the blanks
//! between typed words, when those cells were blank already), so the bytes never hold the typed
//! line whole.

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

async fn eventually(what: &str, screen: &Mutex<Screen>, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "never: {what}; the screen:\n{}",
            screen.lock().unwrap().text()
        );
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

/// The cells of a `ROWS`×`COLS` terminal as tine's output leaves them: printable characters at
/// the cursor, cursor positioning (`CSI row;col H`), erasing (`CSI J`, `CSI K`), carriage
/// return and line feed; every other sequence (colours, modes) changes no cell.
struct Screen {
    cells: Vec<Vec<char>>,
    row: usize,
    col: usize,
    /// Bytes of an escape sequence or UTF-8 character cut by a read.
    pending: Vec<u8>,
}

const ROWS: usize = 40;
const COLS: usize = 120;

impl Screen {
    fn new() -> Self {
        Self {
            cells: vec![vec![' '; COLS]; ROWS],
            row: 0,
            col: 0,
            pending: Vec::new(),
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        let data = std::mem::take(&mut self.pending);
        let mut i = 0;
        while i < data.len() {
            match self.step(&data[i..]) {
                Some(used) => i += used,
                None => {
                    self.pending = data[i..].to_vec();
                    return;
                }
            }
        }
    }

    /// Applies what starts `data`; returns how many bytes it took, `None` if it is cut.
    fn step(&mut self, data: &[u8]) -> Option<usize> {
        match data[0] {
            0x1b => self.escape(data),
            b'\r' => {
                self.col = 0;
                Some(1)
            }
            b'\n' => {
                self.row = (self.row + 1).min(ROWS - 1);
                Some(1)
            }
            b if b < 0x20 || b == 0x7f => Some(1),
            b => {
                let len = match b {
                    0xf0.. => 4,
                    0xe0.. => 3,
                    0xc0.. => 2,
                    _ => 1,
                };
                let text = std::str::from_utf8(data.get(..len)?).unwrap_or("?");
                self.put(text.chars().next().unwrap_or('?'));
                Some(len)
            }
        }
    }

    fn escape(&mut self, data: &[u8]) -> Option<usize> {
        match *data.get(1)? {
            b'[' => {
                let end = 2 + data[2..].iter().position(|b| (0x40..=0x7e).contains(b))?;
                let params = String::from_utf8_lossy(&data[2..end]);
                let numbers: Vec<usize> = params
                    .split(';')
                    .map(|p| p.trim_start_matches('?').parse().unwrap_or(0))
                    .collect();
                let arg = |i: usize| numbers.get(i).copied().filter(|n| *n > 0).unwrap_or(1);
                match data[end] {
                    b'H' | b'f' => {
                        self.row = (arg(0) - 1).min(ROWS - 1);
                        self.col = (arg(1) - 1).min(COLS - 1);
                    }
                    b'J' if numbers[0] == 2 || numbers[0] == 3 => {
                        self.cells = vec![vec![' '; COLS]; ROWS];
                    }
                    b'J' => {
                        self.cells[self.row][self.col..].fill(' ');
                        for row in &mut self.cells[self.row + 1..] {
                            row.fill(' ');
                        }
                    }
                    b'K' => self.cells[self.row][self.col..].fill(' '),
                    _ => {}
                }
                Some(end + 1)
            }
            // OSC: up to BEL or ST.
            b']' => {
                let end = data.iter().position(|b| *b == 0x07)?;
                Some(end + 1)
            }
            _ => Some(2),
        }
    }

    fn put(&mut self, c: char) {
        if self.col >= COLS {
            self.col = 0;
            self.row = (self.row + 1).min(ROWS - 1);
        }
        self.cells[self.row][self.col] = c;
        self.col += 1;
    }

    fn shows(&self, text: &str) -> bool {
        self.cells
            .iter()
            .any(|row| row.iter().collect::<String>().contains(text))
    }

    fn text(&self) -> String {
        let rows: Vec<String> = self
            .cells
            .iter()
            .map(|row| row.iter().collect::<String>().trim_end().to_owned())
            .collect();
        rows.join("\n")
    }
}

#[tokio::test]
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

    // The UI on a 120x40 pseudo-terminal, resuming that conversation (in a folder the person
    // trusted before).
    project.trust();
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
    let screen = Arc::new(Mutex::new(Screen::new()));
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
            sink.lock().unwrap().feed(chunk);
        }
    });
    let shown = |text: &str| screen.lock().unwrap().shows(text);
    // The replayed conversation is on the screen: the UI is up.
    eventually("the replayed reply on the screen", &screen, || {
        shown("recursive-descent")
    })
    .await;

    keys.send(b"/compact keep the parser design".to_vec())
        .unwrap();
    eventually("the command typed", &screen, || {
        shown("keep the parser design")
    })
    .await;
    keys.send(b"\r".to_vec()).unwrap();

    eventually("the summary request", &screen, || {
        !summary_requests(&server).is_empty()
    })
    .await;
    let summaries = summary_requests(&server);
    assert_eq!(summaries.len(), 1);
    assert!(summaries[0].contains("keep the parser design"), "the focus");
    // The session's compaction wrote its boundary to the transcript.
    eventually("the boundary in the transcript", &screen, || {
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
