//! An MCP server's question between the session and the UI: its JSON Schema read into the
//! dialog's fields (flat properties: string, number, integer, boolean, enum; anything else is
//! asked as text), and the dialog's values back into the JSON object the server gets.

use serde_json::{Map, Value};
use tine_session::{ElicitationAnswer, ElicitationQuestion};
use tine_tui::{ElicitationField, ElicitationReply, ElicitationRequest, FieldKind, FieldValue};

/// The UI's request for a session question.
pub fn request(question: ElicitationQuestion) -> ElicitationRequest {
    ElicitationRequest {
        id: question.id.0.to_string(),
        server: question.server,
        message: question.message,
        fields: question.schema.as_ref().map(fields).unwrap_or_default(),
        url: question.url,
    }
}

/// The schema's properties, as fields, by name (rmcp holds them in a sorted map).
fn fields(schema: &Value) -> Vec<ElicitationField> {
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
            ElicitationField {
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

/// The session's answer for the dialog's reply.
pub fn answer(reply: ElicitationReply) -> ElicitationAnswer {
    match reply {
        ElicitationReply::Accept(values) if values.is_empty() => ElicitationAnswer::Accept(None),
        ElicitationReply::Accept(values) => {
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
        ElicitationReply::Decline => ElicitationAnswer::Decline,
        ElicitationReply::Cancel => ElicitationAnswer::Cancel,
    }
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
                ("branch", &FieldKind::Text, true),
                ("depth", &FieldKind::Integer, false),
                ("force", &FieldKind::Boolean, false),
                ("mode", &choice, false),
                ("ratio", &FieldKind::Number, false),
            ]
        );
        assert_eq!(fields[0].default, Some(FieldValue::Text("main".into())));
        assert_eq!(fields[1].default, Some(FieldValue::Integer(2)));
        let sent = answer(ElicitationReply::Accept(vec![
            ("branch".into(), FieldValue::Text("dev".into())),
            ("depth".into(), FieldValue::Integer(3)),
            ("ratio".into(), FieldValue::Number("0.5".into())),
            ("force".into(), FieldValue::Bool(true)),
        ]));
        assert_eq!(
            sent,
            ElicitationAnswer::Accept(Some(
                json!({"branch": "dev", "depth": 3, "ratio": 0.5, "force": true})
            ))
        );
        assert_eq!(
            answer(ElicitationReply::Decline),
            ElicitationAnswer::Decline
        );
    }
}
