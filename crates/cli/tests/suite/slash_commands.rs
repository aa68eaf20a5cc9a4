//! Slash commands in `-p`, through the binary: the session's built-ins (`/cost`, `/help`,
//! `/model`, `/init`), custom commands from `.claude/commands/` with `$1`, `allowed-tools` and
//! `model` from their front matter, model aliases, and an unknown `/word` sent as text.

use serde_json::json;
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};

use super::{mock, tine};

#[tokio::test]
async fn cost_and_help_are_answered_without_a_request() {
    let project = Project::new();
    project.write(
        ".claude/commands/review.md",
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS",
    );
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let out = tine(&project, &server).args(["-p", "/cost"]).run().await;
    out.assert_success();
    assert!(out.stdout.contains("Total cost: $"), "{}", out.stdout);
    let out = tine(&project, &server).args(["-p", "/help"]).run().await;
    out.assert_success();
    assert!(out.stdout.contains("/init"), "{}", out.stdout);
    assert!(
        out.stdout.contains("/review: Review a file"),
        "{}",
        out.stdout
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_custom_command_runs_with_its_arguments_model_and_allowed_tools() {
    let project = Project::new();
    project.write(
        ".claude/commands/make.md",
        "---\nallowed-tools: Bash(touch:*)\nmodel: haiku\n---\nCreate the file $1 please",
    );
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .tool_results(false)
                    .last_user_contains("Create the file made.txt please")
                    .reply(
                        Reply::text("Creating.")
                            .with_tool_use("Bash", json!({"command": "touch made.txt"})),
                    ),
            )
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
            .default_reply(Reply::text("ok")),
    )
    .await;
    let out = tine(&project, &server)
        .args(["-p", "/make made.txt", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Done.");
    // allowed-tools let the call run without a question (headless, it would be denied).
    assert!(project.cwd().join("made.txt").exists(), "{}", out.stderr);
    let bodies = request_bodies(&server);
    assert_eq!(bodies[0]["model"], "claude-haiku-5-5");

    // Without the command, the same call needs approval: the rule lasted one turn only.
    std::fs::remove_file(project.cwd().join("made.txt")).unwrap();
    tine(&project, &server)
        .args(["-p", "Create the file made.txt please"])
        .run()
        .await
        .assert_success();
    assert!(!project.cwd().join("made.txt").exists());
}

#[tokio::test]
async fn model_aliases_resolve_and_unknown_words_are_text() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    tine(&project, &server)
        .args(["-p", "hi", "--model", "opus"])
        .run()
        .await
        .assert_success();
    let out = tine(&project, &server)
        .args(["-p", "/model sonnet"])
        .run()
        .await;
    out.assert_success();
    assert!(
        out.stdout.contains("Model set to claude-sonnet-5-5"),
        "{}",
        out.stdout
    );
    tine(&project, &server)
        .args(["-p", "/frobnicate the thing"])
        .run()
        .await
        .assert_success();
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 2, "/model made a request");
    assert_eq!(bodies[0]["model"], "claude-opus-5-5");
    let last = bodies[1]["messages"].to_string();
    assert!(last.contains("/frobnicate the thing"), "{last}");
}

#[tokio::test]
async fn init_asks_the_model_to_write_agents_md() {
    let project = Project::new();
    project.write("src/main.rs", "fn main() {}\n");
    let agents = project.cwd().join("AGENTS.md");
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .tool_results(false)
                    .last_user_contains("create an AGENTS.md")
                    .reply(Reply::text("Writing it.").with_tool_use(
                        "Write",
                        json!({"file_path": agents, "content": "# Agents\n\nRun `cargo test`.\n"}),
                    )),
            )
            .rule(
                Rule::new()
                    .tool_results(true)
                    .reply(Reply::text("Wrote AGENTS.md.")),
            )
            .default_reply(Reply::text("ok")),
    )
    .await;
    let out = tine(&project, &server)
        .args(["-p", "/init", "--permission-mode", "acceptEdits"])
        .run()
        .await;
    out.assert_success();
    assert!(out.stdout.contains("Wrote AGENTS.md."), "{}", out.stdout);
    assert_eq!(project.read("AGENTS.md"), "# Agents\n\nRun `cargo test`.\n");
}

