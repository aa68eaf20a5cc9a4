use super::*;

fn line(kind: &str, uuid: &str, parent: Option<&str>) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"{kind}","uuid":"{uuid}","parentUuid":{parent},"sessionId":"s","timestamp":"t","cwd":"/w","message":{{"role":"user","content":"{uuid}"}}}}"#
    )
}

#[test]
fn empty_input_has_no_records_and_no_warnings() {
    let read = parse_transcript(b"");
    assert!(read.records.is_empty() && read.warnings.is_empty());
    let read = parse_transcript(b"\n\n  \n");
    assert!(read.records.is_empty() && read.warnings.is_empty());
}

#[test]
fn last_line_without_newline_that_parses_is_kept() {
    let text = format!(
        "{}\n{}",
        line("user", "a", None),
        line("assistant", "b", Some("a"))
    );
    let read = parse_transcript(text.as_bytes());
    assert_eq!(read.records.len(), 2);
    assert!(read.warnings.is_empty());
}

#[test]
fn complete_but_invalid_last_line_is_corrupt_not_torn() {
    let text = format!("{}\n{{\"type\":1}}\n", line("user", "a", None));
    let read = parse_transcript(text.as_bytes());
    assert_eq!(read.records.len(), 1);
    assert!(matches!(
        read.warnings.as_slice(),
        [TranscriptWarning::CorruptLine { line: 2, .. }]
    ));
}

#[test]
fn invalid_utf8_is_a_corrupt_line() {
    let mut bytes = line("user", "a", None).into_bytes();
    bytes.extend_from_slice(b"\n\xff\xfe\n");
    let read = parse_transcript(&bytes);
    assert_eq!(read.records.len(), 1);
    assert_eq!(read.warnings.len(), 1);
}

#[test]
fn chain_follows_the_last_leaf_and_survives_cycles() {
    // a <- b <- c, plus a branch a <- d written last: the chain is a, d.
    let text = [
        line("user", "a", None),
        line("assistant", "b", Some("a")),
        line("user", "c", Some("b")),
        line("assistant", "d", Some("a")),
    ]
    .join("\n");
    let (chain, warning) = conversation_chain(parse_transcript(text.as_bytes()).records);
    let ids: Vec<&str> = chain.iter().map(|r| r.uuid.as_str()).collect();
    assert_eq!(ids, ["a", "d"]);
    assert!(warning.is_none());

    let cyclic = [line("user", "x", Some("y")), line("user", "y", Some("x"))].join("\n");
    let (chain, _) = conversation_chain(parse_transcript(cyclic.as_bytes()).records);
    assert_eq!(chain.len(), 2);
}

#[test]
fn annotations_are_not_part_of_the_chain() {
    let text = [
        line("user", "a", None),
        line("transition", "t", Some("a")),
        line("assistant", "b", Some("a")),
    ]
    .join("\n");
    let records = parse_transcript(text.as_bytes()).records;
    assert_eq!(records[1].kind, RecordType::Other("transition".into()));
    let (chain, _) = conversation_chain(records);
    let ids: Vec<&str> = chain.iter().map(|r| r.uuid.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
}

#[test]
fn a_missing_parent_is_reported() {
    let text = line("user", "b", Some("gone"));
    let (chain, warning) = conversation_chain(parse_transcript(text.as_bytes()).records);
    assert_eq!(chain.len(), 1);
    assert_eq!(
        warning,
        Some(TranscriptWarning::BrokenChain {
            missing_uuid: "gone".into()
        })
    );
}

fn boundary(uuid: &str, parent: Option<&str>) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"system","uuid":"{uuid}","parentUuid":{parent},"sessionId":"s","timestamp":"t","cwd":"/w","data":{{"subtype":"compact_boundary","messages":1}}}}"#
    )
}

#[test]
fn the_chain_starts_at_the_last_compaction_boundary() {
    // a <- b <- [boundary c] <- d (the summary) <- e; a notice system record stays in the chain.
    let notice = r#"{"type":"system","uuid":"n","parentUuid":"e","sessionId":"s","timestamp":"t","cwd":"/w","data":{"subtype":"notice"}}"#;
    let text = [
        line("user", "a", None),
        line("assistant", "b", Some("a")),
        boundary("c", Some("b")),
        line("user", "d", Some("c")),
        line("assistant", "e", Some("d")),
        notice.to_owned(),
        line("user", "f", Some("n")),
    ]
    .join("\n");
    let (chain, warning) = conversation_chain(parse_transcript(text.as_bytes()).records);
    let ids: Vec<&str> = chain.iter().map(|r| r.uuid.as_str()).collect();
    assert_eq!(ids, ["c", "d", "e", "n", "f"]);
    assert!(warning.is_none());
}

#[test]
fn scanning_reports_each_record_in_order_without_keeping_them() {
    let text = format!(
        "{}\n\n{}\n{}",
        line("user", "a", None),
        line("transition", "t", Some("a")),
        &line("assistant", "b", Some("a"))[..20]
    );
    let mut seen = Vec::new();
    let warnings = scan(text.as_bytes(), |r| seen.push(r.uuid)).unwrap();
    assert_eq!(seen, ["a", "t"]);
    assert_eq!(
        warnings,
        [TranscriptWarning::TornLastLine { line: 4, bytes: 20 }]
    );
}
