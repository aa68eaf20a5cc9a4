//! Adding rules to a settings file: read, change only `permissions.<list>`, write to a
//! temporary file beside it and rename, so a crash never leaves half a file and every other key
//! survives.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::Location;
use super::jsonc;
use super::{RuleList, SettingsError};

/// Append `rules` (as the permission engine writes them) to `permissions.<list>` of the file
/// at `path` (created if missing), skipping rules already there. A malformed file, or one with
/// comments (rewriting would lose them), is left untouched and reported.
pub fn add_rules_to_file(
    path: &Path,
    list: RuleList,
    rules: &[String],
) -> Result<(), SettingsError> {
    let label = path.display().to_string();
    let mut root = match std::fs::read_to_string(path) {
        Ok(text) => match jsonc::parse(&text) {
            Ok(doc) if doc.has_comments => {
                let rules: Vec<String> = rules.iter().map(|r| format!("\"{r}\"")).collect();
                return Err(SettingsError::HasComments {
                    path: label,
                    list: list.key(),
                    rules: rules.join(", "),
                });
            }
            Ok(doc) => match doc.root {
                None => Map::new(),
                Some(ref root) => match root.to_value() {
                    Value::Object(map) => map,
                    _ => {
                        return Err(SettingsError::NotAnObject {
                            at: Location::at(label, doc.position(root.offset)),
                            found: root.type_name(),
                        });
                    }
                },
            },
            Err(err) => {
                return Err(SettingsError::Syntax {
                    at: Location::at(label, (err.line, err.column)),
                    message: err.message,
                });
            }
        },
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(source) => {
            return Err(SettingsError::Read {
                at: Location::file(label),
                source,
            });
        }
    };
    let permissions = root
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(permissions) = permissions else {
        return Err(SettingsError::Shape {
            path: label,
            key: "permissions".to_string(),
            expected: "an object",
        });
    };
    let entries = permissions
        .entry(list.key())
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(entries) = entries else {
        return Err(SettingsError::Shape {
            path: label,
            key: list.key().to_string(),
            expected: "an array of rule strings",
        });
    };
    for text in rules {
        if !entries.iter().any(|v| v.as_str() == Some(text.as_str())) {
            entries.push(Value::String(text.clone()));
        }
    }
    write_atomically(path, &Value::Object(root)).map_err(|source| SettingsError::Write {
        path: path.display().to_string(),
        source,
    })
}

fn write_atomically(path: &Path, value: &Value) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    text.push('\n');
    // A new settings file (and its directory) is private, as all of tine's state; an existing
    // one keeps its mode (the user may have chosen it).
    crate::private_fs::write_atomic_keeping_mode(path, text.as_bytes())
}
