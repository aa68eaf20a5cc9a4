use std::sync::Arc;

use serde_json::json;
use tine_api_client::{
    CacheControl, ContentBlock, Message, MessagesRequest, SystemPrompt, TextBlock, ThinkingConfig,
    ToolDefinition, Usage,
};
use tine_query_loop::{RecordType, RequestMonitor, TranscriptRecord};

use super::*;

fn tool(name: &str, description: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        defer_loading: false,
        cache_control: None,
    }
}

fn request(system: &str, tools: Vec<ToolDefinition>, messages: Vec<Message>) -> MessagesRequest {
    let mut r = MessagesRequest::new("claude-sonnet-4-5", 1024, messages);
    r.system = Some(SystemPrompt::Blocks(vec![
        TextBlock::new(system).with_cache_control(CacheControl::ephemeral()),
    ]));
    r.tools = tools.into();
    r
}

/// Changes the tool array of `r` (it is kept serialized, so it is rebuilt).
fn edit_tools(r: &mut MessagesRequest, edit: impl FnOnce(&mut Vec<ToolDefinition>)) {
    let mut tools = r.tools.to_vec();
    edit(&mut tools);
    r.tools = tools.into();
}

fn history(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(vec![ContentBlock::text(format!("question {i}"))])
            } else {
                Message::assistant(vec![ContentBlock::text(format!("answer {i}"))])
            }
        })
        .collect()
}

fn base() -> MessagesRequest {
    request(
        "You are tine.",
        vec![
            tool("Read", "reads"),
            tool("Edit", "edits"),
            tool("Bash", "runs"),
        ],
        history(5),
    )
}

fn cached(read: u64, creation: u64) -> Usage {
    Usage {
        input_tokens: 10,
        output_tokens: 5,
        cache_read_input_tokens: read,
        cache_creation_input_tokens: creation,
        ..Usage::default()
    }
}

#[test]
fn the_same_request_gives_the_same_fingerprint() {
    let a = RequestFingerprint::of(&base());
    let b = RequestFingerprint::of(&base());
    assert_eq!(a, b);
    assert_eq!(a.messages.len(), 5);
    assert_eq!(a.diff(&b), BreakCause::Unknown);
    assert!(a.prompt_bytes > 0);
}

#[test]
fn breakpoints_and_string_content_do_not_change_the_fingerprint() {
    let mut moved = base();
    moved.system = Some(SystemPrompt::Text("You are tine.".to_owned()));
    edit_tools(&mut moved, |t| {
        t[2].cache_control = Some(CacheControl::ephemeral());
    });
    moved.messages[0] = Message::user("question 0");
    if let tine_api_client::MessageContent::Blocks(blocks) = &mut moved.messages[4].content {
        blocks[0].set_cache_control(Some(CacheControl::ephemeral()));
    }
    assert_eq!(
        RequestFingerprint::of(&moved),
        RequestFingerprint::of(&base())
    );
}

#[test]
fn a_fingerprint_holds_hashes_not_prompt_text() {
    let text = serde_json::to_string(&RequestFingerprint::of(&base())).unwrap();
    assert!(!text.contains("You are tine"));
    assert!(!text.contains("question"));
    assert!(!text.contains("reads"));
}

#[test]
fn one_changed_byte_in_the_system_prompt_is_a_system_break() {
    let reference = RequestFingerprint::of(&base());
    let mut changed = base();
    changed.system = Some(SystemPrompt::Blocks(vec![TextBlock::new("You are tinE.")]));
    assert_eq!(
        RequestFingerprint::of(&changed).diff(&reference),
        BreakCause::System
    );
}

#[test]
fn a_reordered_tool_is_a_tools_break_naming_nothing_changed() {
    let reference = RequestFingerprint::of(&base());
    let mut changed = base();
    edit_tools(&mut changed, |t| {
        t.swap(0, 2);
    });
    assert_eq!(
        RequestFingerprint::of(&changed).diff(&reference),
        BreakCause::Tools {
            changed: vec![],
            added: vec![],
            removed: vec![],
            reordered: true
        }
    );
}

