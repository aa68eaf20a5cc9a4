//! The one writer of settings files (`tine mcp add|remove|trust`, "always allow" answers, and
//! any other change tine makes to a settings JSON file). A file is edited in place: its text
//! becomes a concrete syntax tree that keeps every comment, blank line and trailing comma; a
//! change touches only the members it names; the result replaces the file atomically through
//! [`private_fs`](crate::private_fs) (an existing file keeps its mode, a new file and its
//! missing directories are private). A file that is not JSONC, or whose root is not an object,
//! is left untouched and reported at its line.
//!
//! Keys are paths from the root (`["permissions", "allow"]`); of duplicate keys the last one is
//! the one that counts, as in every JSON reader, so that is the one edited.

use std::path::Path;

use jsonc_parser::cst::{
    CstArray, CstContainerNode, CstInputValue, CstNode, CstObject, CstObjectProp, CstRootNode,
};
use serde_json::{Map, Value};

use super::error::Location;
use super::jsonc;
use super::{RuleList, SettingsError};

const OBJECT: &str = "an object";
const STRINGS: &str = "an array of strings";

/// A settings file open for editing (see [`edit_file`]).
pub struct SettingsEdit {
    root: CstRootNode,
    file: String,
    bom: bool,
}

impl std::fmt::Debug for SettingsEdit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsEdit")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

/// Reads the settings file at `path` (a missing file is an empty one), lets `change` edit it,
/// and writes it back when the text changed. When `change` fails nothing is written.
pub fn edit_file<T, E: From<SettingsError>>(
    path: &Path,
    change: impl FnOnce(&mut SettingsEdit) -> Result<T, E>,
) -> Result<T, E> {
    let file = path.display().to_string();
    let text = read_text(path)?.unwrap_or_default();
    let mut edit = SettingsEdit::parse(file.clone(), &text)?;
    let answer = change(&mut edit)?;
    let mut written = edit.text();
    if written != text {
        if !written.ends_with('\n') {
            written.push('\n');
        }
        crate::private_fs::write_atomic_keeping_mode(path, written.as_bytes())
            .map_err(|source| SettingsError::Write { path: file, source })?;
    }
    Ok(answer)
}

/// The JSON object a settings file holds, comments left out (empty when the file is missing
/// or holds only comments).
pub fn read_object(path: &Path) -> Result<Map<String, Value>, SettingsError> {
    let file = path.display().to_string();
    let Some(text) = read_text(path)? else {
        return Ok(Map::new());
    };
    let doc = checked(&file, &text)?;
    match doc.root.map(|root| root.to_value()) {
        Some(Value::Object(map)) => Ok(map),
        _ => Ok(Map::new()),
    }
}

/// Appends `rules` (as the permission engine writes them) to `permissions.<list>` of the file
/// at `path` (created if missing), skipping rules already there; every other key, comment and
/// trailing comma stays as written.
pub fn add_rules_to_file(
    path: &Path,
    list: RuleList,
    rules: &[String],
) -> Result<(), SettingsError> {
    edit_file(path, |edit| {
        edit.add_strings(&["permissions", list.key()], rules)
            .map(drop)
    })
}

fn read_text(path: &Path) -> Result<Option<String>, SettingsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(SettingsError::Read {
            at: Location::file(path.display().to_string()),
            source,
        }),
    }
}

/// The text parsed as tine reads settings, its root an object (or nothing).
fn checked(file: &str, text: &str) -> Result<jsonc::Document, SettingsError> {
    let doc = jsonc::parse(text).map_err(|err| SettingsError::Syntax {
        at: Location::at(file, (err.line, err.column)),
        message: err.message,
    })?;
    if let Some(root) = doc.root.as_ref().filter(|r| r.type_name() != "an object") {
        return Err(SettingsError::NotAnObject {
            at: Location::at(file, doc.position(root.offset)),
            found: root.type_name(),
        });
    }
    Ok(doc)
}

impl SettingsEdit {
    fn parse(file: String, text: &str) -> Result<Self, SettingsError> {
        checked(&file, text)?;
        let (bom, text) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let root = CstRootNode::parse(text, &jsonc::parse_options()).map_err(|err| {
            SettingsError::Syntax {
                at: Location::file(&file),
                message: err.kind().to_string(),
            }
        })?;
        Ok(SettingsEdit { root, file, bom })
    }

    /// The file's text as it stands.
    pub fn text(&self) -> String {
        let text = self.root.to_string();
        if self.bom {
            format!("\u{feff}{text}")
        } else {
            text
        }
    }

    /// Whether the member at `keys` exists.
    pub fn contains(&self, keys: &[&str]) -> Result<bool, SettingsError> {
        let Some((last, parents)) = keys.split_last() else {
            return Ok(true);
        };
        Ok(match self.object(parents, false)? {
            Some(object) => member(&object, last).is_some(),
            None => false,
        })
    }

