//! `tine memory path|list|show NAME`, as functions returning the text to print (the CLI only
//! parses arguments and prints).

use std::fmt::Write as _;

use crate::error::MemoryError;
use crate::memdir::{DirSource, INDEX_FILE, MemoryDir, MemoryResolution};
use crate::topic::scan_memories;

/// `tine memory path`: the directory, where that choice came from, or why memory is off.
pub fn memory_path(resolution: &MemoryResolution) -> String {
    match resolution {
        MemoryResolution::Enabled(dir) => {
            let from = match dir.source() {
                DirSource::Env => "TINE_MEMORY_DIR".to_owned(),
                DirSource::Setting(source) => format!("autoMemoryDirectory in {source}"),
                DirSource::Default => "default for this project".to_owned(),
            };
            format!("{}\t({from})\n", dir.path().display())
        }
        MemoryResolution::Disabled(why) => format!("auto memory is off: {why}\n"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topic::{MemoryType, NewMemory, save_memory};

    #[test]
    fn path_list_and_show() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = MemoryDir::new(tmp.path().join("memory"), DirSource::Default);
        assert!(memory_path(&MemoryResolution::Enabled(dir.clone())).contains("default"));
        assert_eq!(
            memory_path(&MemoryResolution::Disabled(
                "TINE_DISABLE_AUTO_MEMORY is set".into()
            )),
            "auto memory is off: TINE_DISABLE_AUTO_MEMORY is set\n"
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
