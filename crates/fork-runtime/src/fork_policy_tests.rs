use serde_json::json;
use tine_query_loop::AllowAll;

use super::*;

/// Refusals that say which step refused.
struct Steps;

impl Refusals for Steps {
    fn tool_not_allowed(&self, tool: &dyn Tool, _input: &Value) -> String {
        format!("tool {}", tool.name())
    }

    fn not_read_only(&self, tool: &dyn Tool, _input: &Value) -> String {
        format!("writes {}", tool.name())
    }

    fn write_refused(&self, tool: &dyn Tool, file_path: &str, why: &str) -> String {
        format!("path {} {file_path}: {why}", tool.name())
    }

    fn judged(&self, tool: &dyn Tool, message: &str, context: &PermissionContext) -> String {
        format!("judged {} in {:?}: {message}", tool.name(), context.mode)
    }
}

fn tool(name: &str) -> Arc<dyn Tool> {
    tine_tools::builtin_tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no built-in {name}"))
}

struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ctx: ToolContext,
}

fn project() -> Project {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    for dir in ["project", "own", "outside"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    std::fs::write(root.join("project/doc.md"), "# doc\n").unwrap();
    let ctx = ToolContext::new(root.join("project"));
    Project {
        _tmp: tmp,
        root,
        ctx,
    }
}

/// What `policy` says of `tool` with `input`: "allow", or the refusal.
fn verdict(policy: &ForkPolicy, p: &Project, name: &str, input: Value) -> String {
    match policy.decide(tool(name).as_ref(), &input, &p.ctx) {
        Some(PermissionOutcome::Allow { .. }) => "allow".to_owned(),
        Some(PermissionOutcome::Deny { reason } | PermissionOutcome::Ask { reason }) => reason,
        None => "checker".to_owned(),
    }
}

/// Writes inside `dir` only.
struct Under(PathBuf);

impl WritablePaths for Under {
    fn check(&self, file_path: &str, cwd: &Path) -> Result<PathBuf, String> {
        let resolved = resolve_write_path(file_path, cwd)?;
        if resolved.starts_with(&self.0) {
            Ok(resolved)
        } else {
            Err("outside".to_owned())
        }
    }
}

#[test]
fn tools_then_read_only_then_the_engine_where_an_ask_is_a_denial() {
    let p = project();
    let scope = ForkScope::project(&PermissionContext::new(
        PermissionMode::BypassPermissions,
        p.root.join("project"),
    ));
    let policy = ForkPolicy::judged_in(scope, Steps)
        .only_tools(&["Read", "Bash"])
        .read_only();
    assert_eq!(
        verdict(&policy, &p, "Read", json!({"file_path": "doc.md"})),
        "allow"
    );
    assert_eq!(
        verdict(&policy, &p, "Grep", json!({"pattern": "x"})),
        "tool Grep"
    );
    assert_eq!(
        verdict(&policy, &p, "Bash", json!({"command": "touch x"})),
        "writes Bash"
    );
    // Outside the project the engine would ask; the fork cannot, and the session's bypass
    // mode does not reach it.
    let outside = p.root.join("outside/secret.md").display().to_string();
    let refused = verdict(&policy, &p, "Read", json!({"file_path": outside}));
    assert!(refused.starts_with("judged Read in Default: "), "{refused}");
    // The project's rules: deny and ask hold, allow does not.
    let mut session = PermissionContext::new(PermissionMode::Default, p.root.join("project"));
    let rule = |r: &str| r.parse::<tine_permissions::PermissionRule>().unwrap();
    session.add_session_rule(
        rule("Read(./doc.md)"),
        RuleBehavior::Deny,
        tine_permissions::RuleSource::Session,
    );
    let policy = ForkPolicy::judged_in(ForkScope::project(&session), Steps);
    assert!(verdict(&policy, &p, "Read", json!({"file_path": "doc.md"})).starts_with("judged"));
}

#[test]
fn owned_writes_are_allowed_at_once_and_others_are_judged() {
    let p = project();
    let own = p.root.join("own");
    let owned = ForkPolicy::judged_in(ForkScope::working_directory(), Steps)
        .only_tools(&["Write", "Edit"])
        .owns_writes(Under(own.clone()));
    let inside = own.join("a.md").display().to_string();
    assert_eq!(
        verdict(
            &owned,
            &p,
            "Write",
            json!({"file_path": inside, "content": "x"})
        ),
        "allow"
    );
    assert_eq!(
        verdict(
            &owned,
            &p,
            "Write",
            json!({"file_path": "doc.md", "content": "x"})
        ),
        "path Write doc.md: outside"
    );
    assert_eq!(
        verdict(&owned, &p, "Write", json!({"content": "x"})),
        "path Write : the file_path is empty"
    );

    let doc = p.root.join("project/doc.md");
    let edit = json!({"file_path": "doc.md", "old_string": "doc", "new_string": "Doc"});
    let judged = |mode| {
        ForkPolicy::judged_in(ForkScope::working_directory().in_mode(mode), Steps)
            .only_tools(&["Edit"])
            .may_write(WritableFiles::new(std::slice::from_ref(&doc)))
    };
    assert_eq!(
        verdict(
            &judged(PermissionMode::AcceptEdits),
            &p,
            "Edit",
            edit.clone()
        ),
        "allow"
    );
    let asked = verdict(&judged(PermissionMode::Default), &p, "Edit", edit);
    assert!(asked.starts_with("judged Edit in Default: "), "{asked}");
    let other = json!({"file_path": "other.md", "old_string": "a", "new_string": "b"});
    assert!(
        verdict(&judged(PermissionMode::AcceptEdits), &p, "Edit", other)
            .starts_with("path Edit other.md: ")
    );
}

#[tokio::test]
async fn a_checker_judges_what_the_read_only_gate_lets_through() {
    let p = project();
    let policy = ForkPolicy::judged_by(Arc::new(AllowAll), Steps).read_only();
    assert_eq!(
        verdict(&policy, &p, "Read", json!({"file_path": "doc.md"})),
        "checker"
    );
    let read = tool("Read");
    let input = json!({"file_path": "doc.md"});
    assert!(matches!(
        policy.check(read.as_ref(), &input, &p.ctx).await,
        PermissionOutcome::Allow { .. }
    ));
    let write = tool("Write");
    let input = json!({"file_path": "doc.md", "content": "x"});
    assert!(matches!(
        policy.check(write.as_ref(), &input, &p.ctx).await,
        PermissionOutcome::Deny { reason } if reason == "writes Write"
    ));

    let none = ForkPolicy::no_tools(Steps);
    assert_eq!(
        verdict(&none, &p, "Read", json!({"file_path": "doc.md"})),
        "tool Read"
    );
}

#[test]
fn a_fork_ends_after_a_turn_of_successful_permitted_writes_only() {
    let p = project();
    let own = p.root.join("own");
    let policy = ForkPolicy::judged_in(ForkScope::working_directory(), Steps)
        .only_tools(&["Write", "Read"])
        .owns_writes(Under(own.clone()));
    let end = policy.end_after_writes(p.root.join("project"));
    let call = |name: &str, path: &Path| ToolUseBlock {
        id: "t1".to_owned(),
        name: name.to_owned(),
        input: json!({"file_path": path.display().to_string(), "content": "x"}),
        cache_control: None,
    };
    let ok = Message::user(vec![ContentBlock::tool_result("t1", "done", false)]);
    let failed = Message::user(vec![ContentBlock::tool_result("t1", "no", true)]);
    assert!(end(&[call("Write", &own.join("a.md"))], &ok));
    assert!(!end(&[call("Write", &own.join("a.md"))], &failed));
    assert!(!end(&[call("Write", &p.root.join("outside/a.md"))], &ok));
    assert!(!end(&[call("Read", &own.join("a.md"))], &ok));
    assert!(!end(&[], &ok));
}
