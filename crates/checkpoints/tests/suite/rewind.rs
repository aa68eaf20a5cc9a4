//! A session's rewind: what goes back, what stays, and conflicts.

use tine_checkpoints::{CheckpointConfig, CheckpointError, Checkpoints};

use super::support::{Fixture, paths};

/// Three prompts with Write-like and Bash-like changes; a rewind to the second.
#[test]
fn a_rewind_undoes_every_change_of_the_session_and_only_those() {
    let f = Fixture::new();
    f.write("src/lib.rs", "v1");
    f.write("old.txt", "old");
    f.write("gone.txt", "keep me");
    f.write("notes.txt", "person's notes");
    let t1 = f.turn(|f| f.write("src/lib.rs", "v2"));
    let t2 = f.turn(|f| {
        f.write("src/lib.rs", "v3"); // Write
        f.write("made/by/bash.txt", "new"); // `echo new > made/by/bash.txt`
        f.remove("gone.txt"); // `rm gone.txt`
        std::fs::rename(f.project.join("old.txt"), f.project.join("moved.txt")).unwrap(); // `mv`
    });
    // Between prompts the person edits a file the session never touched.
    f.write("notes.txt", "person's later edit");
    let t3 = f.turn(|f| f.write("src/lib.rs", "v4"));
    let turns = vec![t1, t2.clone(), t3];

    let plan = f.cp.plan_rewind(&turns, 1).unwrap();
    assert_eq!(plan.target, t2.before);
    assert_eq!(plan.restore, paths(&["gone.txt", "old.txt", "src/lib.rs"]));
    assert_eq!(plan.remove, paths(&["made/by/bash.txt", "moved.txt"]));
    assert!(plan.conflicts.is_empty(), "{:?}", plan.conflicts);

    let report = f.cp.apply(&plan, false).unwrap();
    assert_eq!(report.restored, plan.restore);
    assert_eq!(report.removed, plan.remove);
    assert_eq!(
        f.read("src/lib.rs").as_deref(),
        Some("v2"),
        "modified: restored"
    );
    assert_eq!(f.read("made/by/bash.txt"), None, "created: removed");
    assert!(
        !f.project.join("made").exists(),
        "the directories it leaves empty go too"
    );
    assert_eq!(
        f.read("gone.txt").as_deref(),
        Some("keep me"),
        "deleted: back"
    );
    assert_eq!(f.read("old.txt").as_deref(), Some("old"), "moved: back");
    assert_eq!(f.read("moved.txt"), None, "moved: the new path removed");
    assert_eq!(
        f.read("notes.txt").as_deref(),
        Some("person's later edit"),
        "never touched by the session: the person's edit stays"
    );
    assert!(
        !f.project.join(".git").exists(),
        "a project without git works, and stays so"
    );

    // Going back further, to before the first prompt: the rewound turns are gone from the
    // session (the conversation branched), so they are not in the list.
    let plan = f.cp.plan_rewind(&turns[..1], 0).unwrap();
    assert!(plan.conflicts.is_empty(), "{:?}", plan.conflicts);
    f.cp.apply(&plan, false).unwrap();
    assert_eq!(f.read("src/lib.rs").as_deref(), Some("v1"));
}

#[test]
fn a_file_both_changed_is_a_conflict_nothing_is_written_and_force_overrides() {
    let f = Fixture::new();
    f.write("a.txt", "a1");
    f.write("b.txt", "b1");
    let t1 = f.turn(|f| {
        f.write("a.txt", "a-session");
        f.write("b.txt", "b-session");
    });
    f.write("a.txt", "a-person"); // after the turn, the person edits it too
    let turns = vec![t1];
    let plan = f.cp.plan_rewind(&turns, 0).unwrap();
    assert_eq!(plan.conflicts, paths(&["a.txt"]));
    assert_eq!(plan.restore, paths(&["a.txt", "b.txt"]));

    let before = f.files();
    match f.cp.apply(&plan, false) {
        Err(CheckpointError::Conflicts(list)) => assert_eq!(list, paths(&["a.txt"])),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(f.files(), before, "a refused rewind writes nothing at all");
    let message = CheckpointError::Conflicts(paths(&["a.txt"])).to_string();
    assert!(
        message.contains("a.txt") && message.contains("force"),
        "{message}"
    );

    let report = f.cp.apply(&plan, true).unwrap();
    assert_eq!(report.overwritten, paths(&["a.txt"]));
    assert_eq!(f.read("a.txt").as_deref(), Some("a1"));
    assert_eq!(f.read("b.txt").as_deref(), Some("b1"));
}

#[test]
fn a_change_the_person_made_between_two_turns_is_a_conflict_too() {
    let f = Fixture::new();
    f.write("a.txt", "1");
    let t1 = f.turn(|f| f.write("a.txt", "2"));
    f.write("a.txt", "person");
    let t2 = f.turn(|f| f.write("other.txt", "x"));
    let plan = f.cp.plan_rewind(&[t1, t2], 0).unwrap();
    assert_eq!(plan.conflicts, paths(&["a.txt"]));
    assert_eq!(plan.remove, paths(&["other.txt"]));
}

#[test]
fn modes_and_links_come_back() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = Fixture::new();
    f.write("run.sh", "#!/bin/sh\n");
    let script = f.project.join("run.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("run.sh", f.project.join("link")).unwrap();
    let t1 = f.turn(|f| {
        f.remove("run.sh");
        f.remove("link");
    });
    let plan = f.cp.plan_rewind(&[t1], 0).unwrap();
    f.cp.apply(&plan, false).unwrap();
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert_eq!(mode & 0o100, 0o100, "executable again: {mode:o}");
    assert_eq!(
        std::fs::read_link(f.project.join("link")).unwrap(),
        std::path::PathBuf::from("run.sh")
    );
}

#[test]
fn an_unknown_turn_is_a_clear_error() {
    let f = Fixture::new();
    let t1 = f.turn(|f| f.write("a", "1"));
    let err = f.cp.plan_rewind(&[t1], 3).unwrap_err();
    assert!(
        matches!(err, CheckpointError::NoSuchTurn { from: 3, len: 1 }),
        "{err}"
    );
}

#[test]
fn a_rewind_from_another_process_reads_the_same_store() {
    let f = Fixture::new();
    f.write("a.txt", "1");
    let t1 = f.turn(|f| f.write("a.txt", "2"));
    let again =
        Checkpoints::open_existing(&f.store, &f.project, CheckpointConfig::default()).unwrap();
    let plan = again.plan_rewind(&[t1], 0).unwrap();
    again.apply(&plan, false).unwrap();
    assert_eq!(f.read("a.txt").as_deref(), Some("1"));
}
