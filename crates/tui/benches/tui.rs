//! `cargo xtask bench tui`: the UI's cost with a long session.
//!
//! - frame time (p50/p99) of a 10k-message transcript on a 120×40 TestBackend while scrolling
//!   (PageUp, wheel, PageDown) and while a reply streams at the end (markdown with code, then one long paragraph, also
//!   through crossterm's escape sequences into a counting sink); target p99 ≤ 2 ms;
//! - CPU of 50 PageUps, each drawn; target well under 1 s;
//! - replaying the 10k messages into the app and drawing the first frame (resume); target ≤ 1 s
//!   for a 500-turn session, which this exceeds;
//! - idle CPU of the real terminal loop over 10 s, in a pseudo-terminal under tmux (the bench
//!   runs itself as the UI); target ≈ 0.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use nix::time::{ClockId, clock_gettime};
use nix::unistd::Pid;
use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::{Terminal, Viewport};
use serde_json::json;
use tine_session::{
    Event, HistoryItem, Op, OpId, QueryEvent, SessionClosed, SessionEvent, ToolDisplay, ToolOutput,
};
use tine_tui::{App, AppConfig, Submitter, TerminalOptions};

const MESSAGES: usize = 10_000;
const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
const CHILD_ENV: &str = "TINE_TUI_BENCH_CHILD";

