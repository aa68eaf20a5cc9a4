//! A session's records on disk, and pruning.

use std::time::{Duration, SystemTime};

use tine_checkpoints::{CheckpointError, SessionCheckpoints};

use super::support::{Fixture, shadow_git};

#[test]
fn a_record_is_saved_privately_and_read_back_by_another_process() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = Fixture::new();
    f.write("a.txt", "1");
    let mut record = SessionCheckpoints::new("s-1");
    record.record_before(1, "uuid-1", &"long prompt ".repeat(40), f.snap());
    f.write("a.txt", "2");
    assert!(record.record_after(1, f.snap()));
    assert!(!record.record_after(7, f.snap()), "no such prompt");
    record.record_before(2, "uuid-2", "second", f.snap());
    record.save(&f.store).unwrap();

    let path = f.store.join("sessions/s-1.json");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let back = SessionCheckpoints::load(&f.store, "s-1").unwrap().unwrap();
    assert_eq!(back, record);
    assert_eq!(back.prompts[0].text.chars().count(), 200);
    assert_eq!(back.index_of_prompt(2), Some(1));
    assert_eq!(back.index_of_uuid("uuid-1"), Some(0));
    assert_eq!(SessionCheckpoints::load(&f.store, "other").unwrap(), None);

    // The second prompt never recorded its end: its turn runs to the work tree now.
    f.write("b.txt", "by prompt 2");
    let turns = f.cp.turns(&back).unwrap();
    let plan = f.cp.plan_rewind(&turns, 1).unwrap();
    assert_eq!(plan.remove, super::support::paths(&["b.txt"]));
    let plan = f.cp.plan_rewind(&turns, 0).unwrap();
    f.cp.apply(&plan, false).unwrap();
    assert_eq!(f.read("a.txt").as_deref(), Some("1"));
    assert_eq!(f.read("b.txt"), None);
}

#[test]
fn bad_session_ids_and_records_are_clear_errors() {
    let f = Fixture::new();
    let err = SessionCheckpoints::load(&f.store, "../x").unwrap_err();
    assert!(matches!(err, CheckpointError::BadSessionId(_)), "{err}");
    std::fs::create_dir_all(f.store.join("sessions")).unwrap();
    std::fs::write(f.store.join("sessions/bad.json"), "{").unwrap();
    let err = SessionCheckpoints::load(&f.store, "bad").unwrap_err();
    assert!(err.to_string().contains("remove it"), "{err}");
}

#[test]
fn prune_forgets_old_sessions_and_keeps_what_recent_ones_need() {
    let f = Fixture::new();
    f.write("a.txt", "old");
    let mut old = SessionCheckpoints::new("old");
    let gone = f.snap();
    old.record_before(1, "u", "t", gone.clone());
    old.save(&f.store).unwrap();
    f.write("a.txt", "recent");
    let mut recent = SessionCheckpoints::new("recent");
    let kept = f.snap();
    recent.record_before(1, "u", "t", kept.clone());
    recent.save(&f.store).unwrap();
    f.write("a.txt", "latest");
    let latest = f.snap();
    let a_day_ago = SystemTime::now() - Duration::from_secs(86_400 + 60);
    std::fs::File::options()
        .write(true)
        .open(f.store.join("sessions/old.json"))
        .unwrap()
        .set_modified(a_day_ago)
        .unwrap();

    let report = f.cp.prune(1, 0).unwrap();
    assert_eq!(report.sessions, ["old"]);
    assert!(report.compacted, "over 0 bytes: compacted");
    assert!(!f.store.join("sessions/old.json").exists());
    let refs = shadow_git(
        &f.store,
        &f.project,
        &["for-each-ref", "--format=%(refname)"],
    );
    let snaps: Vec<&str> = refs
        .lines()
        .filter(|r| r.starts_with("refs/tine/snap/"))
        .collect();
    assert!(
        !snaps.contains(&format!("refs/tine/snap/{}", gone.id).as_str()),
        "{refs}"
    );
    assert!(
        snaps.contains(&format!("refs/tine/snap/{}", kept.id).as_str()),
        "{refs}"
    );
    // A snapshot no session recorded yet stays until it is older than keep_days.
    assert!(
        snaps.contains(&format!("refs/tine/snap/{}", latest.id).as_str()),
        "{refs}"
    );
    assert_eq!(report.snapshots, 1);
    assert!(refs.contains("refs/tine/snapshots"), "the latest stays");

    // The recent session still rewinds after the gc.
    let turns = vec![tine_checkpoints::TurnSnapshots {
        before: kept,
        after: f.snap(),
    }];
    let plan = f.cp.plan_rewind(&turns, 0).unwrap();
    f.cp.apply(&plan, false).unwrap();
    assert_eq!(f.read("a.txt").as_deref(), Some("recent"));
}
