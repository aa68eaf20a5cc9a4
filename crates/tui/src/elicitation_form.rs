//! An MCP server's question as a form: its JSON Schema read into fields (flat properties:
//! string, number, integer, boolean, enum; anything else is asked as text), and the values
//! typed into them back into the JSON object the server gets.

use serde_json::{Map, Value};
use tine_session::ElicitationAnswer;

/// One field of the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    /// The property's name (the answer's key).
    pub(crate) name: String,
    /// Its `title`, shown instead of the name when there is one.
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) kind: FieldKind,
    pub(crate) required: bool,
    /// The schema's `default`, filled in at the start.
    pub(crate) default: Option<FieldValue>,
}

/// What a field holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldKind {
    Text,
    Integer,
    Number,
    Boolean,
    /// One of these (an `enum`).
    Choice(Vec<String>),
}

/// A field's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldValue {
    Text(String),
    Integer(i64),
    /// A number as typed (it parses as a finite `f64`).
    Number(String),
    Bool(bool),
}

/// The schema's properties, as fields, by name (the schema holds them in a sorted map).
pub(crate) fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let text = |key: &str| property[key].as_str().map(str::to_owned);
            let choices: Option<Vec<String>> = property["enum"].as_array().map(|values| {
                values
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            });
            let kind = match (choices, property["type"].as_str()) {
                (Some(choices), _) if !choices.is_empty() => FieldKind::Choice(choices),
                (_, Some("integer")) => FieldKind::Integer,
                (_, Some("number")) => FieldKind::Number,
                (_, Some("boolean")) => FieldKind::Boolean,
                _ => FieldKind::Text,
            };
            let default = match &property["default"] {
                Value::String(s) => Some(FieldValue::Text(s.clone())),
                Value::Bool(b) => Some(FieldValue::Bool(*b)),
                Value::Number(n) => Some(match n.as_i64() {
                    Some(i) if kind == FieldKind::Integer => FieldValue::Integer(i),
                    _ => FieldValue::Number(n.to_string()),
                }),
                _ => None,
            };
            Field {
                name: name.clone(),
                title: text("title"),
                description: text("description"),
                required: required.contains(&name.as_str()),
                kind,
                default,
            }
        })
        .collect()
}

/// "Accept" with the fields filled in (empty optional ones left out): the object the server
/// reads (none when the form has no field, as in URL mode).
pub(crate) fn accept(values: Vec<(String, FieldValue)>) -> ElicitationAnswer {
    if values.is_empty() {
        return ElicitationAnswer::Accept(None);
    }
    let mut content = Map::new();
    for (name, value) in values {
        let value = match value {
            FieldValue::Text(text) => Value::String(text),
            FieldValue::Integer(n) => Value::from(n),
            FieldValue::Number(text) => text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or(Value::String(text), Value::Number),
            FieldValue::Bool(b) => Value::Bool(b),
        };
        content.insert(name, value);
    }
    ElicitationAnswer::Accept(Some(Value::Object(content)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_schema_becomes_fields_and_values_become_its_object() {
        let fields = fields(&json!({
            "type": "object",
            "properties": {
                "branch": {"type": "string", "title": "Branch", "default": "main"},
                "depth": {"type": "integer", "default": 2},
                "ratio": {"type": "number"},
                "force": {"type": "boolean", "description": "push anyway"},
                "mode": {"type": "string", "enum": ["fast", "safe"]}
            },
            "required": ["branch"]
        }));
        let kinds: Vec<(&str, &FieldKind, bool)> = fields
            .iter()
            .map(|f| (f.name.as_str(), &f.kind, f.required))
            .collect();
        let choice = FieldKind::Choice(vec!["fast".into(), "safe".into()]);
        assert_eq!(
            kinds,
            [
                // In the schema's own order (serde_json keeps it).
                ("branch", &FieldKind::Text, true),
                ("depth", &FieldKind::Integer, false),
                ("ratio", &FieldKind::Number, false),
                ("force", &FieldKind::Boolean, false),
                ("mode", &choice, false),
            ]
        );
        assert_eq!(fields[0].default, Some(FieldValue::Text("main".into())));
        assert_eq!(fields[1].default, Some(FieldValue::Integer(2)));
        let sent = accept(vec![
            ("branch".into(), FieldValue::Text("dev".into())),
            ("depth".into(), FieldValue::Integer(3)),
            ("ratio".into(), FieldValue::Number("0.5".into())),
            ("force".into(), FieldValue::Bool(true)),
        ]);
        assert_eq!(
            sent,
            ElicitationAnswer::Accept(Some(
                json!({"branch": "dev", "depth": 3, "ratio": 0.5, "force": true})
            ))
        );
        assert_eq!(accept(Vec::new()), ElicitationAnswer::Accept(None));
    }
}
