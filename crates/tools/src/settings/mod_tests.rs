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
fn unparseable_file_is_fatal_with_file_line_and_column_and_others_still_load() {
    let f = fixture();
    write(&f.paths.project, "{\n  \"model\": \"x\",\n  oops\n}");
    write(
        &f.paths.user,
        r#"{"permissions": {"allow": ["Bash(ls:*)"]}}"#,
    );
    let loaded = load(&f.paths);
    assert_eq!(loaded.errors.len(), 1);
    assert!(loaded.errors[0].is_fatal());
    let message = loaded.errors[0].to_string();
    assert!(message.contains("settings.json:3:3:"), "{message}");
    assert!(message.contains("fix the file"), "{message}");
    assert!(loaded.layer(SettingsSource::User).is_some());
    assert!(loaded.layer(SettingsSource::Project).is_none());
}

#[test]
fn trailing_commas_and_comments_keep_every_rule() {
    let f = fixture();
    write(
        &f.paths.project,
        "{\n  // no deleting\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\",],},\n}\n",
    );
    let loaded = load(&f.paths);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let (rules, _) = loaded.permission_rules();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].behavior, RuleBehavior::Deny);
    assert_eq!(rules[0].rule.to_string(), "Bash(rm:*)");
}

#[test]
fn a_wrong_typed_key_is_a_warning_with_its_line_and_only_it_is_dropped() {
    let f = fixture();
    write(&f.paths.user, r#"{"model": "from-user"}"#);
    write(
        &f.paths.project,
        "{\n  \"model\": 5,\n  \"permissions\": {\"deny\": [\"WebFetch\"]}\n}",
    );
    let loaded = load(&f.paths);
    assert_eq!(loaded.errors.len(), 1, "{:?}", loaded.errors);
    let error = &loaded.errors[0];
    assert!(!error.is_fatal());
    let message = error.to_string();
    assert!(message.contains("settings.json:2:"), "{message}");
    assert!(
        message.contains("`model` must be a string, found a number"),
        "{message}"
    );
    // The lower source's valid value applies; the file's rules are kept.
    assert_eq!(
        loaded.get("model"),
        Some((&json!("from-user"), SettingsSource::User))
    );
    assert_eq!(loaded.permission_rules().0.len(), 1);
}

#[test]
fn rule_lists_are_checked_element_by_element() {
    let f = fixture();
    write(
        &f.paths.local,
        r#"{"permissions": {
  "deny": ["Bash(rm:*)", 5, "Bash(", "WebFetch"],
  "allow": ["Read", "Edit("],
  "ask": "Bash"
}}"#,
    );
    let loaded = load(&f.paths);
    let layer = loaded.layer(SettingsSource::Local).unwrap();
    assert_eq!(layer.permissions.deny, ["Bash(rm:*)", "WebFetch"]);
    assert_eq!(layer.permissions.allow, ["Read"]);
    let fatal: Vec<String> = loaded.fatal_errors().map(ToString::to_string).collect();
    assert_eq!(fatal.len(), 3, "{fatal:#?}");
    assert!(
        fatal[0].contains(":2:") && fatal[0].contains("permissions.deny[1]"),
        "{}",
        fatal[0]
    );
    assert!(
        fatal[1].contains("`Bash(`") && fatal[1].contains("deny or ask rule"),
        "{}",
        fatal[1]
    );
    assert!(
        fatal[2].contains(":4:") && fatal[2].contains("permissions.ask"),
        "{}",
        fatal[2]
    );
    let warnings: Vec<String> = loaded.warnings().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].contains("`Edit(`") && warnings[0].contains("ignored"),
        "{}",
        warnings[0]
    );
}

#[test]
fn permissions_that_are_not_an_object_are_fatal() {
    let f = fixture();
    write(
        &f.paths.local,
        r#"{"model": "m", "permissions": ["Bash(rm:*)"]}"#,
    );
    let loaded = load(&f.paths);
    assert_eq!(loaded.fatal_errors().count(), 1, "{:?}", loaded.errors);
    assert_eq!(loaded.get("model").map(|(v, _)| v), Some(&json!("m")));
}

