use std::path::PathBuf;

use crate::verdict::{PermissionTarget, ToolVerdict};

use super::*;

const CWD: &str = "/work/proj";

fn ctx(mode: PermissionMode, rules: &[(&str, RuleBehavior)]) -> PermissionContext {
    let mut ctx = PermissionContext::new(mode, CWD).with_home("/home/me");
    for (rule, behavior) in rules {
        ctx.add_session_rule(rule.parse().unwrap(), *behavior, RuleSource::Session);
    }
    ctx
}

fn bash(ctx: &PermissionContext, command: &str) -> PermissionDecision {
    let target = PermissionTarget::Bash {
        command: command.to_string(),
        cwd: PathBuf::from(CWD),
    };
    ctx.decide(&PermissionQuery {
        tool: "Bash",
        target: &target,
        verdict: &ToolVerdict::Passthrough,
        is_read_only: crate::bash::is_read_only_command(command),
    })
}

fn file(ctx: &PermissionContext, tool: &str, path: &str, write: bool) -> PermissionDecision {
    let path = PathBuf::from(path);
    let target = if write {
        PermissionTarget::FileWrite { path }
    } else {
        PermissionTarget::FileRead { path }
    };
    ctx.decide(&PermissionQuery {
        tool,
        target: &target,
        verdict: &ToolVerdict::Passthrough,
        is_read_only: !write,
    })
}

use RuleBehavior::{Allow, Ask, Deny};

#[test]
fn read_only_bash_needs_no_approval_and_writes_ask() {
    let c = ctx(PermissionMode::Default, &[]);
    assert!(bash(&c, "git status && ls | wc -l").is_allow());
    let d = bash(&c, "rm -rf build");
    let PermissionDecision::Ask { always, .. } = d else {
        panic!("{d:?}")
    };
    assert_eq!(
        always,
        AlwaysAllow::saved(vec![PermissionRule::with_content("Bash", "rm -rf build")])
    );
    let d = bash(&c, "npm run test");
    let PermissionDecision::Ask { always, .. } = d else {
        panic!("{d:?}")
    };
    assert_eq!(
        always,
        AlwaysAllow::saved(vec![PermissionRule::with_content("Bash", "npm run:*")])
    );
}

#[test]
fn allow_rule_for_a_part_never_covers_the_rest() {
    let c = ctx(PermissionMode::Default, &[("Bash(npm run test:*)", Allow)]);
    assert!(bash(&c, "npm run test").is_allow());
    assert!(bash(&c, "npm run test -- --watch").is_allow());
    assert!(bash(&c, "npm run testx").is_ask());
    for sneaky in [
        "npm run test && rm -rf x",
        "npm run test; rm -rf x",
        "npm run test | sh",
        "npm run test $(rm -rf x)",
        "npm run test `rm x`",
        "npm run test > ~/.bashrc",
        "npm run test\nrm x",
    ] {
        let d = bash(&c, sneaky);
        assert!(d.is_ask(), "{sneaky:?} -> {d:?}");
    }
    assert!(bash(&c, "npm run test && git status").is_allow());
}

#[test]
fn compound_allowed_when_every_part_is() {
    let c = ctx(
        PermissionMode::Default,
        &[
            ("Bash(cargo build:*)", Allow),
            ("Bash(cargo test *)", Allow),
        ],
    );
    assert!(bash(&c, "cargo build && cargo test -p x | tail -5").is_allow());
    assert!(bash(&c, "cargo build && cargo publish").is_ask());
}

#[test]
fn deny_and_ask_rules_catch_any_part_even_behind_wrappers() {
    let c = ctx(
        PermissionMode::BypassPermissions,
        &[("Bash(rm:*)", Deny), ("Bash(git push:*)", Ask)],
    );
    for command in [
        "rm x",
        "ls && rm x",
        "FOO=1 rm x",
        "env rm x",
        "timeout 5 rm -rf y",
        "echo $(rm x)",
        "/bin/rm x",
        "find . | xargs rm",
    ] {
        assert!(bash(&c, command).is_deny(), "{command:?}");
    }
    assert!(bash(&c, "git status; git push origin").is_ask());
    assert!(bash(&c, "make").is_allow(), "bypass allows the rest");
}

#[test]
fn wildcards_and_exact_rules() {
    let c = ctx(
        PermissionMode::Default,
        &[
            ("Bash(git * --help)", Allow),
            ("Bash(make install)", Allow),
            ("Bash(ls *)", Allow),
        ],
    );
    assert!(bash(&c, "git commit --help").is_allow());
    assert!(bash(&c, "make install").is_allow());
    assert!(bash(&c, "make install2").is_ask());
    assert!(
        bash(&c, "ls -la > out.txt").is_ask(),
        "a redirect needs an exact rule"
    );
}

