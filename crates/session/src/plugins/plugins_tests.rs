use std::path::{Path, PathBuf};

use serde_json::json;
use tine_config::settings::{SettingsPaths, load};

use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A plugin with one of each part at `root`.
fn plugin(root: &Path, name: &str) {
    write(
        &root.join(".claude-plugin/plugin.json"),
        &json!({"name": name, "version": "1.0.0"}).to_string(),
    );
    write(
        &root.join("commands/hi.md"),
        "---\ndescription: Say hi\n---\nSay hi to $ARGUMENTS from ${CLAUDE_PLUGIN_ROOT}",
    );
    write(
        &root.join("agents/greeter.md"),
        "---\nname: greeter\ndescription: Greets\ntools: Read\n---\nYou greet.",
    );
    write(
        &root.join("skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greeting skill\n---\nGreet warmly.",
    );
    write(
        &root.join("hooks/hooks.json"),
        r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo ${CLAUDE_PLUGIN_ROOT}"}]}]}}"#,
    );
    write(
        &root.join(".mcp.json"),
        r#"{"mcpServers": {"echo": {"command": "${CLAUDE_PLUGIN_ROOT}/srv", "args": ["--root", "${CLAUDE_PLUGIN_ROOT}"]}}}"#,
    );
}

struct World {
    _dir: tempfile::TempDir,
    cwd: PathBuf,
    home: PathBuf,
    user: PathBuf,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let (cwd, home, user) = (root.join("p"), root.join("h"), root.join("u"));
        for d in [&cwd, &home, &user] {
            std::fs::create_dir_all(d).unwrap();
        }
        Self {
            _dir: dir,
            cwd,
            home,
            user,
        }
    }

    fn load(&self, dirs: &[PathBuf]) -> SessionPlugins {
        let loaded = load(&SettingsPaths::new(&self.cwd, &self.home).with_user_home(&self.user));
        SessionPlugins::load(
            &PluginPlaces {
                cwd: &self.cwd,
                home: &self.home,
                user_home: Some(&self.user),
            },
            &loaded,
            dirs,
            false,
        )
    }
}

#[test]
fn a_plugin_dir_brings_every_part_under_its_name() {
    let world = World::new();
    let root = world.cwd.join("hello-plugin");
    plugin(&root, "hello");
    let plugins = world.load(&[PathBuf::from("hello-plugin")]);
    assert!(plugins.warnings.is_empty(), "{:?}", plugins.warnings);
    let plugin = &plugins.plugins[0];
    assert_eq!(
        (plugin.name.as_str(), plugin.origin.clone()),
        ("hello", PluginOrigin::Dir)
    );
    let parts = &plugin.parts;
    assert_eq!(parts.commands[0].name, "hello:hi");
    assert!(
        parts.commands[0]
            .body
            .ends_with(&format!("from {}", root.display()))
    );
    assert_eq!(parts.agents[0].name, "hello:greeter");
    assert_eq!(parts.skills[0].name, "hello:greet");
    assert_eq!(
        parts.hooks[0].command.as_deref(),
        Some(format!("echo {}", root.display()).as_str())
    );
    let server = &parts.mcp_servers[0];
    assert_eq!(server.name, "plugin:hello:echo");
    let tine_mcp::McpServerConfig::Stdio { command, args, env } = &server.config else {
        panic!("stdio");
    };
    assert_eq!(*command, format!("{}/srv", root.display()));
    assert_eq!(args[1], root.display().to_string());
    assert_eq!(env["CLAUDE_PLUGIN_ROOT"], root.display().to_string());
    // A command runs by its plugin's name, or bare while no other plugin has it.
    assert_eq!(plugins.command("hello:hi").unwrap().name, "hello:hi");
    assert_eq!(plugins.command("hi").unwrap().name, "hello:hi");
    assert_eq!(
        parts.summary(),
        "1 command, 1 agent, 1 skill, 1 hook, 1 MCP server"
    );
}