    /// Sets the member at `keys` to `value`, creating the objects above it as needed.
    pub fn set(&mut self, keys: &[&str], value: &Value) -> Result<(), SettingsError> {
        let Some((last, parents)) = keys.split_last() else {
            return Err(self.shape(keys, OBJECT));
        };
        let object = self
            .object(parents, true)?
            .ok_or_else(|| self.shape(parents, OBJECT))?;
        match member(&object, last) {
            Some(prop) => prop.set_value(input(value)),
            None => {
                object.append(last, input(value));
            }
        }
        Ok(())
    }

    /// Removes the member at `keys` (every duplicate of it); whether there was one. An object
    /// above it is left in place, even when it is left empty.
    pub fn remove(&mut self, keys: &[&str]) -> Result<bool, SettingsError> {
        let Some((last, parents)) = keys.split_last() else {
            return Ok(false);
        };
        let Some(object) = self.object(parents, false)? else {
            return Ok(false);
        };
        let props: Vec<_> = object
            .properties()
            .into_iter()
            .filter(|p| prop_name(p).as_deref() == Some(last))
            .collect();
        let removed = !props.is_empty();
        for prop in props {
            prop.remove();
        }
        Ok(removed)
    }

    /// Appends each of `items` not already there to the string array at `keys` (created, with
    /// the objects above it, as needed); how many were added.
    pub fn add_strings(&mut self, keys: &[&str], items: &[String]) -> Result<usize, SettingsError> {
        let array = self
            .array(keys, true)?
            .ok_or_else(|| self.shape(keys, STRINGS))?;
        let mut present = strings(&array);
        let mut added = 0;
        for item in items {
            if !present.contains(item) {
                array.append(CstInputValue::String(item.clone()));
                present.push(item.clone());
                added += 1;
            }
        }
        Ok(added)
    }

    /// Removes `item` from the string array at `keys`; whether it was there. An array left
    /// empty is removed with its key.
    pub fn remove_string(&mut self, keys: &[&str], item: &str) -> Result<bool, SettingsError> {
        let Some(array) = self.array(keys, false)? else {
            return Ok(false);
        };
        let matching: Vec<CstNode> = array
            .elements()
            .into_iter()
            .filter(|e| string_of(e).as_deref() == Some(item))
            .collect();
        let removed = !matching.is_empty();
        for element in matching {
            element.remove();
        }
        if removed && array.elements().is_empty() {
            self.remove(keys)?;
        } else if removed {
            // `["a", "b"]` less "a" is `["b"]`, not `[ "b"]`.
            let children = array.children();
            if let [open, space, ..] = children.as_slice()
                && open.token_char() == Some('[')
                && let Some(space) = space.as_whitespace()
            {
                space.remove();
            }
        }
        Ok(removed)
    }

    /// The object at `keys`; with `create`, missing ones are added. `Err` when something on
    /// the way is not an object; `Ok(None)` when it is missing and `create` is false.
    fn object(&self, keys: &[&str], create: bool) -> Result<Option<CstObject>, SettingsError> {
        let mut object = match (self.root.object_value(), create) {
            (Some(object), _) => object,
            // The root is an object or absent (checked when parsed).
            (None, true) => self.root.object_value_or_set(),
            (None, false) => return Ok(None),
        };
        for (depth, key) in keys.iter().enumerate() {
            object = match member(&object, key) {
                Some(prop) => match prop.value() {
                    Some(CstNode::Container(CstContainerNode::Object(inner))) => inner,
                    _ => return Err(self.shape(&keys[..=depth], OBJECT)),
                },
                None if create => object
                    .append(key, CstInputValue::Object(Vec::new()))
                    .object_value_or_set(),
                None => return Ok(None),
            };
        }
        Ok(Some(object))
    }

    /// The array at `keys`, like [`Self::object`].
    fn array(&self, keys: &[&str], create: bool) -> Result<Option<CstArray>, SettingsError> {
        let Some((last, parents)) = keys.split_last() else {
            return Err(self.shape(keys, STRINGS));
        };
        let Some(object) = self.object(parents, create)? else {
            return Ok(None);
        };
        match member(&object, last) {
            Some(prop) => match prop.value() {
                Some(CstNode::Container(CstContainerNode::Array(array))) => Ok(Some(array)),
                _ => Err(self.shape(keys, STRINGS)),
            },
            None if create => Ok(Some(
                object
                    .append(last, CstInputValue::Array(Vec::new()))
                    .array_value_or_set(),
            )),
            None => Ok(None),
        }
    }

    fn shape(&self, keys: &[&str], expected: &'static str) -> SettingsError {
        SettingsError::Shape {
            path: self.file.clone(),
            key: keys.join("."),
            expected,
        }
    }
}

/// The member `name` of `object` that counts: the last one written.
fn member(object: &CstObject, name: &str) -> Option<CstObjectProp> {
    object
        .properties()
        .into_iter()
        .rev()
        .find(|p| prop_name(p).as_deref() == Some(name))
}

fn prop_name(prop: &CstObjectProp) -> Option<String> {
    prop.name()?.decoded_value().ok()
}

fn string_of(node: &CstNode) -> Option<String> {
    node.as_string_lit()?.decoded_value().ok()
}

fn strings(array: &CstArray) -> Vec<String> {
    array.elements().iter().filter_map(string_of).collect()
}

/// A JSON value as the tree inserts it.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(members) => {
            CstInputValue::Object(members.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
