//! Fuzzing the stream path at scale: the SSE framing, the event decoder and the accumulator.
//! `cargo test` runs a few cases of each; `cargo xtask fuzz sse --cases N` runs N
//! (`PROPTEST_CASES`).
//!
//! Properties: arbitrary bytes never panic, and give the same frames however they are split
//! into chunks; a valid stream (any events, any text, any line endings, comments and unknown
//! events in between) decodes to exactly its events whatever the split; the accumulator never
//! panics on any sequence of events, in or out of order.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::json;
use tine_api_client::ResponseMessage;
use tine_api_client::UsageDelta;
use tine_api_client::{
    ContentDelta, EventDecoder, MessageAccumulator, MessageDeltaBody, SseFrame, SseParser,
    StreamEvent,
};
use tine_test_support::fuzz_config as config;

/// Bytes biased towards what SSE cares about (line ends, colons, field names, a BOM).
fn sse_ish_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        any::<u8>().prop_map(|b| vec![b]),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b":".to_vec()),
        Just(b" ".to_vec()),
        Just(b"data:".to_vec()),
        Just(b"data: ".to_vec()),
        Just(b"event:".to_vec()),
        Just(b"id:".to_vec()),
        Just(b"retry: 10".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just("é日🦀".as_bytes().to_vec()),
        Just(b"\xF0\x9F".to_vec()),
        Just(b"{\"type\":\"ping\"}".to_vec()),
    ];
    proptest::collection::vec(piece, 0..120).prop_map(|pieces| pieces.concat())
}

/// Cut points into a buffer of `len` bytes.
fn cuts() -> impl Strategy<Value = Vec<prop::sample::Index>> {
    proptest::collection::vec(any::<prop::sample::Index>(), 0..16)
}

fn split<'a>(bytes: &'a [u8], cuts: &[prop::sample::Index]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut chunks = Vec::new();
    let mut last = 0;
    for point in points {
        chunks.push(&bytes[last..point]);
        last = point;
    }
    chunks.push(&bytes[last..]);
    chunks
}

fn frames(chunks: &[&[u8]]) -> (Vec<SseFrame>, bool) {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, |f| out.push(f.clone()));
    }
    let dropped = parser.finish(|f| out.push(f.clone()));
    (out, dropped)
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "\\PC{0,30}", Just(String::new())]
}

fn delta() -> impl Strategy<Value = ContentDelta> {
    prop_oneof![
        text().prop_map(|text| ContentDelta::TextDelta { text }),
        text().prop_map(|partial_json| ContentDelta::InputJsonDelta { partial_json }),
        text().prop_map(|thinking| ContentDelta::ThinkingDelta { thinking }),
        text().prop_map(|signature| ContentDelta::SignatureDelta { signature }),
    ]
}

fn message_start(id: String) -> StreamEvent {
    let message: ResponseMessage = serde_json::from_value(json!({
        "id": id, "model": "claude-test", "role": "assistant", "content": [],
        "usage": {"input_tokens": 3, "output_tokens": 1}
    }))
    .unwrap();
    StreamEvent::MessageStart { message }
}

fn event() -> impl Strategy<Value = StreamEvent> {
    prop_oneof![
        4 => (0usize..4, delta()).prop_map(|(index, delta)| StreamEvent::ContentBlockDelta { index, delta }),
        1 => (0usize..4).prop_map(|index| StreamEvent::ContentBlockStop { index }),
        1 => Just(StreamEvent::Ping),
        1 => Just(StreamEvent::MessageStop),
        1 => "[a-z0-9_]{1,12}".prop_map(message_start),
        1 => (0usize..4, text()).prop_map(|(index, t)| StreamEvent::ContentBlockStart {
            index,
            content_block: tine_api_client::ContentBlock::text(t),
        }),
        1 => (proptest::option::of(0u64..1_000_000)).prop_map(|output_tokens| StreamEvent::MessageDelta {
            delta: MessageDeltaBody::default(),
            usage: UsageDelta { output_tokens, ..UsageDelta::default() },
        }),
    ]
}

/// What may sit between events on the wire and must change nothing.
fn noise() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(": keep-alive\n\n".to_owned()),
        Just(":\n".to_owned()),
        Just("retry: 3000\n".to_owned()),
        Just("id: 42\n".to_owned()),
        Just("unknown-field: x\n".to_owned()),
        Just("event: new_thing\ndata: {\"type\":\"new_thing\",\"x\":1}\n\n".to_owned()),
        Just("data:\n\n".to_owned()),
    ]
}

fn line_ending() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("\n"), Just("\r\n"), Just("\r")]
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn arbitrary_bytes_give_the_same_frames_however_split(bytes in sse_ish_bytes(), cuts in cuts()) {
        let whole = frames(&[&bytes]);
        let chunked = frames(&split(&bytes, &cuts));
        prop_assert_eq!(&chunked, &whole);
        let one_by_one: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(frames(&one_by_one), whole);
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..600), cuts in cuts()) {
        let mut decoder = EventDecoder::new();
        let mut out = Vec::new();
        for chunk in split(&bytes, &cuts) {
            let _ = decoder.feed(chunk, &mut out);
        }
        let _ = decoder.finish();
    }

    #[test]
    fn a_valid_stream_decodes_to_its_events_however_split(
        items in proptest::collection::vec((noise(), event()), 0..24),
        ending in line_ending(),
        bom in any::<bool>(),
        cuts in cuts(),
    ) {
        let mut wire = if bom { "\u{FEFF}".to_owned() } else { String::new() };
        let mut expected = Vec::new();
        for (noise, event) in &items {
            wire.push_str(noise);
            wire.push_str(&event.to_sse());
            expected.push(event.clone());
        }
        // JSON data never holds a raw line break, so every `\n` is framing.
        let wire = wire.replace('\n', ending);
        let bytes = wire.as_bytes();
        let mut decoder = EventDecoder::new();
        let mut out = Vec::new();
        for chunk in split(bytes, &cuts) {
            decoder.feed(chunk, &mut out).unwrap();
        }
        prop_assert!(!decoder.finish(), "nothing is left over");
        prop_assert_eq!(out, expected);
    }

    #[test]
    fn the_accumulator_never_panics_on_any_event_sequence(events in proptest::collection::vec(event(), 0..40)) {
        let mut accumulator = MessageAccumulator::new();
        for event in &events {
            let _ = accumulator.push(event);
            let _ = accumulator.snapshot();
        }
        let _ = accumulator.is_complete();
        let _ = accumulator.finish();
    }
}
