use std::sync::Arc;

use serde_json::{Value, json};
use tine_permissions::PermissionTarget;
use tine_tools::{Tool, ToolContext, ToolFuture, ToolOutput, ToolPool, builtin_tools};

/// A stand-in for an MCP tool.
struct Mcp {
    name: &'static str,
    description: &'static str,
}

impl Tool for Mcp {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> String {
        self.description.to_owned()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"q": {"type": "string"}}})
    }
    fn call<'a>(&'a self, _input: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async { Ok(ToolOutput::text("ok")) })
    }
    fn permission_target(&self, _input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Other { content: None }
    }
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }
}

fn mcp(name: &'static str) -> Arc<dyn Tool> {
    Arc::new(Mcp {
        name,
        description: "from a server",
    })
}

#[test]
fn builtins_sorted_then_mcp_sorted_then_deduplicated() {
    let pool = ToolPool::assemble(
        builtin_tools(),
        vec![mcp("mcp__z__b"), mcp("Read"), mcp("mcp__a__x")],
        |_| false,
    );
    assert_eq!(
        pool.names(),
        [
            "Bash",
            "BashOutput",
            "Edit",
            "ExitPlanMode",
            "Glob",
            "Grep",
            "KillShell",
            "NotebookEdit",
            "Read",
            "TodoWrite",
            "WebFetch",
            "Write",
            "mcp__a__x",
            "mcp__z__b"
        ]
    );
    // The built-in Read won over the MCP tool of the same name.
    assert_ne!(pool.get("Read").unwrap().description(), "from a server");
}

#[test]
fn denied_tools_are_removed() {
    let pool = ToolPool::assemble(builtin_tools(), vec![mcp("mcp__s__t")], |name| {
        name == "Bash" || name.starts_with("mcp__s")
    });
    assert!(pool.get("Bash").is_none());
    assert!(pool.get("mcp__s__t").is_none());
    assert!(pool.get("Read").is_some());
    assert!(!pool.serialized_definitions().contains("\"Bash\""));
}

#[test]
fn serialized_definitions_are_byte_identical_for_the_same_set() {
    let mut builtins = builtin_tools();
    let one = ToolPool::assemble(builtins.clone(), vec![mcp("mcp__b"), mcp("mcp__a")], |_| {
        false
    });
    builtins.reverse();
    let two = ToolPool::assemble(builtins, vec![mcp("mcp__a"), mcp("mcp__b")], |_| false);
    assert_eq!(one.serialized_definitions(), two.serialized_definitions());
    // Adding an MCP tool leaves the built-in prefix untouched (the prompt cache keeps it).
    let three = ToolPool::assemble(
        builtin_tools(),
        vec![mcp("mcp__a"), mcp("mcp__b"), mcp("mcp__0")],
        |_| false,
    );
    let builtin_only = ToolPool::builtin(|_| false);
    let builtin_json = builtin_only.serialized_definitions();
    let prefix = builtin_json.trim_end_matches(']');
    assert!(three.serialized_definitions().starts_with(prefix));
    assert!(one.serialized_definitions().starts_with(prefix));

    let parsed: Vec<Value> = serde_json::from_str(&one.serialized_definitions()).unwrap();
    assert_eq!(parsed.len(), 14);
    let keys: Vec<&String> = parsed[0].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 3);
    assert_eq!(parsed[0]["name"], "Bash");
    assert_eq!(parsed[0]["input_schema"]["required"], json!(["command"]));
}

#[test]
fn every_builtin_schema_is_an_object_schema_with_claude_code_fields() {
    let pool = ToolPool::builtin(|_| false);
    let expect = [
        ("Read", vec!["file_path", "offset", "limit", "pages"]),
        (
            "NotebookEdit",
            vec![
                "notebook_path",
                "cell_id",
                "new_source",
                "cell_type",
                "edit_mode",
            ],
        ),
        ("ExitPlanMode", vec!["plan"]),
        ("Write", vec!["file_path", "content"]),
        (
            "Edit",
            vec!["file_path", "old_string", "new_string", "replace_all"],
        ),
        (
            "Bash",
            vec!["command", "timeout", "description", "run_in_background"],
        ),
        ("Glob", vec!["pattern", "path"]),
        (
            "Grep",
            vec![
                "pattern",
                "path",
                "glob",
                "output_mode",
                "-B",
                "-A",
                "-C",
                "-n",
                "-i",
                "type",
                "head_limit",
                "offset",
                "multiline",
            ],
        ),
        ("TodoWrite", vec!["todos"]),
        ("WebFetch", vec!["url", "prompt"]),
    ];
    for (name, fields) in expect {
        let schema = pool.get(name).unwrap().input_schema();
        assert_eq!(schema["type"], "object", "{name}");
        let properties = schema["properties"].as_object().unwrap();
        let mut have: Vec<&str> = properties.keys().map(String::as_str).collect();
        let mut want = fields.clone();
        have.sort_unstable();
        want.sort_unstable();
        assert_eq!(have, want, "{name}");
        assert!(!pool.get(name).unwrap().description().is_empty());
    }
}
