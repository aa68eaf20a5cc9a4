//! A resize while a reply streams: the app drawn at one width, then at others (narrower and
//! wider, several times) while markdown, a code block, long lines and a running tool call
//! keep coming, must show at each width exactly what an app that got the same events and was
//! only ever drawn at that width shows: no rows left at an old width, no text lost or doubled,
//! the view still following the end. A view scrolled up keeps its place (it used to jump: its
//! anchor row was counted at the old width). Time is paused, so elapsed seconds agree.

use std::collections::BTreeMap;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tine_session::{Event, Notice, QueryEvent, SessionEvent, ToolOutput};
use tine_tui::App;

use super::support::{app, call, ended, feed, handle, plain, query, request, result, submit, text};

/// The reply in pieces; a resize may come between any two.
fn stages() -> Vec<Vec<Event>> {
    let long = "a long line of prose that goes on and on well past the width of any narrow \
                terminal, so that it wraps into several rows and rewraps at each resize; ";
    let mut stages = vec![
        vec![request(), text("# Plan\n\nFirst ")],
        vec![text(long), text(long)],
        vec![text(
            "\n\n- one item that is long enough to wrap when narrow\n- two",
        )],
        vec![text(
            "\n\n```rust\nfn main() {\n    let x = \"a string literal ",
        )],
        vec![text(
            "that runs far past the right edge of the screen\";\n}\n",
        )],
        vec![text(
            "```\n\nThen a table:\n\n| key | value |\n|---|---|\n| a | 1 |\n",
        )],
        vec![text("\nNow I run it.")],
        vec![call(
            "t1",
            "Bash",
            json!({"command": "cargo test --workspace -- --nocapture"}),
        )],
        // Background work reports while the call runs.
        vec![super::support::event(SessionEvent::Notice(Notice::info(
            "a background job finished while the tests were running, with a long notice line",
        )))],
    ];
    let output: String = (1..=12)
        .map(|i| format!("test case_{i} ... ok\n"))
        .collect();
    stages.push(vec![result("t1", "Bash", ToolOutput::text(output))]);
    stages.push(vec![request(), text("All twelve tests pass. ")]);
    stages.push(vec![text(long), text("\n\n> a quoted remark at the end")]);
    stages
}

/// A drawing surface kept between frames, resized as a terminal is.
struct Screen {
    terminal: Terminal<TestBackend>,
}

impl Screen {
    fn new(width: u16, height: u16) -> Self {
        Self {
            terminal: Terminal::new(TestBackend::new(width, height)).unwrap(),
        }
    }

    fn resize(&mut self, width: u16, height: u16) {
        self.terminal.backend_mut().resize(width, height);
    }

    /// The frame the app drew. (Not the backend's cells: a `TestBackend` keeps the cell a
    /// wide character covers as it was, where a terminal blanks it, so a screen that scrolled
    /// CJK text past reads as garbage there and not on a terminal.)
    fn draw(&mut self, app: &mut App) -> String {
        let frame = self.terminal.draw(|f| app.render(f)).unwrap();
        plain(frame.buffer)
    }
}

/// An app with a prompt sent, as every app of these tests starts: another queued behind it
/// and a draft in the box long enough to wrap there too.
fn started() -> App {
    let mut app = app();
    submit(&mut app, "plan and run the tests");
    submit(&mut app, "then a queued follow-up prompt");
    super::support::type_text(
        &mut app,
        "a draft being typed meanwhile, long enough to wrap in the prompt box when narrow",
    );
    app
}

/// The app resized between stages (`sizes[i]` before stage `i`) shows at each size what an
/// app drawn only at that size shows; returns how many comparisons were made.
fn resized_matches_fixed(sizes: &[(u16, u16)]) -> usize {
    let stages = stages();
    assert_eq!(sizes.len(), stages.len() + 1);
    let mut resized = started();
    let mut screen = Screen::new(sizes[0].0, sizes[0].1);
    screen.draw(&mut resized);
    // One reference per size, each drawn after every stage at its size alone.
    let mut fixed: BTreeMap<(u16, u16), (App, Screen)> = sizes
        .iter()
        .map(|&(w, h)| ((w, h), (started(), Screen::new(w, h))))
        .collect();
    let mut compared = 0;
    let mut check = |resized: &mut App,
                     screen: &mut Screen,
                     fixed: &mut BTreeMap<(u16, u16), (App, Screen)>,
                     size: (u16, u16),
                     when: &str| {
        let shown = screen.draw(resized);
        let (app, reference) = fixed.get_mut(&size).unwrap();
        let expected = reference.draw(app);
        assert_eq!(
            shown, expected,
            "{when} at {size:?}: the resized app (left) differs from one drawn only at this size"
        );
        compared += 1;
    };
    for (i, stage) in stages.into_iter().enumerate() {
        let size = sizes[i + 1];
        for (app, reference) in fixed.values_mut() {
            feed(app, stage.clone());
            reference.draw(app);
        }
        // Half the stage at the old size, the rest after the resize.
        let half = stage.len() / 2;
        feed(&mut resized, stage[..half].iter().cloned());
        screen.draw(&mut resized);
        screen.resize(size.0, size.1);
        feed(&mut resized, stage[half..].iter().cloned());
        check(
            &mut resized,
            &mut screen,
            &mut fixed,
            size,
            &format!("stage {i}"),
        );
    }
    let end = ended(&resized);
    handle(&mut resized, end);
    for (app, _) in fixed.values_mut() {
        let end = ended(app);
        handle(app, end);
    }
    let last = *sizes.last().unwrap();
    check(
        &mut resized,
        &mut screen,
        &mut fixed,
        last,
        "after the turn",
    );
    for &size in sizes {
        screen.resize(size.0, size.1);
        check(
            &mut resized,
            &mut screen,
            &mut fixed,
            size,
            "ended, resized again",
        );
    }
    compared
}