#[test]
fn a_loaded_deferred_tool_is_not_part_of_the_key() {
    let reference = RequestFingerprint::of(&base());
    let mut loaded = base();
    edit_tools(&mut loaded, |t| {
        t.push(ToolDefinition {
            defer_loading: true,
            ..tool("mcp__s__add", "adds")
        });
    });
    let fingerprint = RequestFingerprint::of(&loaded);
    assert_eq!(fingerprint.tools, reference.tools);
    assert_eq!(fingerprint.diff(&reference), BreakCause::Unknown);
    assert!(
        fingerprint.prompt_bytes > reference.prompt_bytes,
        "still sent"
    );
}

#[test]
fn changed_added_and_removed_tools_are_named() {
    let reference = RequestFingerprint::of(&base());
    let mut changed = base();
    edit_tools(&mut changed, |t| {
        t[1] = tool("Edit", "edits files now");
    });
    edit_tools(&mut changed, |t| {
        t.remove(2);
    });
    edit_tools(&mut changed, |t| {
        t.push(tool("Grep", "searches"));
    });
    let cause = RequestFingerprint::of(&changed).diff(&reference);
    assert_eq!(
        cause,
        BreakCause::Tools {
            changed: vec!["Edit".into()],
            added: vec!["Grep".into()],
            removed: vec!["Bash".into()],
            reordered: false
        }
    );
    assert!(cause.to_string().contains("changed Edit"));
}

#[test]
fn a_model_change_names_both_models() {
    let reference = RequestFingerprint::of(&base());
    let mut changed = base();
    changed.model = "claude-opus-4-1".into();
    assert_eq!(
        RequestFingerprint::of(&changed).diff(&reference),
        BreakCause::Model {
            from: "claude-sonnet-4-5".into(),
            to: "claude-opus-4-1".into()
        }
    );
}

#[test]
fn a_thinking_change_is_a_thinking_break() {
    let reference = RequestFingerprint::of(&base());
    let mut changed = base();
    changed.thinking = Some(ThinkingConfig::Enabled {
        budget_tokens: 2048,
    });
    assert_eq!(
        RequestFingerprint::of(&changed).diff(&reference),
        BreakCause::Thinking
    );
}

#[test]
fn a_changed_early_message_is_named_by_its_index() {
    let reference = RequestFingerprint::of(&base());
    let mut changed = base();
    changed.messages[1] = Message::assistant(vec![ContentBlock::text("answer 1!")]);
    changed
        .messages
        .push(Message::assistant(vec![ContentBlock::text("more")]));
    assert_eq!(
        RequestFingerprint::of(&changed).diff(&reference),
        BreakCause::Message { index: 1 }
    );
    let mut shorter = base();
    shorter.messages.truncate(3);
    assert_eq!(
        RequestFingerprint::of(&shorter).diff(&reference),
        BreakCause::Message { index: 3 }
    );
}

#[test]
fn a_grown_history_is_not_a_change() {
    let reference = RequestFingerprint::of(&base());
    let mut grown = base();
    grown.messages = history(9);
    assert_eq!(
        RequestFingerprint::of(&grown).diff(&reference),
        BreakCause::Unknown
    );
}

fn record(kind: &str, data: serde_json::Value) -> TranscriptRecord {
    TranscriptRecord {
        kind: match kind {
            "user" => RecordType::User,
            other => RecordType::Other(other.to_owned()),
        },
        uuid: String::new(),
        parent_uuid: None,
        session_id: None,
        timestamp: "2025-01-01T00:00:00.000Z".into(),
        cwd: None,
        is_sidechain: false,
        agent_id: None,
        message: None,
        data: Some(data),
    }
}

#[test]
fn the_detector_names_a_system_change_against_a_cached_reference() {
    let detector = CacheBreakDetector::new();
    detector.on_request(&base());
    let notes = detector.on_usage(&cached(0, 3000));
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].kind, CACHE_HASHES_KIND);
    assert!(detector.take_breaks().is_empty());

    let mut changed = base();
    changed.system = Some(SystemPrompt::Text("You are tine, changed.".into()));
    changed.messages = history(7);
    detector.on_request(&changed);
    detector.on_usage(&cached(0, 3500));
    assert_eq!(
        detector.take_breaks(),
        vec![CacheBreak {
            expected_tokens: 3000,
            read_tokens: 0,
            cause: BreakCause::System
        }]
    );
    assert!(detector.take_breaks().is_empty());
}