#[test]
fn a_bad_plugin_is_skipped_naming_its_file_and_the_rest_load() {
    let world = World::new();
    plugin(&world.cwd.join("good"), "good");
    write(
        &world.cwd.join("broken/.claude-plugin/plugin.json"),
        "{\"name\": \"broken\",",
    );
    let missing = world.cwd.join("missing");
    plugin(&missing, "missing");
    write(
        &missing.join(".claude-plugin/plugin.json"),
        r#"{"name": "missing", "commands": ["./extra/gone.md"]}"#,
    );
    let hooks = world.cwd.join("badhooks");
    plugin(&hooks, "badhooks");
    write(
        &hooks.join("hooks/hooks.json"),
        r#"{"hooks": {"NoSuchEvent": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#,
    );
    let clash = world.cwd.join("clash");
    plugin(&clash, "good");
    let dirs: Vec<PathBuf> = ["good", "broken", "missing", "badhooks", "clash"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let plugins = world.load(&dirs);
    let names: Vec<&str> = plugins.plugins.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    let warnings = plugins.warnings.join("\n");
    assert_eq!(plugins.warnings.len(), 4, "{warnings}");
    let named = |path: PathBuf, what: &str| {
        assert!(
            plugins
                .warnings
                .iter()
                .any(|w| w.contains(&path.display().to_string()) && w.contains(what)),
            "{what} at {}:\n{warnings}",
            path.display()
        );
    };
    named(
        world.cwd.join("broken/.claude-plugin/plugin.json"),
        "not valid JSON",
    );
    named(
        missing.join(".claude-plugin/plugin.json"),
        "./extra/gone.md",
    );
    named(hooks.join("hooks/hooks.json"), "NoSuchEvent");
    named(clash.join(".claude-plugin/plugin.json"), "already loaded");
}

#[test]
fn enabled_plugins_load_from_tines_store_then_claude_codes() {
    let world = World::new();
    // Claude Code's layout: the record, the copy, and its settings enabling it.
    let claude = tine_config::plugins::PluginStore::claude_code(&world.user);
    let cc_copy = claude.root.join("cache/mkt/cc/1.0.0");
    plugin(&cc_copy, "cc");
    write(
        &claude.installed_path(),
        &json!({"version": 2, "plugins": {"cc@mkt": [{"scope": "user", "installPath": cc_copy, "version": "1.0.0"}]}})
            .to_string(),
    );
    write(
        &world.user.join(".claude/settings.json"),
        &json!({"enabledPlugins": {"cc@mkt": true, "gone@mkt": true}}).to_string(),
    );
    // A project may turn on only what is installed, and a local `false` turns it off.
    write(
        &world.cwd.join(".claude/settings.json"),
        &json!({"enabledPlugins": {"cc@mkt": true}}).to_string(),
    );
    let plugins = world.load(&[]);
    assert_eq!(plugins.plugins.len(), 1, "{:?}", plugins.warnings);
    assert!(matches!(
        &plugins.plugins[0].origin,
        PluginOrigin::Enabled {
            by_claude_code: true,
            source: SettingsSource::Project,
            ..
        }
    ));
    assert!(
        plugins.warnings[0].contains("gone@mkt is enabled but not installed"),
        "{:?}",
        plugins.warnings
    );
    let loaded = load(&SettingsPaths::new(&world.cwd, &world.home).with_user_home(&world.user));
    assert_eq!(
        folder_plugins(&world.cwd, &world.home, Some(&world.user), &loaded),
        [format!(
            "cc@mkt (hooks SessionStart: echo {}; MCP servers plugin:cc:echo)",
            cc_copy.display()
        )]
    );
    write(
        &world.cwd.join(".claude/settings.local.json"),
        &json!({"enabledPlugins": {"cc@mkt": false}}).to_string(),
    );
    assert!(world.load(&[]).plugins.is_empty());
}
