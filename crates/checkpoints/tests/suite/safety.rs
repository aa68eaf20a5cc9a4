//! What checkpoints must never do: touch the user's `.git`, write outside the project, or
//! write anything from a damaged store.

use std::path::PathBuf;

use tine_checkpoints::{CheckpointConfig, CheckpointError, Checkpoints};

use super::support::{Fixture, paths, tree_bytes, user_git};

#[test]
fn the_users_git_repository_is_byte_identical_after_snapshots_and_a_rewind() {
    let f = Fixture::new();
    user_git(&f.project, &["init", "-q"]);
    f.write("a.txt", "committed");
    f.write("b.txt", "b");
    user_git(&f.project, &["add", "."]);
    user_git(&f.project, &["commit", "-q", "-m", "first"]);
    f.write("a.txt", "stashed change");
    user_git(&f.project, &["stash", "-q"]);
    f.write("b.txt", "staged change");
    user_git(&f.project, &["add", "b.txt"]);
    f.write("c.txt", "untracked");
    let git_before = tree_bytes(&f.project.join(".git"));
    let status_before = user_git(&f.project, &["status", "--porcelain"]);

    let t1 = f.turn(|f| {
        f.write("a.txt", "session");
        f.write("d.txt", "new");
    });
    let plan = f.cp.plan_rewind(&[t1], 0).unwrap();
    f.cp.apply(&plan, false).unwrap();
    f.snap();

    assert_eq!(
        tree_bytes(&f.project.join(".git")),
        git_before,
        "the user's .git: index, stash, refs, hooks and config unchanged"
    );
    assert_eq!(
        user_git(&f.project, &["status", "--porcelain"]),
        status_before
    );
    assert_eq!(user_git(&f.project, &["stash", "list"]).lines().count(), 1);
    let recorded = super::support::shadow_git(&f.store, &f.project, &["ls-files"]);
    assert!(
        !recorded.lines().any(|l| l.starts_with(".git/")),
        "{recorded}"
    );
    assert!(recorded.lines().any(|l| l == "c.txt"), "{recorded}");
}

#[test]
fn a_damaged_store_is_a_clear_error_and_no_project_file_is_written() {
    let f = Fixture::new();
    f.write("a.txt", "1");
    let t1 = f.turn(|f| {
        f.write("a.txt", "2");
        f.write("new.txt", "n");
    });
    let plan = f.cp.plan_rewind(&[t1], 0).unwrap();
    // The objects go (a disk cleaner, a bad copy).
    let objects = f.store.join("git/objects");
    std::fs::remove_dir_all(&objects).unwrap();
    std::fs::create_dir_all(&objects).unwrap();
    let before = f.files();
    let err = f.cp.apply(&plan, false).unwrap_err();
    assert!(matches!(err, CheckpointError::Corrupt { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&format!("remove {}", f.store.display())),
        "{message}"
    );
    assert_eq!(f.files(), before, "nothing written, nothing removed");

    // A store that is not a git directory at all.
    let other = f._dir.path().join("garbage");
    std::fs::create_dir_all(other.join("git")).unwrap();
    std::fs::write(other.join("git/HEAD"), "nonsense").unwrap();
    let err = Checkpoints::open(&other, &f.project, CheckpointConfig::default()).unwrap_err();
    assert!(matches!(err, CheckpointError::Corrupt { .. }), "{err}");
}

#[test]
fn a_missing_store_is_a_clear_error_for_a_rewind() {
    let f = Fixture::new();
    let gone = f._dir.path().join("nowhere");
    let err =
        Checkpoints::open_existing(&gone, &f.project, CheckpointConfig::default()).unwrap_err();
    assert!(matches!(err, CheckpointError::Missing(_)), "{err}");
    assert!(!gone.exists(), "nothing created");
}

#[test]
fn a_link_out_of_the_project_is_never_written_through() {
    let f = Fixture::new();
    let secret = f.outside.join("secret.txt");
    std::fs::write(&secret, "outside").unwrap();
    f.write("a.txt", "1");
    f.write("dir/x.txt", "x1");
    let t1 = f.turn(|f| {
        f.write("a.txt", "2");
        f.write("dir/x.txt", "x2");
    });
    // The person replaces the file with a link out, and the directory with one.
    f.remove("a.txt");
    std::os::unix::fs::symlink(&secret, f.project.join("a.txt")).unwrap();
    std::fs::remove_dir_all(f.project.join("dir")).unwrap();
    std::fs::write(f.outside.join("x.txt"), "outside x").unwrap();
    std::os::unix::fs::symlink(&f.outside, f.project.join("dir")).unwrap();

    let plan = f.cp.plan_rewind(&[t1], 0).unwrap();
    assert!(plan.restore.contains(&PathBuf::from("dir/x.txt")));
    let before = f.files();
    let err = f.cp.apply(&plan, true).unwrap_err();
    assert!(
        matches!(err, CheckpointError::OutsideProject { .. }),
        "{err}"
    );
    assert_eq!(
        f.files(),
        before,
        "checked before the first write: nothing written"
    );
    assert_eq!(
        std::fs::read_to_string(f.outside.join("x.txt")).unwrap(),
        "outside x"
    );

    // Without the directory link, the file link is replaced, not followed.
    std::fs::remove_file(f.project.join("dir")).unwrap();
    let mut plan = plan;
    plan.restore.retain(|p| p != &PathBuf::from("dir/x.txt"));
    f.cp.apply(&plan, true).unwrap();
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "outside");
    assert!(
        !std::fs::symlink_metadata(f.project.join("a.txt"))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(f.read("a.txt").as_deref(), Some("1"));
}

#[test]
fn paths_that_climb_out_are_refused() {
    let f = Fixture::new();
    f.write("a.txt", "1");
    let t1 = f.turn(|f| f.write("a.txt", "2"));
    let mut plan = f.cp.plan_rewind(&[t1], 0).unwrap();
    plan.remove = paths(&["../outside/secret.txt"]);
    std::fs::write(f.outside.join("secret.txt"), "s").unwrap();
    let err = f.cp.apply(&plan, false).unwrap_err();
    assert!(
        matches!(err, CheckpointError::OutsideProject { .. }),
        "{err}"
    );
    assert!(f.outside.join("secret.txt").exists());
    assert_eq!(f.read("a.txt").as_deref(), Some("2"), "nothing written");
}

#[test]
fn the_store_is_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = Fixture::new();
    for dir in [f.store.clone(), f.store.join("git")] {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
}
