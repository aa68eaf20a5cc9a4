use std::fs;

use serde_json::json;

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    paths: SettingsPaths,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("project");
    let home = dir.path().join("home/.tine");
    fs::create_dir_all(cwd.join(".tine")).unwrap();
    fs::create_dir_all(&home).unwrap();
    let paths = SettingsPaths::new(&cwd, &home).with_managed(dir.path().join("managed.json"));
    Fixture { _dir: dir, paths }
}

fn write(path: &Path, value: &str) {
    fs::write(path, value).unwrap();
}

#[test]
fn precedence_is_managed_flag_local_project_user() {
    let f = fixture();
    write(&f.paths.user, r#"{"model": "user", "env": {"A": "1"}}"#);
    write(&f.paths.project, r#"{"model": "project"}"#);
    write(&f.paths.local, r#"{"model": "local"}"#);
    let paths = f
        .paths
        .clone()
        .with_flag(FlagSettings::from_arg(r#"{"model": "flag"}"#));
    let loaded = load(&paths);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert_eq!(
        loaded.get("model"),
        Some((&json!("flag"), SettingsSource::Flag))
    );
    assert_eq!(
        loaded.get("env"),
        Some((&json!({"A": "1"}), SettingsSource::User))
    );
    write(&f.paths.managed, r#"{"model": "managed"}"#);
    let loaded = load(&paths);
    assert_eq!(
        loaded.get("model"),
        Some((&json!("managed"), SettingsSource::Managed))
    );
}

#[test]
fn malformed_file_names_file_and_line_and_others_still_load() {
    let f = fixture();
    write(&f.paths.project, "{\n  \"model\": \"x\",\n  oops\n}");
    write(
        &f.paths.user,
        r#"{"permissions": {"allow": ["Bash(ls:*)"]}}"#,
    );
    let loaded = load(&f.paths);
    assert_eq!(loaded.errors.len(), 1);
    let message = loaded.errors[0].to_string();
    assert!(message.contains("settings.json:3:"), "{message}");
    assert!(loaded.layer(SettingsSource::User).is_some());
    assert!(loaded.layer(SettingsSource::Project).is_none());
}

#[test]
fn malformed_permissions_keep_the_raw_layer() {
    let f = fixture();
    write(
        &f.paths.local,
        r#"{"model": "m", "permissions": {"allow": "Bash"}}"#,
    );
    let loaded = load(&f.paths);
    assert!(matches!(
        loaded.errors[0],
        SettingsError::Permissions { line: 1, .. }
    ));
    assert_eq!(loaded.get("model").map(|(v, _)| v), Some(&json!("m")));
}

#[test]
fn typed_permissions_and_rules_with_sources() {
    let f = fixture();
    write(
        &f.paths.project,
        r#"{"permissions": {"allow": ["Read(/src/**)", "Bash("], "deny": ["WebFetch"],
            "defaultMode": "acceptEdits", "additionalDirectories": ["../shared"]}}"#,
    );
    let loaded = load(&f.paths);
    assert_eq!(
        loaded.default_mode(),
        Some((PermissionMode::AcceptEdits, SettingsSource::Project))
    );
    let dirs = loaded.additional_directories(None);
    assert_eq!(dirs[0].0, f.paths.cwd.join("../shared"));
    let (rules, errors) = loaded.permission_rules();
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0].behavior, RuleBehavior::Deny);
    assert_eq!(
        rules[1].base_dir, f.paths.cwd,
        "project `/` rules are relative to the project"
    );
    assert_eq!(errors.len(), 1);
    assert!(errors[0].to_string().contains("`Bash(`"), "{}", errors[0]);
}

#[test]
fn auto_memory_directory_is_never_taken_from_project_settings() {
    let f = fixture();
    write(
        &f.paths.project,
        r#"{"autoMemoryDirectory": "/tmp/evil", "autoMemoryEnabled": false}"#,
    );
    let loaded = load(&f.paths);
    assert_eq!(loaded.auto_memory_directory(), None);
    assert_eq!(loaded.auto_memory_enabled(), Some(false));
    write(&f.paths.user, r#"{"autoMemoryDirectory": "/home/me/mem"}"#);
    let loaded = load(&f.paths);
    assert_eq!(
        loaded.auto_memory_directory(),
        Some((PathBuf::from("/home/me/mem"), SettingsSource::User))
    );
}

#[test]
fn missing_flag_file_is_an_error_missing_others_are_not() {
    let f = fixture();
    let paths = f
        .paths
        .clone()
        .with_flag(FlagSettings::from_arg("/nonexistent/s.json"));
    let loaded = load(&paths);
    assert_eq!(loaded.errors.len(), 1);
    assert!(loaded.errors[0].to_string().contains("/nonexistent/s.json"));
}

#[test]
fn adding_rules_keeps_other_keys_and_is_idempotent() {
    let f = fixture();
    write(
        &f.paths.local,
        r#"{"model": "m", "permissions": {"allow": ["Read"], "deny": ["X"]}, "hooks": {"Stop": []}}"#,
    );
    let rule = PermissionRule::with_content("Bash", "npm test:*");
    add_rules_to_file(
        &f.paths.local,
        RuleBehavior::Allow,
        std::slice::from_ref(&rule),
    )
    .unwrap();
    add_rules_to_file(&f.paths.local, RuleBehavior::Allow, &[rule]).unwrap();
    let value: Value = serde_json::from_str(&fs::read_to_string(&f.paths.local).unwrap()).unwrap();
    assert_eq!(value["model"], json!("m"));
    assert_eq!(value["hooks"], json!({"Stop": []}));
    assert_eq!(value["permissions"]["deny"], json!(["X"]));
    assert_eq!(
        value["permissions"]["allow"],
        json!(["Read", "Bash(npm test:*)"])
    );
    let leftovers: Vec<_> = fs::read_dir(f.paths.local.parent().unwrap())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn adding_rules_to_a_malformed_file_leaves_it_alone() {
    let f = fixture();
    write(&f.paths.local, "{ not json");
    let err = add_rules_to_file(
        &f.paths.local,
        RuleBehavior::Deny,
        &[PermissionRule::tool("Bash")],
    );
    assert!(matches!(err, Err(SettingsError::Syntax { line: 1, .. })));
    assert_eq!(fs::read_to_string(&f.paths.local).unwrap(), "{ not json");
}

#[test]
fn adding_rules_creates_missing_file_and_directories() {
    let f = fixture();
    let path = f.paths.user.parent().unwrap().join("nested/settings.json");
    add_rules_to_file(
        &path,
        RuleBehavior::Ask,
        &[PermissionRule::tool("WebFetch")],
    )
    .unwrap();
    let value: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(value, json!({"permissions": {"ask": ["WebFetch"]}}));
}
