use serde_json::json;
use tine_tools::validate;

fn schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "todos": {"type": "array", "items": {
                "type": "object",
                "properties": {"status": {"type": "string", "enum": ["pending", "completed"]}},
                "required": ["status"]
            }}
        },
        "required": ["file_path"],
        "additionalProperties": false
    })
}

fn message(input: serde_json::Value) -> String {
    validate(&schema(), &input).unwrap_err().to_string()
}

#[test]
fn accepts_a_valid_input() {
    validate(
        &schema(),
        &json!({"file_path": "/a", "limit": 3, "mode": "a"}),
    )
    .unwrap();
}

#[test]
fn names_the_wrong_field() {
    assert_eq!(message(json!({})), "`file_path` is required");
    assert_eq!(
        message(json!({"file_path": "/a", "limit": "3"})),
        "`limit` must be an integer, not a string"
    );
    assert_eq!(
        message(json!({"file_path": "/a", "limit": 2.5})),
        "`limit` must be an integer, not a number"
    );
    assert_eq!(
        message(json!({"file_path": "/a", "limit": 0})),
        "`limit` must be at least 1"
    );
    assert!(message(json!({"file_path": "/a", "mode": "c"})).starts_with("`mode` must be one of"));
    assert_eq!(
        message(json!({"file_path": "/a", "extra": 1})),
        "`extra` is not a known parameter of this tool"
    );
    assert_eq!(
        message(json!({"file_path": "/a", "todos": [{"status": "pending"}, {}]})),
        "`todos[1].status` is required"
    );
    assert_eq!(
        message(json!([])),
        "the input must be an object, not an array"
    );
}
