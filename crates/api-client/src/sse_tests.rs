use super::*;

#[test]
fn frames_split_lines() {
    let mut p = SseParser::new();
    let mut got = Vec::new();
    p.feed(b"event: ping\ndata: {}\n\n", |f| got.push(f));
    assert_eq!(got.len(), 1);
}