#[test]
fn a_root_that_is_not_an_object_is_fatal_and_an_empty_file_is_nothing() {
    let f = fixture();
    write(&f.paths.project, r#"["Bash(rm:*)"]"#);
    write(&f.paths.local, "  \n");
    let loaded = load(&f.paths);
    assert_eq!(loaded.errors.len(), 1, "{:?}", loaded.errors);
    assert!(matches!(
        loaded.errors[0],
        SettingsError::NotAnObject {
            found: "an array",
            ..
        }
    ));
    assert!(loaded.layer(SettingsSource::Local).is_some());
}

#[test]
fn a_file_that_exists_but_cannot_be_read_is_fatal() {
    let f = fixture();
    fs::create_dir_all(&f.paths.project).unwrap();
    let loaded = load(&f.paths);
    assert_eq!(loaded.fatal_errors().count(), 1, "{:?}", loaded.errors);
    assert!(
        loaded.errors[0]
            .to_string()
            .contains("cannot read settings file")
    );
}

#[test]
fn unknown_keys_warn_and_claude_code_keys_pass_silently() {
    let f = fixture();
    write(
        &f.paths.project,
        r#"{"$schema": "https://json.schemastore.org/claude-code-settings.json",
  "statusLine": {"type": "command", "command": "x"}, "includeCoAuthoredBy": false,
  "mcpServers": {}, "cleanupPeriodDays": 3, "env": {"A": "1"},
  "permisions": {"deny": ["Bash"]},
  "permissions": {"disableAutoMode": "disable", "denny": []}}"#,
    );
    let loaded = load(&f.paths);
    let messages: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert!(
        messages[0].contains(":4:") && messages[0].contains("`permisions`"),
        "{}",
        messages[0]
    );
    assert!(
        messages[1].contains("`permissions.denny`"),
        "{}",
        messages[1]
    );
    assert!(loaded.fatal_errors().next().is_none());
}

#[test]
fn duplicate_keys_warn_and_duplicate_rule_lists_are_both_kept() {
    let f = fixture();
    write(
        &f.paths.project,
        r#"{"model": "a", "model": "b",
  "permissions": {"deny": ["Bash(rm:*)"]},
  "permissions": {"deny": ["WebFetch"], "deny": ["Read(./.env)"]}}"#,
    );
    let loaded = load(&f.paths);
    assert_eq!(loaded.errors.len(), 3, "{:?}", loaded.errors);
    assert!(loaded.fatal_errors().next().is_none());
    assert_eq!(loaded.get("model").map(|(v, _)| v), Some(&json!("b")));
    assert_eq!(
        loaded
            .layer(SettingsSource::Project)
            .unwrap()
            .permissions
            .deny,
        ["Bash(rm:*)", "WebFetch", "Read(./.env)"]
    );
}

