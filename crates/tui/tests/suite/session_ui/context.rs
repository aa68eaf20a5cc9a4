//! `/context` on a real session: the window by part as the UI shows it, the grid's ten rows on
//! ten screen rows and each part on a row of its own with its numbers (markdown would join the
//! session's lines into one paragraph without the hard breaks it sends).

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_shows_a_ten_by_ten_grid_and_a_row_per_part() {
    let world = World::new();
    let server = mock(scenario()).await;
    let mut ui = Ui::start(world.options(&server)).await;
    ui.type_line("first question");
    ui.turn_end().await;
    ui.type_line("/context");
    ui.until(|e| match &e.msg {
        SessionEvent::CommandOutput(out) if out.command == "context" => Some(()),
        _ => None,
    })
    .await;
    settle().await;
    let screen = ui.screen();
    let square = |c: char| ('\u{1F7E5}'..='\u{1F7EB}').contains(&c) || c == '⬜';
    let grid_rows: Vec<&str> = screen
        .lines()
        .filter(|l| l.chars().any(square) && !l.contains("tokens"))
        .collect();
    assert_eq!(grid_rows.len(), 10, "{screen}");
    for row in &grid_rows {
        let squares = row
            .chars()
            .filter(|c| ('\u{1F7E5}'..='\u{1F7EB}').contains(c) || *c == '⬜')
            .count();
        assert_eq!(squares, 10, "{row:?} in {screen}");
    }
    for part in [
        "System prompt:",
        "Tools:",
        "MCP tools:",
        "Memory and instruction files:",
        "Messages:",
        "Auto-compact buffer:",
        "Free space:",
    ] {
        let row = screen
            .lines()
            .find(|l| l.contains(part))
            .unwrap_or_else(|| panic!("{part} missing: {screen}"));
        assert_eq!(
            row.matches("tokens (").count(),
            1,
            "one part a row: {row:?}"
        );
    }
    ui.exit().await;
}
