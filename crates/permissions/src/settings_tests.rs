use std::path::Path;

use tine_config::LoadedSettings;
use tine_config::settings::load;
use tine_test_support::SettingsFixture;
use tine_test_support::settings::write;

use super::*;

fn read(loaded: &LoadedSettings) -> PermissionSettings {
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    PermissionSettings::read(loaded)
}

#[test]
fn a_bad_deny_or_ask_rule_is_fatal_at_its_line_and_a_bad_allow_rule_a_warning() {
    let f = SettingsFixture::new();
    write(
        &f.paths.local,
        r#"{"permissions": {
  "deny": ["Bash(rm:*)", "Bash(", "WebFetch"],
  "allow": ["Read", "Edit("],
  "ask": ["Bash(x"]
}}"#,
    );
    let parsed = read(&load(&f.paths));
    let rules: Vec<(RuleBehavior, String)> = parsed
        .rules
        .iter()
        .map(|r| (r.behavior, r.rule.to_string()))
        .collect();
    assert_eq!(
        rules,
        [
            (RuleBehavior::Deny, "Bash(rm:*)".to_owned()),
            (RuleBehavior::Deny, "WebFetch".to_owned()),
            (RuleBehavior::Allow, "Read".to_owned()),
        ]
    );
    let fatal: Vec<String> = parsed
        .errors
        .iter()
        .filter(|e| e.is_fatal())
        .map(ToString::to_string)
        .collect();
    assert_eq!(fatal.len(), 2, "{fatal:#?}");
    assert!(
        fatal[0].contains("settings.local.json:2:26:")
            && fatal[0].contains("`Bash(` in `permissions.deny[1]`")
            && fatal[0].contains("deny or ask rule"),
        "{}",
        fatal[0]
    );
    assert!(
        fatal[1].contains(":4:") && fatal[1].contains("permissions.ask[0]"),
        "{}",
        fatal[1]
    );
    let warnings: Vec<String> = parsed
        .errors
        .iter()
        .filter(|e| !e.is_fatal())
        .map(ToString::to_string)
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].contains("`Edit(`") && warnings[0].contains("ignored"),
        "{}",
        warnings[0]
    );
}

#[test]
fn an_unknown_default_mode_is_a_warning_and_the_highest_known_one_applies() {
    let f = SettingsFixture::new();
    write(&f.paths.user, r#"{"permissions": {"defaultMode": "plan"}}"#);
    write(
        &f.paths.project,
        r#"{"permissions": {"defaultMode": "yolo"}}"#,
    );
    let parsed = read(&load(&f.paths));
    assert_eq!(
        parsed.default_mode,
        Some((PermissionMode::Plan, SettingsSource::User))
    );
    assert_eq!(parsed.errors.len(), 1);
    assert!(!parsed.errors[0].is_fatal());
    let message = parsed.errors[0].to_string();
    assert!(
        message.contains("unknown `permissions.defaultMode` `yolo`: use default, acceptEdits"),
        "{message}"
    );
    write(
        &f.paths.local,
        r#"{"permissions": {"defaultMode": "acceptEdits"}}"#,
    );
    assert_eq!(
        read(&load(&f.paths)).default_mode,
        Some((PermissionMode::AcceptEdits, SettingsSource::Local))
    );
}

#[test]
fn rules_carry_their_source_and_the_root_of_their_slash_paths() {
    let f = SettingsFixture::new();
    let (paths, home) = f.with_user_home();
    write(
        paths.claude_user.as_ref().unwrap(),
        r#"{"permissions": {"deny": ["Read(/secret)"]}}"#,
    );
    write(
        &paths.project,
        r#"{"permissions": {"allow": ["Read(/src/**)", "Read(/src/**)"], "deny": ["WebFetch"]}}"#,
    );
    let parsed = read(&load(&paths));
    let rules: Vec<(String, RuleSource, &Path)> = parsed
        .rules
        .iter()
        .map(|r| (r.rule.to_string(), r.source, r.base_dir.as_path()))
        .collect();
    let user = RuleSource::Settings(SettingsSource::User);
    let project = RuleSource::Settings(SettingsSource::Project);
    assert_eq!(
        rules,
        [
            // `/` rules of ~/.claude/settings.json are relative to ~/.claude...
            (
                "Read(/secret)".to_owned(),
                user,
                home.join(".claude").as_path()
            ),
            // ... of project settings to the project; the duplicate is kept once.
            ("WebFetch".to_owned(), project, paths.cwd.as_path()),
            ("Read(/src/**)".to_owned(), project, paths.cwd.as_path()),
        ]
    );
}
