//! `tine memory path|list|show NAME|dream`, as functions returning the text to print (the CLI
//! only parses arguments, builds the model client for `dream`, and prints).

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use tine_fork_runtime::{CacheSafeParams, JobContext, ParentContext};
use tine_permissions::PermissionContext;
use tine_query_loop::RequestTemplate;
use tokio_util::sync::CancellationToken;

use crate::dream::{DreamError, DreamJob};
use crate::dream_gate::DreamOptions;
use crate::dream_run::DreamRun;
use crate::dream_task::{DreamPhase, DreamTaskState};
use crate::error::MemoryError;
use crate::memdir::{DirSource, INDEX_FILE, MemoryDir, MemoryResolution};
use crate::topic::scan_memories;

/// `tine memory path`: the memory directory and where that choice came from
/// (`TINE_MEMORY_DIR`, the `autoMemoryDirectory` setting of a source, this project's default);
/// `Err` with why when auto memory is off.
pub fn memory_path(resolution: &MemoryResolution) -> Result<(std::path::PathBuf, String), String> {
    match resolution {
        MemoryResolution::Enabled(dir) => {
            let from = match dir.source() {
                DirSource::Env => "TINE_MEMORY_DIR".to_owned(),
                DirSource::Setting(source) => format!("autoMemoryDirectory in {source}"),
                DirSource::Default => "default for this project".to_owned(),
            };
            Ok((dir.path().to_path_buf(), from))
        }
        MemoryResolution::Disabled(why) => Err(format!("auto memory is off: {why}")),
    }
}

/// `tine memory list`: one line per memory, newest first (`file  [type]  name — description`),
/// then the files that could not be read as memories.
pub fn list(dir: &MemoryDir) -> String {
    let scan = scan_memories(dir.path(), usize::MAX);
    let mut out = String::new();
    if scan.memories.is_empty() {
        let _ = writeln!(out, "no memories in {}", dir.path().display());
    }
    for m in &scan.memories {
        let kind = m.frontmatter.kind.map_or("?", |k| k.as_str());
        let _ = write!(out, "{}\t[{kind}]\t{}", m.file_name, m.title());
        if let Some(d) = &m.frontmatter.description {
            let _ = write!(out, " — {d}");
        }
        out.push('\n');
        for w in &m.warnings {
            let _ = writeln!(out, "\twarning: {w}");
        }
    }
    for issue in &scan.issues {
        let _ = writeln!(out, "skipped {issue}");
    }
    out
}

/// `tine memory show NAME`: a memory's file (`project_stack`, `project_stack.md`, or
/// `MEMORY.md` / `index` for the index). Names cannot leave the directory.
pub fn show(dir: &MemoryDir, name: &str) -> Result<String, MemoryError> {
    let name = name.trim();
    let file = if name.eq_ignore_ascii_case("index") || name == INDEX_FILE {
        INDEX_FILE.to_owned()
    } else if name.ends_with(".md") {
        name.to_owned()
    } else {
        format!("{name}.md")
    };
    // Subdirectories are fine; `..`, absolute paths, hidden names and odd characters are not.
    let valid = !file.starts_with('/')
        && file.split('/').all(|part| {
            !part.is_empty()
                && !part.starts_with('.')
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        });
    if !valid {
        return Err(MemoryError::InvalidName(name.to_owned()));
    }
    let path = dir.path().join(&file);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(MemoryError::NotFound(name.to_owned()))
        }
        Err(e) => Err(MemoryError::io("cannot read", path, e)),
    }
}

/// What `tine memory dream` needs from the host: the memory directory, and a minimal parent
/// to fork from: the session's real system prompt and tool array (`template`), no messages.
pub struct DreamCommand {
    /// The memory directory to consolidate.
    pub dir: MemoryDir,
    /// The parent the dream forks from.
    pub parent: Arc<ParentContext>,
    /// The session's system prompt and tool array, so the fork shares their cache.
    pub template: RequestTemplate,
    /// The dream's settings (turn limit; the gates are skipped for the command).
    pub options: DreamOptions,
    /// The permissions a session here would have: the fork reads only inside their
    /// directories (and the memory directory and transcripts), under their deny/ask rules.
    /// `None`: the parent's working directory, no rules.
    pub permissions: Option<PermissionContext>,
    /// Cancelled on Ctrl-C: the dream is killed and its lock rolled back.
    pub cancel: CancellationToken,
}

