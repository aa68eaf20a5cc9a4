//! The settings' `statusLine` command through the UI on a real session: its first line shown
//! with its colours, `padding` columns in, above tine's line (which keeps the mode); the JSON it
//! reads (Claude Code's fields, the request's figures, tine's cache share); a command that
//! hangs killed with what it started, tine's own line staying.

use ratatui::style::{Color, Modifier};

use super::*;

/// Polls the screen until it shows `wanted` (a run beside the UI, not before it).
async fn screen_with(ui: &Ui, wanted: &str) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let screen = ui.screen();
        if screen.contains(wanted) {
            return screen;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "`{wanted}` never appeared:\n{screen}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The JSON inputs the command appended to `file`, once one satisfies `pick`.
async fn input_where(
    file: &std::path::Path,
    pick: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let inputs: Vec<serde_json::Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if let Some(found) = inputs.iter().rev().find(|i| pick(i)) {
            return found.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no such input among {inputs:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn user_settings(world: &World, command: &str, padding: u16) {
    let settings =
        json!({"statusLine": {"type": "command", "command": command, "padding": padding}});
    std::fs::write(world.home.join("settings.json"), settings.to_string()).unwrap();
}

fn script(world: &World, name: &str, body: &str) -> PathBuf {
    let path = world.home.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

async fn configured(ui: &mut Ui) -> SessionInfo {
    ui.until(|e| match &e.msg {
        SessionEvent::Configured(info) => Some(info.clone()),
        _ => None,
    })
    .await
    .0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_line_command_shows_its_coloured_line_and_reads_claude_codes_json() {
    let world = World::new();
    let inputs = world.home.join("inputs.jsonl");
    let line = script(
        &world,
        "statusline.sh",
        &format!(
            "input=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\n\
             printf '\\033[32mSTATUS %s\\033[0m \\033[1mbold\\033[0m\\nsecond line\\n' \"$COLUMNS\"\n",
            inputs.display()
        ),
    );
    user_settings(&world, &line.display().to_string(), 3);
    let server = mock(scenario()).await;
    let mut ui = Ui::start(world.options(&server)).await;
    let info = configured(&mut ui).await;
    assert_eq!(
        info.status_line.as_ref().map(|s| s.padding),
        Some(3),
        "{info:?}"
    );

    // The first line, 2 + 3 columns in, its colours kept; tine's line under it keeps the mode
    // and its hint, and leaves the figures to the command.
    let screen = screen_with(&ui, "STATUS 100").await;
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows.iter().position(|r| r.contains("STATUS 100")).unwrap();
    assert!(rows[at].starts_with("     STATUS 100 bold"), "{screen}");
    assert!(
        rows[at + 1].contains("default mode") && rows[at + 1].contains("shift+tab"),
        "{screen}"
    );
    assert!(!screen.contains("second line"), "{screen}");
    assert!(
        !screen.contains("$0.00"),
        "tine's figures stay off: {screen}"
    );
    {
        let backend = ui.screen.0.lock().unwrap();
        let buffer = backend.buffer();
        let y = u16::try_from(at).unwrap();
        assert_eq!(buffer[(5, y)].fg, Color::Green, "the S of STATUS");
        assert!(
            buffer[(16, y)].modifier.contains(Modifier::BOLD),
            "the b of bold"
        );
        assert_eq!(buffer[(16, y)].fg, Color::Reset);
    }

    // What it read at start: Claude Code's fields, no request yet.
    let first = input_where(&inputs, |_| true).await;
    assert_eq!(first["hook_event_name"], "Status");
    assert_eq!(first["session_id"], info.session_id.to_string());
    assert_eq!(first["transcript_path"], json!(info.transcript_path));
    assert_eq!(first["workspace"]["current_dir"], json!(world.cwd));
    assert_eq!(first["model"]["id"], info.model);
    assert!(first["model"]["display_name"].is_string());
    assert_eq!(first["output_style"]["name"], "default");
    assert_eq!(first["cost"]["total_cost_usd"], 0.0);
    assert!(first["context_window"]["current_usage"].is_null());
    assert!(first["cache"]["last_request_read_share"].is_null());

    // After a turn: the request's figures. The second request reads the first's cache.
    ui.type_line("hello");
    ui.turn_end().await;
    let after = input_where(&inputs, |i| !i["context_window"]["current_usage"].is_null()).await;
    assert!(
        after["cost"]["total_cost_usd"].as_f64().unwrap() > 0.0,
        "{after}"
    );
    assert!(after["cost"]["total_api_duration_ms"].is_u64(), "{after}");
    let used = &after["context_window"];
    assert!(used["current_usage"]["input_tokens"].is_u64(), "{after}");
    assert!(used["used_percentage"].as_f64().unwrap() > 0.0, "{after}");
    assert!(
        after["cache"]["last_request_read_share"].is_f64(),
        "{after}"
    );
    ui.type_line("again");
    ui.turn_end().await;
    let cached = input_where(&inputs, |i| {
        i["cache"]["last_request_read_share"]
            .as_f64()
            .is_some_and(|share| share > 0.0)
    })
    .await;
    assert_eq!(cached["session_id"], info.session_id.to_string());
    ui.exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_line_command_that_hangs_is_killed_and_tines_line_stays() {
    let world = World::new();
    let pids = world.home.join("pids");
    // The shell and what it started in the background, both waited on: the group must go.
    let line = script(
        &world,
        "hang.sh",
        &format!(
            "sleep 60 &\necho \"$$ $!\" > '{}.part' && mv '{0}.part' '{0}'\nwait\necho never\n",
            pids.display()
        ),
    );
    user_settings(&world, &line.display().to_string(), 0);
    let server = mock(scenario()).await;
    let ui = Ui::start(world.options(&server)).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while !pids.exists() {
        assert!(tokio::time::Instant::now() < deadline, "it never ran");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pids: Vec<String> = std::fs::read_to_string(&pids)
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(pids.len(), 2, "{pids:?}");
    let alive = |pid: &str| {
        std::process::Command::new("kill")
            .args(["-0", pid])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success()
    };
    // Nothing else happens in the UI: only the timeout ends them.
    let deadline = tokio::time::Instant::now() + WAIT;
    while pids.iter().any(|pid| alive(pid)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "still running: {pids:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    settle().await;
    let screen = ui.screen();
    assert!(screen.contains("default mode"), "{screen}");
    assert!(screen.contains("$0.00"), "tine's own line: {screen}");
    assert!(!screen.contains("never"), "{screen}");
    ui.exit().await;
}
