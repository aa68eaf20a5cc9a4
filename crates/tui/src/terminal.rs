//! Entering and leaving the terminal modes the UI needs, and restoring them whatever happens:
//! on exit (the guard's `Drop`) and on panic (a hook that restores before the message prints).
//!
//! The UI draws on the alternate screen. Inline rendering with scrollback insertion (Claude
//! Code, Codex) keeps the conversation in the terminal's scrollback, but what went to scrollback
//! can never be re-wrapped on resize or redrawn (expanding a result, a streaming table), the
//! terminal's own scrolling cannot be driven by PageUp, and an inline viewport that grows and
//! shrinks is where both have their flicker and resize bugs. On the alternate screen the app owns
//! every cell: ratatui's double buffer writes only the cells that changed (no clear, no
//! flicker), a resize lays the visible rows out again at the new width from per-entry caches,
//! and scrolling is the transcript's own virtual scrolling. What is lost is the scrollback after
//! exit; the session's transcript file keeps the conversation (`tine -c` shows it again).

use std::io::{self, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};
use crossterm::{cursor, execute};

/// Which terminal features the UI turns on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalOptions {
    /// Report the mouse wheel (the terminal's own selection then needs Shift+drag).
    pub mouse_capture: bool,
}

impl Default for TerminalOptions {
    fn default() -> Self {
        Self {
            mouse_capture: true,
        }
    }
}

/// Holds the terminal in the UI's modes; dropping it restores the terminal.
pub struct TerminalGuard {
    _private: (),
}

static PANIC_HOOK: Once = Once::new();

impl TerminalGuard {
    /// Raw mode, the alternate screen, bracketed paste, the kitty keyboard protocol where there is one and (with
    /// `mouse_capture`) the wheel; the terminal comes back as it was when the guard drops.
    pub fn enter(options: TerminalOptions) -> io::Result<Self> {
        install_panic_hook();
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let guard = Self { _private: () };
        let mut out = io::stdout();
        execute!(
            out,
            EnterAlternateScreen,
            EnableBracketedPaste,
            cursor::Hide
        )?;
        if options.mouse_capture {
            execute!(out, EnableMouseCapture)?;
        }
        // Shift+Enter is only distinguishable from Enter with the kitty keyboard protocol.
        if supports_keyboard_enhancement().unwrap_or(false) {
            execute!(
                out,
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
            )?;
            KEYBOARD_PUSHED.store(true, Ordering::SeqCst);
        }
        Ok(guard)
    }
}

/// Whether the terminal is in the UI's modes (a panic after the UI closed restores nothing).
static ACTIVE: AtomicBool = AtomicBool::new(false);
static KEYBOARD_PUSHED: AtomicBool = AtomicBool::new(false);

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Puts the terminal back as it was, if the UI had changed it. Safe to call more than once;
/// errors are ignored (there is nowhere left to report them).
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if KEYBOARD_PUSHED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = out.flush();
    let _ = disable_raw_mode();
}

fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
