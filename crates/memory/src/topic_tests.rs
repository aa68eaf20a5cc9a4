use std::time::Duration;

use super::*;
use crate::memdir::DirSource;

#[test]
fn frontmatter_is_parsed_tolerantly() {
    let (fm, warnings) = parse_frontmatter(
        "---\nname: Project stack\ndescription: \"React 18, PostgreSQL\"\ntype: Project\nextra: x\n---\nbody\n",
    )
    .unwrap();
    assert_eq!(fm.name.as_deref(), Some("Project stack"));
    assert_eq!(fm.description.as_deref(), Some("React 18, PostgreSQL"));
    assert_eq!(fm.kind, Some(MemoryType::Project));
    assert!(warnings.is_empty());

    let (fm, warnings) = parse_frontmatter("---\nname: x\ntype: opinion\n---\n").unwrap();
    assert_eq!(fm.kind, None);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("unknown type `opinion`"))
    );

    for bad in [
        "",
        "no frontmatter",
        "---\nname: x\n",
        "\n---\nname: x\n---\n",
    ] {
        assert!(parse_frontmatter(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn scan_is_newest_first_skips_and_reports_malformed_files() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let write = |name: &str, text: &[u8], age_s: u64| {
        let p = d.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        let t = std::time::SystemTime::now() - Duration::from_secs(age_s);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    };
    write(
        "old.md",
        b"---\nname: Old\ndescription: d\ntype: user\n---\n",
        100,
    );
    write(
        "new.md",
        b"---\nname: New\ndescription: d\ntype: feedback\n---\n",
        1,
    );
    write(
        "sub/mid.md",
        b"---\nname: Mid\ndescription: d\ntype: reference\n---\n",
        50,
    );
    write("broken.md", b"just text", 10);
    write("binary.md", b"---\nname: \xff\xfe\n---\n", 10);
    write("MEMORY.md", b"- [New](new.md) - x", 0);
    write(".hidden.md", b"---\nname: H\n---\n", 0);
    write("notes.txt", b"---\nname: T\n---\n", 0);
    let scan = scan_memories(d, 200);
    let names: Vec<_> = scan.memories.iter().map(|m| m.file_name.as_str()).collect();
    assert_eq!(names, ["new.md", "sub/mid.md", "old.md"]);
    assert_eq!(scan.issues.len(), 2);
    assert!(scan.manifest().contains("- new.md [feedback] New: d"));
    assert_eq!(
        scan_memories(d, 2).memories.len() + scan_memories(d, 2).issues.len(),
        2
    );
    assert!(scan_memories(&d.join("missing"), 10).memories.is_empty());
}

#[test]
fn save_memory_writes_topic_and_one_index_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = MemoryDir::new(tmp.path().join("memory"), DirSource::Default);
    let m = NewMemory {
        file_name: "project_stack.md",
        name: "Project stack",
        description: "React 18 frontend, PostgreSQL database",
        kind: MemoryType::Project,
        body: "The project uses React 18 and PostgreSQL.",
    };
    save_memory(&dir, &m).unwrap();
    save_memory(
        &dir,
        &NewMemory {
            description: "React 18 + PostgreSQL 16",
            ..m.clone()
        },
    )
    .unwrap();
    let index = std::fs::read_to_string(dir.index_path()).unwrap();
    assert_eq!(
        index,
        "- [Project stack](project_stack.md) — React 18 + PostgreSQL 16\n"
    );
    let scan = scan_memories(dir.path(), 10);
    assert_eq!(scan.memories[0].frontmatter.kind, Some(MemoryType::Project));
    let long = index_line(&"T".repeat(100), "file.md", &"h".repeat(100));
    assert_eq!(long.chars().count(), MAX_INDEX_LINE_CHARS);
    assert!(check_file_name("a/b.md").is_err());
    assert!(check_file_name("ok_name-1.md").is_ok());
}
