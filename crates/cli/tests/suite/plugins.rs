//! Claude Code plugins through the binary against the mock (issue 36): a marketplace (a local
//! folder, and a local git repository cloned with the real `git`) whose plugin brings a
//! command, an agent, a skill, a hook and an MCP server (tine-mcp's stdio test server), added,
//! installed, listed, used in a session (the command's prompt sent, the agent and skill
//! listed, the hook run with `${CLAUDE_PLUGIN_ROOT}` put in and in its environment, the MCP
//! tool called), disabled (gone from the next session), uninstalled (files removed, settings
//! cleaned); a malformed `plugin.json` and a missing file skipped with a warning naming the
//! file while the rest loads; a name clash; an untrusted folder's `enabledPlugins` never run
//! in the UI; enabling mid-session leaves the next request's prefix alone until
//! `/reload-plugins`; and a plugin Claude Code installed under `~/.claude/plugins/` loads.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, TineRun, request_bodies};

use super::mcp_session::server_binary;
use super::terminal::{Tmux, untrusted_script};
use super::{STREAM_JSON, mock, stream_json_input, tine, tool_names};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Where a plugin's hook leaves what it saw: `${CLAUDE_PLUGIN_ROOT}` as tine put it into the
/// command (single-quoted, so the shell cannot), then `$CLAUDE_PLUGIN_ROOT` from its
/// environment.
fn hook_marker(project: &Project) -> PathBuf {
    project.root().join("hook-saw")
}

/// Plugin `name` at `root`: `/name:hi`, agent `greeter`, skill `greet`, a UserPromptSubmit
/// hook, and MCP server `echo` (the test server started through a script of the plugin).
fn plugin(project: &Project, root: &Path, name: &str) {
    write(
        &root.join(".claude-plugin/plugin.json"),
        &json!({"name": name, "version": "1.0.0", "description": "Says hello",
                "author": {"name": "T"}})
        .to_string(),
    );
    write(
        &root.join("commands/hi.md"),
        "---\ndescription: Say hi\n---\nSay hi to $ARGUMENTS",
    );
    write(
        &root.join("agents/greeter.md"),
        "---\nname: greeter\ndescription: Greets people\ntools: Read\n---\nYou greet.",
    );
    write(
        &root.join("skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greeting skill\n---\nGreet warmly.",
    );
    let marker = hook_marker(project);
    let hook = format!(
        "printf '%s|%s' '${{CLAUDE_PLUGIN_ROOT}}' \"$CLAUDE_PLUGIN_ROOT\" > '{}'",
        marker.display()
    );
    write(
        &root.join("hooks/hooks.json"),
        &json!({"description": "marks", "hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": hook}]}]}})
        .to_string(),
    );
    let script = root.join("scripts/server");
    write(
        &script,
        &format!("#!/bin/sh\nexec '{}' \"$@\"\n", server_binary().display()),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(
        &root.join(".mcp.json"),
        &json!({"mcpServers": {"echo": {"command": "${CLAUDE_PLUGIN_ROOT}/scripts/server",
                "args": []}}})
        .to_string(),
    );
}

/// A marketplace folder `local-mkt` listing plugin `hello` (in `plugins/hello`).
fn marketplace(project: &Project, dir: &Path, market: &str) {
    write(
        &dir.join(".claude-plugin/marketplace.json"),
        &json!({"name": market, "owner": {"name": "Tester"},
                "plugins": [{"name": "hello", "source": "./plugins/hello",
                             "description": "A hello plugin", "version": "1.0.0"}]})
        .to_string(),
    );
    plugin(project, &dir.join("plugins/hello"), "hello");
}

fn plugin_cmd(project: &Project, args: &[&str]) -> TineRun {
    TineRun::new(super::TINE, project, "http://127.0.0.1:9")
        .args(std::iter::once("plugin").chain(args.iter().copied()))
}

/// Runs `tine plugin ARGS`, which must succeed; its stdout.
async fn plugin_ok(project: &Project, args: &[&str]) -> String {
    let out = plugin_cmd(project, args).run().await;
    out.assert_success();
    out.stdout
}