fn main() {
    if let Ok(pid_file) = std::env::var(CHILD_ENV) {
        idle_child(PathBuf::from(pid_file));
        return;
    }
    let start = Instant::now();
    let mut app = App::new(AppConfig::default());
    for event in session_events(MESSAGES) {
        app.handle(event);
    }
    let mut terminal = match Terminal::new(TestBackend::new(WIDTH, HEIGHT)) {
        Ok(t) => t,
        Err(never) => match never {},
    };
    draw(&mut terminal, &mut app);
    let resume = start.elapsed();

    // Scrolling: 150 PageUps, 150 wheel notches down, 150 PageDowns, a frame each.
    let mut frames = Vec::new();
    let mut frames_cpu = Vec::new();
    for step in 0..450 {
        let t = Instant::now();
        let c = thread_cpu();
        if step < 150 {
            app.handle_key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE));
        } else if step < 300 {
            app.handle_mouse(MouseEvent {
                kind: MouseEventKind::ScrollDown,
                column: 0,
                row: 0,
                modifiers: KeyModifiers::NONE,
            });
        } else {
            app.handle_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
        }
        draw(&mut terminal, &mut app);
        frames.push(t.elapsed());
        frames_cpu.extend(cpu_since(c));
    }
    let (scroll_p50, scroll_p99) = percentiles(&mut frames);
    let (scroll_cpu_p50, scroll_cpu_p99) = percentiles(&mut frames_cpu);

    // Streaming at the end of the long transcript: a delta then a frame, 2000 times.
    app.handle(query(QueryEvent::RequestStart {
        turn: 1,
        max_tokens: 32_000,
    }));
    let mut stream_frames = Vec::new();
    let mut stream_cpu = Vec::new();
    let reply = reply_text(0).repeat(8);
    for piece in reply.as_bytes().chunks(8).take(2000) {
        let t = Instant::now();
        let c = thread_cpu();
        app.handle(query(QueryEvent::TextDelta {
            text: String::from_utf8_lossy(piece).into_owned(),
        }));
        draw(&mut terminal, &mut app);
        stream_frames.push(t.elapsed());
        stream_cpu.extend(cpu_since(c));
    }
    let (stream_p50, stream_p99) = percentiles(&mut stream_frames);
    let (stream_cpu_p50, stream_cpu_p99) = percentiles(&mut stream_cpu);

    // The same stream drawn through crossterm's escape sequences (what a real terminal gets),
    // into a sink that counts the bytes.
    let (term_cpu, term_bytes) = stream_on_crossterm(&mut app, &reply);
    // One long paragraph (400 lines with single newlines, as the wired bench streams): the
    // open block grows to 22 KB.
    app.handle(query(QueryEvent::RequestStart {
        turn: 2,
        max_tokens: 32_000,
    }));
    let paragraph: String = (0..400)
        .map(|i| format!("Line {i} of the answer, with **bold** and `code` in it."))
        .collect::<Vec<_>>()
        .join("\n");
    let (para_cpu, para_bytes) = stream_on_crossterm(&mut app, &paragraph);

    // 50 PageUps from the end, each drawn, in CPU time of this thread.
    app.handle_key(KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
    draw(&mut terminal, &mut app);
    let cpu0 = thread_cpu();
    let wall0 = Instant::now();
    for _ in 0..50 {
        app.handle_key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE));
        draw(&mut terminal, &mut app);
    }
    let pageups_wall = wall0.elapsed();
    let pageups_cpu = thread_cpu().zip(cpu0).map(|(a, b)| a.saturating_sub(b));

    println!("tui: {MESSAGES} messages, {WIDTH}x{HEIGHT} TestBackend");
    println!(
        "  (frame = the key or delta handled, then a full draw; CPU is this thread's, wall includes"
    );
    println!("   time the shared machine gave to others)");
    let row = |name: &str, (p50, p99): (Duration, Duration), (c50, c99): (Duration, Duration)| {
        println!(
            "  {name:<18}  CPU p50 {:>6.3} ms  p99 {:>6.3} ms · wall p50 {:>6.3} ms  p99 {:>6.3} ms   (target p99 <= 2 ms)",
            ms(c50),
            ms(c99),
            ms(p50),
            ms(p99)
        );
    };
    row(
        "scrolling frame",
        (scroll_p50, scroll_p99),
        (scroll_cpu_p50, scroll_cpu_p99),
    );
    row(
        "streaming frame",
        (stream_p50, stream_p99),
        (stream_cpu_p50, stream_cpu_p99),
    );
    let mut term_cpu = term_cpu;
    let (t50, t99) = percentiles(&mut term_cpu);
    println!(
        "  streaming, crossterm  CPU p50 {:>6.3} ms  p99 {:>6.3} ms · {:.0} bytes a frame   (target p99 <= 2 ms)",
        ms(t50),
        ms(t99),
        term_bytes
    );
    let mut para_cpu = para_cpu;
    let (t50, t99) = percentiles(&mut para_cpu);
    println!(
        "  long paragraph, crossterm  CPU p50 {:>6.3} ms  p99 {:>6.3} ms · {:.0} bytes a frame   (target p99 <= 2 ms)",
        ms(t50),
        ms(t99),
        para_bytes
    );
    match pageups_cpu {
        Some(cpu) => println!(
            "  50 PageUps          {:>7.3} ms CPU ({:.3} ms wall)   (target well under 1 s)",
            ms(cpu),
            ms(pageups_wall)
        ),
        None => println!(
            "  50 PageUps          {:>7.3} ms wall   (target well under 1 s)",
            ms(pageups_wall)
        ),
    }
    println!(
        "  replay + 1st frame  {:>7.1} ms for {} turns   (target <= 1 s for 500 turns)",
        ms(resume),
        MESSAGES / 4
    );
    idle_cpu();
}

fn draw(terminal: &mut Terminal<TestBackend>, app: &mut App) {
    match terminal.draw(|f| app.render(f)) {
        Ok(_) => {}
        Err(never) => match never {},
    }
}

/// Bytes written to a terminal, counted and dropped.
#[derive(Default)]
struct CountingSink(std::rc::Rc<std::cell::Cell<u64>>);

