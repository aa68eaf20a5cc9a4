use std::collections::HashMap;
use std::ffi::OsString;

use tine_config::LoadedSettings;
use tine_config::settings::{SettingsSource, parse_layer};

use super::*;

fn settings(layers: &[(SettingsSource, &str)]) -> LoadedSettings {
    let mut loaded = LoadedSettings::default();
    for (source, text) in layers {
        let layer = parse_layer(*source, None, PathBuf::from("/"), text, &mut loaded.errors);
        loaded.layers.push(layer.unwrap());
    }
    loaded
}

fn env(vars: &[(&str, &str)]) -> MemoryEnv {
    let map: HashMap<String, OsString> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
        .collect();
    MemoryEnv::from_lookup(|k| map.get(k).cloned())
}

#[test]
fn default_dir_is_under_tine_home_named_after_the_git_root() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    let home = tmp.path().join("home");
    let r = resolve_memory_dir(&env(&[]), &settings(&[]), &home, &repo.join("src/deep"));
    let dir = r.dir().unwrap();
    assert_eq!(dir.source(), &DirSource::Default);
    assert_eq!(
        dir.path(),
        tine_config::project_dir(&home, &repo).join("memory")
    );
    // outside a repository: the cwd itself
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let r = resolve_memory_dir(&env(&[]), &settings(&[]), &home, &plain);
    assert_eq!(
        r.dir().unwrap().path(),
        tine_config::project_dir(&home, &plain).join("memory")
    );
}

#[test]
fn the_memory_of_an_older_version_is_adopted_and_new_directories_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("my-app");
    std::fs::create_dir_all(&plain).unwrap();
    let home = tmp.path().join("home");
    let legacy = tine_config::legacy_project_dir(&home, &plain).join("memory");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(legacy.join(INDEX_FILE), "- [A](a.md) — a\n").unwrap();

    let r = resolve_memory_dir(&env(&[]), &settings(&[]), &home, &plain);
    let dir = r.dir().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.index_path()).unwrap(),
        "- [A](a.md) — a\n"
    );
    assert!(!legacy.exists());

    let fresh = MemoryDir::new(tmp.path().join("new/mem"), DirSource::Env);
    fresh.ensure().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(fresh.path()), 0o700);
    assert_eq!(mode(&tmp.path().join("new")), 0o700);
    fresh.write_file("x.md", "x").unwrap();
    assert_eq!(mode(&fresh.path().join("x.md")), 0o600);
}

#[test]
fn merge_keeps_lines_others_added_and_our_own_changes() {
    let base = "# Memory\n- [A](a.md) — a\n- [B](b.md) — b\n";
    // We changed A's hook, removed B, added C.
    let ours = "# Memory\n- [A](a.md) — a, updated\n- [C](c.md) — c\n";
    // Meanwhile another session added D and E.
    let theirs = "# Memory\n- [A](a.md) — a\n- [B](b.md) — b\n- [D](d.md) — d\n- [E](e.md) — e\n";
    let merged = merge_index(Some(base), ours, theirs);
    assert_eq!(
        merged.text,
        "# Memory\n- [A](a.md) — a, updated\n- [C](c.md) — c\n- [D](d.md) — d\n- [E](e.md) — e\n"
    );
    assert_eq!(merged.kept_from_disk, 2);
}

#[test]
fn merge_honours_what_others_changed_in_lines_we_left_alone() {
    let base = "- [A](a.md) — a\n- [B](b.md) — b\n";
    let ours = "- [A](a.md) — a\n- [B](b.md) — b\n- [C](c.md) — c\n";
    // The other session rewrote B's line and removed A's.
    let theirs = "- [B](b.md) — b, better\n";
    let merged = merge_index(Some(base), ours, theirs);
    assert_eq!(merged.text, "- [C](c.md) — c\n- [B](b.md) — b, better\n");
}

#[test]
fn merge_without_a_base_is_a_union_and_a_file_keeps_one_line() {
    // A writer that never read the index (it thought there was none).
    let ours = "- [C](c.md) — c\n";
    let theirs = "- [A](a.md) — a\n- [C](c.md) — c, from the other session\n\n";
    let merged = merge_index(None, ours, theirs);
    assert_eq!(merged.text, "- [C](c.md) — c\n- [A](a.md) — a\n");
    assert_eq!(merged.kept_from_disk, 1);
    // Merging the same thing twice changes nothing (a retried write duplicates nothing).
    let again = merge_index(None, ours, &merged.text);
    assert_eq!(again.text, merged.text);
    assert_eq!(merge_index(None, "", "").text, "");
}

#[test]
fn the_write_lock_excludes_other_holders_until_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let held = MemoryWriteLock::acquire(tmp.path(), WRITE_LOCK_TIMEOUT).unwrap();
    // Another open file description (as another process would have) cannot take it.
    let err = MemoryWriteLock::acquire(tmp.path(), Duration::from_millis(30)).unwrap_err();
    assert!(matches!(err, MemoryError::Locked { .. }), "{err}");
    assert!(err.to_string().contains(WRITE_LOCK_FILE), "{err}");
    drop(held);
    MemoryWriteLock::acquire(tmp.path(), Duration::from_millis(30)).unwrap();
}

