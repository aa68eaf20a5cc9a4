//! Extended thinking in the UI: Tab on the prompt turns it on or off from the next request
//! (Claude Code's toggle), sent to the session as its `/thinking` command, whose answer the
//! transcript shows. Thinking itself streams into a collapsed "✻ Thinking…" entry that Ctrl+O
//! expands.

use tine_session::{CommandInfo, CommandSource, Op};

use crate::app::{App, Queued};

impl App {
    /// Tab (no completion list open): toggle thinking. Queued behind a running turn, like any
    /// command, so it takes effect between turns.
    pub(crate) fn toggle_thinking(&mut self) -> Vec<Op> {
        let command = CommandInfo {
            name: "thinking".to_owned(),
            description: "Toggle extended thinking".to_owned(),
            runs_turn: false,
            source: CommandSource::Builtin,
        };
        self.dispatch(Queued::Command {
            command,
            args: String::new(),
        })
    }
}
