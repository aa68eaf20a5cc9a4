use proptest::prelude::*;

use super::*;
use crate::events::ContentDelta;

fn frames(chunks: &[&[u8]]) -> Vec<SseFrame> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, |f| out.push(f.clone()));
    }
    parser.finish(|f| out.push(f.clone()));
    out
}

fn frame(event: &str, data: &str) -> SseFrame {
    SseFrame {
        event: event.to_owned(),
        data: data.to_owned(),
        id: None,
    }
}

#[test]
fn parses_events_comments_and_multiline_data() {
    let input = b": keep-alive\nevent: a\ndata: one\ndata:two\ndata:  three\n\nevent: b\nid: 7\ndata\n\n\n\ndata: last\n\n";
    let got = frames(&[input]);
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], frame("a", "one\ntwo\n three"));
    assert_eq!(
        got[1],
        SseFrame {
            event: "b".into(),
            data: String::new(),
            id: Some("7".into())
        }
    );
    assert_eq!(
        got[2],
        SseFrame {
            event: String::new(),
            data: "last".into(),
            id: Some("7".into())
        }
    );
}

#[test]
fn all_line_endings_and_cr_at_chunk_end() {
    let expected = vec![frame("x", "1"), frame("y", "2")];
    assert_eq!(
        frames(&[b"event: x\r\ndata: 1\r\n\r\nevent: y\rdata: 2\r\r"]),
        expected
    );
    // `\r` ends one chunk and `\n` starts the next: one line ending, not two.
    assert_eq!(
        frames(&[
            b"event: x\r",
            b"\ndata: 1\r",
            b"\n\r",
            b"\nevent: y\ndata: 2\n\n"
        ]),
        expected
    );
}

#[test]
fn event_without_data_or_blank_line_is_not_dispatched() {
    assert!(frames(&[b"event: ping\n\n"]).is_empty());
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(b"event: a\ndata: partial", |f| out.push(f.clone()));
    assert!(
        parser.finish(|f| out.push(f.clone())),
        "finish reports the dropped event"
    );
    assert!(out.is_empty());
}

#[test]
fn bom_is_skipped_even_when_split() {
    assert_eq!(
        frames(&[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]),
        vec![SseFrame {
            data: "x".into(),
            ..SseFrame::default()
        }]
    );
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let got = frames(&[b"data: a\xFFb\n\n"]);
    assert_eq!(got[0].data, "a\u{FFFD}b");
}

#[test]
fn decoder_yields_typed_events_and_skips_unknown() {
    let mut decoder = EventDecoder::new();
    let mut out = Vec::new();
    let input = "event: ping\ndata: {\"type\":\"ping\"}\n\nevent: new_thing\ndata: {\"type\":\"new_thing\"}\n\n\
                 event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n";
    decoder.feed(input.as_bytes(), &mut out).unwrap();
    assert_eq!(
        out,
        vec![
            StreamEvent::Ping,
            StreamEvent::ContentBlockDelta {
                index: 0,
                delta: ContentDelta::TextDelta { text: "hi".into() }
            }
        ]
    );
}

#[test]
fn decoder_reports_bad_json_after_good_events() {
    let mut decoder = EventDecoder::new();
    let mut out = Vec::new();
    let result = decoder.feed(b"data: {\"type\":\"ping\"}\n\ndata: {oops\n\n", &mut out);
    assert!(matches!(result, Err(ApiError::Decode { .. })));
    assert_eq!(out, vec![StreamEvent::Ping]);
}

/// A realistic stream with multi-byte characters (2, 3 and 4 bytes) in text deltas.
fn sample_stream() -> (String, Vec<SseFrame>) {
    let texts = [
        "héllo ",
        "wörld — ",
        "日本語 ",
        "🦀🎉",
        "\\n escaped \"quotes\"",
    ];
    let mut sse = String::from(": comment\n\n");
    let mut expected = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let data = serde_json::json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": text}}).to_string();
        sse.push_str(&format!("event: content_block_delta\ndata: {data}\n\n"));
        expected.push(frame("content_block_delta", &data));
        sse.push_str("event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n");
        expected.push(frame("ping", "{\"type\": \"ping\"}"));
    }
    (sse, expected)
}

#[test]
fn split_at_every_byte_boundary() {
    let (sse, expected) = sample_stream();
    let bytes = sse.as_bytes();
    for cut in 0..=bytes.len() {
        assert_eq!(
            frames(&[&bytes[..cut], &bytes[cut..]]),
            expected,
            "cut at byte {cut}"
        );
    }
}

#[test]
fn one_byte_at_a_time() {
    let (sse, expected) = sample_stream();
    let chunks: Vec<&[u8]> = sse.as_bytes().chunks(1).collect();
    assert_eq!(frames(&chunks), expected);
}

proptest! {
    #[test]
    fn arbitrary_chunking_gives_the_same_frames(cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12)) {
        let (sse, expected) = sample_stream();
        let bytes = sse.as_bytes();
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut chunks = Vec::new();
        let mut last = 0;
        for p in points {
            chunks.push(&bytes[last..p]);
            last = p;
        }
        chunks.push(&bytes[last..]);
        prop_assert_eq!(frames(&chunks), expected);
    }

    #[test]
    fn arbitrary_text_survives_any_split(text in "\\PC{0,40}", cut in any::<prop::sample::Index>()) {
        let data = serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}).to_string();
        let sse = format!("event: content_block_delta\ndata: {data}\n\n");
        let bytes = sse.as_bytes();
        let cut = cut.index(bytes.len() + 1);
        let mut decoder = EventDecoder::new();
        let mut out = Vec::new();
        decoder.feed(&bytes[..cut], &mut out).unwrap();
        decoder.feed(&bytes[cut..], &mut out).unwrap();
        prop_assert_eq!(out, vec![StreamEvent::ContentBlockDelta { index: 0, delta: ContentDelta::TextDelta { text } }]);
    }

    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut decoder = EventDecoder::new();
        let mut out = Vec::new();
        let _ = decoder.feed(&bytes, &mut out);
        let _ = decoder.finish();
    }
}
