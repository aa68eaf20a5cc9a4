use std::path::Path;

use serde_json::json;

use super::*;
use crate::settings::{SettingsPaths, load};

#[test]
fn a_manifest_is_read_with_its_component_paths() {
    let manifest = parse_manifest(
        Path::new("/p/.claude-plugin/plugin.json"),
        r#"{"name": "hello", "version": "1.0.0", "author": {"name": "T"},
            "commands": ["./extra/cmd.md"], "agents": "./more-agents",
            "hooks": {"hooks": {"Stop": []}}, "mcpServers": "./servers.json",
            "homepage": "https://example.com"}"#,
    )
    .unwrap();
    assert_eq!(manifest.name, "hello");
    assert_eq!(manifest.version.as_deref(), Some("1.0.0"));
    assert_eq!(manifest.author.as_deref(), Some("T"));
    assert_eq!(manifest.commands, ["./extra/cmd.md"]);
    assert_eq!(manifest.agents, ["./more-agents"]);
    assert!(matches!(&manifest.hooks[..], [ComponentRef::Inline(_)]));
    assert_eq!(
        manifest.mcp_servers,
        [ComponentRef::Path("./servers.json".into())]
    );
}

#[test]
fn a_bad_manifest_names_its_file_and_what_to_fix() {
    let path = Path::new("/p/.claude-plugin/plugin.json");
    let error = parse_manifest(path, "{\"name\": \"x\",").unwrap_err();
    assert_eq!(error.path, path);
    assert!(error.message.contains("not valid JSON"), "{error}");
    let error = parse_manifest(path, r#"{"version": "1"}"#).unwrap_err();
    assert!(error.to_string().contains("has no `name`"), "{error}");
    let error = parse_manifest(path, r#"{"name": "x", "commands": "../outside"}"#).unwrap_err();
    assert!(error.message.contains("must start with `./`"), "{error}");
    let error = parse_manifest(path, r#"{"name": "a b"}"#).unwrap_err();
    assert!(error.message.contains("not a plugin name"), "{error}");
    // No manifest at all: the folder's name and the default layout.
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(read_manifest(dir.path(), "folder").unwrap().name, "folder");
}

#[test]
fn a_marketplace_lists_its_plugins_and_their_sources() {
    let market = parse_marketplace(
        Path::new("/m/.claude-plugin/marketplace.json"),
        r#"{"name": "team", "owner": {"name": "Ops"}, "metadata": {"pluginRoot": "./plugins"},
            "plugins": [
              {"name": "a", "source": "./a", "version": "2.0.0"},
              {"name": "b", "source": {"source": "github", "repo": "o/b", "ref": "v1"}},
              {"name": "c", "source": {"source": "url", "url": "https://x/c.git"}, "strict": false},
              {"name": "d", "source": {"source": "npm", "package": "d"}}
            ]}"#,
    )
    .unwrap();
    assert_eq!(market.name, "team");
    assert_eq!(market.owner.as_deref(), Some("Ops"));
    assert_eq!(market.plugin_root.as_deref(), Some("./plugins"));
    assert_eq!(
        market.plugin("a").unwrap().source,
        PluginSource::Relative("./a".into())
    );
    assert!(matches!(
        &market.plugin("b").unwrap().source,
        PluginSource::Git { url, git_ref: Some(r), .. } if url == "https://github.com/o/b.git" && r == "v1"
    ));
    assert!(!market.plugin("c").unwrap().strict);
    assert_eq!(
        market.plugin("d").unwrap().source,
        PluginSource::Unsupported("npm".into())
    );
    let error = parse_marketplace(Path::new("/m.json"), r#"{"name": "x"}"#).unwrap_err();
    assert!(error.message.contains("no `plugins`"), "{error}");
}

#[test]
fn stores_read_both_install_formats_and_only_tines_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let claude = PluginStore::claude_code(dir.path());
    std::fs::create_dir_all(&claude.root).unwrap();
    std::fs::write(
        claude.installed_path(),
        json!({"version": 2, "plugins": {"hello@m": [{"scope": "user", "installPath": "/c/hello", "version": "1.0.0"}],
               "old@m": {"installPath": "/c/old"}}})
        .to_string(),
    )
    .unwrap();
    let installed = claude.installed().unwrap();
    assert_eq!(installed["hello@m"][0].install_path, Path::new("/c/hello"));
    assert_eq!(installed["old@m"][0].scope, "user");
    assert!(claude.write_installed(&installed).is_err());

    let tine = PluginStore::tine(&dir.path().join("home"));
    let mut known = BTreeMap::new();
    known.insert(
        "m".to_owned(),
        KnownMarketplace {
            source: MarketplaceSource::Directory("/m".into()),
            install_location: "/m".into(),
            last_updated: None,
        },
    );
    tine.write_known_marketplaces(&known).unwrap();
    assert_eq!(tine.known_marketplaces().unwrap(), known);
    tine.write_installed(&installed).unwrap();
    assert_eq!(tine.installed().unwrap(), installed);
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&tine.root), 0o700);
    assert_eq!(mode(&tine.installed_path()), 0o600);
    assert_eq!(mode(&tine.known_marketplaces_path()), 0o600);
}

