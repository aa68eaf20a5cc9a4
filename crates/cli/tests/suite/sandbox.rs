//! The Bash sandbox through the real binary: the launcher (`tine __sandbox`), a `-p` session
//! whose Bash writes outside the project and opens a TCP connection, and the fallback when
//! Landlock cannot be used.
//!
//! Where the kernel has no Landlock the enforcement tests say so on stderr ("landlock
//! unsupported on this kernel; enforcement not exercised") and check the fallback instead.
//! Where it has, the fallback is still exercised for real: Landlock allows at most 16 nested
//! rulesets, so a tine started under 16 layers of `tine __sandbox` finds it unusable.

use std::path::PathBuf;

use serde_json::json;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, RunOutput, TineRun, request_bodies};

use super::{TINE, mock, tine};

const UNSUPPORTED: &str = "landlock unsupported on this kernel; enforcement not exercised";
const FALLBACK: &str = "the Bash sandbox is unavailable";

/// Said on stderr by a test that found no scratch space outside the sandbox's roots.
const NO_SCRATCH: &str = "no directory outside the sandbox's temporary roots to test writes \
     against (the build directory, /var/tmp and ~/.cache are all under one): enforcement \
     not exercised";

/// Where the sandbox tests put their projects and the directories "outside" them: not under
/// the temporary directories, which sandboxed Bash may always write (`TMPDIR` and `/tmp`:
/// tine-session's `write_roots`), or every outside directory would be writable and the tests
/// would fail wherever the checkout lives under one (a clone in `/tmp`). The first of the
/// build's scratch directory, `/var/tmp` and `~/.cache` that is outside both, one folder per
/// checkout so two checkouts' runs never share one; `None` (the test says [`NO_SCRATCH`] and
/// passes) when none is.
fn scratch() -> Option<PathBuf> {
    let resolve =
        |path: &std::path::Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let temp_roots = [resolve(&std::env::temp_dir()), resolve("/tmp".as_ref())];
    let tag = resolve(&target)
        .to_string_lossy()
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let folder = format!("tine-sandbox-tests-{tag:x}");
    let mut candidates = vec![
        target.join("sandbox-tests"),
        PathBuf::from("/var/tmp").join(&folder),
    ];
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(PathBuf::from(home).join(".cache").join(&folder));
    }
    let found = candidates.into_iter().find(|candidate| {
        let Some(parent) = candidate.parent() else {
            return false;
        };
        let parent = resolve(parent);
        parent.is_dir() && !temp_roots.iter().any(|root| parent.starts_with(root))
    });
    match found {
        Some(dir) => {
            std::fs::create_dir_all(&dir).unwrap();
            Some(dir)
        }
        None => {
            eprintln!("{NO_SCRATCH}");
            None
        }
    }
}

/// `tine __sandbox` layers around `inner`: each adds one Landlock ruleset.
fn nested(layers: usize, inner: &[&str]) -> Vec<String> {
    let mut args = Vec::new();
    for level in 0..layers {
        if level > 0 {
            args.push(TINE.to_owned());
        }
        args.extend(["__sandbox", "--write-root", "/", "--allow-network", "--"].map(String::from));
    }
    if layers > 0 {
        args.push(TINE.to_owned());
    }
    args.extend(inner.iter().map(|s| (*s).to_owned()));
    args
}

async fn launcher_runs(layers: usize) -> bool {
    let mut args = nested(layers, &[]);
    args.pop(); // the trailing TINE: exec /bin/true instead
    args.push("/bin/true".to_owned());
    tokio::process::Command::new(TINE)
        .args(&args)
        .output()
        .await
        .unwrap()
        .status
        .success()
}

/// Whether the launcher can sandbox at all here.
async fn landlock_supported() -> bool {
    launcher_runs(1).await
}

/// How many more rulesets this process may stack (Landlock's limit is 16 in all).
async fn layers_left() -> usize {
    let mut layers = 0;
    while layers < 32 && launcher_runs(layers + 1).await {
        layers += 1;
    }
    layers
}

/// A session that runs `command` with Bash once, then ends.
async fn bash_session(command: &str) -> MockServer {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::text("Running.").with_tool_use("Bash", json!({"command": command}))),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")));
    mock(scenario).await
}

