use serde_json::json;

use super::*;

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    sandbox: MemorySandbox,
    ctx: ToolContext,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let memory = root.join("home/projects/p/memory");
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(root.join("project")).unwrap();
    let sandbox = MemorySandbox::new(&memory).unwrap();
    std::os::unix::fs::symlink(&outside, memory.join("link_out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), memory.join("file_link.md")).unwrap();
    std::os::unix::fs::symlink(root.join("nowhere/x.md"), memory.join("dangling.md")).unwrap();
    std::fs::write(outside.join("secret.md"), "secret").unwrap();
    let ctx = ToolContext::new(root.join("project"));
    Fixture {
        _tmp: tmp,
        root,
        sandbox,
        ctx,
    }
}

fn allowed(f: &Fixture, tool: &str, input: serde_json::Value) -> bool {
    matches!(
        f.sandbox.decide(tool, &input, &f.ctx),
        PermissionOutcome::Allow { .. }
    )
}

fn write_allowed(f: &Fixture, path: &str) -> bool {
    allowed(f, "Write", json!({"file_path": path, "content": "x"}))
}

#[test]
fn reads_are_allowed_and_bash_only_when_read_only() {
    let f = fixture();
    assert!(allowed(&f, "Read", json!({"file_path": "/etc/passwd"})));
    assert!(allowed(&f, "Grep", json!({"pattern": "x"})));
    assert!(allowed(&f, "Glob", json!({"pattern": "*"})));
    assert!(allowed(&f, "Bash", json!({"command": "ls -la"})));
    assert!(allowed(
        &f,
        "Bash",
        json!({"command": "cat MEMORY.md | head -5"})
    ));
    for cmd in [
        "rm -rf /",
        "echo x > /tmp/f",
        "ls && touch x",
        "curl http://example.com",
        "",
    ] {
        assert!(!allowed(&f, "Bash", json!({"command": cmd})), "{cmd}");
    }
    for tool in ["WebFetch", "TodoWrite", "KillShell", "Agent", "mcp__x__y"] {
        let PermissionOutcome::Deny { reason } = f.sandbox.decide(tool, &json!({}), &f.ctx) else {
            panic!("{tool} allowed");
        };
        assert!(reason.contains(tool), "{reason}");
    }
}

#[test]
fn writes_inside_the_memory_directory_are_allowed() {
    let f = fixture();
    let mem = f.sandbox.dir().display().to_string();
    for p in [
        format!("{mem}/project_stack.md"),
        format!("{mem}/MEMORY.md"),
        format!("{mem}/sub/dir/topic.md"),
        format!("{mem}/./a/../b.md"),
        format!("{}/home/projects/p/memory/x.md", f.root.display()),
        // relative to the cwd
        "../home/projects/p/memory/rel.md".to_owned(),
    ] {
        assert!(write_allowed(&f, &p), "{p}");
        assert!(
            allowed(
                &f,
                "Edit",
                json!({"file_path": p, "old_string": "a", "new_string": "b"})
            ),
            "{p}"
        );
    }
}

#[test]
fn escape_attempts_are_denied_with_a_readable_reason() {
    let f = fixture();
    let mem = f.sandbox.dir().display().to_string();
    let root = f.root.display().to_string();
    let corpus = [
        format!("{mem}/../escape.md"),
        format!("{mem}/../../../../../../etc/passwd"),
        format!("{mem}/sub/../../escape.md"),
        "/etc/passwd".to_owned(),
        format!("{root}/outside/new.md"),
        "escape.md".to_owned(), // relative: lands in the cwd
        "../outside/x.md".to_owned(),
        // symlinks inside the directory pointing out
        format!("{mem}/link_out/new.md"),
        format!("{mem}/link_out/../../escape.md"),
        format!("{mem}/file_link.md"),
        format!("{mem}/dangling.md"),
        // the directory itself, hidden files, not markdown
        mem.clone(),
        format!("{mem}/"),
        format!("{mem}/.consolidate-lock"),
        format!("{mem}/.hidden.md"),
        format!("{mem}/script.sh"),
        // case: on a case-sensitive filesystem MEMORY is another directory
        format!("{}/home/projects/p/MEMORY/x.md", root),
        // unicode look-alikes of `/` and `.`
        format!("{mem}/..／..／..／etc／passwd.md"),
        format!("{mem}/..∕..∕escape.md"),
        format!("{mem}/․․/escape.md"),
        format!("{mem}/‥/escape.md"),
        format!("{mem}/．．/escape.md"),
        format!("{mem}/ﹸescape.md"),
        format!("{mem}/pro\u{200b}ject.md"),
        format!("{mem}/projéct.md"),
        // control characters, NUL, empty
        format!("{mem}/a\0.md"),
        format!("{mem}/a\n.md"),
        String::new(),
    ];
    for p in &corpus {
        let input = json!({"file_path": p, "content": "x"});
        match f.sandbox.decide("Write", &input, &f.ctx) {
            PermissionOutcome::Deny { reason } => {
                assert!(reason.contains("memory directory"), "{p:?}: {reason}");
            }
            other => panic!("{p:?} was not denied: {other:?}"),
        }
        let edit = json!({"file_path": p, "old_string": "a", "new_string": "b"});
        assert!(!allowed(&f, "Edit", edit), "{p:?}");
    }
    // a missing file_path is denied too
    assert!(!allowed(&f, "Write", json!({"content": "x"})));
}

#[test]
fn a_symlinked_memory_directory_is_resolved() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let real = root.join("real-memory");
    std::fs::create_dir_all(&real).unwrap();
    let link = root.join("memory-link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let sandbox = MemorySandbox::new(&link).unwrap();
    assert_eq!(sandbox.dir(), real);
    let ctx = ToolContext::new(&root);
    let ok = |p: &Path| {
        matches!(
            sandbox.decide("Write", &json!({"file_path": p, "content": "x"}), &ctx),
            PermissionOutcome::Allow { .. }
        )
    };
    assert!(ok(&link.join("a.md")));
    assert!(ok(&real.join("a.md")));
    assert!(!ok(&link.join("../a.md")));
    assert!(!ok(&root.join("a.md")));
}

/// Every path built from a small alphabet of tricky segments: whatever the sandbox allows, the
/// kernel (after creating the parent directories) places inside the memory directory.
#[test]
fn exhaustive_small_paths_never_escape() {
    let f = fixture();
    let mem = f.sandbox.dir().to_path_buf();
    let segments = [
        "..",
        ".",
        "",
        "link_out",
        "sub",
        "a.md",
        "MEMORY",
        "..／x.md",
        "file_link.md",
        "dangling.md",
    ];
    let prefixes = [
        format!("{}/", mem.display()),
        format!("{}/", f.root.display()),
        String::new(),
    ];
    let mut allowed_count = 0;
    let mut checked = 0;
    let mut paths = Vec::new();
    for a in segments {
        paths.push(vec![a]);
        for b in segments {
            paths.push(vec![a, b]);
            for c in segments {
                paths.push(vec![a, b, c]);
            }
        }
    }
    for prefix in &prefixes {
        for parts in &paths {
            let path = format!("{prefix}{}", parts.join("/"));
            checked += 1;
            let Ok(resolved) = f.sandbox.check_write_path(&path, &f.ctx.cwd()) else {
                continue;
            };
            allowed_count += 1;
            let lexical = f.ctx.resolve_path(&path);
            let parent = lexical.parent().unwrap();
            std::fs::create_dir_all(parent).unwrap();
            let real_parent = std::fs::canonicalize(parent).unwrap();
            assert!(
                real_parent.starts_with(&mem),
                "{path:?} allowed but its parent is {}",
                real_parent.display()
            );
            assert_eq!(resolved.parent().unwrap(), real_parent, "{path:?}");
        }
    }
    assert!(checked > 3000);
    assert!(allowed_count > 20, "{allowed_count}");
    // nothing was created outside: `outside` holds only the secret it was made with
    let names: Vec<_> = std::fs::read_dir(f.root.join("outside"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["secret.md"]);
}
