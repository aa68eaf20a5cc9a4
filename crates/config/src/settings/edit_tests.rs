use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::*;

fn edited(
    text: &str,
    change: impl FnOnce(&mut SettingsEdit) -> Result<(), SettingsError>,
) -> String {
    let mut edit = SettingsEdit::parse("s.json".into(), text).unwrap();
    change(&mut edit).unwrap();
    edit.text()
}

fn value(text: &str) -> Value {
    jsonc::parse(text)
        .unwrap()
        .root
        .map_or(json!({}), |r| r.to_value())
}

#[test]
fn comments_blank_lines_and_trailing_commas_stay_where_nothing_changed() {
    let text = "{\n  // the model we pay for\n  \"model\": \"m\",\n\n  /* rules */\n  \"permissions\": {\n    \"allow\": [\"Read\",],\n  },\n}\n";
    let out = edited(text, |e| {
        e.add_strings(&["permissions", "allow"], &["Bash(make:*)".into()])
            .map(drop)
    });
    assert!(
        out.contains("// the model we pay for\n  \"model\": \"m\",\n\n  /* rules */"),
        "{out}"
    );
    assert_eq!(
        value(&out),
        json!({"model": "m", "permissions": {"allow": ["Read", "Bash(make:*)"]}})
    );
    assert!(out.ends_with("},\n}\n"), "the trailing commas stay: {out}");
}

#[test]
fn members_are_set_and_removed_beside_commented_neighbours() {
    let text = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}, // a's note\n  },\n}\n";
    let server = json!({"command": "npx", "args": ["-y", "srv"]});
    let added = edited(text, |e| e.set(&["mcpServers", "b"], &server));
    assert!(
        added.contains("\"a\": {\"command\": \"x\"}, // a's note"),
        "{added}"
    );
    assert_eq!(
        value(&added),
        json!({"mcpServers": {"a": {"command": "x"}, "b": server}})
    );
    let mut edit = SettingsEdit::parse("s.json".into(), &added).unwrap();
    assert!(edit.contains(&["mcpServers", "b"]).unwrap());
    assert!(edit.remove(&["mcpServers", "b"]).unwrap());
    assert!(!edit.remove(&["mcpServers", "b"]).unwrap());
    assert!(!edit.contains(&["mcpServers", "b"]).unwrap());
    assert_eq!(edit.text(), text, "back to the bytes it had");
    // Missing objects on the way are created; nothing is created by a removal.
    assert_eq!(
        value(&edited("{}", |e| e.set(&["a", "b", "c"], &json!(1)))),
        json!({"a": {"b": {"c": 1}}})
    );
    assert_eq!(edited("{}", |e| e.remove(&["a", "b"]).map(drop)), "{}");
}

#[test]
fn of_duplicate_keys_the_last_is_edited_and_a_removal_takes_all() {
    let text = r#"{"model": "a", "model": "b"}"#;
    let out = edited(text, |e| e.set(&["model"], &json!("c")));
    assert!(out.contains(r#""model": "a""#), "{out}");
    assert_eq!(value(&out), json!({"model": "c"}));
    assert_eq!(
        value(&edited(text, |e| e.remove(&["model"]).map(drop))),
        json!({})
    );
}

#[test]
fn strings_are_added_once_and_an_array_left_empty_goes() {
    let mut edit = SettingsEdit::parse("s.json".into(), r#"{"list": ["a"]}"#).unwrap();
    let items = ["a".to_owned(), "b".to_owned(), "b".to_owned()];
    assert_eq!(edit.add_strings(&["list"], &items).unwrap(), 1);
    assert_eq!(edit.add_strings(&["list"], &items).unwrap(), 0);
    assert_eq!(value(&edit.text()), json!({"list": ["a", "b"]}));
    assert!(edit.remove_string(&["list"], "a").unwrap());
    assert!(edit.text().contains(r#"["b"]"#), "{}", edit.text());
    assert!(!edit.remove_string(&["list"], "a").unwrap());
    assert!(edit.remove_string(&["list"], "b").unwrap());
    assert_eq!(value(&edit.text()), json!({}));
    assert!(!edit.remove_string(&["absent"], "b").unwrap());
}

#[test]
fn a_value_of_the_wrong_shape_on_the_way_is_reported_not_replaced() {
    for (text, key) in [
        (r#"{"permissions": []}"#, "permissions"),
        (r#"{"permissions": {"allow": {}}}"#, "permissions.allow"),
        (r#"{"permissions": {"allow": "Read"}}"#, "permissions.allow"),
    ] {
        let mut edit = SettingsEdit::parse("s.json".into(), text).unwrap();
        let err = edit
            .add_strings(&["permissions", "allow"], &["Read".into()])
            .unwrap_err();
        assert!(
            matches!(&err, SettingsError::Shape { key: k, .. } if k == key),
            "{text}: {err}"
        );
        assert!(err.to_string().contains(&format!("`{key}`")), "{err}");
        assert_eq!(edit.text(), text);
    }
}

#[test]
fn what_is_not_a_jsonc_object_is_refused_at_its_line() {
    let err = SettingsEdit::parse("s.json".into(), "{\n  \"a\": 1 2\n}").unwrap_err();
    assert!(
        matches!(
            err,
            SettingsError::Syntax {
                at: Location { line: Some(2), .. },
                ..
            }
        ),
        "{err}"
    );
    let err = SettingsEdit::parse("s.json".into(), "[1]").unwrap_err();
    assert!(matches!(err, SettingsError::NotAnObject { .. }), "{err}");
}

#[test]
fn a_byte_order_mark_stays() {
    let out = edited("\u{feff}{}", |e| e.set(&["model"], &json!("m")));
    assert!(out.starts_with('\u{feff}'));
    assert_eq!(value(&out), json!({"model": "m"}));
}

#[test]
fn files_are_created_private_and_keep_their_mode_and_an_unchanged_file_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new/dir/settings.json");
    // Nothing changed: no file appears.
    edit_file(&path, |e| e.remove(&["x"]).map(drop)).unwrap();
    assert!(!path.exists());
    edit_file(&path, |e| e.set(&["model"], &json!("m"))).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    edit_file(&path, |e| e.set(&["model"], &json!("n"))).unwrap();
    assert_eq!(mode(&path), 0o644);
    assert_eq!(read_object(&path).unwrap()["model"], json!("n"));

    // A failed change writes nothing.
    let before = std::fs::read_to_string(&path).unwrap();
    let failed: Result<(), SettingsError> = edit_file(&path, |e| {
        e.set(&["model"], &json!("o"))?;
        e.add_strings(&["model"], &["x".into()]).map(drop)
    });
    assert!(failed.is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

#[test]
fn read_object_reads_jsonc_and_a_missing_file_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    assert!(read_object(&path).unwrap().is_empty());
    std::fs::write(&path, "// note\n{\"a\": [1,],}").unwrap();
    assert_eq!(
        Value::Object(read_object(&path).unwrap()),
        json!({"a": [1]})
    );
    std::fs::write(&path, "// only a note\n").unwrap();
    assert!(read_object(&path).unwrap().is_empty());
}
