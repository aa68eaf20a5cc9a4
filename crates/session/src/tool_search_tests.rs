use serde_json::json;

use super::*;

fn definition(name: &str, description_bytes: usize) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        description: "d".repeat(description_bytes),
        input_schema: json!({"type": "object"}),
        defer_loading: false,
        cache_control: None,
    }
}

/// Built-ins as the pool sorts them, then `mcp` MCP tools of `bytes` bytes each.
fn array(mcp: usize, bytes: usize) -> ToolArray {
    let mut tools = vec![
        definition("Bash", 2000),
        definition("BashOutput", 800),
        definition("ExitPlanMode", 900),
        definition("KillShell", 400),
        definition("NotebookEdit", 1500),
        definition("Read", 1700),
        definition("TaskOutput", 400),
        definition("TaskStop", 300),
        definition("WebFetch", 1100),
        definition("Write", 1000),
    ];
    tools.extend((0..mcp).map(|i| definition(&format!("mcp__s__tool_{i:03}"), bytes)));
    ToolArray::new(tools)
}

fn settings(json: &str) -> LoadedSettings {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    std::fs::create_dir_all(project.join(".tine")).unwrap();
    std::fs::write(project.join(".tine/settings.json"), json).unwrap();
    let paths = tine_config::settings::SettingsPaths::new(&project, &dir.path().join("home"));
    tine_config::settings::load(&paths)
}

