//! What a resumed session shows: the conversation as it was (markdown rendered, not its
//! asterisks), before any key; a compaction of an earlier run as its card, not the summary as
//! a prompt.

use tine_session::{CompactBoundary, HistoryItem, Resume};

use super::*;

/// The history a resumed session sends right after its `Configured`.
async fn history(ui: &mut Ui) -> Vec<HistoryItem> {
    ui.until(|e| match &e.msg {
        SessionEvent::History(items) => Some(items.clone()),
        _ => None,
    })
    .await
    .0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markdown_streams_without_its_asterisks_and_a_resumed_session_is_shown_again() {
    let world = World::new();
    let server = mock(scenario()).await;
    let mut ui = Ui::start(world.options(&server)).await;
    ui.type_line("first question");
    ui.turn_end().await;
    let (_, ended) = ui.exit().await;
    assert!(
        ended.screen.contains("Here is bold text."),
        "{}",
        ended.screen
    );
    assert!(!ended.screen.contains("**"), "{}", ended.screen);
    let id = ended.info.unwrap().session_id;

    // tine -c: the conversation comes back as it was, before any key.
    let mut options = world.options(&server);
    options.resume = Resume::Latest;
    let mut ui = Ui::start(options).await;
    let items = history(&mut ui).await;
    assert_eq!(
        items.first(),
        Some(&HistoryItem::Prompt("first question".into()))
    );
    assert!(
        items
            .iter()
            .any(|i| matches!(i, HistoryItem::Text(t) if t.contains("**bold**"))),
        "{items:?}"
    );
    settle().await;
    assert!(ui.screen().contains("> first question"), "{}", ui.screen());
    ui.type_line("second question");
    ui.turn_end().await;
    let (_, ended) = ui.exit().await;
    assert_eq!(ended.info.unwrap().session_id, id);
    assert!(ended.screen.contains("first question"), "{}", ended.screen);
    assert!(ended.screen.contains("second question"), "{}", ended.screen);
    let last = last_body(&server);
    assert_eq!(last["messages"].as_array().unwrap().len(), 3);
}

/// The card's figures.
fn figures(b: &CompactBoundary) -> (&'static str, u64, u64, usize) {
    (
        b.trigger.as_str(),
        b.tokens_before,
        b.tokens_after,
        b.messages_summarized,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_shows_its_compaction_as_the_card() {
    let world = World::new();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(tine_compaction::SUMMARY_INSTRUCTION_MARKER)
                .reply(Reply::text(
                    "<summary>1. The user asked SUMMARIZED-QUESTION.</summary>",
                )),
        )
        .default_reply(Reply::text("An answer."));
    let server = mock(scenario).await;
    let mut ui = Ui::start(world.options(&server)).await;
    ui.type_line("the first question");
    ui.turn_end().await;
    ui.type_line("/compact");
    let (live, _) = ui
        .until(|e| match &e.msg {
            SessionEvent::CommandOutput(output) if output.command == "compact" => {
                serde_json::from_value::<CompactBoundary>(output.data["compact_boundary"].clone())
                    .ok()
            }
            _ => None,
        })
        .await;
    ui.turn_end().await;
    ui.type_line("after the compaction");
    ui.turn_end().await;
    ui.exit().await;

    // tine -c: the card where the compaction was, then the turn after it.
    let mut options = world.options(&server);
    options.resume = Resume::Latest;
    let mut ui = Ui::start(options).await;
    let items = history(&mut ui).await;
    let card = items
        .iter()
        .position(|i| matches!(i, HistoryItem::Compaction(_)));
    let Some(card) = card else {
        panic!("no compaction in {items:?}");
    };
    let HistoryItem::Compaction(resumed) = &items[card] else {
        unreachable!()
    };
    assert_eq!(
        figures(resumed),
        figures(&live),
        "the card shows the same figures as it did live"
    );
    assert!(
        !items[..card]
            .iter()
            .any(|i| matches!(i, HistoryItem::Prompt(_))),
        "the summarized part is not shown again: {items:?}"
    );
    let prompts: Vec<&HistoryItem> = items[card..]
        .iter()
        .filter(|i| matches!(i, HistoryItem::Prompt(_)))
        .collect();
    assert_eq!(
        prompts,
        [&HistoryItem::Prompt("after the compaction".into())],
        "{items:?}"
    );
    let (_, ended) = ui.exit().await;
    let screen = &ended.screen;
    assert!(
        screen.contains("Conversation compacted (/compact)"),
        "{screen}"
    );
    assert!(!screen.contains("SUMMARIZED-QUESTION"), "{screen}");
    assert!(
        !screen.contains("continued from an earlier conversation"),
        "{screen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_without_an_id_offers_the_earlier_session_and_enter_replays_it() {
    let world = World::new();
    let server = mock(scenario()).await;
    let mut ui = Ui::start(world.options(&server)).await;
    ui.type_line("the earlier question");
    ui.turn_end().await;
    let (_, ended) = ui.exit().await;
    let earlier = ended.info.unwrap().session_id;

    // A new session here: /resume lists the earlier one; Enter opens it.
    let mut ui = Ui::start(world.options(&server)).await;
    settle().await;
    ui.type_line("/resume");
    ui.until(|e| command_text(e, "resume")).await;
    settle().await;
    let screen = ui.screen();
    assert!(screen.contains("Resume which session?"), "{screen}");
    assert!(screen.contains("the earlier question"), "{screen}");
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    let items = history(&mut ui).await;
    assert_eq!(
        items.first(),
        Some(&HistoryItem::Prompt("the earlier question".into()))
    );
    settle().await;
    let (_, ended) = ui.exit().await;
    assert_eq!(ended.info.unwrap().session_id, earlier);
}
