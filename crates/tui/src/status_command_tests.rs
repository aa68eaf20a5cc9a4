use std::path::PathBuf;
use std::time::Duration;

use tine_session::{
    Event, PermissionMode, SessionEvent, SessionInfo, StatusLineCommand, UsageReport,
};
use tokio::time::Instant;

use super::*;
use crate::app::{App, AppConfig};

fn info(command: Option<&str>) -> SessionInfo {
    SessionInfo {
        session_id: tine_config::SessionId::new_random(),
        cwd: PathBuf::from("/project"),
        home: PathBuf::from("/tine-home"),
        model: "claude-sonnet-4-5-20250929".into(),
        tools: Vec::new(),
        permission_mode: PermissionMode::Default,
        bypass_available: false,
        transcript_path: PathBuf::from("/tine-home/t.jsonl"),
        resumed: false,
        memory: false,
        thinking: true,
        away_after: None,
        speculation: false,
        commands: Vec::new(),
        status_line: command.map(|c| StatusLineCommand {
            command: c.to_owned(),
            padding: 1,
            refresh_interval: None,
        }),
        output_style: "Explanatory".into(),
        added_dirs: vec![PathBuf::from("/other")],
        context_window: 200_000,
    }
}

fn event(msg: SessionEvent) -> Event {
    Event { id: None, msg }
}

#[test]
fn models_get_claude_codes_short_names() {
    for (id, name) in [
        ("claude-opus-4-1-20250805", "Opus 4.1"),
        ("claude-sonnet-4-5", "Sonnet 4.5"),
        ("claude-opus-4-20250514", "Opus 4"),
        ("claude-3-5-haiku-20241022", "Haiku 3.5"),
        ("claude-sonnet-4-5[1m]", "Sonnet 4.5 (1M context)"),
        ("us.anthropic.claude-opus-4-1-20250805-v1:0", "Opus 4.1"),
        ("qwen2.5-coder", "qwen2.5-coder"),
        ("claude-next", "claude-next"),
    ] {
        assert_eq!(display_name(id), name, "{id}");
    }
}

