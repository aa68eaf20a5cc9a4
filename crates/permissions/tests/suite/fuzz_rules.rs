//! Fuzzing the permission rule grammar and the engine at scale. Any text parses or is refused
//! without panicking, and what parses prints back to text that parses to the same rule; rules
//! built from any tool name and content round-trip exactly; the engine decides any call under
//! any rules without panicking; and a `Bash(rm:*)` deny rule holds for every generated line
//! that runs `rm` (behind connectors, substitutions, subshells, loops and wrappers), even in
//! `bypassPermissions`. `cargo xtask fuzz rules --cases N` runs N of each (`PROPTEST_CASES`).

use std::path::PathBuf;

use proptest::prelude::*;
use tine_permissions::{
    PermissionContext, PermissionMode, PermissionQuery, PermissionRule, RuleBehavior, RuleSource,
};
use tine_permissions::{PermissionTarget, ToolVerdict};
use tine_test_support::fuzz_config as config;

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9_-]{1,12}",
        "mcp__[a-z0-9_-]{1,8}",
        "mcp__[a-z0-9-]{1,8}__\\*",
        Just("Bash".to_owned()),
        Just("Read".to_owned()),
        Just("Edit".to_owned()),
        Just("WebFetch".to_owned()),
    ]
}

fn content() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ -~]{1,30}",
        Just("npm run test:*".to_owned()),
        Just("//etc/**".to_owned()),
        Just("~/.ssh/**".to_owned()),
        Just("./src/**/*.rs".to_owned()),
        Just("domain:docs.rs".to_owned()),
        Just("a(b)c".to_owned()),
        Just("(".to_owned()),
        Just(")".to_owned()),
    ]
    .prop_filter("non-empty", |c| !c.is_empty())
}

fn mode() -> impl Strategy<Value = PermissionMode> {
    prop_oneof![
        Just(PermissionMode::Default),
        Just(PermissionMode::AcceptEdits),
        Just(PermissionMode::Plan),
        Just(PermissionMode::BypassPermissions),
        Just(PermissionMode::DontAsk),
    ]
}

fn behavior() -> impl Strategy<Value = RuleBehavior> {
    prop_oneof![
        Just(RuleBehavior::Allow),
        Just(RuleBehavior::Deny),
        Just(RuleBehavior::Ask)
    ]
}

fn path() -> impl Strategy<Value = PathBuf> {
    prop_oneof![
        "/[a-z.]{0,6}(/[a-z.*]{0,6}){0,4}".prop_map(PathBuf::from),
        Just(PathBuf::from("/project/.git/hooks/pre-commit")),
        Just(PathBuf::from("/project/src/main.rs")),
        Just(PathBuf::from("/home/u/.ssh/id_rsa")),
        any::<String>().prop_map(PathBuf::from),
    ]
}

fn target() -> impl Strategy<Value = PermissionTarget> {
    prop_oneof![
        (any::<String>(), path())
            .prop_map(|(command, cwd)| PermissionTarget::Bash { command, cwd }),
        "[ -~]{0,40}".prop_map(|command| PermissionTarget::Bash {
            command,
            cwd: PathBuf::from("/project")
        }),
        path().prop_map(|path| PermissionTarget::FileRead { path }),
        path().prop_map(|path| PermissionTarget::FileWrite { path }),
        any::<String>().prop_map(|url| PermissionTarget::Url { url }),
        "https?://[a-z.]{1,12}(:[0-9]{1,5})?/[a-z]{0,8}"
            .prop_map(|url| PermissionTarget::Url { url }),
        proptest::option::of(any::<String>())
            .prop_map(|content| PermissionTarget::Other { content }),
    ]
}

fn verdict() -> impl Strategy<Value = ToolVerdict> {
    prop_oneof![
        Just(ToolVerdict::Passthrough),
        Just(ToolVerdict::Allow { reason: "r".into() }),
        Just(ToolVerdict::Ask { reason: "r".into() }),
        Just(ToolVerdict::Deny { reason: "r".into() }),
    ]
}

fn rm_line() -> impl Strategy<Value = String> {
    let rm = prop_oneof![
        Just("rm x"),
        Just("rm -rf /tmp/x"),
        Just("env rm x"),
        Just("command rm x"),
        Just("nohup rm x"),
        Just("timeout 5 rm x"),
        Just("xargs rm"),
        Just("FOO=1 rm x"),
    ];
    let wrap = prop_oneof![
        Just("{}"),
        Just("( {} )"),
        Just("{ {}; }"),
        Just("echo \"$({})\""),
        Just("echo `{}`"),
        Just("if true; then {}; fi"),
        Just("for i in 1; do {}; done"),
        Just("cat <({})"),
        Just("ls && {}"),
        Just("ls | {}"),
        Just("ls; {}"),
        Just("false || {}"),
        Just("ls\n{}"),
        Just("{} &"),
    ];
    (rm, wrap).prop_map(|(rm, wrap)| wrap.replace("{}", rm))
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn any_text_parses_or_is_refused_and_round_trips(text in any::<String>()) {
        if let Ok(rule) = text.parse::<PermissionRule>() {
            let printed = rule.to_string();
            prop_assert_eq!(printed.parse::<PermissionRule>(), Ok(rule), "printed as {:?}", printed);
        }
    }

    #[test]
    fn built_rules_round_trip_exactly(tool in tool_name(), content in proptest::option::of(content())) {
        let rule = PermissionRule { tool, content };
        let text = rule.to_string();
        let parsed = text.parse::<PermissionRule>();
        // Content with outer whitespace on a whole rule is trimmed only at the rule's ends,
        // which a tool name never has: the rule comes back as built.
        prop_assert_eq!(parsed, Ok(rule));
    }

    #[test]
    fn the_engine_decides_anything_without_panicking(
        mode in mode(),
        rules in proptest::collection::vec((tool_name(), proptest::option::of(content()), behavior()), 0..6),
        tool in tool_name(),
        target in target(),
        verdict in verdict(),
        is_read_only in any::<bool>(),
    ) {
        let mut context = PermissionContext::new(mode, "/project").with_home("/home/u");
        for (tool, content, behavior) in rules {
            context.add_session_rule(PermissionRule { tool, content }, behavior, RuleSource::Session);
        }
        let request = PermissionQuery { tool: &tool, target: &target, verdict: &verdict, is_read_only };
        let _ = context.decide(&request);
        let _ = context.is_tool_denied(&tool);
    }

    #[test]
    fn a_bash_deny_rule_holds_wherever_the_command_hides(line in rm_line(), mode in mode()) {
        let mut context = PermissionContext::new(mode, "/project");
        context.add_session_rule(
            PermissionRule::with_content("Bash", "rm:*"),
            RuleBehavior::Deny,
            RuleSource::Session,
        );
        context.add_session_rule(PermissionRule::tool("Bash"), RuleBehavior::Allow, RuleSource::Session);
        let target = PermissionTarget::Bash { command: line.clone(), cwd: PathBuf::from("/project") };
        let request = PermissionQuery {
            tool: "Bash",
            target: &target,
            verdict: &ToolVerdict::Passthrough,
            is_read_only: false,
        };
        let decision = context.decide(&request);
        prop_assert!(!decision.is_allow(), "`{}` allowed despite Bash(rm:*) deny: {:?}", line, decision);
    }
}
