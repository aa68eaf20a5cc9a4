//! Fuzzing every built-in tool's input at scale: sequences of calls with arbitrary JSON for each
//! property of the tool's schema (wrong types, huge numbers, odd strings), run the way the loop
//! runs them (`run_tool`: schema check, then the call) in a scratch directory, together with the
//! tool's permission, read-only and rendering hooks. Nothing may panic; every call ends in a
//! result. `cargo xtask fuzz tools --cases N` runs N sequences (`PROPTEST_CASES`).
//!
//! Inputs stay harmless by construction, not by luck: paths are confined to the scratch
//! directory, Bash runs only a family of inert commands (with arbitrary arguments, quoted) and
//! WebFetch only reaches a closed local port. Everything else is arbitrary.

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tine_test_support::fuzz_config as config;
use tine_tools::{Tool, builtin_tools, run_tool};

use super::support::context;

/// Every property name of every built-in tool: random object keys never take one of these, so
/// a random value never lands where a path, a command or a URL goes.
fn is_property_name(key: &str) -> bool {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| {
            builtin_tools()
                .iter()
                .filter_map(|tool| tool.input_schema()["properties"].as_object().cloned())
                .flat_map(|p| p.keys().cloned().collect::<Vec<_>>())
                .collect()
        })
        .iter()
        .any(|name| name == key)
}

fn random_key() -> impl Strategy<Value = String> {
    "[a-z_]{1,10}".prop_filter("not a tool property", |k| !is_property_name(k))
}

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        prop_oneof![Just(0), Just(1), Just(-1), Just(2000), Just(i64::MAX)].prop_map(|n| json!(n)),
        any::<String>().prop_map(Value::String),
        "\\PC{0,20}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(random_key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One name inside the scratch directory (never `..`): relative, with subdirectories and globs.
fn confined_relative() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("notes.txt".to_owned()),
            Just("bin.dat".to_owned()),
            Just("empty".to_owned()),
            Just("sub".to_owned()),
            Just("*".to_owned()),
            Just("**".to_owned()),
            Just(".".to_owned()),
            "[a-zA-Z0-9_ é-]{1,8}(\\.[a-z]{1,3})?",
        ],
        1..4,
    )
    .prop_map(|parts| parts.join("/"))
}

/// A path value: confined (absolute or relative to the scratch cwd), or not a string at all.
fn path_value(root: String) -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => confined_relative().prop_map(move |rel| Value::String(format!("{root}/{rel}"))),
        1 => confined_relative().prop_map(Value::String),
        1 => any_json().prop_filter("not a string", |v| !v.is_string()),
    ]
}

/// An inert command with arbitrary (quoted) arguments.
fn bash_command(root: String) -> impl Strategy<Value = Value> {
    let quoted = |s: String| format!("'{}'", s.replace('\'', r"'\''"));
    prop_oneof![
        any::<String>()
            .prop_map(move |s| Value::String(format!("echo {}", quoted(s.replace('\0', ""))))),
        any::<String>()
            .prop_map(move |s| Value::String(format!("printf %s {}", quoted(s.replace('\0', ""))))),
        confined_relative()
            .prop_map(move |rel| Value::String(format!("cat '{root}/{rel}'; ls -la"))),
        (0u8..=255).prop_map(|code| Value::String(format!("exit {code}"))),
        Just(json!("true")),
        Just(json!("sleep 0.05; echo late")),
        Just(json!("yes | head -c 100000")),
        Just(json!("cd sub && pwd")),
        Just(json!("cd /nonexistent-dir-xyz")),
        any_json().prop_filter("not a string", |v| !v.is_string()),
    ]
}

fn url_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-z/?=&%.]{0,20}".prop_map(|path| json!(format!("http://127.0.0.1:1/{path}"))),
        "[a-z/?=&%.]{0,20}".prop_map(|path| json!(format!("https://127.0.0.1:1/{path}"))),
        "[^h][^:]{0,20}".prop_map(Value::String),
        Just(json!("")),
        any_json().prop_filter("not a string", |v| !v.is_string()),
    ]
}

