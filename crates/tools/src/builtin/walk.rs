//! The directory walk behind Glob and Grep: ripgrep's `ignore` crate, honouring `.gitignore`,
//! `.ignore` and global git excludes (even outside a git repository), including hidden files
//! but never descending into version-control directories.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

use crate::tool::ToolError;

/// Directories never searched, whatever the ignore files say.
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".jj", ".bzr"];

/// A walk builder over `root` with the tools' standard settings.
pub fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| {
            !(entry.file_type().is_some_and(|kind| kind.is_dir())
                && entry
                    .file_name()
                    .to_str()
                    .is_some_and(|name| VCS_DIRS.contains(&name)))
        });
    builder
}

/// The directory or file a search starts from: the input's `path` (or the cwd), which must
/// exist.
pub fn search_root(path: Option<&str>, ctx: &crate::ToolContext) -> Result<PathBuf, ToolError> {
    let root = match path {
        Some(path) if !path.is_empty() => ctx.resolve_path(path),
        _ => ctx.cwd(),
    };
    if !root.exists() {
        return Err(ToolError::Failed(format!(
            "Path does not exist: {}; check it with Glob or give an absolute path",
            root.display()
        )));
    }
    Ok(root)
}

/// `path` as shown to the model: relative to the cwd when inside it, absolute otherwise.
pub fn display_path(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// What a search (Glob, Grep) reads: its `path`, or the cwd without one.
pub fn search_target(
    input: &serde_json::Value,
    ctx: &crate::context::ToolContext,
) -> tine_permissions::PermissionTarget {
    let path = input.get("path").and_then(serde_json::Value::as_str);
    tine_permissions::PermissionTarget::FileRead {
        path: path.map_or_else(|| ctx.cwd(), |path| ctx.resolve_path(path)),
    }
}