#[tokio::test(start_paused = true)]
async fn narrower_and_wider_mid_stream_rewraps_as_if_drawn_at_each_width() {
    let sizes = [
        (100, 30),
        (60, 30),
        (100, 30),
        (40, 30),
        (120, 30),
        (30, 30),
        (80, 30),
        (45, 30),
        (100, 30),
        (52, 30),
        (70, 30),
        (36, 30),
        (100, 30),
    ];
    assert!(resized_matches_fixed(&sizes) > sizes.len());
}

#[tokio::test(start_paused = true)]
async fn height_changes_with_the_width_mid_stream() {
    let sizes = [
        (80, 24),
        (50, 12),
        (100, 40),
        (40, 8),
        (80, 24),
        (30, 6),
        (90, 18),
        (44, 30),
        (120, 10),
        (60, 20),
        (35, 14),
        (80, 24),
        (50, 12),
    ];
    assert!(resized_matches_fixed(&sizes) > sizes.len());
}

/// A reply with what wraps in unusual ways: wide characters, a word longer than any row, a
/// nested list, a quote, a table wider than the screen, a code block, thinking first.
const HARD: &str = "Thinking done. 日本語のテキストが折り返される様子を見る。\n\n\
averyveryveryverylongwordwithoutanyspacesthatmustbecutacrossseveralrowsofanynarrowterminal and then prose.\n\n\
1. first item with enough words to wrap at forty columns\n   continued under it\n   - nested bullet that also wraps when the terminal is narrow\n2. second\n\n\
> a quote that is long enough to wrap onto a second row when narrow\n\n\
| column one | column two is wide | three |\n|---|---|---|\n| a cell with text | another | 3 |\n\n\
```python\ndef f(x):\n    return [i * x for i in range(100) if i % 3 == 0 and i % 5 != 0]  # long\n```\n\nDone.";

#[tokio::test(start_paused = true)]
async fn a_resize_after_every_few_characters_matches_drawing_at_each_width() {
    let widths: [u16; 7] = [80, 33, 57, 21, 100, 40, 64];
    let height = 20;
    let chars: Vec<char> = HARD.chars().collect();
    let pieces: Vec<String> = chars.chunks(7).map(|c| c.iter().collect()).collect();
    let mut resized = started();
    handle(&mut resized, request());
    handle(
        &mut resized,
        query(QueryEvent::ThinkingDelta {
            text: "let me think about wrapping".into(),
        }),
    );
    let mut screen = Screen::new(widths[0], height);
    let mut fixed: Vec<(App, Screen)> = widths
        .iter()
        .map(|&w| {
            let mut app = started();
            handle(&mut app, request());
            handle(
                &mut app,
                query(QueryEvent::ThinkingDelta {
                    text: "let me think about wrapping".into(),
                }),
            );
            (app, Screen::new(w, height))
        })
        .collect();
    for (i, piece) in pieces.iter().enumerate() {
        let k = i % widths.len();
        screen.resize(widths[k], height);
        handle(&mut resized, text(piece));
        let shown = screen.draw(&mut resized);
        for (j, (app, reference)) in fixed.iter_mut().enumerate() {
            handle(app, text(piece));
            let expected = reference.draw(app);
            if j == k {
                assert_eq!(
                    shown, expected,
                    "after piece {i} ({piece:?}) at width {}",
                    widths[k]
                );
            }
        }
    }
}

/// Paragraph `n` of a long reply: its mark, then enough words to wrap at any width here.
fn paragraph(n: usize) -> String {
    format!(
        "p{n:02}: {}\n\n",
        "some words that fill the row and wrap onto the next ones ".repeat(3)
    )
}

/// The paragraph marks on screen, in order.
fn marks(shown: &str) -> Vec<usize> {
    shown
        .lines()
        .filter_map(|row| {
            let at = row.find(": some")?;
            row[..at].rsplit('p').next()?.parse().ok()
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_view_scrolled_up_keeps_its_place_across_resizes_mid_stream() {
    let mut app = started();
    handle(&mut app, request());
    for n in 0..60 {
        handle(&mut app, text(&paragraph(n)));
    }
    let mut screen = Screen::new(100, 30);
    screen.draw(&mut app);
    for _ in 0..4 {
        super::support::press(
            &mut app,
            super::support::key(crossterm::event::KeyCode::PageUp),
        );
    }
    let before = marks(&screen.draw(&mut app));
    assert!(
        before.len() > 3 && before[0] > 5,
        "scrolled into the middle: {before:?}"
    );
    // Narrower and wider several times while the reply goes on below the view.
    for (i, (w, h)) in [(40, 30), (70, 20), (30, 30), (100, 30), (45, 25), (100, 30)]
        .into_iter()
        .enumerate()
    {
        screen.resize(w, h);
        handle(&mut app, text(&paragraph(60 + i)));
        let shown = screen.draw(&mut app);
        let now = marks(&shown);
        assert!(
            !now.contains(&(60 + i)),
            "still scrolled up at {w}x{h}:\n{shown}"
        );
        // The paragraph at the top stays (a row of it may have wrapped above the view).
        let top = now.first().copied().unwrap_or(usize::MAX);
        assert!(
            top == before[0] || top == before[0] + 1,
            "at {w}x{h} the view shows {now:?}, it showed {before:?} before:\n{shown}"
        );
    }
    // Ctrl+End follows the reply again, at the last width.
    super::support::press(
        &mut app,
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::End,
            crossterm::event::KeyModifiers::CONTROL,
        ),
    );
    let shown = screen.draw(&mut app);
    assert!(marks(&shown).contains(&65), "{shown}");
}
