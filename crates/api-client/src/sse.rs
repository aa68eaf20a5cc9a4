//! Server-sent events framing (the WHATWG `text/event-stream` rules), fed arbitrary byte chunks.
//!
//! Lines end with `\n`, `\r\n` or `\r` (a `\r` at a chunk's end waits for the next chunk to see
//! whether `\n` follows). `data:` lines join with `\n`; a blank line dispatches the event; lines
//! starting with `:` are comments; one space after the colon is dropped; a leading BOM is
//! skipped. Bytes are buffered until a whole line is present, so a UTF-8 character split across
//! chunks is decoded whole; invalid UTF-8 becomes U+FFFD rather than an error.
//!
//! Our own parser rather than `eventsource-stream`: it works on byte chunks without a
//! `Stream` adaptor, hands frames to a callback without allocating a `Vec` per chunk, and
//! exposes the `\r`-at-chunk-end state the property tests exercise. See `benches/sse.rs` for
//! its throughput.

use crate::error::ApiError;
use crate::events::{StreamEvent, decode_event};

/// One dispatched SSE event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseFrame {
    /// The `event:` field; `None` means the default type `message`.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, if any.
    pub id: Option<String>,
}

/// Incremental SSE parser. Feed chunks with [`SseParser::feed`], then call
/// [`SseParser::finish`] at end of stream.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    /// The previous chunk ended in `\r`: a leading `\n` in the next one belongs to it.
    skip_lf: bool,
    /// The stream's first bytes have been checked for a BOM.
    bom_checked: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse `chunk`, calling `on_frame` for every event it completes.
    pub fn feed(&mut self, chunk: &[u8], mut on_frame: impl FnMut(SseFrame)) {
        let mut chunk = chunk;
        if self.skip_lf && !chunk.is_empty() {
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
            self.skip_lf = false;
        }
        if !self.bom_checked {
            self.buf.extend_from_slice(chunk);
            if self.buf.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.buf) {
                return; // maybe a BOM still arriving
            }
            self.bom_checked = true;
            if self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.buf.drain(..3);
            }
            let pending = std::mem::take(&mut self.buf);
            self.process(&pending, &mut on_frame);
            return;
        }
        if self.buf.is_empty() {
            self.process(chunk, &mut on_frame);
        } else {
            let mut pending = std::mem::take(&mut self.buf);
            pending.extend_from_slice(chunk);
            self.process(&pending, &mut on_frame);
        }
    }

    /// Lines of `bytes`; an unterminated tail is kept in `self.buf`.
    fn process(&mut self, bytes: &[u8], on_frame: &mut impl FnMut(SseFrame)) {
        let mut start = 0;
        while let Some(offset) = bytes[start..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            let end = start + offset;
            let line = &bytes[start..end];
            let terminator = bytes[end];
            start = end + 1;
            if terminator == b'\r' {
                match bytes.get(start) {
                    Some(b'\n') => start += 1,
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            self.line(line, on_frame);
        }
        self.buf.clear();
        self.buf.extend_from_slice(&bytes[start..]);
    }

    fn line(&mut self, line: &[u8], on_frame: &mut impl FnMut(SseFrame)) {
        if line.is_empty() {
            self.dispatch(on_frame);
            return;
        }
        if line[0] == b':' {
            return; // comment
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                push_utf8(&mut self.data, value);
            }
            b"event" => self.event = Some(lossy(value)),
            b"id" if !value.contains(&0) => self.id = Some(lossy(value)),
            _ => {} // `retry` and unknown fields: nothing for us to do
        }
    }

    fn dispatch(&mut self, on_frame: &mut impl FnMut(SseFrame)) {
        let event = self.event.take();
        if !self.has_data {
            return; // an event with no data is not dispatched
        }
        self.has_data = false;
        on_frame(SseFrame {
            event,
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
        });
    }

    /// End of stream: an unterminated last line is processed, but an event without its
    /// blank line is *not* dispatched (per the spec it is incomplete). Returns true when such
    /// an incomplete event was dropped.
    pub fn finish(&mut self, mut on_frame: impl FnMut(SseFrame)) -> bool {
        let tail = std::mem::take(&mut self.buf);
        if !tail.is_empty() {
            self.line(&tail, &mut on_frame);
        }
        let dropped = self.has_data;
        self.has_data = false;
        self.data.clear();
        self.event = None;
        dropped
    }
}

fn push_utf8(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => out.push_str(s),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

fn lossy(bytes: &[u8]) -> String {
    let mut s = String::new();
    push_utf8(&mut s, bytes);
    s
}

/// SSE bytes in, typed [`StreamEvent`]s out. Unknown event types are dropped; malformed JSON is
/// an error for that event (the caller decides whether to stop).
#[derive(Debug, Default)]
pub struct EventDecoder {
    parser: SseParser,
}

impl EventDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse `chunk`, appending decoded events to `out`. On a decode error the events decoded
    /// before it are still in `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ApiError> {
        let mut result = Ok(());
        self.parser.feed(chunk, |frame| {
            if result.is_err() {
                return;
            }
            match decode_frame(&frame) {
                Ok(Some(event)) => out.push(event),
                Ok(None) => {}
                Err(e) => result = Err(e),
            }
        });
        result
    }

    /// End of stream (see [`SseParser::finish`]).
    pub fn finish(&mut self) -> bool {
        self.parser.finish(|_| {})
    }
}

/// Decode one frame's data into an event. Frames with empty data (keep-alives) are skipped.
pub fn decode_frame(frame: &SseFrame) -> Result<Option<StreamEvent>, ApiError> {
    if frame.data.trim().is_empty() {
        return Ok(None);
    }
    decode_event(&frame.data)
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
