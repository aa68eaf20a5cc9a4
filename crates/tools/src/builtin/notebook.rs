//! Jupyter notebooks: Read shows a notebook as its cells (id, type, source, outputs; image
//! outputs as image blocks), and NotebookEdit replaces, inserts or deletes one cell, with
//! Claude Code's schema (`notebook_path`, `cell_id`, `new_source`, `cell_type`, `edit_mode`).
//! NotebookEdit is a write like Edit: its target is the notebook's path (asked about outside
//! the project, refused in protected directories, by the permission engine), the notebook
//! must have been read first and unchanged since, and it is replaced atomically.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::files::{load, open_regular, updated_output, write_recorded};
use super::input::{file_write_target, render_by};
use crate::context::ToolContext;
use crate::tool::{MediaKind, Tool, ToolError, ToolFuture, ToolMedia, ToolOutput, parse_input};
use tine_permissions::PermissionTarget;

/// Whether `path` is a notebook (`.ipynb`).
pub(crate) fn is_notebook(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("ipynb"))
}

/// A cell's text: nbformat stores it as a string or a list of lines.
fn joined(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// A cell's id: its own, else `cell-N` (its index), as Claude Code names cells of notebooks
/// older than nbformat 4.5.
fn cell_id(cell: &Value, index: usize) -> String {
    cell.get("id")
        .and_then(Value::as_str)
        .map_or_else(|| format!("cell-{index}"), str::to_owned)
}

fn parse_notebook(path: &Path, bytes: &[u8]) -> Result<Value, ToolError> {
    let notebook: Value = serde_json::from_slice(bytes).map_err(|error| {
        ToolError::Failed(format!(
            "{} is not a valid notebook (its JSON does not parse: {error})",
            path.display()
        ))
    })?;
    if !notebook.get("cells").is_some_and(Value::is_array) {
        return Err(ToolError::Failed(format!(
            "{} is not a valid notebook (it has no `cells` list)",
            path.display()
        )));
    }
    Ok(notebook)
}

/// Read of a notebook: every cell with its outputs; and the bytes read with their mtime, for
/// the file-state cache (NotebookEdit checks the model saw them).
pub(crate) fn read_notebook(
    path: &Path,
) -> Result<(ToolOutput, Vec<u8>, Option<std::time::SystemTime>), ToolError> {
    use std::io::Read;
    let Some((mut file, metadata)) = open_regular(path)? else {
        return Err(ToolError::NotFound(path.to_path_buf()));
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|error| ToolError::io("cannot read", path, error))?;
    let notebook = parse_notebook(path, &bytes)?;
    let cells = notebook["cells"].as_array().map_or(&[][..], Vec::as_slice);
    let mut text = String::new();
    let mut media = Vec::new();
    for (index, cell) in cells.iter().enumerate() {
        let id = cell_id(cell, index);
        let kind = cell
            .get("cell_type")
            .and_then(Value::as_str)
            .unwrap_or("code");
        text.push_str(&format!("<cell id=\"{id}\"><cell_type>{kind}</cell_type>"));
        text.push_str(&joined(cell.get("source")));
        text.push_str(&format!("</cell id=\"{id}\">\n"));
        for output in cell
            .get("outputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(out) = output_text(output) {
                text.push_str(&format!("<output cell=\"{id}\">{out}</output>\n"));
            }
            if let Some(data) = output
                .get("data")
                .and_then(|d| d.get("image/png"))
                .map(|png| joined(Some(png)))
            {
                media.push(ToolMedia {
                    kind: MediaKind::Image,
                    media_type: "image/png".to_owned(),
                    data: data.split_whitespace().collect(),
                });
            }
        }
    }
    let count = cells.len();
    let mut out = ToolOutput::text(text).with_summary(format!("Read {count} cells"));
    for image in media {
        out = out.with_media(image);
    }
    Ok((out, bytes, metadata.modified().ok()))
}

/// An output as text: a stream, a result's `text/plain`, an error's name and value.
fn output_text(output: &Value) -> Option<String> {
    match output.get("output_type").and_then(Value::as_str)? {
        "stream" => Some(joined(output.get("text"))),
        "execute_result" | "display_data" => output
            .get("data")
            .and_then(|d| d.get("text/plain"))
            .map(|t| joined(Some(t))),
        "error" => Some(format!(
            "{}: {}",
            output
                .get("ename")
                .and_then(Value::as_str)
                .unwrap_or("Error"),
            output.get("evalue").and_then(Value::as_str).unwrap_or("")
        )),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
enum EditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

#[derive(Deserialize)]
struct NotebookEditInput {
    notebook_path: String,
    cell_id: Option<String>,
    new_source: String,
    cell_type: Option<String>,
    #[serde(default)]
    edit_mode: EditMode,
}

/// The NotebookEdit tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotebookEditTool;

const DESCRIPTION: &str = "\
Edits a Jupyter notebook (.ipynb) cell: replaces the source of the cell `cell_id` (as Read \
shows it), or with `edit_mode` insert adds a cell after it (at the start without one; \
`cell_type` required) or delete removes it. Read the notebook first.";

impl Tool for NotebookEditTool {
    fn name(&self) -> &str {
        "NotebookEdit"
    }

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "notebook_path": {
                    "type": "string",
                    "description": "Absolute path of the notebook"
                },
                "cell_id": {
                    "type": "string",
                    "description": "The cell to edit, or to insert after (none: at the start)"
                },
                "new_source": {
                    "type": "string",
                    "description": "The cell's new source"
                },
                "cell_type": {
                    "type": "string",
                    "enum": ["code", "markdown"],
                    "description": "Default: the cell's current type; required to insert"
                },
                "edit_mode": {
                    "type": "string",
                    "enum": ["replace", "insert", "delete"],
                    "description": "Default: replace"
                }
            },
            "required": ["notebook_path", "new_source"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: NotebookEditInput = parse_input(input)?;
            let path = ctx.resolve_path(&input.notebook_path);
            if !is_notebook(&path) {
                return Err(ToolError::InvalidInput(format!(
                    "{} is not a notebook (.ipynb); use Edit for other files",
                    path.display()
                )));
            }
            let Some(file) = load(&path).await? else {
                return Err(ToolError::NotFound(path));
            };
            ctx.file_state()
                .check_fresh(&path, &file.bytes, file.mtime)?;
            let mut notebook = parse_notebook(&path, &file.bytes)?;
            let before = String::from_utf8_lossy(&file.bytes).into_owned();
            let done = edit_cells(&mut notebook, &input, &path)?;
            let mut after = serde_json::to_string_pretty(&notebook)
                .map_err(|error| ToolError::Failed(format!("serializing the notebook: {error}")))?;
            after.push('\n');
            let permissions = Some(file.permissions.clone());
            write_recorded(ctx, &path, &file.real_path, &after, permissions).await?;
            let mut output = updated_output(&path, &before, &after);
            output.content = done;
            Ok(output)
        })
    }

    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        file_write_target(input, "notebook_path", ctx)
    }

    fn render_call(&self, input: &Value) -> String {
        render_by("NotebookEdit", input, "notebook_path")
    }
}

