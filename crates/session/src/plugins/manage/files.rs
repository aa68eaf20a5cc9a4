//! The files behind the plugin commands: a folder staged in the store and renamed into place,
//! owner-only copies of a plugin, removal, and the real `git` (no prompts, no hooks).

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use tine_config::private_fs;

use super::{PluginCommandError, Result, io_error};

/// A folder being filled in the store, removed unless kept.
pub(super) struct Staging {
    pub(super) path: PathBuf,
    kept: bool,
}

impl Staging {
    pub(super) fn new(parent: &Path) -> Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let path = parent.join(format!(".staging-{}-{nanos}", std::process::id()));
        private_fs::create_dir_all(&path).map_err(io_error(&path))?;
        Ok(Self { path, kept: false })
    }

    pub(super) fn keep_as(mut self, target: &Path) -> Result<()> {
        if let Some(parent) = target.parent() {
            private_fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        std::fs::rename(&self.path, target).map_err(io_error(target))?;
        self.kept = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Removes a folder when dropped.
pub(super) struct Cleanup(pub(super) PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(super) fn remove_tree(path: &Path) -> Result<()> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(io_error(path)(error)),
    }
}

/// The empty folders between `path` and `stop` (`cache/MARKET/PLUGIN`).
pub(super) fn remove_empty_parents(path: &Path, stop: &Path) {
    let mut dir = path.parent();
    while let Some(current) = dir {
        if current == stop || !current.starts_with(stop) || std::fs::remove_dir(current).is_err() {
            return;
        }
        dir = current.parent();
    }
}

/// Copies a plugin's folder into tine's store, owner-only: folders 0700, files 0600 (0700 when
/// executable, so its scripts still run); `.git` is left out; links are copied as links.
pub(super) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    private_fs::create_dir_all(to).map_err(io_error(to))?;
    let entries = std::fs::read_dir(from).map_err(io_error(from))?;
    for entry in entries {
        let entry = entry.map_err(io_error(from))?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(io_error(&source))?;
        if kind.is_symlink() {
            let link = std::fs::read_link(&source).map_err(io_error(&source))?;
            std::os::unix::fs::symlink(link, &target).map_err(io_error(&target))?;
        } else if kind.is_dir() {
            if entry.file_name() != ".git" {
                copy_tree(&source, &target)?;
            }
        } else if kind.is_file() {
            let mode = entry
                .metadata()
                .map_err(io_error(&source))?
                .permissions()
                .mode();
            std::fs::copy(&source, &target).map_err(io_error(&target))?;
            let own = if mode & 0o111 != 0 { 0o700 } else { 0o600 };
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(own))
                .map_err(io_error(&target))?;
        }
    }
    Ok(())
}

/// `git clone --depth 1 [--branch REF] URL DIR`, with no prompt for credentials, no hooks
/// and no submodules.
pub(super) fn git_clone(url: &str, git_ref: Option<&str>, dir: &Path) -> Result<()> {
    let mut args = vec!["clone", "--quiet", "--depth", "1"];
    if let Some(git_ref) = git_ref {
        args.extend(["--branch", git_ref]);
    }
    args.push("--");
    args.push(url);
    let dir_text = dir.display().to_string();
    args.push(&dir_text);
    if dir.exists() {
        let _ = std::fs::remove_dir(dir);
    }
    git(Path::new("."), &args).map(drop)
}

/// Runs the real `git` in `cwd`; its stdout.
pub(super) fn git(cwd: &Path, args: &[&str]) -> Result<String> {
    let output = Command::new("git")
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "advice.detachedHead=false",
        ])
        .args(args)
        .current_dir(cwd)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| PluginCommandError::Git {
            action: args.first().copied().unwrap_or_default().to_owned(),
            message: format!("cannot run git: {e}"),
        })?;
    if !output.status.success() {
        return Err(PluginCommandError::Git {
            action: args
                .iter()
                .find(|a| !a.starts_with('-'))
                .copied()
                .unwrap_or_default()
                .to_owned(),
            message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
