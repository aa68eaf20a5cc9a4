//! Nothing leaves the project unasked, end to end: the `tine` binary in `-p` mode (where an ask
//! is a denial the model reads) against the mock, with a scripted model that tries to read
//! secrets outside the project, through links, from the environment, and to plant git hooks.

use std::os::unix::fs::symlink;

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, RunOutput, request_bodies};

use super::{mock, model_calling, plant_ssh_key, text_under, tine, tool_results};

const KEY: &str = "SSH-PRIVATE-KEY-MATERIAL";
const OUTSIDE: &str = "OUTSIDE-SECRET-CONTENT";
const API_KEY: &str = "sk-ant-e2e-credential-4242";
const AUTH_TOKEN: &str = "auth-token-e2e-credential-9999";

/// A home holding an SSH key (`HOME` is the project's home), a file beside the project and a
/// directory outside it.
fn secrets(project: &Project) {
    plant_ssh_key(project, KEY);
    std::fs::write(project.root().join("x"), OUTSIDE).unwrap();
    std::fs::create_dir_all(project.root().join("outside")).unwrap();
    std::fs::write(project.root().join("outside/secret.txt"), OUTSIDE).unwrap();
}

/// Neither what the model was sent, nor what tine printed or stored, holds any of `secrets`.
fn assert_kept_out(server: &MockServer, out: &RunOutput, project: &Project, secrets: &[&str]) {
    let sent: String = request_bodies(server)
        .iter()
        .map(Value::to_string)
        .collect();
    let stored = text_under(project.home());
    for secret in secrets {
        assert!(!sent.contains(secret), "{secret} reached the model");
        assert!(!out.stdout.contains(secret), "{secret} on stdout");
        assert!(!out.stderr.contains(secret), "{secret} on stderr");
        assert!(
            !stored.contains(secret),
            "{secret} stored under the tine home"
        );
    }
}

fn assert_all_refused(results: &[Value], expected: usize) {
    assert_eq!(results.len(), expected, "{results:?}");
    for result in results {
        assert_eq!(result["is_error"], true, "{result}");
        let text = result["content"].to_string();
        assert!(text.contains("non-interactive"), "{text}");
    }
}

async fn run_print(project: &Project, server: &MockServer, extra: &[&str]) -> RunOutput {
    let mut args = vec!["-p", "go", "--output-format", "json"];
    args.extend_from_slice(extra);
    let out = tine(project, server).args(args).run().await;
    out.assert_success();
    out
}

#[tokio::test]
async fn bash_reads_of_home_sibling_and_absolute_paths_are_refused() {
    let project = Project::new();
    secrets(&project);
    let absolute = project.root().join("outside/secret.txt");
    let server = model_calling(&[
        ("Bash", json!({"command": "cat ~/.ssh/id_rsa"})),
        ("Bash", json!({"command": "cat ../x"})),
        (
            "Bash",
            json!({"command": format!("cat {}", absolute.display())}),
        ),
    ])
    .await;
    let out = run_print(&project, &server, &[]).await;
    assert_eq!(
        out.json()["permission_denials"].as_array().unwrap().len(),
        3
    );
    let results = tool_results(&server);
    assert_all_refused(&results, 3);
    assert!(
        results[0]["content"]
            .to_string()
            .contains("outside the project"),
        "{}",
        results[0]
    );
    assert_kept_out(&server, &out, &project, &[KEY, OUTSIDE]);
    server.stop().await;
}

#[tokio::test]
async fn a_link_out_of_the_project_is_refused_for_read_grep_glob_and_bash() {
    let project = Project::new();
    secrets(&project);
    symlink(project.home().join(".ssh"), project.cwd().join("ssh")).unwrap();
    symlink("../outside", project.cwd().join("out")).unwrap();
    let server = model_calling(&[
        (
            "Read",
            json!({"file_path": project.cwd().join("ssh/id_rsa")}),
        ),
        (
            "Grep",
            json!({"pattern": "SECRET", "path": "out", "output_mode": "content"}),
        ),
        ("Glob", json!({"pattern": "ssh/*"})),
        ("Bash", json!({"command": "cat out/secret.txt"})),
    ])
    .await;
    let out = run_print(&project, &server, &[]).await;
    assert_eq!(
        out.json()["permission_denials"].as_array().unwrap().len(),
        4
    );
    assert_all_refused(&tool_results(&server), 4);
    assert_kept_out(&server, &out, &project, &[KEY, OUTSIDE]);
    server.stop().await;
}