/// The text of the last user message of `body`.
fn last_user_text(body: &serde_json::Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    match &last["content"] {
        serde_json::Value::String(text) => text.clone(),
        blocks => blocks
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// `!`command`` runs (its output in the pattern's place) when the command's allowed-tools
/// allow it, and `@path` attaches the file as Read shows it, as Claude Code does.
#[tokio::test]
async fn a_custom_command_inlines_shell_output_and_files() {
    let project = Project::new();
    project.write("notes.txt", "the notes say hi\n");
    project.write(
        ".claude/commands/gather.md",
        "---\nallowed-tools: Bash(touch:*), Bash(echo:*)\n---\n\
         Made: !`touch made.txt && echo made-$1`\nRead @notes.txt, and @nobody.",
    );
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let out = tine(&project, &server)
        .args(["-p", "/gather one"])
        .run()
        .await;
    out.assert_success();
    assert!(project.cwd().join("made.txt").exists());
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 1);
    let text = last_user_text(&bodies[0]);
    assert!(text.contains("Made: made-one\nRead @notes.txt"), "{text}");
    assert!(!text.contains("!`"), "{text}");
    assert!(
        text.contains("Called the Read tool with the following input: {\"file_path\":"),
        "{text}"
    );
    assert!(text.contains("the notes say hi"), "{text}");
    // Not a file: left as text, nothing attached for it.
    assert!(text.contains("and @nobody."), "{text}");
    assert_eq!(text.matches("Called the Read tool").count(), 1, "{text}");
}

/// A shell command the rules do not allow is refused headless (Claude Code refuses it too):
/// the command fails naming the pattern, nothing runs and no request is made; a file outside
/// the project is read only as the rules allow.
#[tokio::test]
async fn a_custom_command_may_not_run_or_read_what_the_rules_do_not_allow() {
    let project = Project::new();
    project.write(".claude/commands/sneaky.md", "Made: !`touch made.txt`");
    let secret = project.root().join("secret.txt");
    std::fs::write(&secret, "outside secret\n").unwrap();
    project.write(
        ".claude/commands/peek.md",
        &format!("Look at @{}", secret.display()),
    );
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    for command in ["/sneaky", "/peek"] {
        let out = tine(&project, &server)
            .args(["-p", command, "--output-format", "json"])
            .run()
            .await;
        assert!(!out.status.success(), "{command}: {}", out.stdout);
        let result = out.json();
        assert_eq!(result["is_error"], true, "{result}");
        let error = result["error"].as_str().unwrap_or_default();
        assert!(error.contains("permission check failed for `"), "{error}");
    }
    assert!(
        !project.cwd().join("made.txt").exists(),
        "the refused command ran"
    );
    assert!(
        server.requests().is_empty(),
        "a refused command sent a request"
    );
    // Allowed by the session's rules instead of the front matter: it runs.
    let out = tine(&project, &server)
        .args(["-p", "/sneaky", "--allowedTools", "Bash(touch:*)"])
        .run()
        .await;
    out.assert_success();
    assert!(project.cwd().join("made.txt").exists());
}

/// Issue 35: a Claude model missing from the price table is priced as its family's current
/// model (never $0), and `/cost` says so; the aliases' models are priced from the table.
#[tokio::test]
async fn a_model_missing_from_the_price_table_is_priced_as_its_family_and_cost_says_so() {
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let project = Project::new();
    let line = |text: &str| {
        serde_json::json!({"type": "user", "message": {"role": "user", "content": text}})
            .to_string()
    };
    let out = tine(&project, &server)
        .args([
            "-p",
            "--model",
            "claude-opus-6",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .stdin(format!("{}\n{}\n", line("hello"), line("/cost")))
        .run()
        .await;
    out.assert_success();
    let lines = out.json_lines();
    let results: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 2, "{lines:#?}");
    let first = results[0];
    let cost = first["total_cost_usd"].as_f64().unwrap();
    assert!(cost > 0.0, "never priced as free: {first}");
    let usage: tine_api_client::Usage = serde_json::from_value(first["usage"].clone()).unwrap();
    let family = tine_api_client::cost_usd("claude-opus-5-5", &usage);
    assert!(
        (cost - family).abs() < 1e-9,
        "{cost} vs Opus 5.5's {family}"
    );
    let answer = results[1]["result"].as_str().unwrap();
    assert!(
        answer.contains("claude-opus-6 is not in tine's price table: priced as claude-opus-5-5"),
        "{answer}"
    );
}
