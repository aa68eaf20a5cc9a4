//! A foreground sub-agent through the UI on the real session: its calls show under the Agent
//! call while it runs (the session's `ToolProgress` of that call, each carrying the
//! sub-agent's latest calls) and in its tasks panel row (the session's `Task` updates), and
//! "Done (N tool uses · … tokens · …s)" once it is done.

use tine_session::{QueryEvent, SubagentStep, ToolDisplay};

use super::*;

/// The sub-agent reads, then greps, then answers slowly: its last reply streams for a good
/// while, so the screen is read while the agent runs (ordering slack, not a timing claim).
fn explore_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .system_contains("file search specialist")
                .tool_results(false)
                .named("agent-read")
                .reply(Reply::tool_use(
                    "Read",
                    json!({"file_path": "src/config.rs"}),
                )),
        )
        .rule(
            Rule::new()
                .system_contains("file search specialist")
                .assistant_turns(1)
                .named("agent-grep")
                .reply(Reply::tool_use("Grep", json!({"pattern": "load_settings"}))),
        )
        .rule(
            Rule::new()
                .system_contains("file search specialist")
                .named("agent-report")
                .reply(
                    Reply::text(&format!(
                        "The loader is load_settings in src/config.rs. {}",
                        "checked ".repeat(400)
                    ))
                    .chunk_delay_ms(50),
                ),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("It is load_settings.")),
        )
        .rule(Rule::new().last_user_contains("config loader").reply(
            Reply::text("Looking.").with_tool_use(
                "Agent",
                json!({"description": "Find the config loader",
                           "prompt": "Find where settings are loaded.",
                           "subagent_type": "Explore"}),
            ),
        ))
        .default_reply(Reply::text("OK."))
}

/// The rows under the Agent call line, up to the next entry.
fn under_agent_call(screen: &str) -> Vec<String> {
    let mut rows = screen
        .lines()
        .skip_while(|l| !l.contains("● Agent(Find the config loader)"))
        .skip(1);
    let mut under = Vec::new();
    for row in rows.by_ref() {
        if row.trim().is_empty() || row.starts_with("● ") {
            break;
        }
        under.push(row.trim_end().to_owned());
    }
    under
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agents_calls_show_under_its_agent_call_while_it_runs_then_done() {
    let world = World::new();
    std::fs::create_dir_all(world.cwd.join("src")).unwrap();
    std::fs::write(
        world.cwd.join("src/config.rs"),
        "pub fn load_settings() {}\n",
    )
    .unwrap();
    let server = mock(explore_scenario()).await;
    let mut ui = Ui::start(world.options(&server)).await;

    ui.type_line("find the config loader");
    // The Grep's results are in: the agent's last request is streaming now.
    let ((agent_call, activity), before) = ui
        .until(|e| match &e.msg {
            SessionEvent::Query(QueryEvent::ToolProgress {
                tool_use_id,
                progress,
            }) => progress.subagent.as_ref().and_then(|agent| {
                let grep_done = matches!(agent.step, SubagentStep::User { .. })
                    && agent.activity.totals.tool_uses == 2;
                grep_done.then(|| (tool_use_id.clone(), agent.activity.clone()))
            }),
            _ => None,
        })
        .await;
    let calls: Vec<(&str, &str)> = activity
        .recent
        .iter()
        .map(|c| (c.tool.as_str(), c.summary.as_str()))
        .collect();
    assert_eq!(
        calls,
        [("Read", "src/config.rs"), ("Grep", "load_settings")]
    );
    // The progress is the Agent call's, reported while it runs: no result of it yet.
    assert!(
        before.iter().any(|e| matches!(&e.msg,
            SessionEvent::ToolInput { id, tool, .. } if *id == agent_call && tool == "Agent")),
        "{before:#?}"
    );
    assert!(
        !before.iter().any(|e| matches!(&e.msg,
            SessionEvent::Query(QueryEvent::ToolResult { tool_use_id, .. })
                if *tool_use_id == agent_call)),
        "{before:#?}"
    );
    settle().await;
    let screen = ui.screen();
    assert_eq!(
        under_agent_call(&screen),
        ["  ⎿  Read(src/config.rs)", "     Grep(load_settings)"],
        "{screen}"
    );
    assert!(!screen.contains("Done ("), "{screen}");
    // Its task's row says the same, from the session's task updates.
    ui.key(KeyCode::Char('t'), KeyModifiers::CONTROL);
    settle().await;
    let panel = ui.screen();
    assert!(
        panel.contains("Find the config loader  Grep(load_settings) · 2 tool uses"),
        "{panel}"
    );
    ui.key(KeyCode::Esc, KeyModifiers::NONE);

    let (_, turn) = ui.turn_end().await;
    let totals = turn
        .iter()
        .find_map(|e| match &e.msg {
            SessionEvent::Query(QueryEvent::ToolResult {
                tool_use_id,
                output,
                ..
            }) if *tool_use_id == agent_call => Some(output.display.clone()),
            _ => None,
        })
        .expect("the Agent call's result");
    let ToolDisplay::Agent(totals) = totals else {
        panic!("{totals:?}")
    };
    assert_eq!(totals.tool_uses, 2);
    assert!(totals.total_tokens > 0, "{totals:?}");
    settle().await;
    let screen = ui.screen();
    let under = under_agent_call(&screen);
    assert!(
        under.len() == 1 && under[0].starts_with("  ⎿  Done (2 tool uses · "),
        "{screen}"
    );
    assert!(under[0].contains(" tokens · "), "{screen}");
    ui.exit().await;
}
