//! Esc Esc on an empty prompt: the rewind picker lists the prompts; picking one and
//! "Restore conversation" goes back to before it, puts its text back in the box, and the next
//! request no longer carries it (and reads its prefix from the cache).

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_esc_lists_the_prompts_and_restores_the_conversation() {
    let world = World::new();
    let server = mock(scenario()).await;
    let mut ui = Ui::start(world.options(&server)).await;
    ui.type_line("first question");
    ui.turn_end().await;
    ui.type_line("second question");
    ui.turn_end().await;
    // The app has taken the turn's end in (the harness sees events on their way to it).
    settle().await;
    ui.key(KeyCode::Esc, KeyModifiers::NONE);
    ui.key(KeyCode::Esc, KeyModifiers::NONE);
    ui.until(|e| matches!(e.msg, SessionEvent::RewindPoints(_)).then_some(()))
        .await;
    settle().await;
    let screen = ui.screen();
    assert!(screen.contains("Rewind"), "{screen}");
    assert!(screen.contains("1. first question"), "{screen}");
    assert!(screen.contains("2. second question"), "{screen}");
    // The latest prompt is selected: Enter, then "Restore conversation".
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    settle().await;
    let screen = ui.screen();
    assert!(screen.contains("Restore code and conversation"), "{screen}");
    assert!(screen.contains("Restore conversation"), "{screen}");
    assert!(screen.contains("Restore code"), "{screen}");
    ui.key(KeyCode::Char('2'), KeyModifiers::NONE);
    ui.until(|e| matches!(e.msg, SessionEvent::Rewound(_)).then_some(()))
        .await;
    settle().await;
    // The prompt is back in the box, to be edited or sent again.
    let screen = ui.screen();
    assert!(
        screen.contains("Rewound the conversation to before prompt 2"),
        "{screen}"
    );
    assert!(screen.contains("> second question"), "{screen}");
    // Send a different one: the conversation goes on from before prompt two.
    for _ in 0.."second question".len() {
        ui.key(KeyCode::Backspace, KeyModifiers::NONE);
    }
    ui.type_line("third question");
    ui.turn_end().await;
    let last = last_body(&server).to_string();
    assert!(
        last.contains("first question") && last.contains("third question"),
        "{last}"
    );
    assert!(!last.contains("second question"), "{last}");
    let usage = server.requests().last().unwrap().usage.unwrap();
    let prompt =
        usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.input_tokens;
    let share = usage.cache_read_input_tokens as f64 / prompt as f64;
    assert!(
        share >= 0.9,
        "read {share:.3} of the prompt from the cache: {usage:?}"
    );
    ui.exit().await;
}