#[test]
fn no_alarm_when_nothing_changed_and_the_entry_expired() {
    let seen = Arc::new(std::sync::Mutex::new(0));
    let counter = Arc::clone(&seen);
    let detector = CacheBreakDetector::new().with_callback(Arc::new(move |_| {
        *counter.lock().unwrap() += 1;
    }));
    detector.on_request(&base());
    detector.on_usage(&cached(2000, 1000));
    let mut next = base();
    next.messages = history(7);
    detector.on_request(&next);
    // expiry: nothing read, everything written again
    detector.on_usage(&cached(0, 3200));
    assert!(detector.take_breaks().is_empty());
    assert_eq!(*seen.lock().unwrap(), 0);
    // a healthy request: reads all that was cached
    next.messages = history(9);
    detector.on_request(&next);
    detector.on_usage(&cached(3200, 100));
    assert!(detector.take_breaks().is_empty());
    // the callback fires for a real break
    edit_tools(&mut next, |t| {
        t.swap(0, 1);
    });
    detector.on_request(&next);
    detector.on_usage(&cached(500, 100));
    assert_eq!(detector.take_breaks().len(), 1);
    assert_eq!(*seen.lock().unwrap(), 1);
}

#[test]
fn an_uncached_reference_raises_nothing() {
    let detector = CacheBreakDetector::new();
    detector.on_request(&base());
    detector.on_usage(&cached(0, 0));
    let mut changed = base();
    changed.system = Some(SystemPrompt::Text("other".into()));
    detector.on_request(&changed);
    detector.on_usage(&cached(0, 0));
    assert!(detector.take_breaks().is_empty());
}

#[test]
fn usage_without_a_request_annotates_nothing() {
    let detector = CacheBreakDetector::new();
    assert!(detector.on_usage(&cached(1, 1)).is_empty());
}

fn resume_from(detector: &CacheBreakDetector, records: &[TranscriptRecord]) {
    for record in records {
        detector.on_resume(record);
    }
}

#[test]
fn resume_rebuilds_the_last_request_from_the_records_before() {
    let first = CacheBreakDetector::new();
    first.on_request(&base());
    let old = first.on_usage(&cached(0, 4000)).remove(0);
    let mut later = base();
    later.messages = history(7);
    first.on_request(&later);
    let last = first.on_usage(&cached(4000, 500)).remove(0);
    // The second record holds only the two new messages' hashes, and no tools.
    assert_eq!(last.data["from"], 5);
    assert_eq!(last.data["messages"].as_array().unwrap().len(), 2);
    assert!(last.data.get("tools").is_none());

    let resumed = CacheBreakDetector::new();
    resume_from(
        &resumed,
        &[
            record(CACHE_HASHES_KIND, old.data),
            record("transition", json!({"x": 1})),
            record(CACHE_HASHES_KIND, last.data),
        ],
    );
    let reference = resumed.reference().unwrap();
    assert_eq!(reference.usage.cache_read_input_tokens, 4000);
    assert_eq!(reference.fingerprint, RequestFingerprint::of(&later));

    let mut changed = later.clone();
    changed.messages = history(9);
    changed.messages[0] = Message::user("edited");
    resumed.on_request(&changed);
    resumed.on_usage(&cached(0, 5000));
    assert_eq!(
        resumed.take_breaks()[0],
        CacheBreak {
            expected_tokens: 4500,
            read_tokens: 0,
            cause: BreakCause::Message { index: 0 }
        }
    );
}