#[test]
fn exact_rule_covers_a_redirecting_part() {
    let c = ctx(
        PermissionMode::Default,
        &[("Bash(echo hi > notes.txt)", Allow)],
    );
    assert!(bash(&c, "echo hi > notes.txt").is_allow());
    assert!(bash(&c, "echo hi > other.txt").is_ask());
}

#[test]
fn parse_errors_need_an_exact_rule() {
    let c = ctx(PermissionMode::Default, &[("Bash(echo:*)", Allow)]);
    assert!(bash(&c, "echo (").is_ask());
}

#[test]
fn reads_inside_project_pass_outside_ask() {
    let mut c = ctx(PermissionMode::Default, &[]);
    assert!(file(&c, "Read", "/work/proj/src/main.rs", false).is_allow());
    let d = file(&c, "Read", "/etc/passwd", false);
    let PermissionDecision::Ask { always, .. } = d else {
        panic!("{d:?}")
    };
    assert_eq!(always.unwrap().to_string(), "Read(//etc/**)");
    c.additional_directories.push("/work/shared".into());
    assert!(file(&c, "Grep", "/work/shared/x", false).is_allow());
    assert!(file(&c, "Read", "/work/proj/../other/x", false).is_ask());
}

#[test]
fn file_rules_have_gitignore_semantics_and_roots() {
    let c = ctx(
        PermissionMode::Default,
        &[
            ("Read(.env)", Deny),
            ("Read(//etc/hosts)", Allow),
            ("Edit(~/notes/**)", Allow),
            ("Edit(/docs)", Allow),
            ("Edit(./src/*.rs)", Allow),
        ],
    );
    assert!(file(&c, "Read", "/work/proj/.env", false).is_deny());
    assert!(
        file(&c, "Grep", "/work/proj/sub/.env", false).is_deny(),
        "bare patterns match at any depth"
    );
    assert!(file(&c, "Read", "/etc/hosts", false).is_allow());
    assert!(file(&c, "Write", "/home/me/notes/a/b.md", true).is_allow());
    assert!(
        file(&c, "Edit", "/work/proj/docs/guide/x.md", true).is_allow(),
        "a directory covers its contents"
    );
    assert!(file(&c, "Edit", "/work/proj/src/main.rs", true).is_allow());
    assert!(file(&c, "Edit", "/work/proj/src/deep/main.rs", true).is_ask());
    assert!(
        file(&c, "Read", "/home/me/notes/x", false).is_allow(),
        "edit implies read"
    );
}

#[test]
fn settings_relative_rules_use_the_rule_base_dir() {
    let mut c = ctx(PermissionMode::Default, &[]);
    c.add_rule(SourcedRule {
        rule: "Edit(/templates/**)".parse().unwrap(),
        behavior: Allow,
        source: RuleSource::Settings(tine_config::SettingsSource::User),
        base_dir: "/home/me/.tine".into(),
    });
    assert!(
        file(&c, "Edit", "/home/me/.tine/templates/a", true).is_ask(),
        ".tine writes always ask"
    );
    c.add_rule(SourcedRule {
        rule: "Edit(/gen/**)".parse().unwrap(),
        behavior: Allow,
        source: RuleSource::Settings(tine_config::SettingsSource::User),
        base_dir: "/opt/base".into(),
    });
    assert!(file(&c, "Edit", "/opt/base/gen/a", true).is_allow());
    assert!(file(&c, "Edit", "/work/proj/gen/a", true).is_ask());
}

#[test]
fn modes() {
    let accept = ctx(PermissionMode::AcceptEdits, &[]);
    assert!(file(&accept, "Edit", "/work/proj/a.rs", true).is_allow());
    assert!(file(&accept, "Edit", "/tmp/a.rs", true).is_ask());
    let plan = ctx(PermissionMode::Plan, &[("Bash(make:*)", Allow)]);
    assert!(file(&plan, "Edit", "/work/proj/a.rs", true).is_deny());
    assert!(bash(&plan, "make").is_deny());
    assert!(bash(&plan, "cat a | grep b").is_allow());
    let dont_ask = ctx(PermissionMode::DontAsk, &[]);
    assert!(bash(&dont_ask, "rm x").is_deny());
    assert!(bash(&dont_ask, "ls").is_allow());
    let bypass = ctx(PermissionMode::BypassPermissions, &[]);
    assert!(bash(&bypass, "rm -rf build").is_allow());
    assert!(file(&bypass, "Write", "/tmp/x", true).is_allow());
}

