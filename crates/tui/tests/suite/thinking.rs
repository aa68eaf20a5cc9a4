//! Tab toggles extended thinking (sent as the session's `/thinking`); with the slash list
//! open, Tab still completes.

use crossterm::event::KeyCode;
use tine_session::Op;

use super::support::{app, key, press, type_text};

#[test]
fn tab_toggles_thinking_unless_it_completes_a_command() {
    let mut app = app();
    assert_eq!(
        press(&mut app, key(KeyCode::Tab)),
        [Op::Command {
            name: "thinking".into(),
            args: String::new()
        }]
    );
    let mut app = super::support::app();
    type_text(&mut app, "/comp");
    assert_eq!(press(&mut app, key(KeyCode::Tab)), []);
}