/// Applies the edit to the notebook's cells; returns what the model reads.
fn edit_cells(
    notebook: &mut Value,
    input: &NotebookEditInput,
    path: &Path,
) -> Result<String, ToolError> {
    let with_ids = notebook
        .get("nbformat")
        .and_then(Value::as_u64)
        .zip(notebook.get("nbformat_minor").and_then(Value::as_u64))
        .is_some_and(|(major, minor)| major > 4 || (major == 4 && minor >= 5));
    let Some(cells) = notebook.get_mut("cells").and_then(Value::as_array_mut) else {
        return Err(ToolError::Failed(format!(
            "{} has no cells",
            path.display()
        )));
    };
    let find = |cells: &[Value], id: &str| {
        cells
            .iter()
            .enumerate()
            .position(|(i, c)| cell_id(c, i) == id)
            .ok_or_else(|| {
                ToolError::Failed(format!(
                    "{} has no cell with id `{id}`; Read the notebook to see the cell ids",
                    path.display()
                ))
            })
    };
    match input.edit_mode {
        EditMode::Insert => {
            let Some(kind) = input.cell_type.as_deref() else {
                return Err(ToolError::InvalidInput(
                    "`cell_type` (code or markdown) is required with edit_mode=insert".to_owned(),
                ));
            };
            let at = match &input.cell_id {
                Some(id) => find(cells, id)? + 1,
                None => 0,
            };
            let id = new_cell_id(cells);
            let mut cell = Map::new();
            cell.insert("cell_type".into(), json!(kind));
            if with_ids {
                cell.insert("id".into(), json!(id));
            }
            cell.insert("metadata".into(), json!({}));
            cell.insert("source".into(), json!(input.new_source));
            if kind == "code" {
                cell.insert("execution_count".into(), Value::Null);
                cell.insert("outputs".into(), json!([]));
            }
            cells.insert(at, Value::Object(cell));
            let shown = if with_ids { id } else { format!("cell-{at}") };
            Ok(format!("Inserted cell {shown} with {}", input.new_source))
        }
        EditMode::Delete => {
            let id = input.cell_id.as_deref().ok_or_else(|| {
                ToolError::InvalidInput("`cell_id` is required with edit_mode=delete".to_owned())
            })?;
            let at = find(cells, id)?;
            cells.remove(at);
            Ok(format!("Deleted cell {id}"))
        }
        EditMode::Replace => {
            let id = input.cell_id.as_deref().ok_or_else(|| {
                ToolError::InvalidInput(
                    "`cell_id` is required with edit_mode=replace; Read the notebook to see the \
                     cell ids"
                        .to_owned(),
                )
            })?;
            let at = find(cells, id)?;
            let cell = &mut cells[at];
            cell["source"] = json!(input.new_source);
            if let Some(kind) = &input.cell_type {
                cell["cell_type"] = json!(kind);
            }
            if cell["cell_type"] == "code" {
                // The old outputs were of the old source.
                cell["execution_count"] = Value::Null;
                cell["outputs"] = json!([]);
            } else if let Some(map) = cell.as_object_mut() {
                map.shift_remove("outputs");
                map.shift_remove("execution_count");
            }
            Ok(format!("Updated cell {id} with {}", input.new_source))
        }
    }
}

/// A fresh id: 8 hex digits not used by another cell.
fn new_cell_id(cells: &[Value]) -> String {
    let taken: Vec<String> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| cell_id(c, i))
        .collect();
    (cells.len()..)
        .map(|n| format!("{:08x}", (n as u64).wrapping_mul(0x9e37_79b9) & 0xffff_ffff))
        .find(|id| !taken.contains(id))
        .unwrap_or_else(|| format!("cell{}", cells.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_without_ids_are_named_by_index() {
        assert_eq!(cell_id(&json!({"cell_type": "code"}), 3), "cell-3");
        assert_eq!(cell_id(&json!({"id": "abc"}), 3), "abc");
        assert_eq!(joined(Some(&json!(["a\n", "b"]))), "a\nb");
    }
}
