use std::path::{Path, PathBuf};

use serde_json::json;
use tine_api_client::{ContentBlock, Message};
use tine_config::{SessionId, transcript_path};
use tine_query_loop::{
    RecordType, TranscriptWarning, TranscriptWriter, WriterOptions, latest_session, load_session,
    read_transcript,
};

fn options(id: &SessionId, cwd: &Path) -> WriterOptions {
    WriterOptions {
        session_id: id.clone(),
        cwd: cwd.to_path_buf(),
        agent_id: None,
        parent_uuid: None,
    }
}

fn hello() -> Message {
    Message::assistant(vec![ContentBlock::text("hello")])
}

async fn write_conversation(home: &Path, cwd: &Path, id: &SessionId) -> PathBuf {
    let path = transcript_path(home, cwd, id);
    let mut writer = TranscriptWriter::open(path.clone(), options(id, cwd))
        .await
        .unwrap();
    writer.append_message(&Message::user("hi")).await.unwrap();
    writer
        .append(
            RecordType::Other("transition".into()),
            None,
            Some(&json!({"reason": "tool_use"})),
        )
        .await
        .unwrap();
    writer.append_message(&hello()).await.unwrap();
    path
}

#[tokio::test]
async fn round_trip_keeps_envelope_and_chain() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/work/proj");
    let id = SessionId::new_random();
    let path = write_conversation(home.path(), cwd, &id).await;

    let read = read_transcript(&path).await.unwrap();
    assert!(read.warnings.is_empty());
    assert_eq!(read.records.len(), 3);
    let [user, transition, assistant] = &read.records[..] else {
        panic!("three records")
    };
    assert_eq!(user.kind, RecordType::User);
    assert_eq!(user.parent_uuid, None);
    assert_eq!(user.session_id.as_ref(), Some(&id));
    assert_eq!(user.cwd.as_deref(), Some("/work/proj"));
    assert!(user.timestamp.ends_with('Z') && user.timestamp.len() == 24);
    // The annotation points at the message it follows and does not extend the chain.
    assert_eq!(transition.parent_uuid.as_deref(), Some(user.uuid.as_str()));
    assert_eq!(assistant.parent_uuid.as_deref(), Some(user.uuid.as_str()));

    // The wire names upper layers and other tools rely on.
    let raw = std::fs::read_to_string(&path).unwrap();
    let first: serde_json::Value = serde_json::from_str(raw.lines().next().unwrap()).unwrap();
    for key in [
        "uuid",
        "parentUuid",
        "sessionId",
        "timestamp",
        "cwd",
        "type",
        "message",
    ] {
        assert!(first.get(key).is_some(), "missing {key}");
    }
    assert!(first.get("isSidechain").is_none());
    // An annotation's envelope is only what a reader uses.
    let note: serde_json::Value = serde_json::from_str(raw.lines().nth(1).unwrap()).unwrap();
    let mut keys: Vec<&str> = note
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["data", "parentUuid", "timestamp", "type"]);
    assert_eq!(transition.uuid, "");
    assert_eq!(transition.session_id, None);
    assert_eq!(transition.cwd, None);

    let resumed = load_session(home.path(), cwd, &id).await.unwrap();
    assert_eq!(resumed.messages(), vec![Message::user("hi"), hello()]);
    assert_eq!(resumed.last_uuid(), Some(assistant.uuid.as_str()));
}

#[tokio::test]
async fn resumed_writer_continues_the_chain() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/p");
    let id = SessionId::new_random();
    let path = write_conversation(home.path(), cwd, &id).await;
    let resumed = load_session(home.path(), cwd, &id).await.unwrap();

    let mut opts = options(&id, cwd);
    opts.parent_uuid = resumed.last_uuid().map(str::to_owned);
    let mut writer = TranscriptWriter::open(path, opts).await.unwrap();
    writer
        .append_message(&Message::user("again"))
        .await
        .unwrap();

    let again = load_session(home.path(), cwd, &id).await.unwrap();
    assert_eq!(again.chain.len(), 3);
    assert_eq!(again.messages()[2], Message::user("again"));
}

