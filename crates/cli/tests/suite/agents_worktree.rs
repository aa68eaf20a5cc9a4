//! `isolation: worktree` through the real binary, with a real git repository in a temporary
//! directory: a typed agent whose definition asks for it works in a new git worktree under
//! `TINE_HOME/worktrees/` (here a `~/.tine`, whose `.tine` must not make every write ask) on a
//! branch of its own; the worktree and branch are kept and named in its report when it changed
//! something and removed when it did not; a write back into the main checkout is an
//! outside-project write (denied headless); the main checkout is untouched; two agents get two
//! worktrees on distinct branches; no repository is an error result.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, RequestRecord, Rule, Scenario};

use super::{mock, tine};

const BUILDER: &str = "---\nname: builder\ndescription: Builds things\ntools: Read, Write\nisolation: worktree\n---\nYou are BUILDER-PROMPT.\n";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A project that is a git repository with one commit, and the builder agent (untracked).
fn repository() -> Project {
    let project = Project::new();
    git(project.cwd(), &["init", "-q", "-b", "main"]);
    project.write("README.md", "# demo\n");
    git(project.cwd(), &["add", "README.md"]);
    git(project.cwd(), &["commit", "-qm", "init"]);
    project.write(".tine/agents/builder.md", BUILDER);
    project
}

/// `TINE_HOME` as a `~/.tine`: the worktrees' path passes through a `.tine`.
fn tine_home(project: &Project) -> PathBuf {
    project.home().join(".tine")
}

fn builder_call(task: &str) -> Value {
    json!({"description": format!("{task} build"), "prompt": task, "subagent_type": "builder"})
}

async fn run(project: &Project, server: &MockServer) -> Value {
    let out = tine(project, server)
        .env("TINE_HOME", tine_home(project))
        .args(["-p", "build it", "--output-format", "json"])
        .args(["--permission-mode", "acceptEdits"])
        .run()
        .await;
    out.assert_success();
    out.json()
}

fn named<'a>(log: &'a [RequestRecord], name: &str) -> Vec<&'a RequestRecord> {
    log.iter()
        .filter(|r| r.rule.as_deref() == Some(name))
        .collect()
}

/// The parent's request after the agents' calls: their results, as text.
fn parent_results(log: &[RequestRecord]) -> Vec<Value> {
    let after = named(log, "default");
    let body = after.first().expect("the parent went on").json().unwrap();
    body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone()
}

/// The agent id a result names (`agentId: a_xxxxxxxx`).
fn agent_id(result: &Value) -> String {
    let text = result["content"].to_string();
    let at = text.find("agentId: ").expect("an agent id") + "agentId: ".len();
    text[at..at + 10].to_owned()
}

