//! Nothing leaves the project unasked: the real built-in tools (their own `permission_target`
//! and `check_permissions`) through the real permission engine, on a real tree with links out
//! of the project, into `.git/` and into settings directories.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tine_permissions::{
    PermissionContext, PermissionDecision, PermissionMode, PermissionQuery, RuleBehavior,
    RuleSource,
};
use tine_tools::{
    BashTool, EditTool, GlobTool, GrepTool, ReadTool, Tool, ToolContext, WriteTool, run_tool,
};

/// A home with an SSH key, a directory and a sibling file outside the project, and a project
/// holding links to all of them and into its own `.git/hooks`, `.tine` and `.claude`.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
    home: PathBuf,
}

const KEY: &str = "SSH-PRIVATE-KEY-MATERIAL";
const OUTSIDE: &str = "OUTSIDE-SECRET";

impl Tree {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let project = root.join("project");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), KEY).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::fs::write(root.join("outside/secret.txt"), OUTSIDE).unwrap();
        std::fs::write(root.join("x"), OUTSIDE).unwrap();
        for dir in ["src", ".git/hooks", ".tine", ".claude", "secrets"] {
            std::fs::create_dir_all(project.join(dir)).unwrap();
        }
        std::fs::write(project.join("README.md"), "# readme\n").unwrap();
        std::fs::write(project.join("src/lib.rs"), "fn main() {}\n").unwrap();
        std::fs::write(project.join(".tine/settings.json"), "{}\n").unwrap();
        std::fs::write(project.join("secrets/key"), "k\n").unwrap();
        symlink(home.join(".ssh"), project.join("ssh")).unwrap();
        symlink("../outside", project.join("out")).unwrap();
        symlink(home.join(".ssh/id_rsa"), project.join("leak.txt")).unwrap();
        symlink(".git/hooks", project.join("hooks")).unwrap();
        symlink(".tine", project.join("conf")).unwrap();
        symlink(".claude", project.join("claude")).unwrap();
        symlink("secrets", project.join("alias")).unwrap();
        symlink("../outside/target.txt", project.join("outfile")).unwrap();
        Tree {
            _dir: dir,
            root,
            project,
            home,
        }
    }

    fn engine(&self, mode: PermissionMode) -> PermissionContext {
        PermissionContext::new(mode, &self.project).with_home(&self.home)
    }

    fn ctx(&self) -> ToolContext {
        ToolContext::new(&self.project)
    }

    fn at(&self, rel: &str) -> String {
        self.project.join(rel).display().to_string()
    }
}

/// What the engine decides for `tool` on `input`, asked as the front ends ask it.
fn decide(
    engine: &PermissionContext,
    tool: &dyn Tool,
    input: &Value,
    ctx: &ToolContext,
) -> PermissionDecision {
    let target = tool.permission_target(input, ctx);
    let verdict = tool.check_permissions(input, ctx);
    engine.decide(&PermissionQuery {
        tool: tool.name(),
        target: &target,
        verdict: &verdict,
        is_read_only: tool.is_read_only(input),
    })
}

fn bash(engine: &PermissionContext, ctx: &ToolContext, command: &str) -> PermissionDecision {
    decide(engine, &BashTool, &json!({ "command": command }), ctx)
}

fn is_ask(d: &PermissionDecision) -> bool {
    matches!(d, PermissionDecision::Ask { .. })
}