#[tokio::test]
async fn torn_last_line_is_skipped_and_reported_and_next_append_is_clean() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/p");
    let id = SessionId::new_random();
    let path = write_conversation(home.path(), cwd, &id).await;
    let full = std::fs::read(&path).unwrap();
    // Simulate a crash halfway through the last record.
    let cut = full.len() - 30;
    std::fs::write(&path, &full[..cut]).unwrap();

    let read = read_transcript(&path).await.unwrap();
    assert_eq!(read.records.len(), 2);
    assert!(matches!(
        read.warnings.as_slice(),
        [TranscriptWarning::TornLastLine { line: 3, .. }]
    ));

    // Appending after the crash must not glue the new record onto the torn fragment.
    let resumed = load_session(home.path(), cwd, &id).await.unwrap();
    let mut opts = options(&id, cwd);
    opts.parent_uuid = resumed.last_uuid().map(str::to_owned);
    let mut writer = TranscriptWriter::open(path.clone(), opts).await.unwrap();
    writer
        .append_message(&Message::user("after crash"))
        .await
        .unwrap();
    let read = read_transcript(&path).await.unwrap();
    assert_eq!(read.records.len(), 3);
    assert!(matches!(
        read.warnings.as_slice(),
        [TranscriptWarning::CorruptLine { line: 3, .. }]
    ));
    let after = load_session(home.path(), cwd, &id).await.unwrap();
    assert_eq!(after.messages().len(), 2, "hi, after crash");
}

#[tokio::test]
async fn corrupt_middle_line_is_skipped_with_its_line_number() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/p");
    let id = SessionId::new_random();
    let path = write_conversation(home.path(), cwd, &id).await;
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "{not json";
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    let read = read_transcript(&path).await.unwrap();
    assert_eq!(read.records.len(), 2);
    match read.warnings.as_slice() {
        [w @ TranscriptWarning::CorruptLine { line: 2, .. }] => {
            assert!(w.to_string().starts_with("line 2: invalid record skipped"));
        }
        other => panic!("unexpected warnings {other:?}"),
    }
}

#[cfg(unix)]
#[tokio::test]
async fn transcript_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let id = SessionId::new_random();
    let path = write_conversation(home.path(), Path::new("/p"), &id).await;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let dir_mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(dir_mode & 0o077, 0, "project dir readable by others");
}

#[tokio::test]
async fn sidechain_records_are_marked() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/p");
    let id = SessionId::new_random();
    let path = tine_config::subagent_transcript_path(home.path(), cwd, &id, "a7").unwrap();
    let mut opts = options(&id, cwd);
    opts.agent_id = Some("a7".into());
    let mut writer = TranscriptWriter::open(path.clone(), opts).await.unwrap();
    writer.append_message(&Message::user("task")).await.unwrap();
    let read = read_transcript(&path).await.unwrap();
    assert!(read.records[0].is_sidechain);
    assert_eq!(read.records[0].agent_id.as_deref(), Some("a7"));
    let raw = std::fs::read_to_string(&path).unwrap();
    assert!(raw.contains("\"isSidechain\":true"));
}

#[tokio::test]
async fn latest_session_picks_the_newest_transcript_of_this_directory_only() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/p");
    assert_eq!(latest_session(home.path(), cwd).await.unwrap(), None);

    let old = SessionId::parse("old").unwrap();
    let new = SessionId::parse("new").unwrap();
    let elsewhere = SessionId::parse("elsewhere").unwrap();
    let old_path = write_conversation(home.path(), cwd, &old).await;
    let new_path = write_conversation(home.path(), cwd, &new).await;
    write_conversation(home.path(), Path::new("/other"), &elsewhere).await;

    let set_mtime = |path: &Path, secs: u64| {
        let file = std::fs::File::options().append(true).open(path).unwrap();
        file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .unwrap();
    };
    set_mtime(&old_path, 2_000_000_000);
    set_mtime(&new_path, 1_000_000_000);
    assert_eq!(
        latest_session(home.path(), cwd).await.unwrap(),
        Some(old.clone())
    );
    set_mtime(&new_path, 2_000_000_001);
    assert_eq!(latest_session(home.path(), cwd).await.unwrap(), Some(new));
}

#[tokio::test]
async fn unknown_session_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let id = SessionId::parse("nope").unwrap();
    let err = load_session(home.path(), Path::new("/p"), &id)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no session nope"), "{err}");
}

