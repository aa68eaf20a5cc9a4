use super::*;
use std::collections::HashMap;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
    let map: HashMap<String, OsString> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
        .collect();
    move |k| map.get(k).cloned()
}

#[test]
fn tine_home_prefers_tine_home_then_home() {
    assert_eq!(
        tine_home(env(&[("TINE_HOME", "/x/t"), ("HOME", "/h")])),
        Ok(PathBuf::from("/x/t"))
    );
    assert_eq!(
        tine_home(env(&[("TINE_HOME", ""), ("HOME", "/h")])),
        Ok(PathBuf::from("/h/.tine"))
    );
    assert_eq!(tine_home(env(&[])), Err(PathsError::NoHome));
}

#[test]
fn sanitize_replaces_everything_outside_ascii_alphanumerics() {
    assert_eq!(
        sanitize_path(Path::new("/home/u/my proj")),
        "-home-u-my-proj"
    );
    assert_eq!(sanitize_path(Path::new("/a.b_c/D9")), "-a-b-c-D9");
    // One dash per character, not per byte: é is one char.
    assert_eq!(sanitize_path(Path::new("/café")), "-caf-");
    assert_eq!(sanitize_path(Path::new("")), "");
}

#[test]
fn sanitize_keeps_exactly_200_and_hashes_longer() {
    let exact = format!("/{}", "a".repeat(199));
    assert_eq!(sanitize_path(Path::new(&exact)).len(), 200);

    let long_a = format!("/{}", "a".repeat(300));
    let long_b = format!("/{}b", "a".repeat(299));
    let sa = sanitize_path(Path::new(&long_a));
    let sb = sanitize_path(Path::new(&long_b));
    assert_eq!(sa.len(), 200 + 1 + 8);
    assert!(sa.starts_with(&sanitize_path(Path::new(&long_a))[..200]));
    assert_ne!(sa, sb, "same 200-char prefix must still differ by hash");
    assert_eq!(sa, sanitize_path(Path::new(&long_a)), "stable");
    assert!(sa[201..].bytes().all(|b| b.is_ascii_hexdigit()));
}

#[test]
fn paths_follow_the_layout() {
    let home = Path::new("/t");
    let cwd = Path::new("/w/p");
    let id = SessionId::parse("abc-123").unwrap();
    let name = project_dir_name(cwd);
    assert_eq!(project_dir(home, cwd), Path::new("/t/projects").join(&name));
    assert_eq!(
        transcript_path(home, cwd, &id),
        Path::new("/t/projects").join(&name).join("abc-123.jsonl")
    );
    assert_eq!(
        subagent_transcript_path(home, cwd, &id, "a1").unwrap(),
        Path::new("/t/projects")
            .join(&name)
            .join("abc-123/subagents/agent-a1.jsonl")
    );
    assert!(subagent_transcript_path(home, cwd, &id, "../x").is_err());
    assert_eq!(
        legacy_project_dir(home, cwd),
        PathBuf::from("/t/projects/-w-p")
    );
}

#[test]
fn project_folders_of_paths_that_sanitize_alike_differ() {
    let dash = project_dir_name(Path::new("/x/my-app"));
    let underscore = project_dir_name(Path::new("/x/my_app"));
    let dot = project_dir_name(Path::new("/x/my.app"));
    assert_eq!(sanitize_path(Path::new("/x/my-app")), "-x-my-app");
    assert_eq!(sanitize_path(Path::new("/x/my_app")), "-x-my-app");
    assert_ne!(dash, underscore);
    assert_ne!(dash, dot);
    assert_ne!(underscore, dot);
    // Readable prefix, then always the hash of the whole path; stable.
    assert!(dash.starts_with("-x-my-app-"), "{dash}");
    assert_eq!(dash.len(), "-x-my-app-".len() + PROJECT_HASH_LEN);
    assert!(dash[10..].bytes().all(|b| b.is_ascii_hexdigit()), "{dash}");
    assert_eq!(dash, project_dir_name(Path::new("/x/my-app")));
    // Long paths: the prefix is cut, the name stays within a file name's limit.
    let long = format!("/{}", "a".repeat(400));
    let name = project_dir_name(Path::new(&long));
    assert_eq!(name.len(), MAX_SANITIZED_LEN + 1 + PROJECT_HASH_LEN);
    assert_ne!(name, project_dir_name(Path::new(&format!("{long}b"))));
}

#[test]
fn session_ids_cannot_escape_the_project_dir() {
    for bad in ["", "../x", "a/b", "a.b", "a b", &"x".repeat(129)] {
        assert!(SessionId::parse(bad).is_err(), "{bad:?} accepted");
    }
    let fresh = SessionId::new_random();
    assert_eq!(SessionId::parse(fresh.as_str()).unwrap(), fresh);
    let json = serde_json::to_string(&fresh).unwrap();
    assert_eq!(serde_json::from_str::<SessionId>(&json).unwrap(), fresh);
    assert!(serde_json::from_str::<SessionId>("\"../x\"").is_err());
}
