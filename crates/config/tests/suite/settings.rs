//! Settings through the public loader: sources and their precedence, fail-closed loading,
//! directories, and rules added to a file.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tine_config::settings::*;
use tine_test_support::SettingsFixture;
use tine_test_support::settings::write;

/// The texts of one list of one layer.
fn texts(layer: &SettingsLayer, list: RuleList) -> Vec<&str> {
    layer
        .permissions
        .rules(list)
        .iter()
        .map(|t| t.text.as_str())
        .collect()
}

/// Every rule text of every layer, with its list, lowest precedence first.
fn all_rules(loaded: &LoadedSettings) -> Vec<(RuleList, String)> {
    loaded
        .layers
        .iter()
        .flat_map(|layer| {
            RuleList::ALL.into_iter().flat_map(move |list| {
                layer
                    .permissions
                    .rules(list)
                    .iter()
                    .map(move |t| (list, t.text.clone()))
            })
        })
        .collect()
}

#[test]
fn precedence_is_managed_flag_local_project_user() {
    let f = SettingsFixture::new();
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
    let f = SettingsFixture::new();
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
    let f = SettingsFixture::new();
    write(
        &f.paths.project,
        "{\n  // no deleting\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\",],},\n}\n",
    );
    let loaded = load(&f.paths);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert_eq!(
        all_rules(&loaded),
        [(RuleList::Deny, "Bash(rm:*)".to_owned())]
    );
}

#[test]
fn a_wrong_typed_key_is_a_warning_with_its_line_and_only_it_is_dropped() {
    let f = SettingsFixture::new();
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
    assert_eq!(all_rules(&loaded).len(), 1);
}

#[test]
fn rule_lists_are_checked_element_by_element_and_kept_as_written_with_their_place() {
    let f = SettingsFixture::new();
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
    // The grammar is the permission engine's: `Bash(` is kept for it to judge.
    assert_eq!(
        texts(layer, RuleList::Deny),
        ["Bash(rm:*)", "Bash(", "WebFetch"]
    );
    assert_eq!(texts(layer, RuleList::Allow), ["Read", "Edit("]);
    let bad = &layer.permissions.deny[1];
    assert_eq!(bad.key, "permissions.deny[2]");
    assert_eq!((bad.at.line, bad.at.column), (Some(2), Some(29)));
    assert!(bad.at.file.ends_with("settings.local.json"), "{}", bad.at);
    let fatal: Vec<String> = loaded.fatal_errors().map(ToString::to_string).collect();
    assert_eq!(fatal.len(), 2, "{fatal:#?}");
    assert!(
        fatal[0].contains(":2:") && fatal[0].contains("permissions.deny[1]"),
        "{}",
        fatal[0]
    );
    assert!(
        fatal[1].contains(":4:") && fatal[1].contains("permissions.ask"),
        "{}",
        fatal[1]
    );
    assert_eq!(loaded.warnings().count(), 0);
}

#[test]
fn permissions_that_are_not_an_object_are_fatal() {
    let f = SettingsFixture::new();
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
    let f = SettingsFixture::new();
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
    let f = SettingsFixture::new();
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
    let f = SettingsFixture::new();
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
    let f = SettingsFixture::new();
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
        texts(
            loaded.layer(SettingsSource::Project).unwrap(),
            RuleList::Deny
        ),
        ["Bash(rm:*)", "WebFetch", "Read(./.env)"]
    );
}