#[test]
fn a_bad_default_mode_is_a_warning() {
    let f = fixture();
    write(&f.paths.user, r#"{"permissions": {"defaultMode": "plan"}}"#);
    write(
        &f.paths.project,
        r#"{"permissions": {"defaultMode": "yolo"}}"#,
    );
    write(&f.paths.local, r#"{"permissions": {"defaultMode": 1}}"#);
    let loaded = load(&f.paths);
    assert_eq!(loaded.warnings().count(), 2, "{:?}", loaded.errors);
    assert!(loaded.errors[0].to_string().contains("`yolo`"));
    assert_eq!(
        loaded.default_mode(),
        Some((PermissionMode::Plan, SettingsSource::User))
    );
}

#[test]
fn disable_bypass_permissions_mode_is_read_and_a_bad_value_is_fatal() {
    let f = fixture();
    write(
        &f.paths.managed,
        r#"{"permissions": {"disableBypassPermissionsMode": "disable"}}"#,
    );
    let loaded = load(&f.paths);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert_eq!(
        loaded.bypass_disabled_by(),
        Some(f.paths.managed.display().to_string())
    );
    write(
        &f.paths.managed,
        r#"{"permissions": {"disableBypassPermissionsMode": "yes"}}"#,
    );
    assert_eq!(load(&f.paths).fatal_errors().count(), 1);
}

#[test]
fn claude_code_files_are_read_below_tines_own_of_the_same_scope() {
    let f = fixture();
    let home = f
        .paths
        .user
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let paths = f.paths.clone().with_user_home(&home);
    fs::create_dir_all(paths.claude_project.parent().unwrap()).unwrap();
    fs::create_dir_all(home.join(".claude")).unwrap();
    write(
        paths.claude_user.as_ref().unwrap(),
        r#"{"model": "claude-user", "permissions": {"deny": ["Read(/secret)"]}}"#,
    );
    write(&paths.user, r#"{"model": "tine-user"}"#);
    write(
        &paths.claude_project,
        r#"{"model": "claude-project", "permissions": {"deny": ["Bash(rm:*)"]}}"#,
    );
    write(
        &paths.claude_local,
        r#"{"permissions": {"ask": ["WebFetch"]}}"#,
    );
    let loaded = load(&paths);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    // A project's Claude Code file beats the user's tine file (a narrower scope)...
    assert_eq!(
        loaded.get("model"),
        Some((&json!("claude-project"), SettingsSource::Project))
    );
    // ... and tine's own file of the same scope beats it.
    write(&paths.project, r#"{"model": "tine-project"}"#);
    let loaded = load(&paths);
    assert_eq!(loaded.get("model").unwrap().0, &json!("tine-project"));
    let formats: Vec<(SettingsSource, SettingsFormat)> =
        loaded.layers.iter().map(|l| (l.source, l.format)).collect();
    assert_eq!(
        formats,
        [
            (SettingsSource::User, SettingsFormat::ClaudeCode),
            (SettingsSource::User, SettingsFormat::Tine),
            (SettingsSource::Project, SettingsFormat::ClaudeCode),
            (SettingsSource::Project, SettingsFormat::Tine),
            (SettingsSource::Local, SettingsFormat::ClaudeCode),
        ]
    );
    assert!(
        loaded.layer(SettingsSource::Local).is_none(),
        "tine's own local file is absent"
    );
    assert!(
        loaded
            .layer_from(SettingsSource::Local, SettingsFormat::ClaudeCode)
            .is_some()
    );
    let (rules, _) = loaded.permission_rules();
    let texts: Vec<String> = rules.iter().map(|r| r.rule.to_string()).collect();
    assert_eq!(texts, ["Read(/secret)", "Bash(rm:*)", "WebFetch"]);
    // `/` rules of ~/.claude/settings.json are relative to ~/.claude, of .claude/ to the project.
    assert_eq!(rules[0].base_dir, home.join(".claude"));
    assert_eq!(rules[1].base_dir, paths.cwd);
    // Answers are never written to Claude Code's files.
    assert_eq!(
        paths.path_of(SettingsSource::Project),
        Some(paths.project.as_path())
    );
}

#[test]
fn typed_permissions_and_rules_with_sources() {
    let f = fixture();
    write(
        &f.paths.project,
        r#"{"permissions": {"allow": ["Read(/src/**)", "Bash("], "deny": ["WebFetch"],
            "defaultMode": "acceptEdits", "additionalDirectories": ["../shared", 7]}}"#,
    );
    let loaded = load(&f.paths);
    assert_eq!(
        loaded.default_mode(),
        Some((PermissionMode::AcceptEdits, SettingsSource::Project))
    );
    let dirs = loaded.additional_directories(None);
    assert_eq!(dirs.len(), 1);
    assert_eq!(dirs[0].0, f.paths.cwd.join("../shared"));
    let (rules, errors) = loaded.permission_rules();
    assert!(
        errors.is_empty(),
        "rules are checked when loading: {errors:?}"
    );
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0].behavior, RuleBehavior::Deny);
    assert_eq!(
        rules[1].base_dir, f.paths.cwd,
        "project `/` rules are relative to the project"
    );
    let warnings: Vec<String> = loaded.warnings().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert!(warnings[0].contains("`Bash(`"), "{}", warnings[0]);
    assert!(
        warnings[1].contains("permissions.additionalDirectories[1]"),
        "{}",
        warnings[1]
    );
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
fn missing_flag_file_is_fatal_missing_others_are_nothing() {
    let f = fixture();
    let paths = f
        .paths
        .clone()
        .with_flag(FlagSettings::from_arg("/nonexistent/s.json"));
    let loaded = load(&paths);
    assert_eq!(loaded.errors.len(), 1);
    assert!(loaded.errors[0].is_fatal());
    assert!(loaded.errors[0].to_string().contains("/nonexistent/s.json"));
    let inline = f
        .paths
        .clone()
        .with_flag(FlagSettings::from_arg("{\"model\": }"));
    let loaded = load(&inline);
    assert!(loaded.errors[0].is_fatal());
    assert!(
        loaded.errors[0]
            .to_string()
            .starts_with("--settings (inline JSON):1:11:"),
        "{}",
        loaded.errors[0]
    );
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
    assert!(matches!(
        err,
        Err(SettingsError::Syntax {
            at: Location { line: Some(1), .. },
            ..
        })
    ));
    assert_eq!(fs::read_to_string(&f.paths.local).unwrap(), "{ not json");
}

#[test]
fn adding_rules_to_a_file_with_comments_leaves_it_alone_and_says_what_to_add() {
    let f = fixture();
    let text = "{\n  // keep me\n  \"model\": \"m\",\n}\n";
    write(&f.paths.local, text);
    let err = add_rules_to_file(
        &f.paths.local,
        RuleBehavior::Allow,
        &[PermissionRule::with_content("Bash", "make:*")],
    )
    .unwrap_err();
    assert!(err.to_string().contains("\"Bash(make:*)\""), "{err}");
    assert_eq!(fs::read_to_string(&f.paths.local).unwrap(), text);
    // Trailing commas alone are no reason to refuse.
    write(&f.paths.local, "{\"model\": \"m\",}");
    add_rules_to_file(
        &f.paths.local,
        RuleBehavior::Allow,
        &[PermissionRule::tool("Read")],
    )
    .unwrap();
    let value: Value = serde_json::from_str(&fs::read_to_string(&f.paths.local).unwrap()).unwrap();
    assert_eq!(
        value,
        json!({"model": "m", "permissions": {"allow": ["Read"]}})
    );
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
