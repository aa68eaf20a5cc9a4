//! SSE parse + accumulate throughput: a ~10 MB synthetic stream (ten replies, each with
//! thinking, text with multi-byte characters, and a tool call whose input arrives as partial
//! JSON) is fed in 16 KiB chunks through `EventDecoder` into `MessageAccumulator`.
//! Target: >= 200 MB/s.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark binary, not library code

use std::time::Instant;

use serde_json::json;
use tine_api_client::{
    ContentBlock, EventDecoder, MessageAccumulator, StopReason, StreamEvent, ThinkingBlock,
    message_events, reply,
};

const TARGET_MB_S: f64 = 200.0;
const CHUNK: usize = 16 * 1024;

fn synthetic_reply(n: usize) -> String {
    let prose = "The quick brown fox — café, naïve, 日本語, 🦀 — jumps over the lazy dog. ";
    let text: String = prose.repeat(1_100);
    let thinking: String = "Let me consider the file layout first; ".repeat(500);
    let big_input = json!({
        "file_path": format!("/src/module_{n}.rs"),
        "content": "fn main() {\n    println!(\"hello\");\n}\n".repeat(500),
    });
    let message = reply(
        vec![
            ContentBlock::Thinking(ThinkingBlock {
                thinking,
                signature: "EqQBCkYIARgCKkA".repeat(20),
            }),
            ContentBlock::text(text),
            ContentBlock::tool_use(format!("toolu_{n}"), "Write", big_input),
        ],
        StopReason::ToolUse,
    );
    let mut sse = String::new();
    for (i, event) in message_events(&message).iter().enumerate() {
        sse.push_str(&event.to_sse());
        if i % 50 == 0 {
            sse.push_str(&StreamEvent::Ping.to_sse());
        }
    }
    sse
}

fn run(stream: &[u8], replies: usize) -> usize {
    let mut decoder = EventDecoder::new();
    let mut accumulator = MessageAccumulator::new();
    let mut events = Vec::with_capacity(256);
    let mut finished = 0;
    for chunk in stream.chunks(CHUNK) {
        decoder.feed(chunk, &mut events).unwrap();
        for event in events.drain(..) {
            accumulator.push(&event).unwrap();
            if matches!(event, StreamEvent::MessageStop) {
                let message = std::mem::take(&mut accumulator).finish().unwrap();
                assert_eq!(message.content.len(), 3);
                finished += 1;
            }
        }
    }
    assert_eq!(finished, replies);
    finished
}

fn main() {
    let replies = 10;
    let stream: String = (0..replies).map(synthetic_reply).collect();
    let bytes = stream.as_bytes();
    let mb = bytes.len() as f64 / 1_000_000.0;

    run(bytes, replies); // warm-up
    let mut rates = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        run(bytes, replies);
        rates.push(mb / start.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    let median = rates[rates.len() / 2];
    let verdict = if median >= TARGET_MB_S {
        "ok"
    } else {
        "BELOW TARGET"
    };
    println!(
        "sse parse+accumulate: {median:.1} MB/s median of {} runs over {mb:.1} MB (best {:.1}) (target >= {TARGET_MB_S:.0} MB/s) {verdict}",
        rates.len(),
        rates[rates.len() - 1]
    );
}