/// The text of the first tool result the model was sent.
fn first_tool_result(server: &MockServer) -> String {
    for body in request_bodies(server) {
        for message in body["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    return match &block["content"] {
                        serde_json::Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                }
            }
        }
    }
    panic!("no tool result was sent");
}

fn sandbox_settings(extra: serde_json::Value) -> String {
    let mut sandbox = json!({"enabled": true});
    if let (Some(sandbox), Some(extra)) = (sandbox.as_object_mut(), extra.as_object()) {
        sandbox.extend(extra.clone());
    }
    json!({"sandbox": sandbox}).to_string()
}

fn assert_fell_back(out: &RunOutput) {
    assert!(
        out.stderr.contains(FALLBACK) && out.stderr.matches(FALLBACK).count() == 1,
        "expected one fallback warning on stderr:\n{}",
        out.stderr
    );
}

#[tokio::test]
async fn launcher_limits_writes_to_its_roots() {
    let Some(scratch) = scratch() else { return };
    let base = tempfile::tempdir_in(scratch).unwrap();
    let inside = base.path().join("inside");
    let outside = base.path().join("outside");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let script = format!(
        "echo in > {0}/a.txt; echo out > {1}/b.txt; mkdir {1}/d; rm -f {1}/keep; cat {1}/keep",
        inside.display(),
        outside.display()
    );
    std::fs::write(outside.join("keep"), "kept\n").unwrap();
    let out = tokio::process::Command::new(TINE)
        .arg("__sandbox")
        .arg("--write-root")
        .arg(&inside)
        .args(["--", "/bin/sh", "-c", &script])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !landlock_supported().await {
        eprintln!("{UNSUPPORTED}");
        // Fails closed: the command did not run at all.
        assert_eq!(out.status.code(), Some(126), "stderr: {stderr}");
        assert!(stderr.contains("could not be applied"), "stderr: {stderr}");
        assert!(!inside.join("a.txt").exists());
        return;
    }
    assert_eq!(
        std::fs::read_to_string(inside.join("a.txt")).unwrap(),
        "in\n"
    );
    assert!(!outside.join("b.txt").exists(), "wrote outside the roots");
    assert!(!outside.join("d").exists(), "made a directory outside");
    assert!(outside.join("keep").exists(), "removed a file outside");
    // Reading outside is fine.
    assert!(stdout.contains("kept"), "stdout: {stdout}");
    assert!(stderr.contains("Permission denied"), "stderr: {stderr}");
}