/// Adds marketplace `local-mkt` (the folder `mkt` in the project) and installs `hello` from it.
async fn installed_from_a_local_marketplace(project: &Project) {
    let market = project.root().join("mkt");
    marketplace(project, &market, "local-mkt");
    plugin_ok(project, &["marketplace", "add", market.to_str().unwrap()]).await;
    plugin_ok(project, &["install", "hello@local-mkt"]).await;
}

/// The model: the command's prompt is answered, "call the tool" calls the plugin's echo.
fn scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("call the tool")
                .reply(Reply::tool_use(
                    "mcp__plugin_hello_echo__echo",
                    json!({"text": "ping from the plugin"}),
                )),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("Hi!"))
}

/// The text of every block of message `i`.
fn message_text(body: &Value, i: usize) -> String {
    let content = &body["messages"][i]["content"];
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match &b["text"] {
                Value::String(text) => text.clone(),
                _ => b["content"].to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The last block of the last message: what was sent this turn (the first message also
/// carries the context before it).
fn last_text(body: &Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            let block = blocks.last().unwrap();
            match &block["text"] {
                Value::String(text) => text.clone(),
                _ => block["content"].to_string(),
            }
        }
        _ => String::new(),
    }
}

/// The Agent tool's description (which lists the typed agents).
fn agent_description(body: &Value) -> String {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Agent")
        .map(|t| t["description"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

/// Checks that the session in `project` used plugin `hello` installed at `root`: the
/// command's body was the prompt, the agent and skill were listed, the hook saw the root both
/// ways, and the MCP tool answered.
async fn used_in_a_session(project: &Project, server: &MockServer, root: &Path) {
    let before = request_bodies(server).len();
    let out = tine(project, server)
        .args(["-p", "/hello:hi world"])
        .run()
        .await;
    out.assert_success();
    assert!(out.stdout.contains("Hi!"), "{}", out.stdout);
    let bodies = request_bodies(server);
    let body = &bodies[before];
    assert_eq!(
        last_text(body).trim(),
        "Say hi to world",
        "the command's body is the prompt"
    );
    assert!(
        message_text(body, 0).contains("- hello:greet: Greeting skill"),
        "the skill is listed: {}",
        message_text(body, 0)
    );
    assert!(
        agent_description(body).contains("- hello:greeter: Greets people"),
        "{}",
        agent_description(body)
    );
    let root = root.display().to_string();
    assert_eq!(
        std::fs::read_to_string(hook_marker(project)).unwrap(),
        format!("{root}|{root}"),
        "the hook saw ${{CLAUDE_PLUGIN_ROOT}} put in and in its environment"
    );
    // The bare name runs it too, while nothing else is called `hi`.
    let out = tine(project, server).args(["-p", "/hi there"]).run().await;
    out.assert_success();
    assert_eq!(
        last_text(request_bodies(server).last().unwrap()).trim(),
        "Say hi to there"
    );

    // The MCP tool, allowed by rule like any server's.
    let out = tine(project, server)
        .args([
            "-p",
            "call the tool",
            "--allowedTools",
            "mcp__plugin_hello_echo",
        ])
        .env("TINE_MCP_TIMEOUT", "30000")
        .run()
        .await;
    out.assert_success();
    let bodies = request_bodies(server);
    let last = bodies.last().unwrap();
    assert!(
        tool_names(last).contains(&"mcp__plugin_hello_echo__echo".to_owned()),
        "{:?}",
        tool_names(last)
    );
    assert!(
        last_text(last).contains("ping from the plugin"),
        "the tool's answer reached the model: {}",
        last_text(last)
    );
}

/// Checks that no part of plugin `hello` is in the session any more.
async fn gone_from_a_session(project: &Project, server: &MockServer) {
    let _ = std::fs::remove_file(hook_marker(project));
    let out = tine(project, server)
        .args(["-p", "/hello:hi world"])
        .env("TINE_MCP_TIMEOUT", "30000")
        .run()
        .await;
    out.assert_success();
    let bodies = request_bodies(server);
    let body = bodies.last().unwrap();
    assert_eq!(last_text(body).trim(), "/hello:hi world", "sent as text");
    assert!(!message_text(body, 0).contains("hello:greet"));
    assert!(!agent_description(body).contains("hello:greeter"));
    assert!(
        !tool_names(body)
            .iter()
            .any(|t| t.starts_with("mcp__plugin_hello"))
    );
    assert!(!hook_marker(project).exists(), "the hook ran");
}

#[tokio::test]
async fn a_local_marketplace_plugin_is_installed_listed_used_disabled_and_removed() {
    let project = Project::new();
    let market = project.root().join("mkt");
    marketplace(&project, &market, "local-mkt");
    let server = mock(scenario()).await;

    let out = plugin_ok(&project, &["marketplace", "add", market.to_str().unwrap()]).await;
    assert!(
        out.contains("Added marketplace local-mkt (1 plugin)"),
        "{out}"
    );
    let out = plugin_ok(&project, &["install", "hello@local-mkt"]).await;
    assert!(
        out.contains("1 command, 1 agent, 1 skill, 1 hook, 1 MCP server"),
        "{out}"
    );
    let installed = project.home().join("plugins/cache/local-mkt/hello/1.0.0");
    assert!(installed.join(".claude-plugin/plugin.json").is_file());
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&installed), 0o700);
    assert_eq!(mode(&installed.join("commands/hi.md")), 0o600);
    assert_eq!(
        mode(&installed.join("scripts/server")),
        0o700,
        "still runnable"
    );
    assert_eq!(
        mode(&project.home().join("plugins/installed_plugins.json")),
        0o600
    );
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(project.home().join("plugins/installed_plugins.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["version"], 2);
    assert_eq!(
        record["plugins"]["hello@local-mkt"][0]["installPath"],
        installed.display().to_string()
    );
    let settings = || std::fs::read_to_string(project.home().join("settings.json")).unwrap();
    assert!(
        settings().contains("\"hello@local-mkt\": true"),
        "{}",
        settings()
    );
    let out = plugin_ok(&project, &["list"]).await;
    assert!(
        out.contains("hello@local-mkt")
            && out.contains("Version: 1.0.0")
            && out.contains("✔ enabled"),
        "{out}"
    );

    used_in_a_session(&project, &server, &installed).await;

    let out = plugin_ok(&project, &["disable", "hello"]).await;
    assert!(out.contains("Disabled plugin hello@local-mkt"), "{out}");
    let out = plugin_ok(&project, &["list"]).await;
    assert!(out.contains("✘ disabled"), "{out}");
    gone_from_a_session(&project, &server).await;

    plugin_ok(&project, &["enable", "hello@local-mkt"]).await;
    let out = plugin_ok(&project, &["uninstall", "hello"]).await;
    assert!(out.contains("Uninstalled plugin hello@local-mkt"), "{out}");
    assert!(!installed.exists(), "its files are removed");
    assert!(!project.home().join("plugins/cache/local-mkt").exists());
    assert!(!settings().contains("hello@local-mkt"), "{}", settings());
    let record =
        std::fs::read_to_string(project.home().join("plugins/installed_plugins.json")).unwrap();
    assert!(!record.contains("hello@local-mkt"), "{record}");
    let out = plugin_ok(&project, &["list"]).await;
    assert!(out.contains("No plugins installed"), "{out}");
    assert!(
        market.join("plugins/hello/commands/hi.md").exists(),
        "the marketplace stays"
    );
    gone_from_a_session(&project, &server).await;
}

#[tokio::test]
async fn a_marketplace_in_a_local_git_repository_is_cloned_with_git() {
    let project = Project::new();
    let work = project.root().join("mkt-work");
    marketplace(&project, &work, "git-mkt");
    let git = |dir: &Path, args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&work, &["init", "--quiet"]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "--quiet", "-m", "marketplace"]);
    let bare = project.root().join("mkt.git");
    git(
        project.root(),
        &[
            "clone",
            "--quiet",
            "--bare",
            work.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    let url = format!("file://{}", bare.display());
    let out = plugin_ok(&project, &["marketplace", "add", &url]).await;
    assert!(
        out.contains("Added marketplace git-mkt (1 plugin) from git file://"),
        "{out}"
    );
    let clone = project.home().join("plugins/marketplaces/git-mkt");
    assert!(clone.join(".claude-plugin/marketplace.json").is_file());
    let known =
        std::fs::read_to_string(project.home().join("plugins/known_marketplaces.json")).unwrap();
    let known: Value = serde_json::from_str(&known).unwrap();
    assert_eq!(
        known["git-mkt"]["source"],
        json!({"source": "git", "url": url})
    );
    assert_eq!(
        known["git-mkt"]["installLocation"],
        clone.display().to_string()
    );
    // The bare repository's path works as well (cloned, not read in place).
    let out = plugin_ok(&project, &["marketplace", "add", bare.to_str().unwrap()]).await;
    assert!(out.contains("from git "), "{out}");

    plugin_ok(&project, &["install", "hello"]).await;
    let installed = project.home().join("plugins/cache/git-mkt/hello/1.0.0");
    assert!(installed.join("skills/greet/SKILL.md").is_file());
    assert!(!installed.join(".git").exists());
    let out = plugin_ok(&project, &["list"]).await;
    assert!(out.contains("hello@git-mkt"), "{out}");
    let out = plugin_ok(&project, &["marketplace", "list"]).await;
    assert!(out.contains("git-mkt"), "{out}");
    let server = mock(scenario()).await;
    used_in_a_session(&project, &server, &installed).await;
}

#[tokio::test]
async fn a_malformed_or_incomplete_plugin_is_skipped_naming_its_file_and_the_rest_load() {
    let project = Project::new();
    let server = mock(scenario()).await;
    let good = project.root().join("good");
    plugin(&project, &good, "hello");
    let broken = project.root().join("broken");
    write(
        &broken.join(".claude-plugin/plugin.json"),
        "{\"name\": \"broken\",",
    );
    write(&broken.join("commands/x.md"), "X");
    let incomplete = project.root().join("incomplete");
    write(
        &incomplete.join(".claude-plugin/plugin.json"),
        r#"{"name": "incomplete", "agents": ["./agents/missing.md"]}"#,
    );
    write(&incomplete.join("commands/y.md"), "Y");
    let out = tine(&project, &server)
        .args(["-p", "/hello:hi world", "--output-format", "json"])
        .args(["--plugin-dir", broken.to_str().unwrap()])
        .args(["--plugin-dir", good.to_str().unwrap()])
        .args(["--plugin-dir", incomplete.to_str().unwrap()])
        .run()
        .await;
    out.assert_success();
    let warning = |file: PathBuf, what: &str| {
        let file = file.display().to_string();
        assert!(
            out.stderr
                .lines()
                .any(|l| l.contains(&file) && l.contains(what) && l.contains("plugin skipped")),
            "no warning naming {file} ({what}):\n{}",
            out.stderr
        );
    };
    warning(broken.join(".claude-plugin/plugin.json"), "not valid JSON");
    warning(
        incomplete.join(".claude-plugin/plugin.json"),
        "./agents/missing.md",
    );
    let bodies = request_bodies(&server);
    assert_eq!(
        last_text(&bodies[0]).trim(),
        "Say hi to world",
        "the good one loads"
    );
    let out = tine(&project, &server)
        .args(["-p", "/broken:x"])
        .args(["--plugin-dir", broken.to_str().unwrap()])
        .run()
        .await;
    out.assert_success();
    assert_eq!(
        last_text(request_bodies(&server).last().unwrap()).trim(),
        "/broken:x"
    );
}

#[tokio::test]
async fn a_name_clash_keeps_the_first_plugin_and_the_projects_own_command() {
    let project = Project::new();
    let server = mock(scenario()).await;
    let first = project.root().join("first");
    plugin(&project, &first, "hello");
    let second = project.root().join("second");
    plugin(&project, &second, "hello");
    write(&second.join("commands/hi.md"), "The second one");
    // The project's own `/hi` keeps the bare name; `/hello:hi` is the plugin's.
    project.write(".claude/commands/hi.md", "The project's hi $ARGUMENTS");
    let run = |prompt: &str| {
        tine(&project, &server)
            .args(["-p", prompt])
            .args(["--plugin-dir", first.to_str().unwrap()])
            .args(["--plugin-dir", second.to_str().unwrap()])
    };
    let out = run("/hello:hi world").run().await;
    out.assert_success();
    let manifest = second
        .join(".claude-plugin/plugin.json")
        .display()
        .to_string();
    assert!(
        out.stderr.lines().any(
            |l| l.contains(&manifest) && l.contains("a plugin named `hello` is already loaded")
        ),
        "{}",
        out.stderr
    );
    assert_eq!(
        last_text(request_bodies(&server).last().unwrap()).trim(),
        "Say hi to world"
    );
    run("/hi world").run().await.assert_success();
    assert_eq!(
        last_text(request_bodies(&server).last().unwrap()).trim(),
        "The project's hi world"
    );
}

#[tokio::test]
async fn a_plugin_claude_code_installed_loads_from_its_store() {
    let project = Project::new();
    let server = mock(scenario()).await;
    // As Claude Code 2.1.332 lays it out after `claude plugin install hello@local-mkt`.
    let claude = project.home().join(".claude/plugins");
    let copy = claude.join("cache/local-mkt/hello/1.0.0");
    plugin(&project, &copy, "hello");
    write(
        &claude.join("known_marketplaces.json"),
        &json!({"local-mkt": {"source": {"source": "directory", "path": "/elsewhere/mkt"},
                "installLocation": "/elsewhere/mkt", "lastUpdated": "2026-12-07T20:57:16.266Z"}})
        .to_string(),
    );
    write(
        &claude.join("installed_plugins.json"),
        &json!({"version": 2, "plugins": {"hello@local-mkt": [{"scope": "user",
                "installPath": copy, "version": "1.0.0",
                "installedAt": "2026-12-07T20:57:18.178Z", "lastUpdated": "2026-12-07T20:57:18.178Z"}]}})
        .to_string(),
    );
    write(
        &project.home().join(".claude/settings.json"),
        &json!({"enabledPlugins": {"hello@local-mkt": true}}).to_string(),
    );
    let out = plugin_ok(&project, &["list"]).await;
    assert!(
        out.contains("hello@local-mkt") && out.contains("Installed by: Claude Code"),
        "{out}"
    );
    used_in_a_session(&project, &server, &copy).await;
    // tine never changes Claude Code's store: uninstall refuses, disable is tine's own.
    let out = plugin_cmd(&project, &["uninstall", "hello"]).run().await;
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("installed by Claude Code"),
        "{}",
        out.stderr
    );
    assert!(copy.exists());
    plugin_ok(&project, &["disable", "hello@local-mkt"]).await;
    assert!(
        std::fs::read_to_string(project.home().join(".claude/settings.json"))
            .unwrap()
            .contains("true"),
        "Claude Code's settings stay as they were"
    );
    gone_from_a_session(&project, &server).await;
}

#[tokio::test]
async fn an_untrusted_folders_enabled_plugins_never_run_in_the_ui() {
    let project = Project::new();
    installed_from_a_local_marketplace(&project).await;
    // Off for the user; the folder turns it on.
    plugin_ok(&project, &["disable", "hello"]).await;
    project.write(
        ".claude/settings.json",
        &json!({"enabledPlugins": {"hello@local-mkt": true}}).to_string(),
    );
    let marker = project.root().join("session-start-ran");
    let installed = project.home().join("plugins/cache/local-mkt/hello/1.0.0");
    write(
        &installed.join("hooks/hooks.json"),
        &json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command",
                "command": format!("touch '{}'", marker.display())}]}]}})
        .to_string(),
    );
    let server = mock(Scenario::new().default_reply(Reply::text("Hello."))).await;
    let Some(tmux) = Tmux::start(project.root()).await else {
        return;
    };
    let first = untrusted_script(&project, &server, "first", "");
    tmux.open("first", &first).await;
    let screen = tmux
        .wait_for("first", "Do you trust the files in this folder?")
        .await;
    assert!(screen.contains("hello@local-mkt"), "{screen}");
    assert!(screen.contains("❯ 2. No, exit"), "{screen}");
    tmux.key("first", "Enter").await;
    tmux.wait_exited("first", &project.root().join("first"))
        .await;
    assert!(
        !marker.exists(),
        "the plugin's hook ran in an untrusted folder"
    );
    assert!(server.requests().is_empty());
    // Trusted, the folder's plugin runs.
    project.trust();
    let out = tine(&project, &server).args(["-p", "hi"]).run().await;
    out.assert_success();
    assert!(marker.exists(), "the folder's plugin runs once trusted");
}

