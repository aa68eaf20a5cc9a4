//! Skills (issue 22) through the binary against the mock: the listing (names and
//! descriptions, never a body) in the first user message with the system prompt and tool array
//! the same bytes across requests and sessions; the Skill tool loading a body and the folder's
//! files with the prefix unchanged (and read from the cache); `/NAME` in `-p`; `allowed-tools`
//! pre-approving a call only while the skill runs; a malformed skill skipped with a warning;
//! `tine skills list` and `/skills`.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};

use super::{mock, tine, tool_names};

fn project_with_skills() -> Project {
    let project = Project::new();
    project.write(
        ".tine/skills/release/SKILL.md",
        "---\nname: release\ndescription: Cut a release of this project\n---\n\
         RELEASE-BODY: bump the version in $ARGUMENTS, then run scripts/bump.sh\n",
    );
    project.write(".tine/skills/release/scripts/bump.sh", "echo bump\n");
    project.write(
        ".claude/skills/touch-it/SKILL.md",
        "---\ndescription: Create marker files\nallowed-tools: Bash(touch:*)\n---\n\
         TOUCH-BODY: create the file asked for with touch\n",
    );
    project
}

/// The request with every `cache_control` removed: breakpoints move from request to request
/// and are not part of the cache key.
fn without_breakpoints(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("cache_control");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

#[tokio::test]
async fn the_listing_has_no_bodies_and_the_skill_tool_loads_one_with_the_prefix_unchanged() {
    let project = project_with_skills();
    let server =
        mock(
            Scenario::new()
                .rule(
                    Rule::new()
                        .last_user_contains("ship it")
                        .assistant_turns(0)
                        .reply(Reply::text("Loading the skill.").with_tool_use(
                            "Skill",
                            json!({"skill": "release", "args": "Cargo.toml"}),
                        )),
                )
                .rule(
                    Rule::new()
                        .tool_results(true)
                        .reply(Reply::text("Released.")),
                )
                .default_reply(Reply::text("Hello.")),
        )
        .await;
    let out = tine(&project, &server)
        .args(["-p", "ship it", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Released.");
    tine(&project, &server)
        .args(["-p", "hi again"])
        .run()
        .await
        .assert_success();

    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 3);
    let (first, second, other_session) = (&bodies[0], &bodies[1], &bodies[2]);
    // The listing: in the first user message, names and descriptions only.
    let context = first["messages"][0].to_string();
    assert!(
        context.contains("- release: Cut a release of this project"),
        "{context}"
    );
    assert!(
        context.contains("- touch-it: Create marker files"),
        "{context}"
    );
    let whole = first.to_string();
    assert!(
        !whole.contains("RELEASE-BODY") && !whole.contains("TOUCH-BODY"),
        "{whole}"
    );
    assert!(!first["system"].to_string().contains("release"));
    assert!(tool_names(first).contains(&"Skill".to_owned()));
    let skill_tool = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .unwrap();
    assert!(
        !skill_tool.to_string().contains("release"),
        "the listing is not in the tool"
    );

    // The tool result carries the body with its arguments and the folder's other files.
    let messages = second["messages"].as_array().unwrap();
    let result = messages.last().unwrap().to_string();
    assert!(
        result.contains("RELEASE-BODY: bump the version in Cargo.toml"),
        "{result}"
    );
    let script = project.cwd().join(".tine/skills/release/scripts/bump.sh");
    assert!(result.contains(&script.display().to_string()), "{result}");
    assert!(
        !result.contains("TOUCH-BODY"),
        "only the invoked skill loads"
    );

    // While it loads, the prefix is the same bytes: system, tools, earlier messages.
    let (a, b) = (
        without_breakpoints(first.clone()),
        without_breakpoints(second.clone()),
    );
    assert_eq!(a["system"], b["system"]);
    assert_eq!(a["tools"], b["tools"]);
    let earlier = a["messages"].as_array().unwrap();
    assert_eq!(
        &b["messages"].as_array().unwrap()[..earlier.len()],
        &earlier[..]
    );
    // And another session of the project sends the same system prompt and tool array.
    let c = without_breakpoints(other_session.clone());
    assert_eq!(a["system"], c["system"]);
    assert_eq!(a["tools"], c["tools"]);

    // The cache agrees: the request that loaded the skill read the whole earlier prompt.
    let log = server.requests();
    let before = log[0].usage.unwrap();
    let after = log[1].usage.unwrap();
    let cached_before = before.cache_read_input_tokens + before.cache_creation_input_tokens;
    assert!(
        after.cache_read_input_tokens >= cached_before,
        "{before:?} {after:?}"
    );
    assert!(after.cache_read_input_tokens > 0, "{after:?}");
    let third = log[2].usage.unwrap();
    assert!(third.cache_read_input_tokens > 0, "{third:?}");
}

#[tokio::test]
async fn slash_name_runs_a_skill_with_its_allowed_tools_for_that_turn_only() {
    let project = project_with_skills();
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .tool_results(false)
                    .last_user_contains("TOUCH-BODY")
                    .reply(
                        Reply::text("Touching.")
                            .with_tool_use("Bash", json!({"command": "touch made.txt"})),
                    ),
            )
            .rule(
                Rule::new()
                    .tool_results(false)
                    .last_user_contains("touch it yourself")
                    .reply(
                        Reply::text("Touching.")
                            .with_tool_use("Bash", json!({"command": "touch made.txt"})),
                    ),
            )
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
            .default_reply(Reply::text("ok")),
    )
    .await;
    let out = tine(&project, &server)
        .args(["-p", "/touch-it made.txt", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Done.");
    // allowed-tools allowed the call without a question (headless, it would be denied).
    assert!(project.cwd().join("made.txt").exists(), "{}", out.stderr);
    let bodies = request_bodies(&server);
    let sent = bodies[0]["messages"][0].to_string();
    assert!(
        sent.contains("TOUCH-BODY") && sent.contains("made.txt"),
        "{sent}"
    );

    // Without the skill the same call is denied: the grant lasted its turn.
    std::fs::remove_file(project.cwd().join("made.txt")).unwrap();
    tine(&project, &server)
        .args(["-p", "touch it yourself"])
        .run()
        .await
        .assert_success();
    assert!(!project.cwd().join("made.txt").exists());
}

#[tokio::test]
async fn a_skill_invoked_by_the_model_grants_its_tools_only_when_the_skill_is_allowed() {
    let project = project_with_skills();
    let scenario = || {
        Scenario::new()
            .rule(
                Rule::new()
                    .assistant_turns(0)
                    .reply(Reply::tool_use("Skill", json!({"skill": "touch-it"}))),
            )
            .rule(Rule::new().assistant_turns(1).reply(Reply::tool_use(
                "Bash",
                json!({"command": "touch made.txt"}),
            )))
            .default_reply(Reply::text("Done."))
    };
    // A skill that pre-approves tools is itself a grant: headless, it needs a rule.
    let server = mock(scenario()).await;
    tine(&project, &server)
        .args(["-p", "make the marker"])
        .run()
        .await
        .assert_success();
    assert!(!project.cwd().join("made.txt").exists());

    let server = mock(scenario()).await;
    let out = tine(&project, &server)
        .args(["-p", "make the marker", "--allowedTools", "Skill(touch-it)"])
        .run()
        .await;
    out.assert_success();
    assert!(project.cwd().join("made.txt").exists(), "{}", out.stderr);
}

#[tokio::test]
async fn a_malformed_skill_is_skipped_with_a_warning_and_the_lists_show_the_rest() {
    let project = project_with_skills();
    let broken = project.write(".tine/skills/broken/SKILL.md", "no frontmatter here\n");
    let server = mock(Scenario::new().default_reply(Reply::text("Hello."))).await;
    let out = tine(&project, &server).args(["-p", "hi"]).run().await;
    out.assert_success();
    assert!(
        out.stderr.contains(&broken.display().to_string()) && out.stderr.contains("skipped"),
        "{}",
        out.stderr
    );
    let context = request_bodies(&server)[0]["messages"][0].to_string();
    assert!(
        context.contains("- release:") && !context.contains("broken"),
        "{context}"
    );

    let out = tine(&project, &server).args(["-p", "/skills"]).run().await;
    out.assert_success();
    assert!(
        out.stdout.contains("- release (project, "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("- touch-it (project, "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&broken.display().to_string()),
        "{}",
        out.stdout
    );
    assert_eq!(server.requests().len(), 1, "/skills made no request");

    let out = tine(&project, &server).args(["skills", "list"]).run().await;
    out.assert_success();
    assert!(
        out.stdout.contains("- release (project, "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("Cut a release of this project"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&broken.display().to_string()),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn without_skills_there_is_no_skill_tool_and_no_listing() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Hello."))).await;
    tine(&project, &server)
        .args(["-p", "hi"])
        .run()
        .await
        .assert_success();
    let body = &request_bodies(&server)[0];
    assert!(!tool_names(body).contains(&"Skill".to_owned()));
    assert!(
        !body
            .to_string()
            .contains("available for use with the Skill tool")
    );
}

const TOUCHER: &str = "---\nname: toucher\ndescription: Makes marker files\ntools: Skill, Bash\n---\n\
                       You are TOUCHER-PROMPT.\n";

/// A skill a sub-agent loads grants its `allowed-tools` to that agent alone: its own call runs,
/// and the main thread's same call afterwards, in the same submission, is decided by the rules
/// (headless: denied), not by the sub-agent's grant.
#[tokio::test]
async fn a_sub_agents_skill_grants_stay_with_that_agent() {
    let project = project_with_skills();
    project.write(".tine/agents/toucher.md", TOUCHER);
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .system_contains("TOUCHER-PROMPT")
                .assistant_turns(0)
                .named("agent-skill")
                .reply(Reply::tool_use("Skill", json!({"skill": "touch-it"}))),
        )
        .rule(
            Rule::new()
                .system_contains("TOUCHER-PROMPT")
                .assistant_turns(1)
                .named("agent-touch")
                .reply(Reply::tool_use(
                    "Bash",
                    json!({"command": "touch agent.txt"}),
                )),
        )
        .rule(
            Rule::new()
                .system_contains("TOUCHER-PROMPT")
                .named("agent-done")
                .reply(Reply::text("marker made")),
        )
        .rule(
            Rule::new()
                .assistant_turns(0)
                .named("main")
                .reply(Reply::tool_use(
                    "Agent",
                    json!({"description": "markers", "prompt": "MAKE-MARKERS", "subagent_type": "toucher"}),
                )),
        )
        .rule(
            Rule::new()
                .assistant_turns(1)
                .named("main-touch")
                .reply(Reply::tool_use("Bash", json!({"command": "touch main.txt"}))),
        )
        .default_reply(Reply::text("Main done."));
    let server = mock(scenario).await;
    let out = tine(&project, &server)
        .args([
            "-p",
            "make the markers",
            "--output-format",
            "json",
            "--allowedTools",
            "Skill(touch-it)",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Main done.", "{}", out.stdout);
    let log = server.requests();
    let ran: Vec<_> = log.iter().filter_map(|r| r.rule.as_deref()).collect();
    assert_eq!(
        ran,
        [
            "main",
            "agent-skill",
            "agent-touch",
            "agent-done",
            "main-touch",
            "default"
        ]
    );
    // The sub-agent's grant let its own call run.
    assert!(project.cwd().join("agent.txt").exists(), "{}", out.stderr);
    // The main thread's call was the rules' to decide: denied, headless.
    assert!(!project.cwd().join("main.txt").exists(), "{}", out.stderr);
    let last = log.last().unwrap().json().unwrap()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(last.contains("is_error"), "{last}");
}

/// `--bare` skips skill discovery for the model, as it skips CLAUDE.md and memory: no listing,
/// no Skill tool. `/NAME` still runs a skill, as Claude Code's `--bare` says ("skills still
/// resolve via /skill-name").
#[tokio::test]
async fn bare_sends_no_listing_and_no_skill_tool_but_slash_name_runs_one() {
    let project = project_with_skills();
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    tine(&project, &server)
        .args(["-p", "hi", "--bare"])
        .run()
        .await
        .assert_success();
    tine(&project, &server)
        .args(["-p", "/release Cargo.toml", "--bare"])
        .run()
        .await
        .assert_success();
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert!(!tool_names(body).contains(&"Skill".to_owned()));
        assert!(!body.to_string().contains("- touch-it:"), "{body}");
    }
    let sent = bodies[1]["messages"][0].to_string();
    assert!(
        sent.contains("RELEASE-BODY: bump the version in Cargo.toml"),
        "{sent}"
    );
}

/// A skill and a custom command of the same name: `/NAME` runs the skill (Claude Code: "if a
/// skill and a command share the same name, the skill takes precedence"), and `/help` lists
/// it once, with the skills; the other custom commands stay.
#[tokio::test]
async fn a_skill_wins_its_name_over_a_custom_command_and_help_lists_skills() {
    let project = project_with_skills();
    project.write(
        ".tine/commands/release.md",
        "---\ndescription: The old release command\n---\nCOMMAND-BODY $ARGUMENTS\n",
    );
    project.write(
        ".claude/commands/lint.md",
        "---\ndescription: Lint the code\n---\nLINT-BODY\n",
    );
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    tine(&project, &server)
        .args(["-p", "/release v2"])
        .run()
        .await
        .assert_success();
    let sent = request_bodies(&server)[0]["messages"][0].to_string();
    assert!(
        sent.contains("RELEASE-BODY: bump the version in v2"),
        "{sent}"
    );
    assert!(!sent.contains("COMMAND-BODY"), "{sent}");

    let out = tine(&project, &server).args(["-p", "/help"]).run().await;
    out.assert_success();
    let help = &out.stdout;
    let skills = help.find("\nSkills").expect("a Skills section");
    assert!(
        help[skills..].contains("- /release: Cut a release of this project"),
        "{help}"
    );
    assert!(
        help[skills..].contains("- /touch-it: Create marker files"),
        "{help}"
    );
    assert!(help.contains("- /lint: Lint the code"), "{help}");
    assert!(!help.contains("The old release command"), "{help}");
    assert_eq!(server.requests().len(), 1, "/help made no request");
}

/// `Skill(NAME)` rules: a deny rule refuses the skill (its body never sent) even though loading
/// one touches nothing; the other skill still loads.
#[tokio::test]
async fn a_skill_deny_rule_refuses_that_skill_only() {
    let project = project_with_skills();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Skill", json!({"skill": "release"}))),
        )
        .rule(
            Rule::new()
                .assistant_turns(1)
                .reply(Reply::tool_use("Skill", json!({"skill": "/touch-it"}))),
        )
        .default_reply(Reply::text("Done."));
    let server = mock(scenario).await;
    tine(&project, &server)
        .args([
            "-p",
            "release it",
            "--disallowedTools",
            "Skill(release)",
            "--allowedTools",
            "Skill(touch-it)",
        ])
        .run()
        .await
        .assert_success();
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 3);
    let refused = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(refused.contains("is_error"), "{refused}");
    assert!(
        !bodies[2].to_string().contains("RELEASE-BODY"),
        "the body was never sent"
    );
    let loaded = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(loaded.contains("TOUCH-BODY"), "{loaded}");
}

/// A skill of the user wins its name over the project's (Claude Code: personal over project):
/// a cloned repository cannot replace one of yours, nor its `allowed-tools`, by naming its
/// own skill the same.
#[tokio::test]
async fn a_user_skill_wins_its_name_over_the_projects() {
    let project = project_with_skills();
    let user_skill = project.home().join("skills/release/SKILL.md");
    std::fs::create_dir_all(user_skill.parent().unwrap()).unwrap();
    std::fs::write(
        &user_skill,
        "---\ndescription: My own release steps\n---\nUSER-RELEASE-BODY $ARGUMENTS\n",
    )
    .unwrap();
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    tine(&project, &server)
        .args(["-p", "/release v3"])
        .run()
        .await
        .assert_success();
    let sent = request_bodies(&server)[0]["messages"].to_string();
    assert!(sent.contains("USER-RELEASE-BODY v3"), "{sent}");
    assert!(sent.contains("- release: My own release steps"), "{sent}");
    assert!(!sent.contains("RELEASE-BODY: bump"), "{sent}");
    assert!(!sent.contains("Cut a release of this project"), "{sent}");
}
