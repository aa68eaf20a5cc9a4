use proptest::prelude::*;

use super::*;

#[test]
fn parses_tool_and_content() {
    let rule: PermissionRule = "Bash(npm run test:*)".parse().unwrap();
    assert_eq!(rule, PermissionRule::with_content("Bash", "npm run test:*"));
    assert_eq!(
        "Read".parse::<PermissionRule>().unwrap(),
        PermissionRule::tool("Read")
    );
    let nested: PermissionRule = "Bash(echo (a) b)".parse().unwrap();
    assert_eq!(nested.content.as_deref(), Some("echo (a) b"));
    assert!("mcp__github__*".parse::<PermissionRule>().is_ok());
}

#[test]
fn errors_are_specific() {
    assert_eq!("".parse::<PermissionRule>(), Err(RuleParseError::Empty));
    assert!(matches!(
        "Bash(ls".parse::<PermissionRule>(),
        Err(RuleParseError::MissingClosingParen { .. })
    ));
    assert!(matches!(
        "Bash()".parse::<PermissionRule>(),
        Err(RuleParseError::EmptyContent { .. })
    ));
    let err = "Ba sh(ls)".parse::<PermissionRule>().unwrap_err();
    assert!(
        err.to_string().contains("invalid tool name `Ba sh`"),
        "{err}"
    );
    assert!("Bash*".parse::<PermissionRule>().is_err());
}

#[test]
fn mcp_server_rules_cover_their_tools_only() {
    let server = PermissionRule::tool("mcp__github");
    let star = PermissionRule::tool("mcp__github__*");
    for rule in [&server, &star] {
        assert!(rule.names_tool("mcp__github__create_issue"));
        assert!(!rule.names_tool("mcp__githubx__create_issue"));
        assert!(!rule.names_tool("Bash"));
    }
    assert!(!PermissionRule::tool("mcp__github__a").names_tool("mcp__github__ab"));
}

proptest! {
    #[test]
    fn rule_grammar_round_trips(
        tool in "[A-Za-z][A-Za-z0-9_-]{0,12}",
        content in proptest::option::of("[^\\r\\n]{1,40}"),
    ) {
        let content = content.filter(|c| !c.trim().is_empty() && c.trim() == c);
        let rule = PermissionRule { tool, content };
        let text = rule.to_string();
        prop_assert_eq!(text.parse::<PermissionRule>(), Ok(rule));
    }

    #[test]
    fn parser_never_panics(text in "\\PC{0,60}") {
        let _ = text.parse::<PermissionRule>();
    }
}
