//! Keys, pastes and the mouse: what each does to the [`App`] and which [`Op`]s follow.
//!
//! Enter submits; Shift+Enter (terminals that report it), Alt+Enter, Ctrl+J and a trailing
//! backslash insert a newline. Esc interrupts a running turn (or rejects the permission request
//! shown, or closes a list). Ctrl+C interrupts, else clears the input, and exits when pressed
//! again within two seconds; Ctrl+D exits on an empty prompt. Shift+Tab cycles the permission
//! mode, Tab toggles extended thinking, Ctrl+O expands results, Ctrl+T shows background tasks
//! (the panel then has the keys: `tasks_panel`), Ctrl+B sends a sub-agent running in the
//! foreground to the background, Ctrl+Z suspends (the terminal restored; `fg` brings the UI
//! back). PageUp/PageDown, the mouse
//! wheel, Ctrl+Home/Ctrl+End (and Home/End on an empty prompt) scroll the transcript. While
//! the `@` picker's list shows, Up/Down select, Tab/Enter put the path in, Esc closes it.
//! Ctrl+R searches the prompts sent before (`history_search` has its keys while open). While
//! `/help` shows, Up/Down, PageUp/PageDown and Home/End scroll it; another key closes it.

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};
use tokio::time::Instant;

use tine_session::{Op, PermissionMode};

use crate::app::{App, CTRL_C_WINDOW, Queued};
use crate::choice::Choice;
use crate::slash::{self, Parsed};

/// Rows one wheel notch scrolls.
const WHEEL_ROWS: usize = 3;

impl App {
    /// One terminal event; returns the ops it makes.
    pub fn handle_terminal_event(&mut self, event: Event) -> Vec<Op> {
        let now = Instant::now();
        let may_ask = self.turn.is_none() && !self.transcript.is_empty();
        let mut ops = self.away.note_presence(&event, now, may_ask);
        ops.extend(self.handle_terminal_event_inner(event));
        self.speculation.note_draft(self.input.text(), now);
        ops
    }

    fn handle_terminal_event_inner(&mut self, event: Event) -> Vec<Op> {
        match event {
            Event::Key(key) => self.handle_key(key),
            Event::Paste(text) => {
                self.handle_paste(&text);
                Vec::new()
            }
            Event::Mouse(mouse) => {
                self.handle_mouse(mouse);
                Vec::new()
            }
            Event::Resize(..) => {
                self.dirty = true;
                Vec::new()
            }
            Event::FocusGained | Event::FocusLost => Vec::new(),
        }
    }

    /// A bracketed paste: into the dialog's text, or the prompt box (a large one collapsed).
    pub fn handle_paste(&mut self, text: &str) {
        self.dirty = true;
        if self.elicitation.is_open() {
            self.elicitation.paste(text);
        } else if self.history_search.is_open() && !self.dialog.is_open() {
            self.history_search.paste(text, self.input.history());
        } else if let Some(feedback) = self.dialog.feedback_mut() {
            feedback.push_str(&text.replace(['\r', '\n'], " "));
        } else if !self.dialog.is_open() {
            self.input.paste(text);
            self.completion.reset();
            self.refresh_mention();
        }
    }

    /// The wheel scrolls the transcript.
    pub fn handle_mouse(&mut self, mouse: MouseEvent) {
        match mouse.kind {
            MouseEventKind::ScrollUp => {
                self.transcript.scroll_up(WHEEL_ROWS);
                self.dirty = true;
            }
            MouseEventKind::ScrollDown => {
                self.transcript.scroll_down(WHEEL_ROWS);
                self.dirty = true;
            }
            _ => {}
        }
    }