#[test]
fn default_mode_is_kept_as_written_and_a_wrong_type_is_a_warning() {
    let f = SettingsFixture::new();
    write(&f.paths.user, r#"{"permissions": {"defaultMode": "plan"}}"#);
    write(
        &f.paths.project,
        r#"{"permissions": {"defaultMode": "yolo"}}"#,
    );
    write(&f.paths.local, r#"{"permissions": {"defaultMode": 1}}"#);
    let loaded = load(&f.paths);
    assert_eq!(loaded.warnings().count(), 1, "{:?}", loaded.errors);
    assert!(
        loaded.errors[0]
            .to_string()
            .contains("permissions.defaultMode")
    );
    let modes: Vec<Option<&str>> = loaded
        .layers
        .iter()
        .map(|l| l.permissions.default_mode.as_ref().map(|m| m.text.as_str()))
        .collect();
    assert_eq!(modes, [Some("plan"), Some("yolo"), None]);
    let yolo = loaded.layers[1].permissions.default_mode.as_ref().unwrap();
    assert_eq!(yolo.key, "permissions.defaultMode");
    assert_eq!(yolo.at.line, Some(1));
}

#[test]
fn disable_bypass_permissions_mode_is_read_and_a_bad_value_is_fatal() {
    let f = SettingsFixture::new();
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
    let f = SettingsFixture::new();
    let (paths, home) = f.with_user_home();
    fs::create_dir_all(paths.claude_project.parent().unwrap()).unwrap();
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
    let rules: Vec<String> = all_rules(&loaded).into_iter().map(|(_, t)| t).collect();
    assert_eq!(rules, ["Read(/secret)", "Bash(rm:*)", "WebFetch"]);
    // `/` rules of ~/.claude/settings.json are relative to ~/.claude, of .claude/ to the project.
    assert_eq!(loaded.layers[0].base_dir, home.join(".claude"));
    assert_eq!(loaded.layers[2].base_dir, paths.cwd);
    // Answers are never written to Claude Code's files.
    assert_eq!(
        paths.path_of(SettingsSource::Project),
        Some(paths.project.as_path())
    );
}

#[test]
fn additional_directories_resolve_against_the_source_and_bad_ones_warn() {
    let f = SettingsFixture::new();
    write(
        &f.paths.project,
        r#"{"permissions": {"allow": ["Read(/src/**)"], "deny": ["WebFetch"],
            "additionalDirectories": ["../shared", 7, "~/notes"]}}"#,
    );
    let loaded = load(&f.paths);
    let home = Path::new("/home/me");
    let dirs = loaded.additional_directories(Some(home));
    assert_eq!(
        dirs,
        [
            (f.paths.cwd.join("../shared"), SettingsSource::Project),
            (home.join("notes"), SettingsSource::Project)
        ]
    );
    assert_eq!(
        loaded.layers[0].base_dir, f.paths.cwd,
        "project `/` rules are relative to the project"
    );
    let warnings: Vec<String> = loaded.warnings().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].contains("permissions.additionalDirectories[1]"),
        "{}",
        warnings[0]
    );
}

#[test]
fn auto_memory_directory_is_never_taken_from_project_settings() {
    let f = SettingsFixture::new();
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
    let f = SettingsFixture::new();
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
    let f = SettingsFixture::new();
    write(
        &f.paths.local,
        r#"{"model": "m", "permissions": {"allow": ["Read"], "deny": ["X"]}, "hooks": {"Stop": []}}"#,
    );
    let rule = "Bash(npm test:*)".to_owned();
    add_rules_to_file(&f.paths.local, RuleList::Allow, std::slice::from_ref(&rule)).unwrap();
    add_rules_to_file(&f.paths.local, RuleList::Allow, &[rule]).unwrap();
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
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(".tmp") || name.starts_with(".tine-")
        })
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn adding_rules_to_a_malformed_file_leaves_it_alone() {
    let f = SettingsFixture::new();
    write(&f.paths.local, "{ not json");
    let err = add_rules_to_file(&f.paths.local, RuleList::Deny, &["Bash".to_owned()]);
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
fn adding_rules_to_a_file_with_comments_keeps_them() {
    let f = SettingsFixture::new();
    let text = "{\n  // keep me\n  \"model\": \"m\",\n}\n";
    write(&f.paths.local, text);
    add_rules_to_file(
        &f.paths.local,
        RuleList::Allow,
        &["Bash(make:*)".to_owned()],
    )
    .unwrap();
    let written = fs::read_to_string(&f.paths.local).unwrap();
    assert!(
        written.starts_with("{\n  // keep me\n  \"model\": \"m\",\n"),
        "{written}"
    );
    // tine reads back what it wrote, comment and all.
    let loaded = load(&f.paths);
    assert_eq!(loaded.fatal_errors().count(), 0, "{:?}", loaded.errors);
    let layer = loaded
        .layers
        .iter()
        .find(|l| l.source == SettingsSource::Local)
        .unwrap();
    assert_eq!(layer.permissions.allow[0].text, "Bash(make:*)");
    // Trailing commas alone are kept too.
    write(&f.paths.local, "{\"model\": \"m\",}");
    add_rules_to_file(&f.paths.local, RuleList::Allow, &["Read".to_owned()]).unwrap();
    let written = fs::read_to_string(&f.paths.local).unwrap();
    let value = read_object(&f.paths.local).unwrap();
    assert_eq!(
        Value::Object(value),
        json!({"model": "m", "permissions": {"allow": ["Read"]}})
    );
    assert!(written.contains("\"model\": \"m\","), "{written}");
}

#[test]
fn adding_rules_creates_missing_file_and_directories() {
    let f = SettingsFixture::new();
    let path = f.paths.user.parent().unwrap().join("nested/settings.json");
    add_rules_to_file(&path, RuleList::Ask, &["WebFetch".to_owned()]).unwrap();
    let value: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(value, json!({"permissions": {"ask": ["WebFetch"]}}));
}
