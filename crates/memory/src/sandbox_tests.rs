use std::sync::Arc;

use serde_json::json;
use tine_permissions::PermissionTarget;
use tine_permissions::{PermissionMode, PermissionRule, RuleBehavior, RuleSource};
use tine_tools::ToolFuture;

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
    std::os::unix::fs::symlink(&outside, root.join("project/out")).unwrap();
    let ctx = ToolContext::new(root.join("project"));
    Fixture {
        _tmp: tmp,
        root,
        sandbox,
        ctx,
    }
}

/// The real tool named `name` (a stub for names that are not built in).
fn tool(name: &str) -> Arc<dyn Tool> {
    tine_tools::builtin_tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| Arc::new(Stub(name.to_owned())))
}

struct Stub(String);

impl Tool for Stub {
    fn name(&self) -> &str {
        &self.0
    }
    fn description(&self) -> String {
        String::new()
    }
    fn input_schema(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    fn call<'a>(&'a self, _input: serde_json::Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async { Ok(tine_tools::ToolOutput::text("")) })
    }
    fn permission_target(
        &self,
        _input: &serde_json::Value,
        _ctx: &ToolContext,
    ) -> PermissionTarget {
        PermissionTarget::Other { content: None }
    }
    fn is_read_only(&self, _input: &serde_json::Value) -> bool {
        true
    }
}

fn decide(f: &Fixture, name: &str, input: serde_json::Value) -> PermissionOutcome {
    f.sandbox.decide(tool(name).as_ref(), &input, &f.ctx)
}

fn allowed(f: &Fixture, name: &str, input: serde_json::Value) -> bool {
    matches!(decide(f, name, input), PermissionOutcome::Allow { .. })
}

fn refusal(f: &Fixture, name: &str, input: serde_json::Value) -> String {
    match decide(f, name, input.clone()) {
        PermissionOutcome::Deny { reason } => reason,
        other => panic!("{name} {input} was not refused: {other:?}"),
    }
}

fn write_allowed(f: &Fixture, path: &str) -> bool {
    allowed(f, "Write", json!({"file_path": path, "content": "x"}))
}

#[test]
fn reads_inside_the_project_and_the_memory_directory_are_allowed() {
    let f = fixture();
    let mem = f.sandbox.dir().display().to_string();
    let project = f.root.join("project").display().to_string();
    std::fs::write(f.sandbox.dir().join("MEMORY.md"), "- [a](a.md)\n").unwrap();
    assert!(allowed(
        &f,
        "Read",
        json!({"file_path": format!("{mem}/MEMORY.md")})
    ));
    assert!(allowed(
        &f,
        "Read",
        json!({"file_path": format!("{project}/src.rs")})
    ));
    assert!(allowed(&f, "Read", json!({"file_path": "src.rs"})));
    assert!(allowed(&f, "Grep", json!({"pattern": "x"})));
    assert!(allowed(&f, "Grep", json!({"pattern": "x", "path": mem})));
    assert!(allowed(&f, "Glob", json!({"pattern": "*"})));
    assert!(allowed(&f, "Glob", json!({"pattern": "*.md", "path": mem})));
    assert!(allowed(&f, "Bash", json!({"command": "ls -la"})));
    assert!(allowed(
        &f,
        "Bash",
        json!({"command": "cat src.rs | head -5"})
    ));
    assert!(allowed(
        &f,
        "Bash",
        json!({"command": format!("cat {mem}/MEMORY.md")})
    ));
    assert!(allowed(&f, "Bash", json!({"command": format!("ls {mem}")})));
}

