//! Taking snapshots: what is recorded, what is not, and that nothing is copied twice.

use tine_checkpoints::{CheckpointConfig, Snapshot};

use super::support::{Fixture, paths, shadow_git};

#[test]
fn nothing_changed_is_the_same_snapshot_and_no_new_object() {
    let f = Fixture::new();
    f.write("a.txt", "1");
    f.write("d/b.txt", "2");
    let first = f.snap();
    let objects = f.object_count();
    // A second later, so that a new commit of the same tree would have another id.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let again = f.snap();
    assert_eq!(again, first);
    assert_eq!(
        f.object_count(),
        objects,
        "nothing copied when nothing changed"
    );
    f.write("a.txt", "changed");
    let third = f.snap();
    assert_ne!(third.id, first.id);
    assert_eq!(f.cp.changed(&first, &third).unwrap(), paths(&["a.txt"]));
}

#[test]
fn changed_lists_added_modified_deleted_and_both_paths_of_a_move() {
    let f = Fixture::new();
    f.write("keep.txt", "k");
    f.write("mod.txt", "m");
    f.write("del.txt", "d");
    f.write("from.txt", "moving");
    let a = f.snap();
    f.write("mod.txt", "m2");
    f.remove("del.txt");
    f.write("add/new.txt", "n");
    std::fs::rename(f.project.join("from.txt"), f.project.join("to.txt")).unwrap();
    let b = f.snap();
    assert_eq!(
        f.cp.changed(&a, &b).unwrap(),
        paths(&["add/new.txt", "del.txt", "from.txt", "mod.txt", "to.txt"])
    );
    assert!(f.cp.changed(&a, &a).unwrap().is_empty());
}

#[test]
fn ignored_files_and_files_over_the_cap_are_not_recorded_and_the_cap_is_reported() {
    let f = Fixture::with(CheckpointConfig {
        max_file_bytes: 1000,
        ..CheckpointConfig::default()
    });
    f.write(".gitignore", "target/\n*.log\n");
    f.write("target/out.bin", "build output");
    f.write("run.log", "log");
    f.write("big.dat", &"x".repeat(2000));
    f.write("src/a.rs", "fn a() {}");
    let s = f.snap();
    assert_eq!(s.skipped, paths(&["big.dat"]));
    let recorded = shadow_git(
        &f.store,
        &f.project,
        &["ls-tree", "-r", "--name-only", &s.id],
    );
    assert_eq!(
        recorded.lines().collect::<Vec<_>>(),
        [".gitignore", "src/a.rs"]
    );

    // A recorded file that grows over the cap stops being recorded, and says so.
    f.write("src/a.rs", &"y".repeat(5000));
    let s2 = f.snap();
    assert_eq!(s2.skipped, paths(&["big.dat", "src/a.rs"]));
    let recorded = shadow_git(
        &f.store,
        &f.project,
        &["ls-tree", "-r", "--name-only", &s2.id],
    );
    assert_eq!(recorded.lines().collect::<Vec<_>>(), [".gitignore"]);

    // A rewind neither removes nor restores what was never recorded.
    let t = super::support::Fixture::turn(&f, |f| f.write("run.log", "more log"));
    let plan = f.cp.plan_rewind(&[t], 0).unwrap();
    assert!(plan.is_empty(), "{plan:?}");
}

#[test]
fn a_snapshot_round_trips_as_json() {
    let s = Snapshot {
        id: "0".repeat(40),
        skipped: paths(&["big.dat"]),
    };
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(serde_json::from_str::<Snapshot>(&json).unwrap(), s);
}

#[test]
fn a_store_inside_the_project_does_not_record_itself() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.txt"), "a").unwrap();
    let store = project.join(".tine home/projects/p/checkpoints");
    let cp =
        tine_checkpoints::Checkpoints::open(&store, &project, CheckpointConfig::default()).unwrap();
    let s = cp.snapshot().unwrap();
    let recorded = shadow_git(&store, &project, &["ls-tree", "-r", "--name-only", &s.id]);
    assert_eq!(recorded.lines().collect::<Vec<_>>(), ["a.txt"]);
}