/// The note `tine memory dream` starts with: why its first request reads nothing from the cache.
pub(crate) const STANDALONE_DREAM_NOTE: &str = "no session's prompt cache to share here, so this dream     forks a minimal parent (the system prompt and tools, no conversation): its first request     writes the cache, the following ones read it";

/// `tine memory dream`: one dream now, ignoring the time and session gates but taking the lock
/// (an error says so when another session holds it). `progress` gets a line per step (the
/// sessions under review, each memory file as it is updated). Returns the closing text.
pub async fn dream(
    command: DreamCommand,
    progress: impl Fn(&str) + Send + Sync + 'static,
) -> Result<(String, DreamRun), DreamError> {
    let DreamCommand {
        dir,
        parent,
        template,
        options,
        permissions,
        cancel,
    } = command;
    let progress = Arc::new(progress);
    progress(&format!("dream: {STANDALONE_DREAM_NOTE}"));
    let job = match &permissions {
        Some(permissions) => DreamJob::for_project(dir, options, permissions)?,
        None => DreamJob::new(dir, options)?,
    };
    let shown = Arc::new(Mutex::new((false, 0usize)));
    let lines = Arc::clone(&progress);
    job.on_progress(Arc::new(move |state: &DreamTaskState| {
        let mut shown = shown.lock().unwrap_or_else(PoisonError::into_inner);
        if !shown.0 {
            shown.0 = true;
            lines(&format!(
                "dream: reviewing {} session(s) since the last consolidation",
                state.sessions_reviewing
            ));
        }
        if state.phase == DreamPhase::Updating {
            for file in &state.files_touched[shown.1..] {
                lines(&format!("dream: updating {file}"));
            }
            shown.1 = state.files_touched.len();
        }
    }));
    let ctx = JobContext {
        cache_safe: Arc::new(CacheSafeParams {
            template,
            messages: Arc::from(Vec::new()),
        }),
        parent,
        cancel,
    };
    let run = job.dream_now(ctx).await?;
    let mut text = format!("dream: {}", run.summary());
    let _ = write!(text, " ({} request(s), ${:.4}", run.requests, run.cost_usd);
    if let Some(share) = run.first_request_cache_share() {
        let _ = write!(text, "; first request {:.0}% from the cache", share * 100.0);
    }
    text.push_str(")\n");
    Ok((text, run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topic::{MemoryType, NewMemory, save_memory};

    #[test]
    fn path_list_and_show() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = MemoryDir::new(tmp.path().join("memory"), DirSource::Default);
        let (path, from) = memory_path(&MemoryResolution::Enabled(dir.clone())).unwrap();
        assert_eq!(path, tmp.path().join("memory"));
        assert!(from.contains("default"), "{from}");
        assert_eq!(
            memory_path(&MemoryResolution::Disabled(
                "TINE_DISABLE_AUTO_MEMORY is set".into()
            )),
            Err("auto memory is off: TINE_DISABLE_AUTO_MEMORY is set".to_owned())
        );
        assert!(list(&dir).starts_with("no memories"));
        save_memory(
            &dir,
            &NewMemory {
                file_name: "project_stack.md",
                name: "Project stack",
                description: "React 18, PostgreSQL",
                kind: MemoryType::Project,
                body: "body",
            },
        )
        .unwrap();
        std::fs::write(dir.path().join("junk.md"), "no frontmatter").unwrap();
        let listed = list(&dir);
        assert!(
            listed.contains("project_stack.md\t[project]\tProject stack — React 18, PostgreSQL")
        );
        assert!(listed.contains("skipped") && listed.contains("junk.md"));
        assert!(
            show(&dir, "project_stack")
                .unwrap()
                .contains("type: project")
        );
        assert!(show(&dir, "project_stack.md").unwrap().contains("body"));
        assert!(
            show(&dir, "index")
                .unwrap()
                .contains("[Project stack](project_stack.md)")
        );
        assert!(matches!(show(&dir, "nope"), Err(MemoryError::NotFound(_))));
        for bad in ["../secret", "/etc/passwd", ".hidden", "a/../../b", "x／y"] {
            assert!(
                matches!(show(&dir, bad), Err(MemoryError::InvalidName(_))),
                "{bad}"
            );
        }
    }
}