#[test]
fn the_json_has_claude_codes_fields_and_the_cache_share() {
    let mut app = App::new(AppConfig::default());
    let before = app.status_input(Instant::now());
    assert_eq!(
        before,
        Value::Null,
        "nothing before the session says what it is"
    );
    let info = info(Some("line.sh"));
    let session_id = info.session_id.to_string();
    app.handle(event(SessionEvent::Configured(info)));

    // Before a request: no usage, the window the session gave.
    let json = app.status_input(Instant::now());
    assert_eq!(json["hook_event_name"], "Status");
    assert_eq!(json["session_id"], session_id);
    assert_eq!(json["transcript_path"], "/tine-home/t.jsonl");
    assert_eq!(json["cwd"], "/project");
    assert_eq!(json["workspace"]["current_dir"], "/project");
    assert_eq!(json["workspace"]["project_dir"], "/project");
    assert_eq!(json["workspace"]["added_dirs"], json!(["/other"]));
    assert_eq!(json["model"]["id"], "claude-sonnet-4-5-20250929");
    assert_eq!(json["model"]["display_name"], "Sonnet 4.5");
    assert_eq!(json["output_style"]["name"], "Explanatory");
    assert_eq!(json["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(json["context_window"]["context_window_size"], 200_000);
    assert!(json["context_window"]["current_usage"].is_null());
    assert!(json["context_window"]["used_percentage"].is_null());
    assert_eq!(json["context_window"]["total_input_tokens"], 0);
    assert_eq!(json["cost"]["total_cost_usd"], 0.0);
    assert_eq!(json["exceeds_200k_tokens"], false);
    assert_eq!(json["thinking"]["enabled"], true);
    assert!(json["cache"]["last_request_read_share"].is_null());

    let last = tine_api_client::Usage {
        input_tokens: 1_000,
        output_tokens: 500,
        cache_creation_input_tokens: 9_000,
        cache_read_input_tokens: 40_000,
        ..Default::default()
    };
    let mut cost = tine_session::SessionCost::default();
    cost.by_source.insert(
        "main".into(),
        tine_fork_runtime::SourceUsage {
            usage: last,
            cost_usd: 0.25,
            requests: 1,
        },
    );
    app.handle(event(SessionEvent::Usage(UsageReport {
        model: "claude-opus-4-1".into(),
        context_tokens: 50_000,
        context_window: 200_000,
        cost,
        cache_read_share: Some(0.8),
        last_request: Some(last),
        api_duration: Duration::from_millis(1_234),
        lines_added: 7,
        lines_removed: 2,
    })));
    let json = app.status_input(Instant::now());
    assert_eq!(json["model"]["id"], "claude-opus-4-1");
    assert_eq!(json["model"]["display_name"], "Opus 4.1");
    assert_eq!(json["cost"]["total_cost_usd"], 0.25);
    assert_eq!(json["cost"]["total_api_duration_ms"], 1_234);
    assert_eq!(json["cost"]["total_lines_added"], 7);
    assert_eq!(json["cost"]["total_lines_removed"], 2);
    let window = &json["context_window"];
    assert_eq!(window["total_input_tokens"], 50_000);
    assert_eq!(window["total_output_tokens"], 500);
    assert_eq!(window["used_percentage"], 25.0);
    assert_eq!(window["remaining_percentage"], 75.0);
    assert_eq!(
        window["current_usage"],
        json!({
            "input_tokens": 1_000,
            "output_tokens": 500,
            "cache_creation_input_tokens": 9_000,
            "cache_read_input_tokens": 40_000,
        })
    );
    assert_eq!(json["cache"]["last_request_read_share"], 0.8);
    assert!(json["cost"]["total_duration_ms"].is_u64());

    // Past 200k tokens (prompt and output) of a larger window.
    let big = tine_api_client::Usage {
        cache_read_input_tokens: 200_000,
        output_tokens: 1,
        ..Default::default()
    };
    app.handle(event(SessionEvent::Usage(UsageReport {
        model: "claude-opus-4-1[1m]".into(),
        context_window: 1_000_000,
        last_request: Some(big),
        ..UsageReport::default()
    })));
    let json = app.status_input(Instant::now());
    assert_eq!(json["exceeds_200k_tokens"], true);
    assert_eq!(json["context_window"]["used_percentage"], 20.0);
}

#[test]
fn runs_are_due_on_changes_at_most_every_300_ms_and_never_without_a_command() {
    let mut app = App::new(AppConfig::default());
    app.handle(event(SessionEvent::Configured(info(None))));
    assert_eq!(app.status_command.deadline(), None);
    app.handle(event(SessionEvent::PermissionModeChanged(
        PermissionMode::Plan,
    )));
    assert_eq!(app.status_command.deadline(), None, "no command, no timer");

    let mut command = StatusCommand::default();
    let t0 = Instant::now();
    command.configure(&info(Some("line.sh")), true, t0);
    assert_eq!(command.deadline(), Some(t0), "a first run once configured");
    // Started (no runtime here: nothing runs, the start counts).
    command.start(&Value::Null, std::path::Path::new("/"), t0);
    assert_eq!(command.deadline(), None, "nothing changed since");
    command.changed(t0 + Duration::from_millis(10));
    assert_eq!(command.deadline(), Some(t0 + MIN_INTERVAL));
    command.changed(t0 + Duration::from_millis(20));
    assert_eq!(
        command.deadline(),
        Some(t0 + MIN_INTERVAL),
        "one run for both"
    );
    command.start(&Value::Null, std::path::Path::new("/"), t0 + MIN_INTERVAL);
    command.changed(t0 + Duration::from_secs(2));
    assert_eq!(command.deadline(), Some(t0 + Duration::from_secs(2)));

    // refreshInterval: again that long after each start, changes or not.
    let mut every = info(Some("clock.sh"));
    if let Some(line) = &mut every.status_line {
        line.refresh_interval = Some(Duration::from_secs(5));
    }
    let mut command = StatusCommand::default();
    command.configure(&every, true, t0);
    command.start(&Value::Null, std::path::Path::new("/"), t0);
    assert_eq!(command.deadline(), Some(t0 + Duration::from_secs(5)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_run_gives_its_first_line_with_escapes_and_fails_on_errors() {
    let dir = tempfile::tempdir().unwrap();
    let job = |command: &str| Job {
        command: command.to_owned(),
        cwd: dir.path().to_path_buf(),
        input: br#"{"model":{"display_name":"Opus"}}"#.to_vec(),
        size: (123, 45),
    };
    let line = job(r#"read -r json; printf '\033[36m%s\033[0m %s\nsecond\n' "$json" "$COLUMNS""#)
        .run()
        .await
        .unwrap();
    assert_eq!(
        line,
        "\x1b[36m{\"model\":{\"display_name\":\"Opus\"}}\x1b[0m 123"
    );
    let failed = job("echo partial; echo oops >&2; exit 3").run().await;
    assert!(
        matches!(&failed, Err(RunError::Failed { stderr, .. }) if stderr.contains("oops")),
        "{failed:?}"
    );
    assert!(matches!(job("true").run().await, Err(RunError::NoOutput)));
    assert!(matches!(
        job("echo '   '").run().await,
        Err(RunError::NoOutput)
    ));
}
