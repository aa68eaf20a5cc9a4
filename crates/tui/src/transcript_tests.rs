use super::*;

fn ctx(width: u16) -> LayoutCtx {
    LayoutCtx {
        width,
        expanded: false,
        now: tokio::time::Instant::now(),
    }
}

fn numbered(n: usize) -> Transcript {
    let mut t = Transcript::new();
    for i in 0..n {
        t.push(Entry::User {
            text: format!("prompt {i}"),
        });
    }
    t
}

fn screen(t: &mut Transcript, width: u16, height: u16) -> Vec<String> {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    t.render(area, &mut buf, &ctx(width));
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buf[(x, y)].symbol().to_owned())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

#[test]
fn only_visible_entries_are_laid_out() {
    let mut t = numbered(10_000);
    let rows = screen(&mut t, 40, 10);
    assert_eq!(rows[9], "> prompt 9999");
    assert!(
        t.layouts() <= 6,
        "laid out {} entries for 10 rows",
        t.layouts()
    );
    let before = t.layouts();
    let _ = screen(&mut t, 40, 10);
    assert_eq!(t.layouts(), before, "a second frame is all cache hits");
}

#[test]
fn page_up_and_down_move_by_a_page_and_end_follows_again() {
    let mut t = numbered(100);
    let _ = screen(&mut t, 40, 10);
    t.scroll_up(t.page());
    let rows = screen(&mut t, 40, 10);
    // 10 rows show 5 entries (a gap row each); a page is 8 rows = 4 entries up.
    assert_eq!(rows[9], "> prompt 95");
    assert!(matches!(t.scroll(), Scroll::At { .. }));
    t.scroll_down(t.page());
    assert_eq!(t.scroll(), Scroll::Bottom);
    assert_eq!(screen(&mut t, 40, 10)[9], "> prompt 99");
}

#[test]
fn home_shows_the_first_entry_and_scrolling_up_stops_there() {
    let mut t = numbered(100);
    let _ = screen(&mut t, 40, 10);
    t.scroll_to_top();
    assert_eq!(screen(&mut t, 40, 10)[0], "> prompt 0");
    t.scroll_up(50);
    assert_eq!(screen(&mut t, 40, 10)[0], "> prompt 0");
}

#[test]
fn a_short_transcript_sits_at_the_top_and_cannot_scroll() {
    let mut t = numbered(2);
    let rows = screen(&mut t, 40, 10);
    assert_eq!(rows[..3], ["> prompt 0", "", "> prompt 1"]);
    t.scroll_up(5);
    let rows = screen(&mut t, 40, 10);
    assert_eq!(rows[0], "> prompt 0");
    assert_eq!(
        t.scroll(),
        Scroll::Bottom,
        "nothing to scroll: back to following"
    );
}

#[test]
fn resize_rewraps_from_the_cache_per_width() {
    let mut t = Transcript::new();
    t.push(Entry::User {
        text: "one two three four five six".into(),
    });
    assert_eq!(screen(&mut t, 40, 3)[0], "> one two three four five six");
    let narrow = screen(&mut t, 12, 4);
    assert_eq!(narrow[..3], ["> one two", "  three four", "  five six"]);
}

#[test]
fn truncating_past_the_anchor_follows_the_end() {
    let mut t = numbered(50);
    let _ = screen(&mut t, 40, 10);
    t.scroll_to_top();
    t.truncate(0);
    assert_eq!(t.scroll(), Scroll::Bottom);
}