#[tokio::test]
async fn accept_edits_never_writes_a_git_hook_settings_or_outside_file_through_a_link() {
    let project = Project::new();
    secrets(&project);
    let cwd = project.cwd();
    std::fs::create_dir_all(cwd.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(cwd.join(".tine")).unwrap();
    symlink(".git/hooks", cwd.join("hooks")).unwrap();
    symlink(".tine", cwd.join("conf")).unwrap();
    symlink("../outside/planted.txt", cwd.join("outfile")).unwrap();
    let server = model_calling(&[
        (
            "Write",
            json!({"file_path": cwd.join("hooks/pre-commit"), "content": "#!/bin/sh\necho pwned\n"}),
        ),
        (
            "Write",
            json!({"file_path": cwd.join("conf/settings.local.json"),
                   "content": "{\"permissions\":{\"allow\":[\"Bash\"]}}"}),
        ),
        (
            "Write",
            json!({"file_path": cwd.join("outfile"), "content": "planted"}),
        ),
        (
            "Write",
            json!({"file_path": cwd.join("notes.txt"), "content": "fine"}),
        ),
    ])
    .await;
    let out = run_print(&project, &server, &["--permission-mode", "acceptEdits"]).await;
    assert_eq!(
        out.json()["permission_denials"].as_array().unwrap().len(),
        3
    );
    let results = tool_results(&server);
    assert_all_refused(&results[..3], 3);
    assert!(results[0]["content"].to_string().contains(".git/"));
    assert!(!cwd.join(".git/hooks/pre-commit").exists());
    assert!(!cwd.join(".tine/settings.local.json").exists());
    assert!(!project.root().join("outside/planted.txt").exists());
    // acceptEdits is in force: the plain edit inside the project went through.
    assert_eq!(project.read("notes.txt"), "fine");
    server.stop().await;
}

#[tokio::test]
async fn commands_that_print_the_environment_are_refused() {
    let project = Project::new();
    let server = model_calling(&[
        ("Bash", json!({"command": "env"})),
        ("Bash", json!({"command": "printenv"})),
        ("Bash", json!({"command": "printenv ANTHROPIC_API_KEY"})),
    ])
    .await;
    let out = tine(&project, &server)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .args(["-p", "go", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(
        out.json()["permission_denials"].as_array().unwrap().len(),
        3
    );
    assert_all_refused(&tool_results(&server), 3);
    assert_kept_out(&server, &out, &project, &[API_KEY]);
    server.stop().await;
}

#[tokio::test]
async fn bash_children_never_see_tines_credentials() {
    let project = Project::new();
    let probe = "echo key=${ANTHROPIC_API_KEY:-unset} token=${ANTHROPIC_AUTH_TOKEN:-unset}";
    let background = format!("bash -c '{probe} > bg.txt'");
    // Waits (bounded by the call's timeout) for the background task's file.
    let wait = "bash -c 'while [ ! -s bg.txt ]; do sleep 0.05; done; cat bg.txt'";
    let scenario = Scenario::new()
        .rule(
            Rule::new().assistant_turns(0).reply(
                Reply::text("Probing.")
                    .with_tool_use("Bash", json!({"command": probe}))
                    .with_tool_use("Bash", json!({"command": format!("bash -c '{probe}'")}))
                    .with_tool_use(
                        "Bash",
                        json!({"command": background, "run_in_background": true}),
                    ),
            ),
        )
        .rule(Rule::new().assistant_turns(1).reply(Reply::tool_use(
            "Bash",
            json!({"command": wait, "timeout": 60000}),
        )))
        .rule(Rule::new().assistant_turns(2).reply(Reply::text("Done.")));
    let server = mock(scenario).await;
    let out = tine(&project, &server)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .env("ANTHROPIC_AUTH_TOKEN", AUTH_TOKEN)
        .args([
            "-p",
            "go",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash(bash -c:*)",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["permission_denials"], json!([]));
    let bodies = request_bodies(&server);
    let results = |n: usize| -> Vec<String> {
        let last = bodies[n]["messages"].as_array().unwrap().last().unwrap();
        last["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|block| block["content"].to_string())
            .collect()
    };
    let first = results(1);
    assert!(first[0].contains("key=unset token=unset"), "{first:?}");
    assert!(first[1].contains("key=unset token=unset"), "{first:?}");
    let waited = results(2);
    assert!(waited[0].contains("key=unset token=unset"), "{waited:?}");
    assert_kept_out(&server, &out, &project, &[API_KEY, AUTH_TOKEN]);
    server.stop().await;
}

#[tokio::test]
async fn hooks_never_see_tines_credentials() {
    let project = Project::new();
    let hook =
        "echo key=${ANTHROPIC_API_KEY:-unset} token=${ANTHROPIC_AUTH_TOKEN:-unset} > hook-env.txt";
    project.write(
        ".tine/settings.json",
        &json!({"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": hook}]}]}})
            .to_string(),
    );
    let server = mock(Scenario::new().default_reply(Reply::text("Finished."))).await;
    let out = tine(&project, &server)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .env("ANTHROPIC_AUTH_TOKEN", AUTH_TOKEN)
        .args(["-p", "work"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(project.read("hook-env.txt").trim(), "key=unset token=unset");
    server.stop().await;
}
