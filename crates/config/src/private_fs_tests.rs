use super::*;
use std::os::unix::fs::PermissionsExt;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn new_directories_are_0700_and_existing_ones_keep_their_mode() {
    let root = tempfile::tempdir().unwrap();
    let shared = root.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, Permissions::from_mode(0o755)).unwrap();
    let deep = shared.join("a/b/c");
    create_dir_all(&deep).unwrap();
    for dir in ["shared/a", "shared/a/b", "shared/a/b/c"] {
        assert_eq!(mode(&root.path().join(dir)), 0o700, "{dir}");
    }
    assert_eq!(mode(&shared), 0o755);
    create_dir_all(&deep).unwrap(); // idempotent
}

#[test]
fn atomic_writes_make_private_files_and_replace_whole_contents() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("state/x.json");
    write_atomic(&path, b"one").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"one");
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&root.path().join("state")), 0o700);

    // An existing looser file is made private by write_atomic ...
    std::fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
    write_atomic(&path, b"two").unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(std::fs::read(&path).unwrap(), b"two");

    // ... and keeps its mode with write_atomic_keeping_mode; a new file is still 0600.
    std::fs::set_permissions(&path, Permissions::from_mode(0o640)).unwrap();
    write_atomic_keeping_mode(&path, b"three").unwrap();
    assert_eq!(mode(&path), 0o640);
    let fresh = root.path().join("fresh.json");
    write_atomic_keeping_mode(&fresh, b"{}").unwrap();
    assert_eq!(mode(&fresh), 0o600);

    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(root.path().join("state"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["x.json"]);
}

#[test]
fn appends_create_a_private_file_and_never_truncate() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("log.txt");
    open_append(&path).unwrap().write_all(b"a\n").unwrap();
    open_append(&path).unwrap().write_all(b"b\n").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
    assert_eq!(mode(&path), 0o600);

    std::fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
    restrict_file(&path).unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn tightening_clears_group_and_other_bits_of_the_users_own_paths_only() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("home");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        tighten_dir(&dir).unwrap(),
        Tightened::Changed {
            from: 0o755,
            to: 0o700
        }
    );
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(tighten_dir(&dir).unwrap(), Tightened::Unchanged); // idempotent

    let file = dir.join("a.md");
    std::fs::write(&file, "x").unwrap();
    std::fs::set_permissions(&file, Permissions::from_mode(0o644)).unwrap();
    assert!(matches!(
        tighten_file(&file).unwrap(),
        Tightened::Changed { to: 0o600, .. }
    ));
    assert_eq!(mode(&file), 0o600);
    // An owner-only mode that is not 0600 is left as the user chose it.
    std::fs::set_permissions(&file, Permissions::from_mode(0o400)).unwrap();
    assert_eq!(tighten_file(&file).unwrap(), Tightened::Unchanged);
    assert_eq!(mode(&file), 0o400);

    // The wrong kind, a missing path, and a link are left alone (the link's target too).
    assert_eq!(tighten_dir(&file).unwrap(), Tightened::Unchanged);
    assert_eq!(tighten_file(&dir).unwrap(), Tightened::Unchanged);
    assert_eq!(
        tighten_dir(&dir.join("missing")).unwrap(),
        Tightened::Unchanged
    );
    let target = root.path().join("shared");
    std::fs::create_dir(&target).unwrap();
    std::fs::set_permissions(&target, Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(&target, dir.join("link")).unwrap();
    assert_eq!(
        tighten_dir(&dir.join("link")).unwrap(),
        Tightened::Unchanged
    );
    assert_eq!(mode(&target), 0o755);
}

/// Paths another user owns are never changed. Only root can make such a path here.
#[test]
fn paths_of_another_user_are_left_alone() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("theirs");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
    assert_eq!(tighten_dir(&dir).unwrap(), Tightened::Unchanged);
    assert_eq!(mode(&dir), 0o755);
}