#[test]
fn mcp_json_writes_ask_even_in_accept_edits_bypass_and_with_allow_rules() {
    for mode in [
        PermissionMode::AcceptEdits,
        PermissionMode::BypassPermissions,
    ] {
        let c = ctx(mode, &[("Edit", Allow), ("Bash", Allow)]);
        let d = file(&c, "Write", "/work/proj/.mcp.json", true);
        let PermissionDecision::Ask {
            message, reason, ..
        } = &d
        else {
            panic!("{d:?}")
        };
        assert!(
            matches!(reason, DecisionReason::ProtectedPath { .. }),
            "{d:?}"
        );
        assert!(message.contains(".mcp.json"), "{message}");
        assert!(file(&c, "Edit", "/work/proj/sub/.mcp.json", true).is_ask());
        assert!(bash(&c, "echo '{}' > .mcp.json").is_ask());
        assert!(file(&c, "Read", "/work/proj/.mcp.json", false).is_allow());
        assert!(file(&c, "Write", "/work/proj/mcp.json", true).is_allow());
    }
}

#[test]
fn git_and_tine_writes_ask_even_in_bypass_and_with_allow_rules() {
    let c = ctx(
        PermissionMode::BypassPermissions,
        &[("Edit", Allow), ("Bash", Allow)],
    );
    let d = file(&c, "Edit", "/work/proj/.git/config", true);
    assert!(
        matches!(
            d,
            PermissionDecision::Ask {
                reason: DecisionReason::ProtectedPath { .. },
                ..
            }
        ),
        "{d:?}"
    );
    assert!(file(&c, "Write", "/work/proj/.tine/settings.json", true).is_ask());
    assert!(bash(&c, "echo x > .git/hooks/pre-commit").is_ask());
    assert!(bash(&c, "rm -rf .tine").is_ask());
    assert!(bash(&c, "cat .git/config").is_allow(), "reads are fine");
    let deny = ctx(
        PermissionMode::BypassPermissions,
        &[("Edit(.git/**)", Deny)],
    );
    assert!(
        file(&deny, "Edit", "/work/proj/.git/config", true).is_deny(),
        "deny still wins"
    );
}

#[test]
fn an_isolated_root_under_tine_home_is_protected_below_it_only() {
    // A sub-agent's worktree at ~/.tine/worktrees/a_1 is its project.
    let root = "/home/me/.tine/worktrees/a_1";
    let mut c = ctx(PermissionMode::AcceptEdits, &[]);
    c.cwd = PathBuf::from(root);
    assert!(file(&c, "Edit", "/home/me/.tine/worktrees/a_1/src/a.rs", true).is_ask());
    c.isolated_root = Some(PathBuf::from(root));
    assert!(file(&c, "Edit", "/home/me/.tine/worktrees/a_1/src/a.rs", true).is_allow());
    // Its own protected directories still ask, and so does everything outside it.
    assert!(file(&c, "Edit", "/home/me/.tine/worktrees/a_1/.git", true).is_ask());
    assert!(
        file(
            &c,
            "Write",
            "/home/me/.tine/worktrees/a_1/.tine/settings.json",
            true
        )
        .is_ask()
    );
    assert!(file(&c, "Write", "/home/me/.tine/settings.json", true).is_ask());
    assert!(file(&c, "Edit", "/work/proj/src/a.rs", true).is_ask());
}

#[test]
fn tool_verdicts_sit_between_ask_and_allow_rules() {
    let c = ctx(PermissionMode::Default, &[("Bash(ls:*)", Allow)]);
    let target = PermissionTarget::Bash {
        command: "ls".into(),
        cwd: PathBuf::from(CWD),
    };
    let decide = |c: &PermissionContext, verdict: &ToolVerdict| {
        c.decide(&PermissionQuery {
            tool: "Bash",
            target: &target,
            verdict,
            is_read_only: true,
        })
    };
    assert!(
        decide(
            &c,
            &ToolVerdict::Deny {
                reason: "no".into()
            }
        )
        .is_deny()
    );
    let ask = ToolVerdict::Ask {
        reason: "sure?".into(),
    };
    assert!(
        decide(&c, &ask).is_ask(),
        "allow rules do not override the tool's ask"
    );
    let c = ctx(PermissionMode::Default, &[("Bash(ls:*)", Deny)]);
    let allow = ToolVerdict::Allow {
        reason: "fine".into(),
    };
    assert!(
        decide(&c, &allow).is_deny(),
        "deny rules beat the tool's allow"
    );
}

#[test]
fn decisions_name_the_rule_and_source() {
    let c = ctx(PermissionMode::Default, &[("Bash(make:*)", Allow)]);
    let d = bash(&c, "make all");
    assert_eq!(
        d,
        PermissionDecision::Allow {
            reason: DecisionReason::Rule {
                rule: PermissionRule::with_content("Bash", "make:*"),
                behavior: Allow,
                source: RuleSource::Session,
            }
        }
    );
}