/// A value for property `key` of the tool `tool`.
fn value_for(tool: &str, key: &str, root: &str) -> BoxedStrategy<Value> {
    match (tool, key) {
        (_, "file_path" | "path" | "notebook_path") => path_value(root.to_owned()).boxed(),
        ("Bash", "command") => bash_command(root.to_owned()).boxed(),
        ("Bash", "timeout") => prop_oneof![
            (0u64..2_000_000).prop_map(|n| json!(n)),
            Just(json!(-5)),
            Just(json!(0.5)),
            any_json(),
        ]
        .boxed(),
        ("WebFetch", "url") => url_value().boxed(),
        _ => any_json().boxed(),
    }
}

/// One call: a tool (by index) and an input built from its schema's properties, plus sometimes
/// an unknown key.
fn call(tools: Arc<Vec<Arc<dyn Tool>>>, root: String) -> impl Strategy<Value = (usize, Value)> {
    (0..tools.len()).prop_flat_map(move |index| {
        let tool = &tools[index];
        let schema = tool.input_schema();
        let keys: Vec<String> = schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let fields: Vec<_> = keys
            .iter()
            .map(|key| {
                (
                    Just(key.clone()),
                    proptest::option::weighted(0.85, value_for(tool.name(), key, &root)),
                )
            })
            .collect();
        let extra = proptest::option::weighted(0.1, (random_key(), any_json()));
        (Just(index), fields, extra).prop_map(|(index, fields, extra)| {
            let mut input = Map::new();
            for (key, value) in fields {
                if let Some(value) = value {
                    input.insert(key, value);
                }
            }
            if let Some((key, value)) = extra {
                input.insert(key, value);
            }
            (index, Value::Object(input))
        })
    })
}

fn scratch(dir: &Path) {
    std::fs::write(dir.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(dir.join("bin.dat"), [0u8, 159, 146, 150, 255, 0, 1]).unwrap();
    std::fs::write(dir.join("empty"), "").unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/nested.rs"), "fn main() {}\n").unwrap();
}

/// Where the scratch directories go: one stable parent, so `root` is known to the strategy.
fn scratch_root() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn any_sequence_of_tool_calls_ends_in_results_without_panicking() {
    let tools: Arc<Vec<Arc<dyn Tool>>> = Arc::new(builtin_tools());
    let parent = scratch_root();
    let root = parent.path().canonicalize().unwrap().join("case");
    let root_text = root.display().to_string();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let strategy = proptest::collection::vec(call(Arc::clone(&tools), root_text), 1..6);
    let mut runner = proptest::test_runner::TestRunner::new(config(24));
    let result = runner.run(&strategy, |calls| {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        scratch(&root);
        let ctx = context(&root);
        runtime.block_on(async {
            for (index, input) in calls {
                let tool = &tools[index];
                let _ = tool.permission_target(&input, &ctx);
                let _ = tool.check_permissions(&input, &ctx);
                let _ = tool.is_read_only(&input);
                let _ = tool.is_destructive(&input);
                let _ = tool.is_concurrency_safe(&input);
                let _ = tool.render_call(&input);
                let output = tokio::time::timeout(
                    std::time::Duration::from_secs(60),
                    run_tool(tool.as_ref(), input.clone(), &ctx),
                )
                .await
                .unwrap_or_else(|_| panic!("{} hung on {input}", tool.name()));
                let _ = tool.render_result(&output);
            }
        });
        // Nothing escaped the scratch directory's parent.
        let outside: Vec<_> = std::fs::read_dir(parent.path())
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .filter(|name| name != "case")
            .collect();
        prop_assert!(
            outside.is_empty(),
            "files beside the scratch dir: {outside:?}"
        );
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// Entirely arbitrary input (not shaped by the schema) is refused cleanly.
    #[test]
    fn arbitrary_json_is_refused_or_run_without_panicking(index in 0usize..10, input in any_json()) {
        let tools = builtin_tools();
        let tool = &tools[index % tools.len()];
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        // Random keys are never a tool's property names, so no path or command is ever used.
        let output = runtime.block_on(run_tool(tool.as_ref(), input.clone(), &ctx));
        if !input.is_object() {
            prop_assert!(output.is_error, "{} accepted {input}", tool.name());
        }
    }
}