#[test]
fn the_annotation_has_the_same_size_at_request_10_and_300() {
    let detector = CacheBreakDetector::new();
    let mut sizes = Vec::new();
    for turn in 0..300 {
        let mut r = base();
        r.messages = history(2 * turn + 1);
        detector.on_request(&r);
        let note = detector
            .on_usage(&cached(1000 + 40 * turn as u64, 40))
            .remove(0);
        sizes.push(serde_json::to_vec(&note.data).unwrap().len());
    }
    let (at_10, at_300) = (sizes[9], sizes[299]);
    assert!(at_10.abs_diff(at_300) <= 4, "{at_10} vs {at_300} bytes");
    // The first record stands alone (every tool); the others hold only what changed.
    assert!(sizes[0] > at_10 + 100, "{} vs {at_10}", sizes[0]);
}

#[test]
fn a_changed_tool_array_is_written_again_and_rebuilt() {
    let live = CacheBreakDetector::new();
    let mut notes = Vec::new();
    let mut r = base();
    for turn in 0..4 {
        r.messages = history(2 * turn + 1);
        if turn == 2 {
            edit_tools(&mut r, |t| {
                t.push(tool("Grep", "searches"));
            });
        }
        live.on_request(&r);
        notes.push(live.on_usage(&cached(0, 2000)).remove(0));
    }
    let has_tools: Vec<bool> = notes
        .iter()
        .map(|n| n.data.get("tools").is_some())
        .collect();
    assert_eq!(has_tools, [true, false, true, false]);
    let resumed = CacheBreakDetector::new();
    let records: Vec<_> = notes
        .into_iter()
        .map(|n| record(CACHE_HASHES_KIND, n.data))
        .collect();
    resume_from(&resumed, &records);
    assert_eq!(
        resumed.reference().unwrap().fingerprint,
        RequestFingerprint::of(&r)
    );
}

#[test]
fn a_shorter_history_is_rebuilt_exactly() {
    let live = CacheBreakDetector::new();
    let mut records = Vec::new();
    let mut r = base();
    for n in [9, 3, 4] {
        r.messages = history(n);
        live.on_request(&r);
        records.push(record(
            CACHE_HASHES_KIND,
            live.on_usage(&cached(0, 0)).remove(0).data,
        ));
    }
    assert_eq!(records[1].data.as_ref().unwrap()["from"], 3);
    let resumed = CacheBreakDetector::new();
    resume_from(&resumed, &records);
    assert_eq!(
        resumed.reference().unwrap().fingerprint,
        RequestFingerprint::of(&r)
    );
}

#[test]
fn a_lost_record_leaves_nothing_to_compare_rather_than_a_wrong_reference() {
    let live = CacheBreakDetector::new();
    let mut records = Vec::new();
    for turn in 0..3 {
        let mut r = base();
        r.messages = history(2 * turn + 1);
        live.on_request(&r);
        records.push(record(
            CACHE_HASHES_KIND,
            live.on_usage(&cached(0, 2000)).remove(0).data,
        ));
    }
    records.remove(1);
    let resumed = CacheBreakDetector::new();
    resume_from(&resumed, &records);
    assert!(resumed.reference().is_none());
    // Unreadable records are skipped the same way.
    resume_from(
        &resumed,
        &[record(CACHE_HASHES_KIND, json!({"not": "hashes"}))],
    );
    assert!(resumed.reference().is_none());
}

#[test]
fn old_records_with_every_message_hash_are_still_read() {
    // The format before delta records: a whole fingerprint with its usage, every request.
    let legacy = |r: &MessagesRequest, usage: Usage| {
        let hashes = CacheHashes {
            fingerprint: RequestFingerprint::of(r),
            usage,
        };
        record(CACHE_HASHES_KIND, serde_json::to_value(hashes).unwrap())
    };
    let mut later = base();
    later.messages = history(7);
    let resumed = CacheBreakDetector::new();
    resume_from(
        &resumed,
        &[
            legacy(&base(), cached(0, 4000)),
            legacy(&later, cached(4000, 500)),
        ],
    );
    assert_eq!(
        resumed.reference().unwrap().fingerprint,
        RequestFingerprint::of(&later)
    );

    // It compares, and its next record (a delta on the old one) rebuilds in a later process.
    let mut changed = later.clone();
    changed.messages = history(9);
    changed.system = Some(SystemPrompt::Text("You are tine, changed.".into()));
    resumed.on_request(&changed);
    let note = resumed.on_usage(&cached(0, 5000)).remove(0);
    assert_eq!(resumed.take_breaks()[0].cause, BreakCause::System);
    assert_eq!(note.data["from"], 7);
    let again = CacheBreakDetector::new();
    resume_from(
        &again,
        &[
            legacy(&base(), cached(0, 4000)),
            legacy(&later, cached(4000, 500)),
            record(CACHE_HASHES_KIND, note.data),
        ],
    );
    assert_eq!(
        again.reference().unwrap().fingerprint,
        RequestFingerprint::of(&changed)
    );
}