    /// One key; returns the ops it makes.
    pub fn handle_key(&mut self, key: KeyEvent) -> Vec<Op> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        self.dirty = true;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        // Ctrl+R's search has the keys (Ctrl+C cancels it, as Claude Code's does) unless a
        // question came meanwhile: that is answered first.
        let suspend = key.code == KeyCode::Char('z') && ctrl;
        if self.history_search.is_open()
            && !self.elicitation.is_open()
            && !self.dialog.is_open()
            && !suspend
        {
            return self.search_key(key);
        }
        if key.code == KeyCode::Char('c') && ctrl {
            return self.ctrl_c();
        }
        // Raw mode turned the terminal's suspend key into a key: suspend as the shell would.
        if key.code == KeyCode::Char('z') && ctrl {
            self.suspend = true;
            return Vec::new();
        }
        if self.elicitation.is_open() {
            return self.elicitation.key(key);
        }
        if self.dialog.is_open() {
            return self.dialog_key(key);
        }
        if self.resume.is_open() {
            return self.resume.key(key);
        }
        if self.rewind.is_open() {
            let ops = self.rewind.key(key);
            if let Some(Op::Rewind { scope, .. }) = ops.first() {
                self.rewind_scope = *scope;
            }
            return ops;
        }
        if let Some(commands) = self.tasks_key(key) {
            return commands;
        }
        if self.help_open {
            if self.help_scroll_key(key) {
                return Vec::new();
            }
            self.help_open = false;
            if matches!(key.code, KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q')) {
                return Vec::new();
            }
        }
        match key.code {
            KeyCode::BackTab => return self.cycle_mode(),
            KeyCode::Tab if shift => return self.cycle_mode(),
            KeyCode::Char('o') if ctrl => {
                self.expanded = !self.expanded;
                return Vec::new();
            }
            KeyCode::Char('t') if ctrl => {
                self.toggle_tasks();
                return Vec::new();
            }
            KeyCode::Char('r') if ctrl => {
                self.history_search
                    .open(self.input.text(), self.input.history());
                return Vec::new();
            }
            KeyCode::Char('b') if ctrl && self.foreground_agent_running() => {
                return vec![Op::BackgroundAgents];
            }
            KeyCode::PageUp => {
                let page = self.transcript.page();
                self.transcript.scroll_up(page);
                return Vec::new();
            }
            KeyCode::PageDown => {
                let page = self.transcript.page();
                self.transcript.scroll_down(page);
                return Vec::new();
            }
            KeyCode::Home if ctrl || self.input.is_empty() => {
                self.transcript.scroll_to_top();
                return Vec::new();
            }
            KeyCode::End if ctrl || self.input.is_empty() => {
                self.transcript.scroll_to_bottom();
                return Vec::new();
            }
            _ => {}
        }
        if let Some(commands) = self.mention_key(key) {
            return commands;
        }
        if let Some(commands) = self.completion_key(key) {
            return commands;
        }
        if key.code == KeyCode::Tab && key.modifiers.is_empty() {
            return self.toggle_thinking();
        }
        let before = self.input.text().to_owned();
        let out = self.edit_key(key, ctrl, alt, shift);
        if self.input.text() != before {
            self.completion.reset();
        }
        self.refresh_mention();
        out
    }

    /// A key for Ctrl+R's search: the match taken into the box (and sent, for Enter), or
    /// what was typed given back.
    fn search_key(&mut self, key: KeyEvent) -> Vec<Op> {
        use crate::history_search::SearchOutcome;
        match self.history_search.key(key, self.input.history()) {
            SearchOutcome::Searching => Vec::new(),
            SearchOutcome::Closed { text, send } => {
                self.input.set_text(&text);
                self.completion.reset();
                self.refresh_mention();
                if send { self.submit() } else { Vec::new() }
            }
        }
    }

    /// Up/Down, PageUp/PageDown, Home/End scroll the help panel on a terminal too short for
    /// it; returns whether the key did. Where it all shows they close it as any key does.
    fn help_scroll_key(&mut self, key: KeyEvent) -> bool {
        let help = &mut self.help;
        if help.total <= help.visible {
            return false;
        }
        let last = help.total.saturating_sub(help.visible);
        let page = help.visible.saturating_sub(1).max(1);
        help.scroll = match key.code {
            KeyCode::Up => help.scroll.saturating_sub(1),
            KeyCode::Down => help.scroll + 1,
            KeyCode::PageUp => help.scroll.saturating_sub(page),
            KeyCode::PageDown => help.scroll + page,
            KeyCode::Home => 0,
            KeyCode::End => last,
            _ => return false,
        }
        .min(last);
        true
    }

    /// The `@` picker follows the prompt box.
    fn refresh_mention(&mut self) {
        let root = self.info.as_ref().map(|info| &info.cwd);
        self.mention
            .refresh(self.input.text(), self.input.cursor(), root);
    }

    /// Keys for the `@` picker, while its list shows; `None` when the key is not its.
    fn mention_key(&mut self, key: KeyEvent) -> Option<Vec<Op>> {
        if !self.mention.is_open() || !key.modifiers.difference(KeyModifiers::SHIFT).is_empty() {
            return None;
        }
        match key.code {
            KeyCode::Up => self.mention.move_by(-1),
            KeyCode::Down => self.mention.move_by(1),
            KeyCode::Tab | KeyCode::Enter => {
                if let Some((range, mention)) = self.mention.chosen() {
                    self.input.replace_range(range, &mention);
                }
                self.refresh_mention();
            }
            KeyCode::Esc => {
                let text = self.input.text().to_owned();
                self.mention.dismiss(&text);
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    fn edit_key(&mut self, key: KeyEvent, ctrl: bool, alt: bool, shift: bool) -> Vec<Op> {
        let input = &mut self.input;
        match key.code {
            KeyCode::Esc => return self.interrupt(),
            KeyCode::Enter if shift || alt => input.newline(),
            KeyCode::Enter => {
                if !input.backslash_newline() {
                    return self.submit();
                }
            }
            KeyCode::Char('j') if ctrl => input.newline(),
            KeyCode::Char('d') if ctrl => {
                if input.is_empty() {
                    return self.exit();
                }
                input.delete();
            }
            KeyCode::Char('a') if ctrl => input.home(),
            KeyCode::Char('e') if ctrl => input.end(),
            KeyCode::Char('k') if ctrl => input.kill_to_end(),
            KeyCode::Char('u') if ctrl => input.kill_to_start(),
            KeyCode::Char('w') if ctrl => input.kill_word_back(),
            KeyCode::Char('y') if ctrl => input.yank(),
            KeyCode::Char('b') if ctrl => input.left(),
            KeyCode::Char('f') if ctrl => input.right(),
            KeyCode::Char('h') if ctrl => input.backspace(),
            KeyCode::Char('b') if alt => input.word_left(),
            KeyCode::Char('f') if alt => input.word_right(),
            KeyCode::Char('d') if alt => input.kill_word_right(),
            KeyCode::Backspace if alt || ctrl => input.kill_word_left(),
            KeyCode::Backspace => input.backspace(),
            KeyCode::Delete => input.delete(),
            KeyCode::Left if alt || ctrl => input.word_left(),
            KeyCode::Right if alt || ctrl => input.word_right(),
            KeyCode::Left => input.left(),
            KeyCode::Right => input.right(),
            KeyCode::Home => input.home(),
            KeyCode::End => input.end(),
            KeyCode::Up => input.up(),
            KeyCode::Down => input.down(),
            KeyCode::Char(c) if !ctrl && !alt => input.insert_char(c),
            _ => self.dirty = false,
        }
        Vec::new()
    }

    /// Keys for the completion list, while it shows; `None` when the key is not its.
    fn completion_key(&mut self, key: KeyEvent) -> Option<Vec<Op>> {
        let names: Vec<String> = self
            .completion
            .matches(self.input.text(), &self.commands)
            .iter()
            .map(|c| c.name.clone())
            .collect();
        if names.is_empty() || !key.modifiers.difference(KeyModifiers::SHIFT).is_empty() {
            return None;
        }
        let chosen = names
            .get(self.completion.selected.min(names.len() - 1))
            .cloned();
        match key.code {
            KeyCode::Up => self.completion.move_by(-1, names.len()),
            KeyCode::Down => self.completion.move_by(1, names.len()),
            KeyCode::Tab => {
                if let Some(name) = chosen {
                    self.input.set_text(&format!("/{name} "));
                }
            }
            KeyCode::Esc => {
                let text = self.input.text().to_owned();
                self.completion.dismiss(&text);
            }
            KeyCode::Enter => {
                let typed = &self.input.text()[1..];
                if !names.iter().any(|n| n == typed)
                    && let Some(name) = chosen
                {
                    self.input.set_text(&format!("/{name}"));
                }
                return Some(self.submit());
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    fn dialog_key(&mut self, key: KeyEvent) -> Vec<Op> {
        let answered = if self.dialog.is_typing_feedback() {
            match key.code {
                KeyCode::Enter => self.dialog.choose(Choice::No),
                KeyCode::Esc => self.dialog.reject(),
                KeyCode::Backspace => {
                    if let Some(f) = self.dialog.feedback_mut() {
                        f.pop();
                    }
                    None
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    if let Some(f) = self.dialog.feedback_mut() {
                        f.push(c);
                    }
                    None
                }
                _ => None,
            }
        } else {
            match key.code {
                KeyCode::Up => {
                    self.dialog.move_selection(-1);
                    None
                }
                KeyCode::Down | KeyCode::Tab => {
                    self.dialog.move_selection(1);
                    None
                }
                KeyCode::BackTab => return self.cycle_mode(),
                KeyCode::Char(c) if c.is_ascii_digit() => {
                    let number = c.to_digit(10).and_then(|d| usize::try_from(d).ok());
                    match number.and_then(|n| self.dialog.choice_by_number(n)) {
                        Some(choice) => self.dialog.choose(choice),
                        None => None,
                    }
                }
                KeyCode::Enter => {
                    let choice = self.dialog.selected();
                    self.dialog.choose(choice)
                }
                KeyCode::Esc => self.dialog.reject(),
                _ => None,
            }
        };
        answered.into_iter().collect()
    }

    fn ctrl_c(&mut self) -> Vec<Op> {
        let now = Instant::now();
        if self.ctrl_c_at.is_some_and(|t| now < t + CTRL_C_WINDOW) {
            return self.exit();
        }
        self.ctrl_c_at = Some(now);
        if self.is_busy() {
            return self.interrupt();
        }
        self.input.clear();
        self.completion.reset();
        self.refresh_mention();
        Vec::new()
    }

    /// Shift+Tab: the next mode, shown at once; the session applies it (and says so).
    fn cycle_mode(&mut self) -> Vec<Op> {
        let bypass = self.info.as_ref().is_some_and(|info| info.bypass_available);
        self.mode = next_mode(self.mode, bypass);
        vec![Op::SetPermissionMode(self.mode)]
    }

    /// Enter on the prompt.
    pub(crate) fn submit(&mut self) -> Vec<Op> {
        let text = self.input.take_submission();
        self.completion.reset();
        if text.trim().is_empty() {
            return Vec::new();
        }
        self.help_open = false;
        self.transcript.scroll_to_bottom();
        match slash::parse(&text, &self.commands) {
            Parsed::Prompt => self.dispatch(Queued::Prompt(text)),
            // An unknown `/word` goes to the model as text, as `-p` sends it (Claude Code).
            Parsed::Unknown(_) => self.dispatch(Queued::Prompt(text)),
            Parsed::Command { command, args } => match command.name.as_str() {
                "help" => {
                    self.help_open = true;
                    self.help.scroll = 0;
                    Vec::new()
                }
                "exit" => self.exit(),
                "tasks" => {
                    self.toggle_tasks();
                    Vec::new()
                }
                _ => self.dispatch(Queued::Command { command, args }),
            },
        }
    }
}

/// Shift+Tab's cycle: default → acceptEdits → plan → (bypassPermissions, only in a session
/// started in it) → default. dontAsk is shown as the default and cycles as it does.
fn next_mode(mode: PermissionMode, bypass_available: bool) -> PermissionMode {
    match mode {
        PermissionMode::Default | PermissionMode::DontAsk => PermissionMode::AcceptEdits,
        PermissionMode::AcceptEdits => PermissionMode::Plan,
        PermissionMode::Plan if bypass_available => PermissionMode::BypassPermissions,
        PermissionMode::Plan | PermissionMode::BypassPermissions => PermissionMode::Default,
    }
}