#[test]
fn reads_outside_are_refused_with_a_reason_whatever_the_tool() {
    let f = fixture();
    let root = f.root.display().to_string();
    let mem = f.sandbox.dir().display().to_string();
    let cases = [
        ("Read", json!({"file_path": "/etc/passwd"})),
        (
            "Read",
            json!({"file_path": format!("{root}/outside/secret.md")}),
        ),
        ("Read", json!({"file_path": "../outside/secret.md"})),
        // links: in the project and in the memory directory, both leading out
        ("Read", json!({"file_path": "out/secret.md"})),
        (
            "Read",
            json!({"file_path": format!("{mem}/link_out/secret.md")}),
        ),
        ("Read", json!({"file_path": format!("{mem}/file_link.md")})),
        // the rest of tine's home: transcripts beside the memory directory
        (
            "Read",
            json!({"file_path": format!("{mem}/../session.jsonl")}),
        ),
        ("Grep", json!({"pattern": "x", "path": "/etc"})),
        ("Grep", json!({"pattern": "x", "path": "out"})),
        (
            "Glob",
            json!({"pattern": "*", "path": format!("{root}/outside")}),
        ),
        ("Glob", json!({"pattern": "/etc/*"})),
        ("Glob", json!({"pattern": "out/*"})),
        ("Bash", json!({"command": "cat /etc/passwd"})),
        ("Bash", json!({"command": "cat ~/.ssh/id_rsa"})),
        ("Bash", json!({"command": "cat ../outside/secret.md"})),
        ("Bash", json!({"command": "cat out/secret.md"})),
        ("Bash", json!({"command": "ls && cat ../outside/secret.md"})),
        ("Bash", json!({"command": "cd .. && cat outside/secret.md"})),
        ("Bash", json!({"command": "grep -r secret /"})),
        ("Bash", json!({"command": "cat < /etc/passwd"})),
        ("Bash", json!({"command": "cat $HOME/.ssh/id_rsa"})),
        (
            "Bash",
            json!({"command": format!("head {mem}/link_out/secret.md")}),
        ),
    ];
    for (name, input) in cases {
        let reason = refusal(&f, name, input.clone());
        assert!(
            reason.contains("may read only inside") && reason.contains(&mem),
            "{name} {input}: {reason}"
        );
    }
}

#[test]
fn bash_only_when_read_only_and_other_tools_never() {
    let f = fixture();
    for cmd in [
        "rm -rf /",
        "echo x > /tmp/f",
        "ls && touch x",
        "curl http://example.com",
        // commands that print the environment (tine's credentials, tokens)
        "env",
        "printenv",
        "printenv ANTHROPIC_API_KEY",
        "",
    ] {
        assert!(!allowed(&f, "Bash", json!({"command": cmd})), "{cmd}");
    }
    // A background shell would outlive the fork.
    assert!(!allowed(
        &f,
        "Bash",
        json!({"command": "ls", "run_in_background": true})
    ));
    for name in ["WebFetch", "TodoWrite", "KillShell", "Agent", "mcp__x__y"] {
        let reason = refusal(&f, name, json!({}));
        assert!(reason.contains(name), "{reason}");
    }
}

#[test]
fn the_sessions_deny_and_ask_rules_apply_and_its_allow_rules_do_not() {
    let f = fixture();
    let project = f.root.join("project");
    std::fs::write(project.join(".env"), "TOKEN=x").unwrap();
    std::fs::write(project.join("notes.md"), "n").unwrap();
    let mut session = PermissionContext::new(PermissionMode::BypassPermissions, &project);
    let rule = |s: &str| s.parse::<PermissionRule>().unwrap();
    session.add_session_rule(
        rule("Read(./.env)"),
        RuleBehavior::Deny,
        RuleSource::Session,
    );
    session.add_session_rule(
        rule("Read(./notes.md)"),
        RuleBehavior::Ask,
        RuleSource::Session,
    );
    session.add_session_rule(
        rule(&format!("Read(/{}/outside/**)", f.root.display())),
        RuleBehavior::Allow,
        RuleSource::Session,
    );
    session.add_session_rule(rule("Bash"), RuleBehavior::Allow, RuleSource::Session);
    let sandbox = MemorySandbox::new(f.sandbox.dir())
        .unwrap()
        .for_project(&session);
    let ctx = ToolContext::new(&project);
    let refused = |name: &str, input: serde_json::Value| {
        matches!(
            sandbox.decide(tool(name).as_ref(), &input, &ctx),
            PermissionOutcome::Deny { .. }
        )
    };
    assert!(refused("Read", json!({"file_path": ".env"})));
    assert!(refused("Bash", json!({"command": "cat .env"})));
    assert!(refused("Read", json!({"file_path": "notes.md"})));
    // Neither the session's bypass mode nor its allow rules reach the fork.
    let secret = format!("{}/outside/secret.md", f.root.display());
    assert!(refused("Read", json!({"file_path": secret})));
    assert!(refused("Bash", json!({"command": format!("cat {secret}")})));
    assert!(refused("Bash", json!({"command": "touch x"})));
    assert!(!refused("Read", json!({"file_path": "src.rs"})));
    // The project is the session's, wherever the fork's shell has moved.
    let moved = ToolContext::new(f.root.join("outside"));
    assert!(matches!(
        sandbox.decide(
            tool("Bash").as_ref(),
            &json!({"command": "cat secret.md"}),
            &moved
        ),
        PermissionOutcome::Deny { .. }
    ));
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
        match decide(&f, "Write", input) {
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
    let write = tool("Write");
    let ok = |p: &Path| {
        matches!(
            sandbox.decide(
                write.as_ref(),
                &json!({"file_path": p, "content": "x"}),
                &ctx
            ),
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
