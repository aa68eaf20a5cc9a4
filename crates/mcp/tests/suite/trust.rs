//! `.mcp.json` servers start only once trusted in settings the repository cannot write: an
//! untrusted server is never spawned (its marker file is never written).

use serde_json::json;
use tine_mcp::McpServerStatus;

use super::support::*;

fn project_server(scratch: &Scratch, name: &str) -> std::path::PathBuf {
    let marker = scratch.marker(name);
    let marker_arg = marker.display().to_string();
    scratch.write(
        ".mcp.json",
        &json!({"mcpServers": {name: stdio_server(&["--no-resources", "--marker", &marker_arg])}}),
    );
    marker
}

#[tokio::test]
async fn an_untrusted_project_server_is_never_started() {
    let scratch = Scratch::new();
    let marker = project_server(&scratch, "repo");
    // Project settings, committed with the repository, cannot trust it.
    scratch.write(
        ".tine/settings.json",
        &json!({"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["repo"]}),
    );
    let (manager, tools, warnings) = scratch.start(Vec::new(), scratch.options()).await;
    assert!(tools.is_empty(), "{:?}", names(&tools));
    let McpServerStatus::NeedsTrust { how } = &manager.statuses()[0].status else {
        panic!("{:?}", manager.statuses())
    };
    assert!(how.contains("enabledMcpjsonServers"), "{how}");
    assert!(
        warnings.iter().any(|w| w.message.contains("not started")),
        "{warnings:?}"
    );
    manager.shutdown().await;
    assert!(!marker.exists(), "the untrusted server ran");
}

#[tokio::test]
async fn local_or_user_settings_trust_it_and_disabled_wins() {
    let scratch = Scratch::new();
    let marker = project_server(&scratch, "repo");
    scratch.write(
        ".tine/settings.local.json",
        &json!({"enabledMcpjsonServers": ["repo"]}),
    );
    let (manager, tools, _) = scratch.start(Vec::new(), scratch.options()).await;
    assert!(names(&tools).contains(&"mcp__repo__echo".to_owned()));
    assert!(marker.exists());
    manager.shutdown().await;

    std::fs::remove_file(&marker).unwrap_or_else(|e| panic!("{e}"));
    std::fs::remove_file(scratch.project.join(".tine/settings.local.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    scratch.write_user_settings(&json!({"enableAllProjectMcpServers": true}));
    scratch.write(
        ".tine/settings.local.json",
        &json!({"disabledMcpjsonServers": ["repo"]}),
    );
    let (manager, tools, _) = scratch.start(Vec::new(), scratch.options()).await;
    assert!(tools.is_empty());
    assert_eq!(manager.statuses()[0].status, McpServerStatus::Disabled);
    manager.shutdown().await;
    assert!(!marker.exists(), "the disabled server ran");
}

#[tokio::test]
async fn mcp_servers_in_project_settings_are_refused() {
    let scratch = Scratch::new();
    let marker = scratch.marker("sneaky");
    let marker_arg = marker.display().to_string();
    scratch.write(
        ".tine/settings.json",
        &json!({"mcpServers": {"sneaky": stdio_server(&["--marker", &marker_arg])}}),
    );
    let (manager, tools, warnings) = scratch.start(Vec::new(), scratch.options()).await;
    assert!(tools.is_empty());
    assert!(manager.statuses().is_empty());
    assert!(
        warnings
            .iter()
            .any(|w| w.message.contains("put project servers in .mcp.json")),
        "{warnings:?}"
    );
    assert!(!marker.exists());
}

#[tokio::test]
async fn a_flag_server_starts_and_shadows_a_project_one() {
    let scratch = Scratch::new();
    let project_marker = project_server(&scratch, "repo");
    let flag = mcp_config(json!({"repo": stdio_server(&["--no-resources"])}));
    let (manager, tools, _) = scratch.start(vec![flag], scratch.options()).await;
    assert!(names(&tools).contains(&"mcp__repo__echo".to_owned()));
    assert_eq!(manager.statuses()[0].scope, tine_mcp::McpScope::Dynamic);
    manager.shutdown().await;
    assert!(!project_marker.exists());
}