#[tokio::test]
async fn an_isolated_agent_works_in_its_own_worktree_and_keeps_its_changes_on_a_branch() {
    let project = repository();
    let main = project.cwd().to_path_buf();
    let status_before = git(&main, &["status", "--porcelain"]);
    let intruder = main.join("intruder.txt");
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .marker("intruder.txt")
                .named("alpha-denied")
                .reply(Reply::text("built alpha")),
        )
        .rule(
            Rule::new()
                .marker("alpha.txt")
                .named("alpha-wrote")
                .reply(Reply::tool_use(
                    "Write",
                    json!({"file_path": intruder.display().to_string(), "content": "x"}),
                )),
        )
        .rule(
            Rule::new()
                .marker("beta.txt")
                .named("beta-wrote")
                .reply(Reply::text("built beta")),
        )
        .rule(
            Rule::new()
                .system_contains("BUILDER-PROMPT")
                .last_user_contains("BUILD-ALPHA")
                .named("alpha")
                .reply(Reply::tool_use(
                    "Write",
                    json!({"file_path": "alpha.txt", "content": "alpha\n"}),
                )),
        )
        .rule(
            Rule::new()
                .system_contains("BUILDER-PROMPT")
                .last_user_contains("BUILD-BETA")
                .named("beta")
                .reply(Reply::tool_use(
                    "Write",
                    json!({"file_path": "beta.txt", "content": "beta\n"}),
                )),
        )
        .rule(
            Rule::new().assistant_turns(0).named("parent").reply(
                Reply::text("Two builders.")
                    .with_tool_use("Agent", builder_call("BUILD-ALPHA"))
                    .with_tool_use("Agent", builder_call("BUILD-BETA")),
            ),
        )
        .default_reply(Reply::text("Parent done."));
    let server = mock(scenario).await;
    let result = run(&project, &server).await;
    assert_eq!(result["result"], "Parent done.", "{result}");
    let log = server.requests();

    // The agent was told where it works, and its write back into the main checkout was an
    // outside-project write: denied headless, the main checkout untouched.
    let alpha = named(&log, "alpha")[0].json().unwrap();
    let worktrees = tine_home(&project).join("worktrees");
    let system = alpha["system"][0]["text"].as_str().unwrap();
    assert!(
        system.contains(&format!("Working directory: {}", worktrees.display())),
        "{system}"
    );
    assert!(
        alpha["messages"][0]
            .to_string()
            .contains("isolated git worktree")
    );
    let denied = named(&log, "alpha-denied")[0].json().unwrap();
    let denial = denied["messages"].as_array().unwrap().last().unwrap()["content"][0].clone();
    assert_eq!(denial["is_error"], true, "{denial}");
    assert!(!intruder.exists());
    assert!(!main.join("alpha.txt").exists() && !main.join("beta.txt").exists());
    assert_eq!(git(&main, &["status", "--porcelain"]), status_before);

    // Two agents, two worktrees on distinct branches, kept and named in their reports.
    let results = parent_results(&log);
    assert_eq!(results.len(), 2, "{results:?}");
    let mut branches = Vec::new();
    for (result, file) in results.iter().zip(["alpha.txt", "beta.txt"]) {
        assert_ne!(result["is_error"], true, "{result}");
        let id = agent_id(result);
        let root = worktrees.join(&id);
        let branch = format!("tine-agent-{id}");
        let text = result["content"].to_string();
        assert!(text.contains(&root.display().to_string()), "{text}");
        assert!(text.contains(&format!("branch {branch}")), "{text}");
        assert!(root.join(file).exists(), "{}", root.display());
        assert!(
            git(&main, &["worktree", "list"]).contains(&root.display().to_string()),
            "{}",
            git(&main, &["worktree", "list"])
        );
        assert!(!git(&main, &["branch", "--list", &branch]).trim().is_empty());
        branches.push(branch);
    }
    assert_ne!(branches[0], branches[1]);
    let mode = std::fs::metadata(&worktrees).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

#[tokio::test]
async fn an_isolated_agent_that_changed_nothing_leaves_no_worktree() {
    let project = repository();
    let main = project.cwd().to_path_buf();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .system_contains("BUILDER-PROMPT")
                .named("builder")
                .reply(Reply::text("nothing to build")),
        )
        .rule(
            Rule::new()
                .assistant_turns(0)
                .named("parent")
                .reply(Reply::tool_use("Agent", builder_call("LOOK-ONLY"))),
        )
        .default_reply(Reply::text("Parent done."));
    let server = mock(scenario).await;
    run(&project, &server).await;
    let log = server.requests();
    assert_eq!(named(&log, "builder").len(), 1);
    let results = parent_results(&log);
    let text = results[0]["content"].to_string();
    assert!(text.contains("nothing to build"), "{text}");
    assert!(text.contains("no changes and was removed"), "{text}");
    let id = agent_id(&results[0]);
    let list = git(&main, &["worktree", "list"]);
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(!tine_home(&project).join("worktrees").join(&id).exists());
    let branch = format!("tine-agent-{id}");
    assert!(git(&main, &["branch", "--list", &branch]).trim().is_empty());
}

#[tokio::test]
async fn isolation_outside_a_git_repository_is_an_error_result() {
    let project = Project::new();
    project.write(".tine/agents/builder.md", BUILDER);
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .system_contains("BUILDER-PROMPT")
                .named("builder")
                .reply(Reply::text("should not run")),
        )
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Agent", builder_call("BUILD"))),
        )
        .default_reply(Reply::text("Parent done."));
    let server = mock(scenario).await;
    run(&project, &server).await;
    let log = server.requests();
    assert!(named(&log, "builder").is_empty());
    let results = parent_results(&log);
    assert_eq!(results[0]["is_error"], true, "{results:?}");
    let text = results[0]["content"].to_string();
    assert!(text.contains("needs a git repository"), "{text}");
    assert!(!tine_home(&project).join("worktrees").exists());
}