impl std::io::Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.set(self.0.get() + buf.len() as u64);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// 1000 deltas at the end of the transcript, each drawn on a crossterm backend: each frame's
/// CPU and the mean bytes a frame.
fn stream_on_crossterm(app: &mut App, reply: &str) -> (Vec<Duration>, f64) {
    let sink = CountingSink::default();
    let count = sink.0.clone();
    let backend = CrosstermBackend::new(sink);
    let options = ratatui::TerminalOptions {
        viewport: Viewport::Fixed(ratatui::layout::Rect::new(0, 0, WIDTH, HEIGHT)),
    };
    let Ok(mut terminal) = Terminal::with_options(backend, options) else {
        return (Vec::new(), 0.0);
    };
    let mut cpu = Vec::new();
    let _ = terminal.draw(|f| app.render(f));
    let before = count.get();
    let mut frames = 0u32;
    for piece in reply.as_bytes().chunks(24).take(1000) {
        let c = thread_cpu();
        app.handle(query(QueryEvent::TextDelta {
            text: String::from_utf8_lossy(piece).into_owned(),
        }));
        let _ = terminal.draw(|f| app.render(f));
        cpu.extend(cpu_since(c));
        frames += 1;
    }
    let bytes = count.get() - before;
    (cpu, bytes as f64 / f64::from(frames.max(1)))
}

fn reply_text(i: usize) -> String {
    format!(
        "I looked at **src/module_{i}.rs**. The problem is in `parse()`:\n\n- it skips the first line\n- it never checks the length\n\nHere is the fix:\n\n```rust\nfn parse(s: &str) -> usize {{\n    s.lines().count()\n}}\n```\n\nThat should do it; the tests cover both cases now.\n"
    )
}

fn event(msg: SessionEvent) -> Event {
    Event { id: None, msg }
}

fn query(event: QueryEvent) -> Event {
    self::event(SessionEvent::Query(event))
}

/// `messages` messages in turns of four: a prompt, a markdown reply with a code block, a Bash
/// call with output, an Edit with a diff.
fn session_events(messages: usize) -> Vec<Event> {
    let diff = "--- src/module.rs\n+++ src/module.rs\n@@ -1,3 +1,3 @@\n fn a() {}\n-fn parse() { 0 }\n+fn parse() { 1 }\n fn b() {}\n";
    let mut events = Vec::new();
    for turn in 0..messages / 4 {
        events.push(event(SessionEvent::History(vec![HistoryItem::Prompt(
            format!("prompt {turn}: please look at src/module_{turn}.rs and fix the failing test"),
        )])));
        events.push(query(QueryEvent::RequestStart {
            turn: 1,
            max_tokens: 32_000,
        }));
        events.push(query(QueryEvent::TextDelta {
            text: reply_text(turn),
        }));
        let id = format!("bash-{turn}");
        events.push(event(SessionEvent::ToolInput {
            id: id.clone(),
            tool: "Bash".into(),
            input: json!({"command": "cargo test"}),
        }));
        let output: String = (0..20).map(|i| format!("test case_{i} ... ok\n")).collect();
        events.push(query(QueryEvent::ToolResult {
            tool_use_id: id,
            tool: "Bash".into(),
            output: ToolOutput::text(output)
                .with_summary("20 lines")
                .with_display(ToolDisplay::Shell {
                    exit_code: Some(0),
                    timed_out: false,
                    truncated: false,
                    background_task: None,
                }),
        }));
        let id = format!("edit-{turn}");
        let path = format!("src/module_{turn}.rs");
        events.push(event(SessionEvent::ToolInput {
            id: id.clone(),
            tool: "Edit".into(),
            input: json!({"file_path": path}),
        }));
        events.push(query(QueryEvent::ToolResult {
            tool_use_id: id,
            tool: "Edit".into(),
            output: ToolOutput::text("updated")
                .with_summary("Added 1 line, removed 1 line")
                .with_display(ToolDisplay::Diff {
                    file_path: PathBuf::from(path),
                    unified: diff.to_owned(),
                    added: 1,
                    removed: 1,
                }),
        }));
    }
    events
}

fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples.get(i).copied().unwrap_or_default()
    };
    (at(0.50), at(0.99))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// This thread's CPU time.
fn thread_cpu() -> Option<Duration> {
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(Duration::from(t))
}

fn cpu_since(start: Option<Duration>) -> Option<Duration> {
    Some(thread_cpu()?.saturating_sub(start?))
}

/// A process's CPU time, all threads (its CPU-time clock).
fn process_cpu(pid: u32) -> Option<Duration> {
    let pid = i32::try_from(pid).ok()?;
    let clock = ClockId::pid_cpu_clock_id(Pid::from_raw(pid)).ok()?;
    Some(Duration::from(clock_gettime(clock).ok()?))
}

/// Runs this binary as the UI in a 120×40 tmux pane, lets it settle, samples its CPU for 10 s.
fn idle_cpu() {
    let label = "  idle CPU over 10 s";
    let Ok(exe) = std::env::current_exe() else {
        println!("{label}  skipped: cannot find this binary");
        return;
    };
    let dir = std::env::temp_dir().join(format!("tine-tui-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let pid_file = dir.join("pid");
    let session = format!("tine-tui-bench-{}", std::process::id());
    let started = Command::new("tmux")
        .args([
            "new-session",
            "-d",
            "-s",
            &session,
            "-x",
            "120",
            "-y",
            "40",
            "-e",
        ])
        .arg(format!("{CHILD_ENV}={}", pid_file.display()))
        .arg(&exe)
        .status();
    if !matches!(started, Ok(s) if s.success()) {
        println!("{label}  skipped: tmux is not available to give the UI a terminal");
        return;
    }
    let kill = || {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &session])
            .status();
        let _ = std::fs::remove_dir_all(&dir);
    };
    let mut pid = None;
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(50));
        if let Some(p) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            pid = Some(p);
            break;
        }
    }
    let Some(pid) = pid else {
        println!("{label}  skipped: the UI did not start");
        kill();
        return;
    };
    // Let it draw its first frame and load what it loads.
    std::thread::sleep(Duration::from_secs(2));
    let screen = Command::new("tmux")
        .args(["capture-pane", "-p", "-t", &session])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let drew = screen.contains("prompt 1999");
    let (Some(cpu0), t0) = (process_cpu(pid), Instant::now()) else {
        println!("{label}  skipped: cannot read /proc/{pid}");
        kill();
        return;
    };
    std::thread::sleep(Duration::from_secs(10));
    let cpu1 = process_cpu(pid);
    let wall = t0.elapsed();
    kill();
    match cpu1 {
        Some(cpu1) => {
            let used = cpu1.saturating_sub(cpu0);
            println!(
                "{label}  {:.3}% of a core ({:.2} ms CPU in {:.1} s){}   (target ≈ 0)",
                used.as_secs_f64() * 100.0 / wall.as_secs_f64(),
                ms(used),
                wall.as_secs_f64(),
                if drew {
                    ""
                } else {
                    "  [the screen did not show the transcript]"
                }
            );
        }
        None => println!("{label}  skipped: the UI exited early"),
    }
}

/// The child: the real terminal loop with a 2000-entry transcript and a session that never
/// says anything.
fn idle_child(pid_file: PathBuf) {
    let _ = std::fs::write(&pid_file, std::process::id().to_string());
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async {
        let mut app = App::new(AppConfig::default());
        for i in 0..2000 {
            app.handle(event(SessionEvent::History(vec![
                HistoryItem::Prompt(format!("prompt {i}")),
                HistoryItem::Text(format!("reply **{i}**")),
            ])));
        }
        let (_events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
        let _ = tine_tui::run(&mut app, events_rx, &mut Silent, TerminalOptions::default()).await;
    });
}

/// A session that takes every op and never says anything.
struct Silent;

impl Submitter for Silent {
    fn submit(&mut self, _op: Op) -> Result<OpId, SessionClosed> {
        Ok(OpId(0))
    }
}
