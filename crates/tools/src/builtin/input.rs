//! A call's raw input read outside `call` (its permission target, its one-line rendering), where
//! a field may be missing or of another type: these helpers never fail.

use std::path::PathBuf;

use serde_json::Value;
use tine_permissions::PermissionTarget;

use crate::context::ToolContext;

/// The field the file tools (Read, Write, Edit) name their file by.
pub(crate) const FILE_PATH: &str = "file_path";

/// The string field `key` of `input`, if it is one.
pub(crate) fn str_arg<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

/// `Name(value)`: a call rendered by its string field `key` (`?` when it has none).
pub(crate) fn render_by(name: &str, input: &Value, key: &str) -> String {
    format!("{name}({})", str_arg(input, key).unwrap_or("?"))
}

/// The path in field `key` of `input`, made absolute against the context's cwd.
pub(crate) fn input_path(input: &Value, key: &str, ctx: &ToolContext) -> PathBuf {
    ctx.resolve_path(str_arg(input, key).unwrap_or_default())
}

/// What a call that writes the file named by field `key` touches.
pub(crate) fn file_write_target(input: &Value, key: &str, ctx: &ToolContext) -> PermissionTarget {
    PermissionTarget::FileWrite {
        path: input_path(input, key, ctx),
    }
}