#[tokio::test]
async fn an_annotator_appends_while_the_writer_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/p");
    let id = SessionId::new_random();
    let path = transcript_path(home.path(), cwd, &id);
    let mut writer = TranscriptWriter::open(path.clone(), options(&id, cwd))
        .await
        .unwrap();
    let annotator = writer.annotator();
    let first = writer.append_message(&Message::user("hi")).await.unwrap();
    annotator
        .annotate("memory_cursor", &json!({"count": 1}))
        .await
        .unwrap();
    let notes: Vec<_> = (0..20)
        .map(|n| {
            let annotator = annotator.clone();
            tokio::spawn(async move {
                annotator
                    .annotate("memory_cursor", &json!({"count": n}))
                    .await
                    .unwrap();
            })
        })
        .collect();
    for n in 0..20 {
        writer
            .append_message(&Message::user(format!("m{n}").as_str()))
            .await
            .unwrap();
    }
    for note in notes {
        note.await.unwrap();
    }
    let read = read_transcript(&path).await.unwrap();
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    assert_eq!(read.records.len(), 42);
    let cursor = &read.records[1];
    assert_eq!(cursor.kind.as_str(), "memory_cursor");
    assert_eq!(cursor.parent_uuid, Some(first));
    let resumed = load_session(home.path(), cwd, &id).await.unwrap();
    assert_eq!(resumed.chain.len(), 21);
}

#[test]
fn records_of_either_envelope_read() {
    // Before annotations were cut, every record carried the whole envelope.
    let old = r#"{"type":"cache_hashes","uuid":"u","parentUuid":"p","sessionId":"0b5e4c55-8e06-4e79-9b9a-290f3f5daf53","timestamp":"t","cwd":"/w","data":{}}"#;
    let new = r#"{"type":"cache_hashes","parentUuid":"p","timestamp":"t","data":{}}"#;
    let old: tine_query_loop::TranscriptRecord = serde_json::from_str(old).unwrap();
    let new: tine_query_loop::TranscriptRecord = serde_json::from_str(new).unwrap();
    assert_eq!(old.uuid, "u");
    assert_eq!(old.cwd.as_deref(), Some("/w"));
    assert_eq!(
        (new.uuid.as_str(), new.cwd, new.session_id),
        ("", None, None)
    );
    assert_eq!(old.data, new.data);
}

#[tokio::test]
async fn rewriting_a_read_record_reproduces_its_bytes() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/p");
    let id = SessionId::new_random();
    let path = write_conversation(home.path(), cwd, &id).await;
    let original = std::fs::read(&path).unwrap();
    let read = read_transcript(&path).await.unwrap();

    let copy = home.path().join("copy.jsonl");
    let writer = TranscriptWriter::open(copy.clone(), options(&id, cwd))
        .await
        .unwrap();
    for record in &read.records {
        writer.write_record(record).await.unwrap();
    }
    assert_eq!(std::fs::read(&copy).unwrap(), original);
}

#[tokio::test]
async fn resume_keeps_what_follows_the_last_compaction_and_streams_the_annotations() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/p");
    let id = SessionId::new_random();
    let path = write_conversation(home.path(), cwd, &id).await;
    let mut opts = options(&id, cwd);
    opts.parent_uuid = load_session(home.path(), cwd, &id)
        .await
        .unwrap()
        .last_uuid()
        .map(str::to_owned);
    let mut writer = TranscriptWriter::open(path, opts).await.unwrap();
    writer
        .append(
            RecordType::System,
            None,
            Some(&json!({"subtype": tine_query_loop::COMPACT_BOUNDARY})),
        )
        .await
        .unwrap();
    writer
        .append_message(&Message::user("summary of the above"))
        .await
        .unwrap();
    writer
        .append(
            RecordType::Other("cache_hashes".into()),
            None,
            Some(&json!({"n": 2})),
        )
        .await
        .unwrap();
    writer.append_message(&hello()).await.unwrap();

    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    let resumed = tine_query_loop::load_session_with(home.path(), cwd, &id, move |record| {
        sink.lock().unwrap().push(record.kind.as_str().to_owned());
    })
    .await
    .unwrap();
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);
    assert_eq!(
        resumed.into_messages(),
        vec![Message::user("summary of the above"), hello()]
    );
    assert_eq!(*seen.lock().unwrap(), ["transition", "cache_hashes"]);
}