#[tokio::test]
async fn sandboxed_bash_cannot_write_outside_the_project() {
    let Some(scratch) = scratch() else { return };
    let project = Project::new_in(&scratch);
    let outside = project.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let command = format!(
        "echo in > {}/in.txt; echo out > {}/out.txt; echo status=$?",
        project.cwd().display(),
        outside.display()
    );
    let server = bash_session(&command).await;
    let out = tine(&project, &server)
        .env("IS_SANDBOX", "1")
        .args([
            "-p",
            "write",
            "--sandbox",
            "--permission-mode",
            "bypassPermissions",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(project.read("in.txt"), "in\n");
    if !landlock_supported().await {
        eprintln!("{UNSUPPORTED}");
        assert_fell_back(&out);
        assert!(outside.join("out.txt").exists(), "unsandboxed run wrote");
        return;
    }
    assert!(!out.stderr.contains(FALLBACK), "stderr: {}", out.stderr);
    assert!(
        !outside.join("out.txt").exists(),
        "sandboxed Bash wrote outside"
    );
    let result = first_tool_result(&server);
    assert!(
        result.contains("Permission denied") && result.contains("status=1"),
        "the model sees the refusal: {result}"
    );
    server.stop().await;
}

/// `--add-dir` is a writable root of the sandbox as it is of the file tools: a Bash write there
/// passes, one beside it (neither the project nor added) is still refused by the kernel.
#[tokio::test]
async fn sandboxed_bash_may_write_into_an_added_directory() {
    let Some(scratch) = scratch() else { return };
    let project = Project::new_in(&scratch);
    let added = project.root().join("added");
    let outside = project.root().join("outside");
    std::fs::create_dir_all(&added).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let command = format!(
        "echo in > {}/added.txt; echo out > {}/out.txt; echo status=$?",
        added.display(),
        outside.display()
    );
    let server = bash_session(&command).await;
    let out = tine(&project, &server)
        .env("IS_SANDBOX", "1")
        .args(["-p", "write", "--sandbox", "--add-dir"])
        .args([&added])
        .args(["--permission-mode", "bypassPermissions"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(
        std::fs::read_to_string(added.join("added.txt")).unwrap(),
        "in\n",
        "the write into the added directory passed: {}",
        first_tool_result(&server)
    );
    if !landlock_supported().await {
        eprintln!("{UNSUPPORTED}");
        assert_fell_back(&out);
        return;
    }
    assert!(!out.stderr.contains(FALLBACK), "stderr: {}", out.stderr);
    assert!(!outside.join("out.txt").exists(), "wrote outside the roots");
    let result = first_tool_result(&server);
    assert!(
        result.contains("Permission denied") && result.contains("status=1"),
        "{result}"
    );
    server.stop().await;
}

async fn run_with_settings(
    project: &Project,
    command: &str,
    settings: &str,
) -> (RunOutput, String) {
    let server = bash_session(command).await;
    let out = tine(project, &server)
        .env("IS_SANDBOX", "1")
        .args(["-p", "go", "--permission-mode", "bypassPermissions"])
        .args(["--settings", settings])
        .run()
        .await;
    out.assert_success();
    let result = first_tool_result(&server);
    server.stop().await;
    (out, result)
}

#[tokio::test]
async fn settings_turn_the_sandbox_on_and_the_network_off_unless_allowed() {
    let Some(scratch) = scratch() else { return };
    let project = Project::new_in(&scratch);
    let outside = project.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    // A local TCP peer for bash's /dev/tcp.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!(
        "(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo net=yes || echo net=no; \
         (echo x > {}/x.txt) 2>/dev/null && echo write=yes || echo write=no",
        outside.display()
    );
    let (off, off_result) =
        run_with_settings(&project, &command, &sandbox_settings(json!({}))).await;
    let (on, on_result) = run_with_settings(
        &project,
        &command,
        &sandbox_settings(json!({"allowNetwork": true})),
    )
    .await;
    drop(listener);
    assert!(on_result.contains("net=yes"), "allowNetwork: {on_result}");
    if !landlock_supported().await {
        eprintln!("{UNSUPPORTED}");
        assert_fell_back(&off);
        assert_fell_back(&on);
        return;
    }
    assert!(off_result.contains("net=no"), "network off: {off_result}");
    assert!(off_result.contains("write=no"), "{off_result}");
    assert!(on_result.contains("write=no"), "{on_result}");
    assert!(!off.stderr.contains(FALLBACK) && !on.stderr.contains(FALLBACK));
}

#[tokio::test]
async fn project_settings_cannot_turn_the_sandbox_off() {
    let Some(scratch) = scratch() else { return };
    let project = Project::new_in(&scratch);
    let outside = project.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    project.write(
        ".tine/settings.json",
        r#"{"sandbox": {"enabled": false, "allowNetwork": true,
            "filesystem": {"allowWrite": ["../outside"]}}}"#,
    );
    std::fs::write(
        project.home().join("settings.json"),
        json!({"sandbox": {"enabled": true}}).to_string(),
    )
    .unwrap();
    let command = format!("echo x > {}/x.txt; echo done", outside.display());
    let server = bash_session(&command).await;
    let out = tine(&project, &server)
        .env("IS_SANDBOX", "1")
        .args(["-p", "go", "--permission-mode", "bypassPermissions"])
        .run()
        .await;
    out.assert_success();
    for key in ["enabled: false", "allowNetwork: true", "allowWrite"] {
        assert!(
            out.stderr.contains(key) && out.stderr.contains("ignored in project settings"),
            "a warning names `{key}`:\n{}",
            out.stderr
        );
    }
    if !landlock_supported().await {
        eprintln!("{UNSUPPORTED}");
        assert_fell_back(&out);
        return;
    }
    assert!(
        !outside.join("x.txt").exists(),
        "the project widened the sandbox"
    );
    server.stop().await;
}

/// The fallback for real: under as many layers as Landlock allows, the probe's own ruleset is
/// refused, so tine warns once and runs Bash unsandboxed, or refuses to start when told to.
#[tokio::test]
async fn without_usable_landlock_tine_warns_and_runs_unsandboxed() {
    let layers = layers_left().await;
    if layers == 0 {
        eprintln!("{UNSUPPORTED}");
    }
    let Some(scratch) = scratch() else { return };
    let project = Project::new_in(&scratch);
    let outside = project.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let command = format!("echo x > {}/x.txt; echo done", outside.display());

    let server = bash_session(&command).await;
    let args = nested(
        layers,
        &[
            "-p",
            "go",
            "--sandbox",
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    let out = tine(&project, &server)
        .env("IS_SANDBOX", "1")
        .args(&args)
        .run()
        .await;
    out.assert_success();
    assert_fell_back(&out);
    assert!(
        outside.join("x.txt").exists(),
        "the command ran, unsandboxed"
    );
    server.stop().await;

    // `failIfUnavailable`: refuse rather than run unsandboxed.
    std::fs::remove_file(outside.join("x.txt")).unwrap();
    let server = bash_session(&command).await;
    let settings = sandbox_settings(json!({"failIfUnavailable": true}));
    let args = nested(
        layers,
        &[
            "-p",
            "go",
            "--settings",
            &settings,
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    let out = tine(&project, &server)
        .env("IS_SANDBOX", "1")
        .args(&args)
        .run()
        .await;
    assert_eq!(out.code(), Some(1), "stderr: {}", out.stderr);
    assert!(
        out.stderr.contains("failIfUnavailable") && out.stderr.contains("unavailable"),
        "stderr: {}",
        out.stderr
    );
    assert!(!outside.join("x.txt").exists());
    assert!(server.requests().is_empty(), "no model request without it");
    server.stop().await;

    // `tine doctor` there says so, and calls the required-but-missing sandbox a problem.
    let doctor_args = nested(layers, &["doctor", "--settings", &settings]);
    let out = TineRun::new(TINE, &project, "http://127.0.0.1:9")
        .args(&doctor_args)
        .run()
        .await;
    assert_eq!(out.code(), Some(1), "stdout: {}", out.stdout);
    assert!(out.stdout.contains("unavailable"), "stdout: {}", out.stdout);
    assert!(
        out.stdout.contains("failIfUnavailable"),
        "stdout: {}",
        out.stdout
    );
}

/// The Bash tool's description in every request `server` got.
fn bash_descriptions(server: &MockServer) -> Vec<String> {
    request_bodies(server)
        .iter()
        .map(|body| {
            body["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["name"] == "Bash")
                .and_then(|t| t["description"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn the_model_is_told_bash_is_sandboxed_in_the_same_bytes_every_request() {
    let Some(scratch) = scratch() else { return };
    let project = Project::new_in(&scratch);
    let run = |server: &MockServer, sandbox: bool| {
        let mut run = tine(&project, server).env("IS_SANDBOX", "1").args([
            "-p",
            "go",
            "--permission-mode",
            "bypassPermissions",
        ]);
        if sandbox {
            run = run.args(["--sandbox"]);
        }
        run.run()
    };
    let plain = bash_session("echo hi").await;
    run(&plain, false).await.assert_success();
    let plain = bash_descriptions(&plain);
    assert_eq!(plain.len(), 2);
    assert!(plain.iter().all(|d| !d.contains("Sandbox:")), "{plain:?}");

    let sandboxed = bash_session("echo hi").await;
    let out = run(&sandboxed, true).await;
    out.assert_success();
    let described = bash_descriptions(&sandboxed);
    assert_eq!(described.len(), 2);
    if !landlock_supported().await {
        eprintln!("{UNSUPPORTED}");
        assert_fell_back(&out);
        assert_eq!(described, plain, "unsandboxed: nothing claimed");
        return;
    }
    // The plain description, then one note, the same bytes on both requests; no path in it.
    assert_eq!(described[0], described[1]);
    let note = described[0].strip_prefix(plain[0].as_str()).unwrap();
    assert!(note.starts_with("\n- Sandbox: "), "{note}");
    assert!(note.contains("write only inside the project"), "{note}");
    assert!(note.contains("Permission denied"), "{note}");
    assert!(
        !note.contains(&project.cwd().display().to_string()),
        "{note}"
    );
    let network_off = !out.stderr.contains("cannot turn the network off");
    assert_eq!(
        note.contains("Network connections are refused"),
        network_off,
        "{note}\n{}",
        out.stderr
    );
}
