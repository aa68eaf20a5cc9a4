//! Tab toggles extended thinking (sent as the session's `/thinking`); with the slash list
//! open, Tab still completes.

use crossterm::event::KeyCode;
use tine_tui::UiCommand;

use super::support::{app, key, type_text};

#[test]
fn tab_toggles_thinking_unless_it_completes_a_command() {
    let mut app = app();
    assert_eq!(
        app.handle_key(key(KeyCode::Tab)),
        [UiCommand::SlashCommand {
            name: "thinking".into(),
            args: String::new()
        }]
    );
    let mut app = super::support::app();
    type_text(&mut app, "/comp");
    assert_eq!(app.handle_key(key(KeyCode::Tab)), []);
}