#[test]
fn mcp_and_other_targets() {
    let c = ctx(
        PermissionMode::Default,
        &[
            ("mcp__github", Allow),
            ("mcp__slack__*", Deny),
            ("WebFetch(domain:docs.rs)", Allow),
        ],
    );
    let other = PermissionTarget::Other { content: None };
    let req = |tool| PermissionQuery {
        tool,
        target: &other,
        verdict: &ToolVerdict::Passthrough,
        is_read_only: false,
    };
    assert!(c.decide(&req("mcp__github__create_issue")).is_allow());
    assert!(c.decide(&req("mcp__slack__post")).is_deny());
    assert!(c.decide(&req("mcp__jira__x")).is_ask());
    assert!(c.is_tool_denied("mcp__slack__post"));
    let url = PermissionTarget::Url {
        url: "https://docs.rs/serde".into(),
    };
    let fetch = PermissionQuery {
        tool: "WebFetch",
        target: &url,
        verdict: &ToolVerdict::Passthrough,
        is_read_only: true,
    };
    assert!(c.decide(&fetch).is_allow());
    let url = PermissionTarget::Url {
        url: "https://evil.example/x".into(),
    };
    let fetch = PermissionQuery {
        target: &url,
        ..fetch
    };
    let PermissionDecision::Ask { always, .. } = c.decide(&fetch) else {
        panic!()
    };
    assert_eq!(always.unwrap().to_string(), "WebFetch(domain:evil.example)");
}

#[test]
fn read_only_bash_outside_the_project_asks() {
    let c = ctx(PermissionMode::Default, &[]);
    assert!(bash(&c, "cat src/main.rs").is_allow());
    assert!(bash(&c, "grep -rn foo . | head -5").is_allow());
    assert!(bash(&c, "cat /work/proj/README.md").is_allow());
    assert!(bash(&c, "ls -la").is_allow());
    for outside in [
        "cat /etc/passwd",
        "ls ~/.ssh",
        "cat ../other/secret.txt",
        "cd /tmp && ls",
        "grep -r token /home/me",
        "cat $HOME/.netrc",
        "grep --file=/etc/shadow x",
    ] {
        let d = bash(&c, outside);
        assert!(
            matches!(d, PermissionDecision::Ask { .. }),
            "{outside}: {d:?}"
        );
    }
    // an additional directory is part of the project
    let mut c = ctx(PermissionMode::Default, &[]);
    c.additional_directories.push(PathBuf::from("/data"));
    assert!(bash(&c, "cat /data/x.csv").is_allow());
    // an allow rule for the command is the user's approval
    let c = ctx(PermissionMode::Default, &[("Bash(cat /etc/hosts)", Allow)]);
    assert!(bash(&c, "cat /etc/hosts").is_allow());
}

#[test]
fn a_tools_own_allow_never_skips_the_outside_the_project_check() {
    let allow = ToolVerdict::Allow {
        reason: "the tool says it only reads".into(),
    };
    for mode in [PermissionMode::Default, PermissionMode::Plan] {
        let c = ctx(mode, &[]);
        let outside = PermissionTarget::Bash {
            command: "cat /etc/passwd".into(),
            cwd: PathBuf::from(CWD),
        };
        let d = c.decide(&PermissionQuery {
            tool: "Bash",
            target: &outside,
            verdict: &allow,
            is_read_only: true,
        });
        assert!(d.is_ask(), "{mode}: {d:?}");
        let read = PermissionTarget::FileRead {
            path: PathBuf::from("/etc/passwd"),
        };
        let d = c.decide(&PermissionQuery {
            tool: "Read",
            target: &read,
            verdict: &allow,
            is_read_only: true,
        });
        assert!(d.is_ask(), "{mode}: {d:?}");
    }
    // Inside the project, or for a target that is not a path, the tool's allow stands.
    let c = ctx(PermissionMode::Default, &[]);
    let other = PermissionTarget::Other { content: None };
    let d = c.decide(&PermissionQuery {
        tool: "mcp__x__y",
        target: &other,
        verdict: &allow,
        is_read_only: false,
    });
    assert_eq!(
        d,
        PermissionDecision::Allow {
            reason: DecisionReason::Tool
        }
    );
}

#[test]
fn bash_relative_paths_start_where_the_shell_is() {
    let c = ctx(PermissionMode::Default, &[]);
    let decide = |cwd: &str, command: &str| {
        let target = PermissionTarget::Bash {
            command: command.into(),
            cwd: PathBuf::from(cwd),
        };
        c.decide(&PermissionQuery {
            tool: "Bash",
            target: &target,
            verdict: &ToolVerdict::Passthrough,
            is_read_only: true,
        })
    };
    assert!(decide("/work/proj/src", "cat ../README.md").is_allow());
    assert!(decide("/work/other", "cat README.md").is_ask());
    assert!(decide("/work/proj", "cd sub && cat ../../x").is_ask());
}