#[test]
fn env_wins_then_settings_but_never_project_settings() {
    let home = Path::new("/h/.tine");
    let cwd = Path::new("/nonexistent/project");
    let s = settings(&[
        (
            SettingsSource::User,
            r#"{"autoMemoryDirectory": "/user/mem"}"#,
        ),
        (
            SettingsSource::Project,
            r#"{"autoMemoryDirectory": "/evil/mem"}"#,
        ),
    ]);
    let r = resolve_memory_dir(&env(&[("TINE_MEMORY_DIR", "/env/mem")]), &s, home, cwd);
    assert_eq!(r.dir().unwrap().path(), Path::new("/env/mem"));
    assert_eq!(r.dir().unwrap().source(), &DirSource::Env);

    let r = resolve_memory_dir(&env(&[]), &s, home, cwd);
    assert_eq!(r.dir().unwrap().path(), Path::new("/user/mem"));
    assert_eq!(
        r.dir().unwrap().source(),
        &DirSource::Setting("userSettings".into())
    );

    let only_project = settings(&[(
        SettingsSource::Project,
        r#"{"autoMemoryDirectory": "/evil/mem"}"#,
    )]);
    let r = resolve_memory_dir(&env(&[]), &only_project, home, cwd);
    assert_eq!(r.dir().unwrap().source(), &DirSource::Default);

    let tilde = settings(&[(
        SettingsSource::Local,
        r#"{"autoMemoryDirectory": "~/notes"}"#,
    )]);
    let r = resolve_memory_dir(&env(&[("HOME", "/home/u")]), &tilde, home, cwd);
    assert_eq!(r.dir().unwrap().path(), Path::new("/home/u/notes"));
    let relative = settings(&[(
        SettingsSource::User,
        r#"{"autoMemoryDirectory": "rel/dir"}"#,
    )]);
    let r = resolve_memory_dir(&env(&[]), &relative, home, cwd);
    assert_eq!(r.dir().unwrap().source(), &DirSource::Default);
}

#[test]
fn disabled_by_env_or_setting() {
    let home = Path::new("/h");
    let cwd = Path::new("/p");
    for on in ["1", "true", "yes"] {
        let r = resolve_memory_dir(
            &env(&[("TINE_DISABLE_AUTO_MEMORY", on)]),
            &settings(&[]),
            home,
            cwd,
        );
        assert!(matches!(r, MemoryResolution::Disabled(_)), "{on}");
    }
    for off in ["0", "false", ""] {
        let r = resolve_memory_dir(
            &env(&[("TINE_DISABLE_AUTO_MEMORY", off)]),
            &settings(&[]),
            home,
            cwd,
        );
        assert!(r.dir().is_some(), "{off:?}");
    }
    let s = settings(&[(SettingsSource::User, r#"{"autoMemoryEnabled": false}"#)]);
    let r = resolve_memory_dir(&env(&[("TINE_MEMORY_DIR", "/x")]), &s, home, cwd);
    assert!(matches!(r, MemoryResolution::Disabled(ref why) if why.contains("autoMemoryEnabled")));
}

#[test]
fn index_for_context_is_cut_at_200_lines_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = MemoryDir::new(tmp.path().to_path_buf(), DirSource::Default);
    let empty = dir.load_index_for_context();
    assert_eq!(empty.index, None);
    assert!(empty.render().contains("no memories saved yet"));

    let lines: Vec<String> = (0..250)
        .map(|i| format!("- [M{i}](m{i}.md) — hook {i}"))
        .collect();
    std::fs::write(dir.index_path(), lines.join("\n")).unwrap();
    let loaded = dir.load_index_for_context();
    let index = loaded.index.as_deref().unwrap();
    assert_eq!(index.lines().count(), 200);
    assert!(index.ends_with("hook 199"));
    let t = loaded.truncated.as_ref().unwrap();
    assert_eq!((t.kept_lines, t.total_lines), (200, 250));
    let text = loaded.render();
    assert!(text.contains("NOTE: MEMORY.md was cut"));
    assert!(text.contains("200 of 250 lines"));
    assert!(text.contains(&tmp.path().display().to_string()));
}

#[test]
fn index_for_context_is_cut_at_25_kb_on_a_line_boundary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = MemoryDir::new(tmp.path().to_path_buf(), DirSource::Default);
    let line = format!("- [T](t.md) — {}", "é".repeat(70)); // ~160 bytes
    let text: Vec<&str> = std::iter::repeat_n(line.as_str(), 190).collect();
    std::fs::write(dir.index_path(), text.join("\n")).unwrap();
    let loaded = dir.load_index_for_context();
    let index = loaded.index.unwrap();
    assert!(index.len() <= MAX_INDEX_BYTES);
    assert!(index.lines().all(|l| l == line));
    assert!(loaded.truncated.unwrap().kept_lines < 190);

    // one huge line: its beginning, cut on a char boundary
    std::fs::write(dir.index_path(), "é".repeat(20_000)).unwrap();
    let loaded = dir.load_index_for_context();
    assert!(loaded.index.unwrap().len() <= MAX_INDEX_BYTES);
    assert!(loaded.truncated.is_some());

    // short index: whole, no note
    std::fs::write(dir.index_path(), "- [A](a.md) — a\n").unwrap();
    let loaded = dir.load_index_for_context();
    assert_eq!(loaded.index.as_deref(), Some("- [A](a.md) — a"));
    assert!(loaded.truncated.is_none());
    assert!(!loaded.render().contains("NOTE"));
}

#[test]
fn atomic_write_replaces_and_leaves_no_temp_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = MemoryDir::new(tmp.path().join("mem"), DirSource::Default);
    dir.write_file("a.md", "one").unwrap();
    dir.write_file("a.md", "two").unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.md")).unwrap(),
        "two"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a.md"]);
    assert!(matches!(
        dir.write_file("../escape.md", "x"),
        Err(MemoryError::InvalidName(_))
    ));
}