#[tokio::test]
async fn a_plugin_enabled_mid_session_waits_for_reload_plugins() {
    let project = Project::new();
    installed_from_a_local_marketplace(&project).await;
    plugin_ok(&project, &["disable", "hello"]).await;
    let server = mock(scenario()).await;
    let input = stream_json_input(&[
        "first",
        "/plugin enable hello",
        "second",
        "/reload-plugins",
        "third",
    ]);
    let out = tine(&project, &server)
        .args(STREAM_JSON)
        .env("TINE_MCP_TIMEOUT", "30000")
        .stdin(input)
        .run()
        .await;
    out.assert_success();
    let results: Vec<String> = out
        .json_lines()
        .into_iter()
        .filter(|l| l["type"] == "result")
        .map(|l| l["result"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(results.len(), 5, "{results:#?}");
    assert!(
        results[1].contains("Enabled plugin hello@local-mkt"),
        "{}",
        results[1]
    );
    assert!(results[1].contains("/reload-plugins"), "{}", results[1]);
    assert!(
        results[3].contains("Reloaded plugins: hello@local-mkt")
            && results[3].contains("a cache break you asked for"),
        "{}",
        results[3]
    );
    let bodies = request_bodies(&server);
    let mains: Vec<&Value> = bodies
        .iter()
        .filter(|b| {
            ["first", "second", "third"]
                .iter()
                .any(|t| last_text(b).contains(t))
        })
        .collect();
    assert_eq!(mains.len(), 3, "{}", bodies.len());
    let (first, second, third) = (mains[0], mains[1], mains[2]);
    // Enabled mid-session: the next request's prefix is the first's, byte for byte.
    assert_eq!(first["tools"], second["tools"]);
    assert_eq!(first["system"], second["system"]);
    // (The first message's last block moved its breakpoint: not part of the key.)
    assert_eq!(
        first["messages"][0]["content"][0],
        second["messages"][0]["content"][0]
    );
    assert_eq!(
        first["messages"][0]["content"][1]["text"],
        second["messages"][0]["content"][1]["text"]
    );
    assert!(
        !tool_names(second)
            .iter()
            .any(|t| t.starts_with("mcp__plugin_hello"))
    );
    let hit = server
        .requests()
        .iter()
        .find(|r| r.json().is_some_and(|b| b == *second))
        .and_then(|r| r.usage.as_ref().map(|u| u.cache_read_input_tokens))
        .unwrap_or_default();
    assert!(hit > 0, "the second request read the first's prefix");
    // After /reload-plugins: the plugin's tools, and the skill named with the prompt.
    assert!(tool_names(third).contains(&"mcp__plugin_hello_echo__echo".to_owned()));
    assert!(agent_description(third).contains("hello:greeter"));
    let sent = message_text(third, third["messages"].as_array().unwrap().len() - 1);
    assert!(sent.contains("- hello:greet: Greeting skill"), "{sent}");
    assert!(sent.contains("The plugins were reloaded"), "{sent}");
}