#[test]
fn the_mode_comes_from_the_environment_then_the_setting() {
    let mut notices = Vec::new();
    let auto = ToolSearchMode::Auto(DEFAULT_AUTO_PERCENT);
    let none = settings("{}");
    assert_eq!(
        ToolSearchMode::from_settings(&none, None, &mut notices),
        auto
    );
    let never = settings(r#"{"toolSearch": "never"}"#);
    assert_eq!(
        ToolSearchMode::from_settings(&never, None, &mut notices),
        ToolSearchMode::Never
    );
    assert_eq!(
        ToolSearchMode::from_settings(&never, Some("true"), &mut notices),
        ToolSearchMode::Always,
        "Claude Code's variable wins"
    );
    assert_eq!(
        ToolSearchMode::from_settings(&none, Some("auto:25"), &mut notices),
        ToolSearchMode::Auto(25)
    );
    let bool_setting = settings(r#"{"toolSearch": false}"#);
    assert_eq!(
        ToolSearchMode::from_settings(&bool_setting, None, &mut notices),
        ToolSearchMode::Never
    );
    assert!(notices.is_empty());
    let bad = settings(r#"{"toolSearch": "sometimes"}"#);
    assert_eq!(
        ToolSearchMode::from_settings(&bad, None, &mut notices),
        auto
    );
    assert_eq!(notices.len(), 1, "{notices:?}");
}

#[test]
fn auto_defers_mcp_tools_past_the_share_of_the_window() {
    let auto = ToolSearchMode::Auto(DEFAULT_AUTO_PERCENT);
    // 120 tools of ~1.2 KB: ~36k tokens, past 10% of 200k.
    let many = decide(auto, &array(120, 1200), 200_000, false);
    assert_eq!(many.len(), 7 + 120);
    assert!(many.contains("mcp__s__tool_119") && many.contains("WebFetch"));
    assert!(!many.contains("Bash") && !many.contains("Read"));
    // A few small MCP tools stay in the array; the rare built-ins are deferred alone.
    let few = decide(auto, &array(3, 100), 200_000, false);
    assert!(!few.iter().any(|n| n.starts_with("mcp__")));
    assert_eq!(few.len(), 7);
    // The share is the window's, of 200k at most: a 32k window defers 12 tools, a 1M one
    // counts as 200k.
    let small = decide(auto, &array(12, 1200), 32_000, false);
    assert!(small.contains("mcp__s__tool_000"));
    assert!(!decide(auto, &array(12, 1200), 200_000, false).contains("mcp__s__tool_000"));
    let wide = decide(auto, &array(120, 1200), 1_000_000, false);
    assert!(wide.contains("mcp__s__tool_000"));
    assert!(
        !decide(
            ToolSearchMode::Auto(30),
            &array(120, 1200),
            1_000_000,
            false
        )
        .contains("mcp__s__tool_000")
    );
    // Starting in plan mode, ExitPlanMode stays in the array.
    assert!(!decide(auto, &array(0, 0), 200_000, true).contains("ExitPlanMode"));
    assert!(decide(ToolSearchMode::Never, &array(120, 1200), 200_000, false).is_empty());
    assert_eq!(
        decide(ToolSearchMode::Always, &array(3, 100), 200_000, false).len(),
        10
    );
}

#[test]
fn auto_leaves_built_ins_that_cost_less_than_deferring_them() {
    let tiny = ToolArray::new(vec![
        definition("Read", 1000),
        definition("TaskStop", 10),
        definition("KillShell", 10),
    ]);
    let auto = ToolSearchMode::Auto(DEFAULT_AUTO_PERCENT);
    assert!(decide(auto, &tiny, 200_000, false).is_empty());
}

#[test]
fn apply_puts_tool_search_among_the_built_ins_and_the_rest_in_the_catalog() {
    let definitions = array(2, 100);
    let tools: Vec<Arc<dyn Tool>> = Vec::new();
    let deferred: BTreeSet<String> = ["WebFetch", "mcp__s__tool_001"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    let (_, array) = apply(&tools, &definitions, &deferred);
    let sent: Vec<&str> = array.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        sent,
        [
            "Bash",
            "BashOutput",
            "DeferredToolPlaceholder",
            "ExitPlanMode",
            "KillShell",
            "NotebookEdit",
            "Read",
            "TaskOutput",
            "TaskStop",
            "ToolSearch",
            "Write",
            "mcp__s__tool_000",
        ]
    );
    assert_eq!(
        array
            .deferred()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["WebFetch", "mcp__s__tool_001"]
    );
    let context = with_reminder(Arc::from("ctx"), &array);
    assert!(context.starts_with("ctx\n\n<system-reminder>\nThe following deferred tools"));
    assert!(context.ends_with("WebFetch\nmcp__s__tool_001\n</system-reminder>"));
    assert_eq!(&*with_reminder(Arc::from("ctx"), &definitions), "ctx");
}

#[test]
fn new_deferred_tools_are_named_once() {
    let new = NewDeferredTools::default();
    assert_eq!(new.take_reminder(), None);
    new.add(["mcp__b__x".to_owned(), "mcp__a__y".to_owned()]);
    let reminder = new.take_reminder().unwrap();
    assert!(reminder.ends_with("mcp__a__y\nmcp__b__x\n</system-reminder>"));
    assert_eq!(new.take_reminder(), None);
}

struct FakeTool(&'static str);

impl Tool for FakeTool {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> String {
        format!("{} does it", self.0)
    }
    fn input_schema(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    fn call<'a>(
        &'a self,
        _input: serde_json::Value,
        _ctx: &'a tine_tools::ToolContext,
    ) -> tine_tools::ToolFuture<'a> {
        Box::pin(async { Ok(tine_tools::ToolOutput::text("ok")) })
    }
    fn permission_target(
        &self,
        _input: &serde_json::Value,
        _ctx: &tine_tools::ToolContext,
    ) -> tine_tools::PermissionTarget {
        tine_tools::PermissionTarget::Other { content: None }
    }
}

#[test]
fn a_restart_changes_the_catalog_and_never_the_arrays_bytes() {
    let tool = |name: &'static str| Arc::new(FakeTool(name)) as Arc<dyn Tool>;
    let tools = vec![tool("Read"), tool("WebFetch"), tool("mcp__s__old")];
    let definitions: ToolArray = tools
        .iter()
        .map(|t| definition_of(t.as_ref()))
        .collect::<Vec<_>>()
        .into();
    let deferred: BTreeSet<String> = ["WebFetch", "mcp__s__old"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    let (tools, array) = apply(&tools, &definitions, &deferred);
    // The server now offers another tool and not the old one.
    let Offered {
        tools: after,
        array: offered,
        new,
    } = offer(&tools, &array, &[tool("mcp__s__new")]).unwrap();
    assert_eq!(offered.json(), array.json(), "the same bytes");
    assert_eq!(
        offered
            .deferred()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["WebFetch", "mcp__s__new"]
    );
    assert_eq!(new, ["mcp__s__new"]);
    let names: Vec<&str> = after.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["Read", "ToolSearch", "WebFetch", "mcp__s__new"]);
    // ToolSearch searches the new catalog.
    let search = after.iter().find(|t| t.name() == TOOL_SEARCH).unwrap();
    let found = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(tine_tools::run_tool(
            search.as_ref(),
            json!({"query": "select:mcp__s__new,mcp__s__old"}),
            &tine_tools::ToolContext::new(std::env::temp_dir()),
        ));
    assert_eq!(found.references, ["mcp__s__new"]);
    // Without deferred tools, nothing to offer this way.
    assert!(offer(&tools, &definitions, &[]).is_none());
}
