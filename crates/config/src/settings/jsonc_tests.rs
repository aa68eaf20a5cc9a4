use proptest::prelude::*;
use serde_json::json;

use super::*;

fn value_of(text: &str) -> Value {
    parse(text).unwrap().root.unwrap().to_value()
}

#[test]
fn comments_and_trailing_commas_are_accepted() {
    let text = r#"{
  // why this rule is here
  "permissions": {
    "deny": ["Bash(rm:*)", /* and this one */ "WebFetch",],
  },
}"#;
    let doc = parse(text).unwrap();
    assert_eq!(
        doc.root.unwrap().to_value(),
        json!({"permissions": {"deny": ["Bash(rm:*)", "WebFetch"]}})
    );
    assert_eq!(value_of(r#"{"a": [1,],}"#), json!({"a": [1]}));
}

#[test]
fn nothing_looser_than_jsonc_is_accepted() {
    for text in [
        "{a: 1}",
        "{'a': 1}",
        r#"{"a": 1 "b": 2}"#,
        r#"{"a": 0x10}"#,
        r#"{"a": +1}"#,
        r#"{"a": .5}"#,
        r#"{"a": NaN}"#,
        r#"{"a": 1} {"b": 2}"#,
        r#"{"a": 1,,}"#,
        r#"{"a": "#,
        "/* open",
    ] {
        assert!(parse(text).is_err(), "{text} must not parse");
    }
}

#[test]
fn syntax_errors_have_line_and_column() {
    let err = parse("{\n  \"a\": 1,\n  oops\n}").unwrap_err();
    assert_eq!((err.line, err.column), (3, 3), "{err:?}");
    let err = parse("{\"é\": tru}").unwrap_err();
    assert_eq!(
        (err.line, err.column),
        (1, 7),
        "columns count characters: {err:?}"
    );
}

#[test]
fn empty_or_comment_only_text_has_no_root() {
    assert!(parse("").unwrap().root.is_none());
    assert!(parse("  \n// nothing yet\n").unwrap().root.is_none());
}

#[test]
fn a_byte_order_mark_is_skipped() {
    assert_eq!(value_of("\u{feff}{\"a\": 1}"), json!({"a": 1}));
}

#[test]
fn offsets_point_at_values_and_keys() {
    let text = "{\n  \"model\": 5,\n  \"x\": [true, null]\n}";
    let doc = parse(text).unwrap();
    let Some(Spanned {
        node: Node::Object(members),
        ..
    }) = &doc.root
    else {
        panic!("not an object");
    };
    assert_eq!(doc.position(members[0].key_offset), (2, 3));
    assert_eq!(doc.position(members[0].value.offset), (2, 12));
    let Node::Array(items) = &members[1].value.node else {
        panic!("not an array");
    };
    assert_eq!(doc.position(items[1].offset), (3, 15));
}

#[test]
fn duplicate_keys_are_kept_in_the_tree_and_the_last_wins_in_the_value() {
    let doc = parse(r#"{"a": 1, "a": 2}"#).unwrap();
    let root = doc.root.unwrap();
    let Node::Object(members) = &root.node else {
        panic!("not an object");
    };
    assert_eq!(members.len(), 2);
    assert_eq!(root.to_value(), json!({"a": 2}));
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(parse(&text).is_err());
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("\\PC{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Strict JSON means what serde_json says it means.
    #[test]
    fn strict_json_parses_as_serde_json_does(value in arb_json()) {
        for text in [value.to_string(), serde_json::to_string_pretty(&value).unwrap()] {
            let expected: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(value_of(&text), expected);
        }
    }

    /// Comments and trailing commas change nothing.
    #[test]
    fn comments_and_trailing_commas_change_nothing(value in arb_json()) {
        // A trailing comma needs a container: a root scalar with one is a syntax error.
        prop_assume!(matches!(value, Value::Array(_) | Value::Object(_)));
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let mut decorated = String::from("// header\n");
        for line in pretty.lines() {
            decorated.push_str(line);
            let end = line.trim_end();
            // Pretty lines end outside strings: after a value, a comma, or a bracket.
            if !end.ends_with(['{', '[', ',']) {
                decorated.push(',');
            }
            decorated.push_str(" /* c */\n");
        }
        // The root's own closing bracket got a comma too: drop it.
        let decorated = decorated.trim_end().trim_end_matches(" /* c */").trim_end_matches(',');
        // Floats are compared as serde_json reads the same digits (its parsing is not exact).
        let expected: Value = serde_json::from_str(&pretty).unwrap();
        prop_assert_eq!(value_of(decorated), expected);
    }

    /// Arbitrary text never panics.
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,64}") {
        if let Ok(Document { root: Some(root), .. }) = parse(&text) {
            let _ = root.to_value();
        }
    }
}
