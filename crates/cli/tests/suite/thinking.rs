//! Issue 18's extended thinking through the real binary: `MAX_THINKING_TOKENS` and
//! `alwaysThinkingEnabled` set a budget the API accepts against `max_tokens`; thinking and
//! redacted thinking come back unchanged (signature included) in the assistant message with
//! the tool call; `/thinking` turns it off from the next request; a fork child sends the
//! parent's thinking config, so it still reads the parent's cache.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};

use super::{mock, tine};

/// A first reply that thinks, then reads a file; the second answers.
fn thinking_then_read() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new().assistant_turns(0).reply(
                Reply::new()
                    .with_thinking("I should look at the file first.")
                    .with_redacted_thinking("opaque-bytes")
                    .with_text("Reading.")
                    .with_tool_use("Read", json!({"file_path": "notes.txt"})),
            ),
        )
        .rule(
            Rule::new().tool_results(true).reply(
                Reply::new()
                    .with_thinking("It says hello.")
                    .with_text("Done."),
            ),
        )
}

/// A model that takes a thinking budget (the Claude 5 generation, the default, thinks
/// adaptively instead: `the_default_model_thinks_adaptively`).
const BUDGET_MODEL: &str = "claude-sonnet-4-5";

fn thinking_of(body: &Value) -> (&Value, u64) {
    (&body["thinking"], body["max_tokens"].as_u64().unwrap())
}

#[tokio::test]
async fn max_thinking_tokens_sets_a_valid_budget_and_blocks_come_back_unchanged() {
    let server = mock(thinking_then_read()).await;
    let project = Project::new();
    project.write("notes.txt", "hello\n");
    let out = tine(&project, &server)
        .env("ANTHROPIC_MODEL", BUDGET_MODEL)
        .env("MAX_THINKING_TOKENS", "12000")
        .args(["-p", "what do the notes say?", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Done.");

    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        let (thinking, max_tokens) = thinking_of(body);
        assert_eq!(
            thinking,
            &json!({"type": "enabled", "budget_tokens": 12000})
        );
        assert!(max_tokens > 12000, "max_tokens {max_tokens}");
    }
    // The reply with the tool call goes back as the mock sent it: thinking first, its
    // signature unchanged (the mock refuses any other), redacted thinking as it was.
    let sent_back = &bodies[1]["messages"][1];
    assert_eq!(sent_back["role"], "assistant");
    let blocks = sent_back["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "thinking");
    assert_eq!(blocks[0]["thinking"], "I should look at the file first.");
    assert_eq!(
        server.requests()[1].status,
        200,
        "the mock refused the blocks sent back"
    );
    assert!(
        blocks[0]["signature"]
            .as_str()
            .unwrap()
            .starts_with("mocksig:")
    );
    assert_eq!(
        blocks[1],
        json!({"type": "redacted_thinking", "data": "opaque-bytes"})
    );
    assert_eq!(blocks[3]["type"], "tool_use");
    // Both requests' prefix before the new messages is the same bytes: a cache hit.
    let usage = server.requests()[1].usage.unwrap();
    assert!(usage.cache_read_input_tokens > 0, "{usage:?}");
}

#[tokio::test]
async fn always_thinking_enabled_uses_the_default_budget_and_zero_turns_it_off() {
    let server = mock(thinking_then_read()).await;
    let project = Project::new();
    project.write("notes.txt", "hello\n");
    project.write(".tine/settings.json", r#"{"alwaysThinkingEnabled": true}"#);
    let out = tine(&project, &server)
        .env("ANTHROPIC_MODEL", BUDGET_MODEL)
        .args(["-p", "what do the notes say?"])
        .run()
        .await;
    out.assert_success();
    let bodies = request_bodies(&server);
    let (thinking, max_tokens) = thinking_of(&bodies[0]);
    assert_eq!(
        thinking,
        &json!({"type": "enabled", "budget_tokens": 31999})
    );
    assert!(max_tokens > 31999);

    // MAX_THINKING_TOKENS=0 wins over the setting.
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let out = tine(&project, &server)
        .env("ANTHROPIC_MODEL", BUDGET_MODEL)
        .env("MAX_THINKING_TOKENS", "0")
        .args(["-p", "hi"])
        .run()
        .await;
    out.assert_success();
    assert!(request_bodies(&server)[0].get("thinking").is_none());
}

#[tokio::test]
async fn the_thinking_command_answers_without_a_request() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let out = tine(&project, &server)
        .env("ANTHROPIC_MODEL", BUDGET_MODEL)
        .args(["-p", "/thinking"])
        .run()
        .await;
    out.assert_success();
    assert!(
        out.stdout.contains("Thinking on (budget 31999 tokens)"),
        "{}",
        out.stdout
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_fork_child_sends_the_parents_thinking() {
    let fork = json!({"description": "alpha part", "prompt": "DIRECTIVE-ALPHA"});
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .last_user_contains("Your directive: DIRECTIVE-ALPHA")
                    .named("child")
                    .reply(Reply::text("Scope: alpha\nResult: done")),
            )
            .rule(
                Rule::new()
                    .last_user_contains("<task-notification>")
                    .reply(Reply::text("Reported.")),
            )
            .rule(
                Rule::new().assistant_turns(0).named("parent").reply(
                    Reply::new()
                        .with_thinking("Split it.")
                        .with_tool_use("Agent", fork),
                ),
            )
            .default_reply(Reply::text("Waiting.")),
    )
    .await;
    let project = Project::new();
    let out = tine(&project, &server)
        .env("ANTHROPIC_MODEL", BUDGET_MODEL)
        .env("MAX_THINKING_TOKENS", "4096")
        .args(["-p", "split the work"])
        .run()
        .await;
    out.assert_success();
    let log = server.requests();
    let find = |name: &str| {
        log.iter()
            .find(|r| r.rule.as_deref() == Some(name))
            .unwrap()
    };
    let (parent, child) = (find("parent"), find("child"));
    let (p, c) = (parent.json().unwrap(), child.json().unwrap());
    assert_eq!(
        c["thinking"],
        json!({"type": "enabled", "budget_tokens": 4096})
    );
    assert_eq!(c["thinking"], p["thinking"]);
    // The child's copy of the parent's reply starts with its thinking, signature and all.
    let copied = &c["messages"][1]["content"][0];
    assert_eq!(copied["type"], "thinking");
    assert_eq!(copied["thinking"], "Split it.");
    let usage = child.usage.unwrap();
    assert!(
        usage.cache_read_input_tokens >= parent.usage.unwrap().prompt_tokens(),
        "{usage:?}"
    );
}

/// The default model (Opus 5.5) thinks adaptively: a session that turns thinking on asks for
/// `{"type": "adaptive"}` (a budget is refused by the Claude 5 generation), and thinking blocks
/// still come back unchanged.
#[tokio::test]
async fn the_default_model_thinks_adaptively() {
    let server = mock(thinking_then_read()).await;
    let project = Project::new();
    project.write("notes.txt", "hello\n");
    let out = tine(&project, &server)
        .env("MAX_THINKING_TOKENS", "12000")
        .args(["-p", "what do the notes say?", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    let bodies = request_bodies(&server);
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert_eq!(body["model"], "claude-opus-5-5");
        assert_eq!(body["thinking"], json!({"type": "adaptive"}));
    }
    let replayed = bodies[1]["messages"][1]["content"][0].clone();
    assert_eq!(replayed["type"], "thinking", "{}", bodies[1]);
    assert_eq!(replayed["thinking"], "I should look at the file first.");
}
