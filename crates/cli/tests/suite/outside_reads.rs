//! Issue 10 item 1, widened: a read outside the project asks (in `-p`, is refused), whatever
//! tool or shell form does it, through the real binary. Each case is one tool call of one
//! scripted reply; the key and the file beside the project never reach the model, stdout,
//! stderr or tine's files. In acceptEdits, shell commands that copy an outside file in or write
//! through a link into `.git/` or `.tine/` are refused too (acceptEdits allows no shell write
//! today; these hold should it ever allow `cp`, `mv` or `touch` as Claude Code does).

use serde_json::{Value, json};
use tine_e2e::{Project, RunOutput, request_bodies};

use super::{model_calling, plant_ssh_key, text_under, tine, tool_results};

const KEY: &str = "OUTSIDE-READS-KEY-5d1f";
const BESIDE: &str = "OUTSIDE-READS-BESIDE-77c0";

fn plant(project: &Project) {
    plant_ssh_key(project, KEY);
    std::fs::write(project.root().join("beside.txt"), BESIDE).unwrap();
}

/// Runs `calls` in one reply with `mode`; every call must be refused and nothing leak.
async fn assert_every_call_refused(project: &Project, mode: &str, calls: &[(&str, Value)]) {
    let server = model_calling(calls).await;
    let out: RunOutput = tine(project, &server)
        .args([
            "-p",
            "go",
            "--output-format",
            "json",
            "--permission-mode",
            mode,
        ])
        .run()
        .await;
    out.assert_success();
    let results = tool_results(&server);
    assert_eq!(results.len(), calls.len());
    let passed: Vec<String> = calls
        .iter()
        .zip(&results)
        .filter(|(_, r)| {
            r["is_error"] != true || !r["content"].to_string().contains("non-interactive")
        })
        .map(|((tool, input), r)| format!("{tool} {input} -> {}", r["content"]))
        .collect();
    assert!(
        passed.is_empty(),
        "ran without asking ({mode}): {passed:#?}"
    );
    let stored = text_under(project.home());
    let sent: String = request_bodies(&server)
        .iter()
        .map(Value::to_string)
        .collect();
    for secret in [KEY, BESIDE] {
        assert!(!sent.contains(secret), "{secret} reached the model");
        assert!(!out.stdout.contains(secret) && !out.stderr.contains(secret));
        assert!(
            !stored.contains(secret),
            "{secret} stored under the tine home"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn read_grep_and_glob_outside_the_project_ask_in_default_mode() {
    let project = Project::new();
    plant(&project);
    let home = project.home().display().to_string();
    let root = project.root().display().to_string();
    assert_every_call_refused(
        &project,
        "default",
        &[
            ("Read", json!({"file_path": format!("{home}/.ssh/id_rsa")})),
            ("Read", json!({"file_path": "../beside.txt"})),
            ("Read", json!({"file_path": format!("{root}/beside.txt")})),
            (
                "Grep",
                json!({"pattern": "OUTSIDE", "path": format!("{home}/.ssh"), "output_mode": "content"}),
            ),
            (
                "Grep",
                json!({"pattern": "OUTSIDE", "path": "..", "output_mode": "content"}),
            ),
            ("Glob", json!({"pattern": "*", "path": format!("{home}/.ssh")})),
        ],
    )
    .await;

    // A pattern climbing out of the project is not refused, but matches nothing outside it.
    let server = model_calling(&[
        ("Glob", json!({"pattern": "../*.txt"})),
        ("Glob", json!({"pattern": "../**/id_rsa"})),
    ])
    .await;
    tine(&project, &server)
        .args(["-p", "go"])
        .run()
        .await
        .assert_success();
    for result in tool_results(&server) {
        let text = result["content"].to_string();
        assert!(
            !text.contains("beside.txt") && !text.contains("id_rsa"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn shell_forms_of_reading_outside_the_project_ask_in_default_mode() {
    let project = Project::new();
    plant(&project);
    let bash = |c: &str| ("Bash", json!({"command": c}));
    assert_every_call_refused(
        &project,
        "default",
        &[
            bash("head -c 100 ~/.ssh/id_rsa"),
            bash("tail ../beside.txt"),
            bash("wc -c < ~/.ssh/id_rsa"),
            bash("echo $(cat ~/.ssh/id_rsa)"),
            bash("cat \"$HOME/.ssh/id_rsa\""),
            bash("cd ~/.ssh && cat id_rsa"),
            bash("cd .. && cat beside.txt"),
            bash("grep -r OUTSIDE ~"),
            bash("base64 ~/.ssh/id_rsa"),
            bash("od -c ../beside.txt"),
            bash("diff ../beside.txt /dev/null"),
            bash("find ~ -name id_rsa"),
            bash("ls ~/.ssh"),
            bash("cat ~/.ssh/*"),
            bash("cat ~root/../../$(echo x)"),
        ],
    )
    .await;
}

#[tokio::test]
async fn accept_edits_never_copies_an_outside_file_into_the_project() {
    let project = Project::new();
    plant(&project);
    let bash = |c: &str| ("Bash", json!({"command": c}));
    assert_every_call_refused(
        &project,
        "acceptEdits",
        &[
            bash("cp ~/.ssh/id_rsa k.txt"),
            bash("cp ../beside.txt b.txt"),
            bash("mv ../beside.txt moved.txt"),
            bash("cat ~/.ssh/id_rsa > k2.txt"),
            bash("tee k3.txt < ~/.ssh/id_rsa"),
            bash("ln -s ~/.ssh/id_rsa link.txt"),
        ],
    )
    .await;
    for name in [
        "k.txt",
        "b.txt",
        "moved.txt",
        "k2.txt",
        "k3.txt",
        "link.txt",
    ] {
        assert!(!project.cwd().join(name).exists(), "{name} was made");
    }
    assert!(project.root().join("beside.txt").exists());
}

#[tokio::test]
async fn accept_edits_shell_never_writes_a_hook_or_settings_through_a_link() {
    let project = Project::new();
    plant(&project);
    let cwd = project.cwd();
    std::fs::create_dir_all(cwd.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(cwd.join(".tine")).unwrap();
    std::os::unix::fs::symlink(".git/hooks", cwd.join("hooks")).unwrap();
    std::os::unix::fs::symlink(".tine", cwd.join("conf")).unwrap();
    project.write("notes.txt", "#!/bin/sh\necho pwned\n");
    let bash = |c: &str| ("Bash", json!({"command": c}));
    assert_every_call_refused(
        &project,
        "acceptEdits",
        &[
            bash("echo pwned > hooks/pre-commit"),
            bash("cp notes.txt hooks/post-checkout"),
            bash("mv notes.txt hooks/pre-push"),
            bash("touch conf/settings.local.json"),
            bash("echo '{}' > conf/settings.json"),
            bash("cp notes.txt .git/hooks/pre-commit"),
            bash("sed -i s/a/b/ conf/settings.json"),
        ],
    )
    .await;
    let hooks: Vec<_> = std::fs::read_dir(cwd.join(".git/hooks")).unwrap().collect();
    assert!(hooks.is_empty(), "a hook was written");
    let tine: Vec<_> = std::fs::read_dir(cwd.join(".tine")).unwrap().collect();
    assert!(tine.is_empty(), "settings were written");
    assert!(project.cwd().join("notes.txt").exists());
}

const API_KEY: &str = "sk-ant-outside-reads-credential-3141";

#[tokio::test]
async fn tines_environment_is_out_of_reach_through_proc() {
    let project = Project::new();
    let bash = |c: &str| ("Bash", json!({"command": c}));
    let calls = [
        ("Read", json!({"file_path": "/proc/self/environ"})),
        (
            "Grep",
            json!({"pattern": "ANTHROPIC", "path": "/proc/self/environ", "output_mode": "content"}),
        ),
        bash("cat /proc/$PPID/environ"),
        bash("tr '\\0' '\\n' < /proc/$PPID/environ"),
        bash("strings /proc/self/environ"),
        bash("cat /proc/*/environ"),
    ];
    let server = model_calling(&calls).await;
    let out = tine(&project, &server)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .args(["-p", "go", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    let results = tool_results(&server);
    for ((tool, input), result) in calls.iter().zip(&results) {
        assert_eq!(result["is_error"], true, "{tool} {input}: {result}");
        assert!(
            result["content"].to_string().contains("non-interactive"),
            "{tool} {input}: {result}"
        );
    }
    let sent: String = request_bodies(&server)
        .iter()
        .map(Value::to_string)
        .collect();
    assert!(!sent.contains(API_KEY), "the key reached the model");
    server.stop().await;
}

#[tokio::test]
async fn sandboxed_bash_children_never_see_tines_credentials() {
    let project = Project::new();
    let probe = "echo key=${ANTHROPIC_API_KEY:-unset} token=${ANTHROPIC_AUTH_TOKEN:-unset}";
    let server = model_calling(&[("Bash", json!({"command": format!("bash -c '{probe}'")}))]).await;
    let out = tine(&project, &server)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .env("ANTHROPIC_AUTH_TOKEN", "outside-reads-token-2718")
        .args(["-p", "go", "--sandbox", "--allowedTools", "Bash(bash -c:*)"])
        .run()
        .await;
    out.assert_success();
    let result = tool_results(&server)[0]["content"].to_string();
    assert!(result.contains("key=unset token=unset"), "{result}");
    let sent: String = request_bodies(&server)
        .iter()
        .map(Value::to_string)
        .collect();
    assert!(!sent.contains(API_KEY) && !sent.contains("outside-reads-token-2718"));
    server.stop().await;
}
