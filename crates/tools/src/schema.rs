//! A validator for the subset of JSON Schema the tools' input schemas use: `type` (one or a
//! list), `properties`, `required`, `additionalProperties: false`, `enum`, `minimum`/`maximum`,
//! `minLength`, `items`, `minItems`/`maxItems`. Input is checked before `call`, and a violation
//! names the field so the model can fix its call ("`limit` must be an integer").

use serde_json::Value;

/// One way an input breaks its schema. `field` is a path such as `todos[2].status`
/// (empty for the input as a whole).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(.field, .problem))]
pub struct SchemaViolation {
    /// The input's field, as a path (`edits[0].old_string`), or empty for the whole input.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

fn render(field: &str, problem: &str) -> String {
    if field.is_empty() {
        format!("the input {problem}")
    } else {
        format!("`{field}` {problem}")
    }
}

/// Checks `input` against `schema`; the first violation found, in schema order.
pub fn validate(schema: &Value, input: &Value) -> Result<(), SchemaViolation> {
    check(schema, input, "")
}

fn violation(field: &str, problem: impl Into<String>) -> SchemaViolation {
    SchemaViolation {
        field: field.to_owned(),
        problem: problem.into(),
    }
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64()
                || value.is_u64()
                || value
                    .as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.is_finite())
        }
        // An unknown type name in our own schema must not reject every input.
        _ => true,
    }
}

fn type_phrase(name: &str) -> String {
    match name {
        "integer" | "array" | "object" => format!("an {name}"),
        "null" => "null".to_owned(),
        _ => format!("a {name}"),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn child(field: &str, key: &str) -> String {
    if field.is_empty() {
        key.to_owned()
    } else {
        format!("{field}.{key}")
    }
}

fn check(schema: &Value, value: &Value, field: &str) -> Result<(), SchemaViolation> {
    let Some(schema) = schema.as_object() else {
        return Ok(());
    };

    if let Some(ty) = schema.get("type") {
        let names: Vec<&str> = match ty {
            Value::String(name) => vec![name.as_str()],
            Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.is_empty() && !names.iter().any(|name| type_matches(name, value)) {
            let wanted: Vec<String> = names.iter().map(|name| type_phrase(name)).collect();
            return Err(violation(
                field,
                format!("must be {}, not {}", wanted.join(" or "), json_kind(value)),
            ));
        }
    }

    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        let listed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(violation(
            field,
            format!("must be one of {}, not {value}", listed.join(", ")),
        ));
    }

    if let Some(number) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && number < min
        {
            return Err(violation(field, format!("must be at least {min}")));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && number > max
        {
            return Err(violation(field, format!("must be at most {max}")));
        }
    }

    if let Some(text) = value.as_str()
        && let Some(min) = schema.get("minLength").and_then(Value::as_u64)
        && (text.chars().count() as u64) < min
    {
        return Err(violation(
            field,
            format!("must be at least {min} character(s) long"),
        ));
    }

    if let Value::Array(items) = value {
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && (items.len() as u64) < min
        {
            return Err(violation(
                field,
                format!("must have at least {min} item(s)"),
            ));
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && (items.len() as u64) > max
        {
            return Err(violation(field, format!("must have at most {max} item(s)")));
        }
        if let Some(item_schema) = schema.get("items") {
            for (index, item) in items.iter().enumerate() {
                check(item_schema, item, &format!("{field}[{index}]"))?;
            }
        }
    }

    if let Value::Object(object) = value {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = schema.get("required") {
            for key in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(key) {
                    return Err(violation(&child(field, key), "is required"));
                }
            }
        }
        if let Some(properties) = properties {
            for (key, property_schema) in properties {
                if let Some(property) = object.get(key) {
                    check(property_schema, property, &child(field, key))?;
                }
            }
        }
        if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
            for key in object.keys() {
                if !properties.is_some_and(|known| known.contains_key(key)) {
                    return Err(violation(
                        &child(field, key),
                        "is not a known parameter of this tool",
                    ));
                }
            }
        }
    }
    Ok(())
}
