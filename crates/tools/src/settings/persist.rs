//! Adding rules to a settings file: read, change only `permissions.<behavior>`, write to a
//! temporary file beside it and rename, so a crash never leaves half a file and every other key
//! survives.

use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value};

use super::{SettingsError, json_type};
use crate::permissions::{PermissionRule, RuleBehavior};

/// Append `rules` to `permissions.<behavior>` of the file at `path` (created if missing),
/// skipping rules already there. A malformed file is left untouched and reported.
pub fn add_rules_to_file(
    path: &Path,
    behavior: RuleBehavior,
    rules: &[PermissionRule],
) -> Result<(), SettingsError> {
    let label = path.display().to_string();
    let mut root = match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(SettingsError::NotAnObject {
                    path: label,
                    found: json_type(&other).to_string(),
                });
            }
            Err(err) => {
                return Err(SettingsError::Syntax {
                    path: label,
                    line: err.line(),
                    column: err.column(),
                    message: err.to_string(),
                });
            }
        },
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(source) => {
            return Err(SettingsError::Read {
                path: label,
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
    let list = permissions
        .entry(behavior.key())
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(list) = list else {
        return Err(SettingsError::Shape {
            path: label,
            key: behavior.key().to_string(),
            expected: "an array of rule strings",
        });
    };
    for rule in rules {
        let text = rule.to_string();
        if !list.iter().any(|v| v.as_str() == Some(text.as_str())) {
            list.push(Value::String(text));
        }
    }
    write_atomically(path, &Value::Object(root)).map_err(|source| SettingsError::Write {
        path: path.display().to_string(),
        source,
    })
}

fn write_atomically(path: &Path, value: &Value) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(text.as_bytes())?;
    temp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        // Keep the file's mode (a local settings file may be private).
        std::fs::set_permissions(temp.path(), meta.permissions())?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
