use serde_json::json;

use super::*;

fn definition(name: &str, description: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: json!({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}),
        defer_loading: false,
        cache_control: None,
    }
}

fn catalog() -> Vec<ToolDefinition> {
    vec![
        definition("NotebookEdit", "Edits a cell of a Jupyter notebook."),
        definition("WebFetch", "Fetches a URL and answers a prompt about it."),
        definition(
            "mcp__github__create_issue",
            "Opens an issue in a repository.",
        ),
        definition(
            "mcp__github__list_issues",
            "Lists the issues of a repository.",
        ),
        definition(
            "mcp__slack__send_message",
            "Sends a message to a Slack channel.",
        ),
        definition(
            "mcp__slack__list_channels",
            "Lists the channels; send nothing.",
        ),
    ]
}

#[test]
fn select_takes_the_names_given_in_their_order() {
    let catalog = catalog();
    assert_eq!(
        search(&catalog, "select:WebFetch,mcp__github__create_issue", 1),
        ["WebFetch", "mcp__github__create_issue"],
        "a select is not capped by max_results"
    );
    assert_eq!(
        search(&catalog, " SELECT: webfetch , Nope,WebFetch", 5),
        ["WebFetch"],
        "case-insensitive fallback, unknown and repeated names skipped"
    );
    assert!(search(&catalog, "select:", 5).is_empty());
}

#[test]
fn keywords_rank_names_before_descriptions() {
    let catalog = catalog();
    assert_eq!(search(&catalog, "notebook", 5), ["NotebookEdit"]);
    // "issue" is a word of two names; "repository" only of descriptions.
    assert_eq!(
        search(&catalog, "issue", 5),
        ["mcp__github__create_issue", "mcp__github__list_issues"]
    );
    assert_eq!(
        search(&catalog, "create issue", 5)[0],
        "mcp__github__create_issue"
    );
    assert_eq!(search(&catalog, "repository", 1).len(), 1, "capped");
    assert!(search(&catalog, "zzzqqq", 5).is_empty());
}

#[test]
fn a_plus_word_must_be_in_the_name() {
    let catalog = catalog();
    // Without the requirement, list_channels' description mentions "send".
    assert_eq!(search(&catalog, "send", 5)[0], "mcp__slack__send_message");
    assert_eq!(
        search(&catalog, "+slack list", 5),
        ["mcp__slack__list_channels", "mcp__slack__send_message"]
    );
    assert_eq!(
        search(&catalog, "+github list", 5)[0],
        "mcp__github__list_issues"
    );
    assert!(search(&catalog, "+nothing list", 5).is_empty());
}

#[test]
fn name_words_split_at_separators_and_case_changes() {
    assert_eq!(name_words("NotebookEdit"), ["notebook", "edit"]);
    assert_eq!(
        name_words("mcp__github__create_issue"),
        ["mcp", "github", "create", "issue"]
    );
}

#[tokio::test]
async fn tool_search_loads_what_it_finds() {
    let tool = ToolSearchTool::new(catalog());
    let ctx = ToolContext::new(std::env::temp_dir());
    let found = crate::run_tool(&tool, json!({"query": "select:WebFetch"}), &ctx).await;
    assert!(!found.is_error);
    assert_eq!(found.content, TOOL_LOADED);
    assert_eq!(found.references, ["WebFetch"]);
    let none = crate::run_tool(&tool, json!({"query": "zzz qqq"}), &ctx).await;
    assert_eq!(none.content, NO_MATCHING_TOOLS);
    assert!(none.references.is_empty());
    let capped = crate::run_tool(&tool, json!({"query": "list", "max_results": 1}), &ctx).await;
    assert_eq!(capped.references.len(), 1);
}

#[test]
fn deferring_moves_tools_to_the_catalog_and_adds_the_placeholder() {
    let web = json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 8});
    let array = ToolArray::new(vec![
        definition("Bash", "runs"),
        definition("WebFetch", "fetches"),
        definition("mcp__s__add", "adds"),
    ])
    .with_server_tools(vec![web]);
    let deferred = defer_tools(&array, |name| name != "Bash");
    let sent: Vec<&str> = deferred.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        sent,
        ["Bash", DEFERRED_PLACEHOLDER],
        "sorted among the built-ins"
    );
    assert!(deferred.definitions()[1].defer_loading);
    let with_mcp = ToolArray::new(vec![
        definition("Agent", "a"),
        definition("Read", "r"),
        definition("mcp__s__kept", "k"),
        definition("mcp__s__moved", "m"),
    ]);
    let names: Vec<String> = defer_tools(&with_mcp, |n| n == "mcp__s__moved")
        .iter()
        .map(|d| d.name.clone())
        .collect();
    assert_eq!(
        names,
        ["Agent", DEFERRED_PLACEHOLDER, "Read", "mcp__s__kept"]
    );
    assert_eq!(
        deferred
            .deferred()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["WebFetch", "mcp__s__add"]
    );
    assert!(deferred.has_server_tool("web_search"));
    assert_eq!(defer_tools(&array, |_| false), array, "nothing deferred");
}

#[test]
fn the_reminder_lists_the_names_sorted_as_claude_code_does() {
    let text = deferred_tools_reminder(["mcp__s__b", "WebFetch", "NotebookEdit", "WebFetch"]);
    assert!(text.starts_with(
        "<system-reminder>\nThe following deferred tools are now available via ToolSearch."
    ));
    assert!(
        text.ends_with(
            "before calling them:\nNotebookEdit\nWebFetch\nmcp__s__b\n</system-reminder>"
        )
    );
}
