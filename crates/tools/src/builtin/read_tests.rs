use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;

use super::*;

/// An endless text file ("line N\n" forever) that counts the bytes taken from it.
struct EndlessText {
    next: u64,
    pending: Vec<u8>,
    taken: Arc<AtomicU64>,
}

impl EndlessText {
    fn new() -> (Self, Arc<AtomicU64>) {
        let taken = Arc::new(AtomicU64::new(0));
        let reader = Self {
            next: 1,
            pending: Vec::new(),
            taken: Arc::clone(&taken),
        };
        (reader, taken)
    }
}

impl Read for EndlessText {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pending.len() < buf.len() {
            self.pending
                .extend_from_slice(format!("line {}\n", self.next).as_bytes());
            self.next += 1;
        }
        let n = buf.len();
        buf.copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        self.taken.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

fn window(offset: usize, limit: usize) -> Window {
    Window {
        offset,
        limit,
        ranged: true,
    }
}

fn scan_text(text: &[u8], offset: usize, limit: usize) -> Excerpt {
    scan(
        text,
        Path::new("t.txt"),
        window(offset, limit),
        &CancellationToken::new(),
    )
    .unwrap()
}

#[test]
fn a_window_of_an_endless_file_stops_after_the_scan_cap() {
    let (reader, taken) = EndlessText::new();
    let excerpt = scan(
        reader,
        Path::new("log.txt"),
        window(3, 2),
        &CancellationToken::new(),
    )
    .unwrap();
    let lines: Vec<&str> = excerpt.lines.iter().map(|(_, l, _)| l.as_str()).collect();
    assert_eq!(lines, ["line 3", "line 4"]);
    assert_eq!(excerpt.total, None);
    assert_eq!(excerpt.hash, None);
    let taken = taken.load(Ordering::Relaxed);
    assert!(
        taken <= MAX_SCANNED_BYTES + 2 * READ_BUFFER_BYTES as u64,
        "read {taken} bytes"
    );
    let out = render(&excerpt, 3).content;
    assert_eq!(
        out,
        "3\tline 3\n4\tline 4\n\n... (more lines follow; continue with offset=5)\n"
    );
}

#[test]
fn lines_are_numbered_with_a_tab_and_counted_to_the_end() {
    let excerpt = scan_text(b"one\r\ntwo\n\nfour", 1, 2000);
    assert_eq!(excerpt.total, Some(4));
    assert_eq!(
        excerpt.hash,
        Some(crate::file_state::hash_content(b"one\r\ntwo\n\nfour"))
    );
    assert_eq!(
        render(&excerpt, 1).content,
        "1\tone\n2\ttwo\n3\t\n4\tfour\n"
    );
    // A trailing newline does not make another line; a lone newline is one empty line.
    assert_eq!(scan_text(b"a\nb\n", 1, 10).total, Some(2));
    assert_eq!(scan_text(b"\n", 1, 10).total, Some(1));
    let empty = scan_text(b"", 1, 10);
    assert!(empty.empty);
    assert!(render(&empty, 1).content.contains("contents are empty"));
}

#[test]
fn what_remains_and_an_offset_past_the_end_are_said() {
    let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
    let excerpt = scan_text(text.as_bytes(), 4, 2);
    assert_eq!(
        render(&excerpt, 4).content,
        "4\tl4\n5\tl5\n\n... (5 more lines; continue with offset=6)\n"
    );
    let past = scan_text(text.as_bytes(), 11, 2);
    assert!(
        render(&past, 11)
            .content
            .contains("the file has only 10 lines, fewer than the offset 11")
    );
}

#[test]
fn a_huge_line_is_cut_without_being_kept() {
    let mut text = "é".repeat(3 * MAX_LINE_CHARS).into_bytes();
    text.extend_from_slice(b"\r\nshort\r\n");
    let excerpt = scan_text(&text, 1, 2);
    let (_, first, cut) = &excerpt.lines[0];
    assert!(*cut);
    assert_eq!(first.chars().count(), MAX_LINE_CHARS);
    assert!(first.chars().all(|c| c == 'é'));
    assert_eq!(excerpt.lines[1], (2, "short".to_owned(), false));
    assert!(render(&excerpt, 1).content.starts_with("1\té"));
    assert!(
        render(&excerpt, 1)
            .content
            .contains("é... [line truncated]\n2\tshort\n")
    );
}

#[test]
fn numbering_costs_less_than_eight_percent_on_a_typical_file() {
    // 1000 lines of 65 bytes (64 characters and the newline).
    let text: String = (0..1000).map(|_| format!("{}\n", "x".repeat(64))).collect();
    let excerpt = scan_text(text.as_bytes(), 1, DEFAULT_LINE_LIMIT);
    let sent = render(&excerpt, 1).content.len();
    let ratio = sent as f64 / text.len() as f64;
    assert!(
        ratio <= 1.08,
        "{sent} bytes sent for {} ({ratio:.3})",
        text.len()
    );
}

#[test]
fn binary_content_is_refused_and_a_cancelled_read_stops() {
    let err = scan(
        &b"ab\0cd"[..],
        Path::new("b"),
        window(1, 10),
        &CancellationToken::new(),
    )
    .unwrap_err();
    assert!(matches!(err, ToolError::BinaryFile(_)));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let (reader, _) = EndlessText::new();
    let err = scan(reader, Path::new("log"), window(1, 1), &cancel).unwrap_err();
    assert!(matches!(err, ToolError::Cancelled));
}
