//! The conversation as a list of entries with virtual scrolling: only the entries that are on
//! screen (or that a scroll passes over) are laid out, each entry's wrapped rows cached per
//! width and redone only when the entry, the width or the Ctrl+O mode changes. The scroll
//! position is an anchor (an entry and a row in it), so appending, resizing and scrolling cost
//! what is visible, not what is long: a 10k-entry transcript draws as fast as a short one.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::entry::Entry;
use crate::layout::{LayoutCtx, bullet, indent};

/// Where the view is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scroll {
    /// Following the end: new output shows as it comes.
    Bottom,
    /// The top row of the view is row `row` of entry `entry` (row 0 is the blank gap above
    /// every entry but the first).
    At { entry: usize, row: usize },
}

struct Slot {
    entry: Entry,
    version: u64,
    cache: Option<Cached>,
}

struct Cached {
    width: u16,
    expanded: bool,
    version: u64,
    salt: u64,
    rows: Vec<Line<'static>>,
}

pub(crate) struct Transcript {
    slots: Vec<Slot>,
    scroll: Scroll,
    /// The last frame's layout context and view height (scrolling by keys uses them).
    last: Option<(LayoutCtx, u16)>,
    /// Entries laid out (cache misses) since creation: for tests of the virtual claim.
    layouts: u64,
}

impl Default for Transcript {
    fn default() -> Self {
        Self::new()
    }
}

impl Transcript {
    pub(crate) fn new() -> Self {
        Self {
            slots: Vec::new(),
            scroll: Scroll::Bottom,
            last: None,
            layouts: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub(crate) fn scroll(&self) -> Scroll {
        self.scroll
    }

    /// How many times an entry was laid out (cache misses).
    #[cfg(test)]
    pub(crate) fn layouts(&self) -> u64 {
        self.layouts
    }

    pub(crate) fn push(&mut self, entry: Entry) -> usize {
        self.slots.push(Slot {
            entry,
            version: 0,
            cache: None,
        });
        self.slots.len() - 1
    }

    /// The entry, to change it (its layout is redone).
    pub(crate) fn get_mut(&mut self, index: usize) -> Option<&mut Entry> {
        self.slots.get_mut(index).map(|s| {
            s.version += 1;
            &mut s.entry
        })
    }

    pub(crate) fn entries(&self) -> impl DoubleEndedIterator<Item = &Entry> {
        self.slots.iter().map(|s| &s.entry)
    }

    /// Drops the entries from `len` on (a reply voided by a retry).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.slots.truncate(len);
        if let Scroll::At { entry, .. } = self.scroll
            && entry >= self.slots.len()
        {
            self.scroll = Scroll::Bottom;
        }
    }

    pub(crate) fn clear(&mut self) {
        self.slots.clear();
        self.scroll = Scroll::Bottom;
    }

    /// Rows of entry `i` (its gap row included).
    fn height(&mut self, i: usize, ctx: &LayoutCtx) -> usize {
        let gap = usize::from(i > 0);
        let (head, tail) = self.rows(i, ctx);
        gap + head.len() + tail.len()
    }

    fn rows(&mut self, i: usize, ctx: &LayoutCtx) -> (&[Line<'static>], &[Line<'static>]) {
        let Some(slot) = self.slots.get_mut(i) else {
            return (&[], &[]);
        };
        match &mut slot.entry {
            // Streams cache their own rows: the committed part is extended, never redone.
            Entry::Assistant(stream) => stream.rows(ctx.width, &bullet(), &indent()),
            entry => {
                let salt = entry.time_salt(ctx.now);
                let fresh = slot.cache.as_ref().is_some_and(|c| {
                    c.width == ctx.width
                        && c.expanded == ctx.expanded
                        && c.version == slot.version
                        && c.salt == salt
                });
                if !fresh {
                    self.layouts += 1;
                    slot.cache = Some(Cached {
                        width: ctx.width,
                        expanded: ctx.expanded,
                        version: slot.version,
                        salt,
                        rows: entry.layout(ctx),
                    });
                }
                match &slot.cache {
                    Some(c) => (&c.rows, &[]),
                    None => (&[], &[]),
                }
            }
        }
    }

    /// The top of the view when following the end, for a view `height` rows high.
    fn bottom_top(&mut self, height: usize, ctx: &LayoutCtx) -> (usize, usize) {
        let mut remaining = height;
        let mut i = self.slots.len();
        while i > 0 {
            i -= 1;
            let h = self.height(i, ctx);
            if h >= remaining {
                return (i, h - remaining);
            }
            remaining -= h;
        }
        (0, 0)
    }

    /// Whether at most `height` rows follow (entry, row), the row itself included: the view
    /// shows the end from there, so it may as well follow it.
    fn fewer_rows_below(
        &mut self,
        (entry, row): (usize, usize),
        height: usize,
        ctx: &LayoutCtx,
    ) -> bool {
        let mut count = 0;
        let mut i = entry;
        let mut skip = row;
        while i < self.slots.len() {
            count += self.height(i, ctx).saturating_sub(skip);
            if count > height {
                return false;
            }
            skip = 0;
            i += 1;
        }
        true
    }

    fn top(&mut self, height: usize, ctx: &LayoutCtx) -> (usize, usize) {
        match self.scroll {
            Scroll::Bottom => self.bottom_top(height, ctx),
            Scroll::At { entry, row } => {
                let entry = entry.min(self.slots.len().saturating_sub(1));
                let h = self.height(entry, ctx);
                let row = row.min(h.saturating_sub(1));
                if self.fewer_rows_below((entry, row), height, ctx) {
                    self.scroll = Scroll::Bottom;
                    self.bottom_top(height, ctx)
                } else {
                    self.scroll = Scroll::At { entry, row };
                    (entry, row)
                }
            }
        }
    }

    /// Draws the visible rows into `area`.
    pub(crate) fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &LayoutCtx) {
        if let Some((last, _)) = self.last
            && last.width != ctx.width
        {
            self.rewrap_anchor(&last, ctx);
        }
        self.last = Some((*ctx, area.height));
        let height = usize::from(area.height);
        if height == 0 || self.slots.is_empty() {
            return;
        }
        let (mut entry, mut row) = self.top(height, ctx);
        let mut y = 0usize;
        while y < height && entry < self.slots.len() {
            let gap = usize::from(entry > 0);
            let (head, tail) = self.rows(entry, ctx);
            let total = gap + head.len() + tail.len();
            while row < total && y < height {
                if row >= gap {
                    let r = row - gap;
                    let line = if r < head.len() {
                        &head[r]
                    } else {
                        &tail[r - head.len()]
                    };
                    let y16 = area.y + u16::try_from(y).unwrap_or(u16::MAX);
                    buf.set_line(area.x, y16, line, area.width);
                }
                row += 1;
                y += 1;
            }
            entry += 1;
            row = 0;
        }
    }