#[test]
fn read_only_bash_outside_the_project_asks_through_the_bash_tool() {
    let tree = Tree::new();
    let ctx = tree.ctx();
    let outside_abs = tree.root.join("outside/secret.txt");
    let outside = [
        "cat ~/.ssh/id_rsa".to_string(),
        "head -c 100 ~/.ssh/id_rsa".to_string(),
        "cat ../x".to_string(),
        format!("cat {}", outside_abs.display()),
        "cat < ../x".to_string(),
        "wc -l < ~/.ssh/id_rsa".to_string(),
        "cd .. && cat x".to_string(),
        "cd && cat .ssh/id_rsa".to_string(),
        "ls ~".to_string(),
        "cat $HOME/.ssh/id_rsa".to_string(),
        "echo ../x | xargs cat".to_string(),
        "sed -n 1p ../x".to_string(),
        "base64 ../x".to_string(),
        "git diff --no-index ../x README.md".to_string(),
        "cat README.md && cat ../x".to_string(),
        "echo $(cat ../x)".to_string(),
        "cd - && cat id_rsa".to_string(),
    ];
    // Plan mode and the Bash tool's own view that these only read must not let them through.
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
    ] {
        let engine = tree.engine(mode);
        for command in &outside {
            let d = bash(&engine, &ctx, command);
            // Plan mode refuses outright what is not read-only (`echo $(..)`).
            let refused = is_ask(&d) || (mode == PermissionMode::Plan && d.is_deny());
            assert!(refused, "{mode}: `{command}` was not asked: {d:?}");
        }
    }
    let engine = tree.engine(PermissionMode::DontAsk);
    assert!(bash(&engine, &ctx, "cat ~/.ssh/id_rsa").is_deny());
    let engine = tree.engine(PermissionMode::Default);
    for inside in [
        "cat README.md",
        "ls",
        "ls -la src",
        "grep -rn main .",
        "cat *.md",
        "cat src/../README.md",
        "cd src && cat lib.rs",
        "git status",
        "wc -l < README.md",
    ] {
        let d = bash(&engine, &ctx, inside);
        assert!(d.is_allow(), "`{inside}` inside the project: {d:?}");
    }
    // The message says what is outside, and the suggestion is a Read rule for it.
    let PermissionDecision::Ask {
        message,
        always: Some(always),
        ..
    } = bash(&engine, &ctx, "cat ~/.ssh/id_rsa")
    else {
        panic!("expected an ask");
    };
    assert!(message.contains("outside the project"), "{message}");
    assert!(message.contains(".ssh/id_rsa"), "{message}");
    assert_eq!(
        always.rules()[0].to_string(),
        format!("Read(/{}/**)", tree.home.join(".ssh").display())
    );
}

#[test]
fn the_shells_own_working_directory_outside_the_project_counts() {
    let tree = Tree::new();
    let engine = tree.engine(PermissionMode::Default);
    let ctx = tree.ctx();
    // An earlier, approved `cd` left the shell outside the project.
    ctx.set_cwd(tree.root.join("outside"));
    for command in ["cat secret.txt", "ls", "grep -r SECRET"] {
        assert!(is_ask(&bash(&engine, &ctx, command)), "{command}");
    }
}

#[test]
fn links_out_of_the_project_are_refused_for_read_grep_glob_and_bash() {
    let tree = Tree::new();
    let engine = tree.engine(PermissionMode::Default);
    let ctx = tree.ctx();
    let calls: Vec<(&dyn Tool, Value)> = vec![
        (&ReadTool, json!({"file_path": tree.at("ssh/id_rsa")})),
        (&ReadTool, json!({"file_path": tree.at("leak.txt")})),
        (&ReadTool, json!({"file_path": tree.at("out/secret.txt")})),
        (&GrepTool, json!({"pattern": "KEY", "path": "ssh"})),
        (
            &GrepTool,
            json!({"pattern": "KEY", "path": tree.at("leak.txt")}),
        ),
        (&GlobTool, json!({"pattern": "ssh/*"})),
        (&GlobTool, json!({"pattern": "*", "path": "out"})),
        (
            &GlobTool,
            json!({"pattern": format!("{}/*", tree.root.join("outside").display())}),
        ),
        (&BashTool, json!({"command": "cat ssh/id_rsa"})),
        (&BashTool, json!({"command": "cat leak.txt"})),
        (&BashTool, json!({"command": "cat out/secret.txt"})),
        (&BashTool, json!({"command": "cat *.txt"})),
        (&BashTool, json!({"command": "cat ssh/../x"})),
        (&BashTool, json!({"command": "cd ssh && cat id_rsa"})),
        (&BashTool, json!({"command": "ls out/"})),
        (&BashTool, json!({"command": "grep -r SECRET out"})),
        (&BashTool, json!({"command": "grep -R SECRET ."})),
        (&BashTool, json!({"command": "cat < leak.txt"})),
    ];
    for (tool, input) in &calls {
        let d = decide(&engine, *tool, input, &ctx);
        assert!(is_ask(&d), "{} {input} was not asked: {d:?}", tool.name());
    }
    let PermissionDecision::Ask { message, .. } = decide(&engine, &ReadTool, &calls[1].1, &ctx)
    else {
        panic!("expected an ask");
    };
    assert!(message.contains("a link to"), "{message}");
}