#[test]
fn enabled_plugins_take_the_highest_source_of_each_id() {
    let dir = tempfile::tempdir().unwrap();
    let (cwd, home) = (dir.path().join("p"), dir.path().join("h"));
    std::fs::create_dir_all(cwd.join(".claude")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("settings.json"),
        r#"{"enabledPlugins": {"a@m": true, "b@m": true},
            "extraKnownMarketplaces": {"m": {"source": {"source": "directory", "path": "/m"}}}}"#,
    )
    .unwrap();
    std::fs::write(
        cwd.join(".claude/settings.json"),
        r#"{"enabledPlugins": {"b@m": false, "c@m": true, "d@m": "yes"}}"#,
    )
    .unwrap();
    let loaded = load(&SettingsPaths::new(&cwd, &home));
    let enabled = enabled_plugins(&loaded);
    let summary: Vec<_> = enabled
        .iter()
        .map(|e| (e.id.as_str(), e.enabled, e.source))
        .collect();
    assert_eq!(
        summary,
        [
            ("a@m", true, SettingsSource::User),
            ("b@m", false, SettingsSource::Project),
            ("c@m", true, SettingsSource::Project),
        ]
    );
    let extra = extra_marketplaces(&loaded);
    assert_eq!(extra[0].0, "m");
    assert_eq!(extra[0].1, MarketplaceSource::Directory("/m".into()));
    assert_eq!(
        PluginId::parse("a@b@c").map(|id| id.to_string()).as_deref(),
        Some("a@b@c")
    );
    assert!(PluginId::parse("a@").is_none());
}

#[test]
fn a_plugins_hooks_file_is_read_whole_or_refused() {
    let path = Path::new("/p/hooks/hooks.json");
    let hooks = crate::settings::parse_hooks_file(
        path,
        r#"{"description": "fmt", "hooks": {"PostToolUse": [{"matcher": "Edit",
            "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/fmt.sh"}]}]}}"#,
    )
    .unwrap();
    assert_eq!(hooks.len(), 1);
    assert_eq!(
        hooks[0].command.as_deref(),
        Some("${CLAUDE_PLUGIN_ROOT}/fmt.sh")
    );
    assert!(hooks[0].at.to_string().starts_with("/p/hooks/hooks.json"));
    let errors =
        crate::settings::parse_hooks_file(path, r#"{"hooks": {"Stop": "x"}}"#).unwrap_err();
    assert!(
        errors[0].to_string().contains("/p/hooks/hooks.json"),
        "{errors:?}"
    );
    assert!(crate::settings::parse_hooks_file(path, "{").is_err());
    assert!(crate::settings::parse_hooks_file(path, "{}").is_err());
}