#[test]
fn a_steady_record_holds_only_the_new_hashes_and_two_cache_figures() {
    let live = CacheBreakDetector::new();
    let mut notes = Vec::new();
    for turn in 0..3 {
        let mut r = base();
        r.messages = history(2 * turn + 1);
        live.on_request(&r);
        notes.push(live.on_usage(&cached(1000, 40)).remove(0).data);
    }
    let steady = &notes[2];
    let mut keys: Vec<&str> = steady
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["from", "messages", "prompt_bytes", "read", "v", "written"],
        "{steady}"
    );
    assert_eq!(
        (steady["read"].as_u64(), steady["written"].as_u64()),
        (Some(1000), Some(40))
    );
    let bytes = serde_json::to_vec(steady).unwrap().len();
    assert!(bytes < 160, "{bytes} bytes: {steady}");
    // The first stands alone.
    for part in ["model", "system", "thinking", "tools"] {
        assert!(notes[0].get(part).is_some(), "{part}");
    }
    // A changed part is written again, and rebuilt.
    let mut r = base();
    r.messages = history(7);
    r.system = Some(SystemPrompt::Text("You are tine, changed.".into()));
    live.on_request(&r);
    let note = live.on_usage(&cached(0, 900)).remove(0).data;
    assert!(
        note.get("system").is_some() && note.get("model").is_none(),
        "{note}"
    );
    let resumed = CacheBreakDetector::new();
    let mut records: Vec<_> = notes
        .into_iter()
        .map(|n| record(CACHE_HASHES_KIND, n))
        .collect();
    records.push(record(CACHE_HASHES_KIND, note));
    resume_from(&resumed, &records);
    let reference = resumed.reference().unwrap();
    assert_eq!(reference.fingerprint, RequestFingerprint::of(&r));
    assert_eq!(reference.usage.cache_creation_input_tokens, 900);
}

#[test]
fn version_2_records_are_still_read() {
    // v2 wrote every part hash and the whole usage on every record.
    let print = RequestFingerprint::of(&base());
    let v2 = json!({
        "v": 2,
        "model": print.model,
        "system": print.system,
        "tools": print.tools,
        "thinking": print.thinking,
        "from": 0,
        "messages": print.messages,
        "prompt_bytes": print.prompt_bytes,
        "usage": cached(3000, 200),
    });
    let resumed = CacheBreakDetector::new();
    resume_from(&resumed, &[record(CACHE_HASHES_KIND, v2)]);
    let reference = resumed.reference().unwrap();
    assert_eq!(reference.fingerprint, print);
    assert_eq!(reference.usage, cached(3000, 200));
}

#[test]
fn kept_breaks_are_bounded() {
    let detector = CacheBreakDetector::new();
    for i in 0..(KEPT_BREAKS + 5) {
        let mut r = base();
        r.system = Some(SystemPrompt::Text(format!("system {i}")));
        detector.on_request(&r);
        detector.on_usage(&cached(0, 2000));
    }
    assert_eq!(detector.take_breaks().len(), KEPT_BREAKS);
}

#[test]
fn breaks_read_well() {
    let b = CacheBreak {
        expected_tokens: 10,
        read_tokens: 2,
        cause: BreakCause::Message { index: 4 },
    };
    assert_eq!(
        b.to_string(),
        "prompt cache break: read 2 of 10 cached tokens; the history differs from message 4 on"
    );
}