#[tokio::test]
async fn searching_the_whole_project_never_follows_a_link_out_of_it() {
    let tree = Tree::new();
    let engine = tree.engine(PermissionMode::Default);
    let ctx = tree.ctx();
    let grep = json!({"pattern": "SSH-PRIVATE|OUTSIDE-SECRET", "output_mode": "content"});
    let glob = json!({"pattern": "**/*"});
    assert!(decide(&engine, &GrepTool, &grep, &ctx).is_allow());
    assert!(decide(&engine, &GlobTool, &glob, &ctx).is_allow());
    let found = run_tool(&GrepTool, grep, &ctx).await;
    assert!(!found.content.contains(KEY), "{}", found.content);
    assert!(!found.content.contains(OUTSIDE), "{}", found.content);
    let listed = run_tool(&GlobTool, glob, &ctx).await;
    assert!(listed.content.contains("README.md"), "{}", listed.content);
    assert!(!listed.content.contains("id_rsa"), "{}", listed.content);
    assert!(!listed.content.contains("secret.txt"), "{}", listed.content);
}

#[test]
fn writes_through_links_into_git_tine_or_claude_ask_even_in_accept_edits_and_bypass() {
    let tree = Tree::new();
    let ctx = tree.ctx();
    let calls: Vec<(&dyn Tool, Value)> = vec![
        (
            &WriteTool,
            json!({"file_path": tree.at("hooks/pre-commit"), "content": "#!/bin/sh\ncurl evil\n"}),
        ),
        (
            &WriteTool,
            json!({"file_path": tree.at("conf/settings.local.json"), "content": "{}"}),
        ),
        (
            &EditTool,
            json!({"file_path": tree.at("conf/settings.json"), "old_string": "{}", "new_string": "{\"permissions\":{}}"}),
        ),
        (
            &WriteTool,
            json!({"file_path": tree.at("claude/settings.json"), "content": "{}"}),
        ),
        (&BashTool, json!({"command": "echo x > hooks/pre-commit"})),
        (
            &BashTool,
            json!({"command": "cp README.md hooks/post-checkout"}),
        ),
        (
            &BashTool,
            json!({"command": "cd conf && echo '{}' > settings.json"}),
        ),
    ];
    for mode in [
        PermissionMode::AcceptEdits,
        PermissionMode::BypassPermissions,
    ] {
        let mut engine = tree.engine(mode);
        // Not even a rule that allows the exact line, or edits of the link's spelling.
        for rule in [
            "Bash(echo x > hooks/pre-commit)",
            "Edit(./hooks/**)",
            "Bash(cp:*)",
        ] {
            engine.add_session_rule(
                rule.parse().unwrap(),
                RuleBehavior::Allow,
                RuleSource::Session,
            );
        }
        for (tool, input) in &calls {
            let d = decide(&engine, *tool, input, &ctx);
            assert!(
                is_ask(&d),
                "{mode}: {} {input} was not asked: {d:?}",
                tool.name()
            );
        }
    }
    let engine = tree.engine(PermissionMode::AcceptEdits);
    let PermissionDecision::Ask { message, .. } = decide(&engine, calls[0].0, &calls[0].1, &ctx)
    else {
        panic!("expected an ask");
    };
    assert!(message.contains(".git/"), "{message}");
}

#[test]
fn writes_through_a_link_to_a_file_outside_ask_in_accept_edits() {
    let tree = Tree::new();
    let engine = tree.engine(PermissionMode::AcceptEdits);
    let ctx = tree.ctx();
    let write = json!({"file_path": tree.at("outfile"), "content": "x"});
    assert!(is_ask(&decide(&engine, &WriteTool, &write, &ctx)));
    let edit = json!({"file_path": tree.at("leak.txt"), "old_string": "SSH", "new_string": "x"});
    assert!(is_ask(&decide(&engine, &EditTool, &edit, &ctx)));
    let write = json!({"file_path": tree.at("out/new.txt"), "content": "x"});
    assert!(is_ask(&decide(&engine, &WriteTool, &write, &ctx)));
    let inside = json!({"file_path": tree.at("src/new.rs"), "content": "x"});
    assert!(decide(&engine, &WriteTool, &inside, &ctx).is_allow());
}