    /// The width changed under a view scrolled up: its anchor row was counted at the old
    /// width, so it moves to the same share of its entry at the new one (the view keeps its
    /// place instead of jumping by the ratio of the widths).
    fn rewrap_anchor(&mut self, old: &LayoutCtx, new: &LayoutCtx) {
        let Scroll::At { entry, row } = self.scroll else {
            return;
        };
        let gap = usize::from(entry > 0);
        if entry >= self.slots.len() || row <= gap {
            return;
        }
        let before = self.height(entry, old) - gap;
        let after = self.height(entry, new) - gap;
        let at = row - gap;
        let mapped = (at * after + before / 2)
            .checked_div(before)
            .unwrap_or(0)
            .min(after.saturating_sub(1));
        self.scroll = Scroll::At {
            entry,
            row: gap + mapped,
        };
    }

    fn ctx(&self) -> (LayoutCtx, usize) {
        match self.last {
            Some((ctx, h)) => (ctx, usize::from(h.max(1))),
            None => (
                LayoutCtx {
                    width: 80,
                    expanded: false,
                    now: tokio::time::Instant::now(),
                },
                24,
            ),
        }
    }

    /// A page: the view's height less two rows kept for context.
    pub(crate) fn page(&self) -> usize {
        self.ctx().1.saturating_sub(2).max(1)
    }

    pub(crate) fn scroll_up(&mut self, n: usize) {
        let (ctx, height) = self.ctx();
        if self.slots.is_empty() {
            return;
        }
        let (mut e, mut r) = self.top(height, &ctx);
        let mut n = n;
        while n > 0 {
            if n <= r {
                r -= n;
                break;
            }
            n -= r;
            if e == 0 {
                r = 0;
                break;
            }
            e -= 1;
            r = self.height(e, &ctx).saturating_sub(1);
            n -= 1;
        }
        self.scroll = Scroll::At { entry: e, row: r };
    }

    pub(crate) fn scroll_down(&mut self, n: usize) {
        let (ctx, height) = self.ctx();
        let Scroll::At { entry, row } = self.scroll else {
            return;
        };
        let (mut e, mut r, mut n) = (entry, row, n);
        while n > 0 && e < self.slots.len() {
            let h = self.height(e, &ctx);
            if r + n < h {
                r += n;
                break;
            }
            n -= h - r;
            e += 1;
            r = 0;
        }
        if e >= self.slots.len() || self.fewer_rows_below((e, r), height, &ctx) {
            self.scroll = Scroll::Bottom;
        } else {
            self.scroll = Scroll::At { entry: e, row: r };
        }
    }

    pub(crate) fn scroll_to_top(&mut self) {
        if !self.slots.is_empty() {
            self.scroll = Scroll::At { entry: 0, row: 0 };
        }
    }

    pub(crate) fn scroll_to_bottom(&mut self) {
        self.scroll = Scroll::Bottom;
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
