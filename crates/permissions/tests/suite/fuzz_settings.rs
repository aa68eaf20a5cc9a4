//! Fuzzing the settings loader at scale: arbitrary text, arbitrary JSON shaped like settings
//! (the real keys with values of any type), and valid settings files mutated byte by byte are
//! loaded through the public loader from a real file; loading and every accessor the upper
//! layers use (rules, modes, directories, memory keys) never panic, and a valid file with its
//! deny rules intact keeps them. `cargo xtask fuzz settings --cases N` runs N of each
//! (`PROPTEST_CASES`).

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};
use tine_config::settings::{self, LoadedSettings, SettingsPaths, SettingsSource};
use tine_permissions::{PermissionContext, PermissionSettings, RuleBehavior};
use tine_test_support::fuzz_config as config;

const KEYS: &[&str] = &[
    "permissions",
    "allow",
    "deny",
    "ask",
    "defaultMode",
    "additionalDirectories",
    "model",
    "hooks",
    "Stop",
    "matcher",
    "command",
    "env",
    "sandbox",
    "enabled",
    "autoMemoryEnabled",
    "autoMemoryDirectory",
    "mcpServers",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(KEYS).prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::String),
        prop_oneof![
            Just("Bash(rm:*)"),
            Just("Read(~/.ssh/**)"),
            Just("default"),
            Just("acceptEdits"),
            Just("bypassPermissions"),
            Just("~/x"),
            Just("../.."),
            Just("Bash("),
            Just(""),
        ]
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn settings_object() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map(key(), value(), 0..8)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn valid_settings() -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "permissions": {
            "allow": ["Bash(npm test:*)", "Read"],
            "deny": ["Bash(rm:*)", "Read(~/.ssh/**)"],
            "ask": ["WebFetch"],
            "defaultMode": "acceptEdits",
            "additionalDirectories": ["../shared", "~/notes"]
        },
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
        "env": {"A": "1"},
        "autoMemoryEnabled": false,
        "sandbox": {"enabled": true}
    })
}

/// A byte edit of a file's text: delete, insert or replace one byte.
fn mutation() -> impl Strategy<Value = (prop::sample::Index, u8, u8)> {
    (any::<prop::sample::Index>(), 0u8..3, any::<u8>())
}

fn mutate(text: &str, edits: &[(prop::sample::Index, u8, u8)]) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for (at, kind, byte) in edits {
        let i = at.index(bytes.len() + 1);
        match kind {
            0 if i < bytes.len() => {
                bytes.remove(i);
            }
            1 => bytes.insert(i, *byte),
            _ if i < bytes.len() => bytes[i] = *byte,
            _ => bytes.push(*byte),
        }
    }
    bytes
}

/// Loads `bytes` as the project's settings file and uses every accessor.
fn load_and_use(dir: &Path, bytes: &[u8]) -> LoadedSettings {
    let project = dir.join("project");
    std::fs::create_dir_all(project.join(".tine")).unwrap();
    std::fs::write(project.join(".tine/settings.json"), bytes).unwrap();
    let paths =
        SettingsPaths::new(&project, &dir.join("home")).with_managed(dir.join("no-managed.json"));
    let loaded = settings::load(&paths);
    for error in &loaded.errors {
        let _ = error.to_string();
    }
    let _ = loaded.get("model");
    let _ = loaded.get_excluding("autoMemoryDirectory", &[SettingsSource::Project]);
    let _ = loaded.auto_memory_directory();
    let _ = loaded.auto_memory_enabled();
    let _ = loaded.additional_directories(Some(Path::new("/home/u")));
    let permissions = PermissionSettings::read(&loaded);
    let _ = permissions.default_mode;
    for error in &permissions.errors {
        let _ = error.to_string();
    }
    let (context, _) = PermissionContext::from_settings(&loaded, &project, None, None);
    let _ = context.is_tool_denied("Bash");
    loaded
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let dir = tempfile::tempdir().unwrap();
        load_and_use(dir.path(), text.as_bytes());
    }

    #[test]
    fn arbitrary_settings_shaped_json_never_panics(object in settings_object()) {
        let dir = tempfile::tempdir().unwrap();
        load_and_use(dir.path(), object.to_string().as_bytes());
    }

    #[test]
    fn mutated_valid_settings_never_panic(edits in proptest::collection::vec(mutation(), 1..6)) {
        let dir = tempfile::tempdir().unwrap();
        let text = serde_json::to_string_pretty(&valid_settings()).unwrap();
        load_and_use(dir.path(), &mutate(&text, &edits));
    }

    #[test]
    fn an_extra_key_of_any_type_keeps_the_deny_rules(name in key(), extra in value()) {
        // Whatever else a valid file holds at the top level (except a different
        // `permissions`), its deny rules stay in force.
        prop_assume!(name != "permissions");
        let mut object = valid_settings();
        object[name.as_str()] = extra;
        let dir = tempfile::tempdir().unwrap();
        let loaded = load_and_use(dir.path(), object.to_string().as_bytes());
        let denies: Vec<String> = PermissionSettings::read(&loaded)
            .rules
            .iter()
            .filter(|r| r.behavior == RuleBehavior::Deny)
            .map(|r| r.rule.to_string())
            .collect();
        prop_assert!(
            denies.contains(&"Bash(rm:*)".to_owned()) && denies.contains(&"Read(~/.ssh/**)".to_owned()),
            "deny rules lost: {:?}", denies
        );
    }
}