#[test]
fn deny_rules_hold_through_links_and_for_bash_reads() {
    let tree = Tree::new();
    let mut engine = tree.engine(PermissionMode::Default);
    engine.add_session_rule(
        "Read(./secrets/**)".parse().unwrap(),
        RuleBehavior::Deny,
        RuleSource::Session,
    );
    let ctx = tree.ctx();
    let read = |rel: &str| json!({"file_path": tree.at(rel)});
    assert!(decide(&engine, &ReadTool, &read("secrets/key"), &ctx).is_deny());
    assert!(decide(&engine, &ReadTool, &read("alias/key"), &ctx).is_deny());
    for command in ["cat secrets/key", "cat alias/key", "head alias/*"] {
        assert!(bash(&engine, &ctx, command).is_deny(), "{command}");
    }
}

#[test]
fn read_allow_rules_match_where_a_link_really_leads() {
    let tree = Tree::new();
    let mut engine = tree.engine(PermissionMode::Default);
    let outside = tree.root.join("outside");
    engine.add_session_rule(
        format!("Read(/{}/**)", outside.display()).parse().unwrap(),
        RuleBehavior::Allow,
        RuleSource::Session,
    );
    let ctx = tree.ctx();
    let read = json!({"file_path": tree.at("out/secret.txt")});
    assert!(decide(&engine, &ReadTool, &read, &ctx).is_allow());
    assert!(bash(&engine, &ctx, "cat out/secret.txt").is_allow());
    assert!(
        bash(
            &engine,
            &ctx,
            &format!("cat {}/secret.txt", outside.display())
        )
        .is_allow()
    );
    // The rule is for that directory, not for every link.
    assert!(is_ask(&bash(&engine, &ctx, "cat leak.txt")));
}

#[test]
fn commands_that_print_the_environment_ask() {
    let tree = Tree::new();
    let engine = tree.engine(PermissionMode::Default);
    let ctx = tree.ctx();
    for command in [
        "env",
        "env -0",
        "printenv",
        "printenv ANTHROPIC_API_KEY",
        "export -p",
        "export",
        "set",
        "declare -p",
        "declare -x",
        "typeset -x",
        "compgen -v",
        "env | grep KEY",
        "time printenv",
        "cat /proc/self/environ",
        "tr '\\0' '\\n' < /proc/self/environ",
        "ps eww",
        "ps auxe",
        "jq -n env",
        "jq -n '$ENV'",
    ] {
        let d = bash(&engine, &ctx, command);
        assert!(is_ask(&d), "`{command}` was not asked: {d:?}");
    }
    assert!(bash(&engine, &ctx, "ps aux").is_allow());
}

/// A read-only looking pipeline followed by a write on the next line: tree-sitter-bash reads
/// the second line as more arguments of the last `cat` (found by fuzz_bash), so the line must
/// ask rather than pass as reads.
#[test]
fn a_write_on_the_line_after_a_pipeline_of_reads_asks() {
    let tree = Tree::new();
    let engine = tree.engine(PermissionMode::Default);
    let ctx = tree.ctx();
    for command in [
        "cat src/lib.rs | cat src/lib.rs | cat src/lib.rs\nrm src/lib.rs && cat src/lib.rs",
        "cat src/lib.rs | head -1 | wc -l\nrm -f src/lib.rs",
    ] {
        let d = bash(&engine, &ctx, command);
        assert!(is_ask(&d), "`{command}` was not asked: {d:?}");
    }
    // A continued line is one command, as bash reads it.
    assert!(bash(&engine, &ctx, "cat src/lib.rs | head -1 | wc \\\n -l").is_allow());
}

/// Sanity for the fixture: the links really lead where the tests say.
#[test]
fn the_fixture_links_lead_out() {
    let tree = Tree::new();
    assert_eq!(
        std::fs::read_to_string(tree.project.join("leak.txt")).unwrap(),
        KEY
    );
    assert_eq!(
        std::fs::read_to_string(tree.project.join("out/secret.txt")).unwrap(),
        OUTSIDE
    );
    assert!(Path::new(&tree.at("hooks")).is_dir());
}
