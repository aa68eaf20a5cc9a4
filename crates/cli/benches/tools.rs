//! `cargo xtask bench tools` (issue 36): what deferring tools behind ToolSearch saves, measured
//! on the real `tine` binary against the in-process mock (tokens are bytes / 4; deferred tools
//! are outside the cached prefix, as on the API) with 5 MCP servers offering 120 tools in all
//! (tine-mcp's stdio test server: 8 fixed tools and 16 generated ones of ~1.2 KB each).
//!
//! 1. The first request's prompt tokens with `toolSearch: never` and with the default (`auto`),
//!    and the share saved (target >= 60%).
//! 2. A session that loads a tool (`select:`), calls it and answers: the share of the request
//!    after the ToolSearch read from the cache, against the previous request's whole prompt
//!    (target 100%), and the three requests' billed-equivalent input with and without deferral.
//! 3. The same on chat completions, which has no `defer_loading`: the array stays fixed and the
//!    loaded schema goes in the tool result as text; what that text costs, and the share the
//!    server's prefix cache reads after the ToolSearch.
//!
//! Token figures do not depend on the build profile: `cargo bench -p tine-cli --bench tools
//! --profile dev` gives the same numbers without a release build.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{
    MockConfig, MockServer, Reply, RequestRecord, Rule, Scenario, Usage,
};
use tine_e2e::{Project, TineRun};

use common::{TINE, verdict};

const SERVERS: usize = 5;
/// Generated tools per server; each server also has the test server's 8 fixed tools.
const GENERATED_PER_SERVER: usize = 16;
const TOOL: &str = "mcp__srv2__tool_007";
const TARGET_SAVED: f64 = 0.60;
const TARGET_READ_AFTER_SEARCH: f64 = 1.0;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Wire {
    Anthropic,
    OpenAi,
}

#[tokio::main]
async fn main() {
    let server_bin = test_server_binary();
    let config = servers_config(&server_bin);
    println!(
        "tools: {SERVERS} MCP servers, {} tools in all",
        SERVERS * (GENERATED_PER_SERVER + 8)
    );

    // 1. The first request, with and without deferral.
    let never = session(Wire::Anthropic, &config, Some("never"), false).await;
    let auto = session(Wire::Anthropic, &config, None, false).await;
    let (without, with) = (prompt(&never[0]), prompt(&auto[0]));
    let saved = 1.0 - with as f64 / without as f64;
    println!(
        "first request's input tokens: {without} without deferral, {with} with (auto): \
         {:.1}% fewer (target >= {:.0}%) {}",
        saved * 100.0,
        TARGET_SAVED * 100.0,
        verdict(saved >= TARGET_SAVED)
    );

    // 2. Load a tool, call it, answer.
    let auto = session(Wire::Anthropic, &config, None, true).await;
    let never = session(Wire::Anthropic, &config, Some("never"), true).await;
    let read = usage(&auto[1]).cache_read_input_tokens;
    let previous = prompt(&auto[0]);
    let share = read as f64 / previous as f64;
    println!(
        "request after the ToolSearch: read {read} of the previous request's {previous} \
         prompt tokens from the cache: {:.1}% (target {:.0}%) {}",
        share * 100.0,
        TARGET_READ_AFTER_SEARCH * 100.0,
        verdict(read == previous)
    );
    println!(
        "  its array: the first request's bytes + {} bytes appended (the loaded tool, deferred)",
        tools_bytes(&auto[1]) - tools_bytes(&auto[0])
    );
    println!(
        "session (select, call, answer): billed-equivalent input {:.0} tokens with deferral, \
         {:.0} without ({:.2}x)",
        billed(&auto),
        billed(&never),
        billed(&auto) / billed(&never)
    );

    // 3. Chat completions.
    let chat = session(Wire::OpenAi, &config, None, true).await;
    let chat_never = session(Wire::OpenAi, &config, Some("never"), true).await;
    let (first, first_never) = (prompt(&chat[0]), prompt(&chat_never[0]));
    println!(
        "chat completions: first request {first} prompt tokens with deferral, {first_never} \
         without: {:.1}% fewer",
        (1.0 - first as f64 / first_never as f64) * 100.0
    );
    let text = loaded_text(&chat[1]);
    let text_tokens = text.len().div_ceil(4);
    let definition = auto_definition_tokens(&auto[1]);
    println!(
        "  the text fallback: the loaded schema as <functions> text in the tool result, \
         {text_tokens} tokens once in the history (on the Messages API the reference expands \
         to ~{definition} tokens where it stands, plus the array entry outside the prefix)"
    );
    let read = usage(&chat[1]).cache_read_input_tokens;
    let previous = prompt(&chat[0]);
    println!(
        "  request after the ToolSearch: the server's prefix cache read {read} of the previous \
         request's {previous} prompt tokens ({:.1}%); the array never changed {}",
        read as f64 / previous as f64 * 100.0,
        verdict(array_fixed(&chat))
    );
    println!(
        "  session: {} prompt tokens over its {} requests with deferral, {} without",
        chat.iter().map(prompt).sum::<u64>(),
        chat.len(),
        chat_never.iter().map(prompt).sum::<u64>()
    );
}

/// One `tine -p` session; its model requests. `loads`: the model selects [`TOOL`], calls it
/// and answers; otherwise it answers at once.
async fn session(wire: Wire, config: &str, mode: Option<&str>, loads: bool) -> Vec<RequestRecord> {
    let scenario = if loads {
        Scenario::new()
            .rule(Rule::new().assistant_turns(0).reply(Reply::tool_use(
                "ToolSearch",
                json!({"query": format!("select:{TOOL}")}),
            )))
            .rule(
                Rule::new()
                    .assistant_turns(1)
                    .reply(Reply::tool_use(TOOL, json!({"id": "42"}))),
            )
            .default_reply(Reply::text("Done."))
    } else {
        Scenario::new().default_reply(Reply::text("Hi."))
    };
    let server = MockServer::start(MockConfig::new(scenario)).await.unwrap();
    let project = Project::new();
    if let Some(mode) = mode {
        project.write(
            ".tine/settings.json",
            &json!({"toolSearch": mode}).to_string(),
        );
    }
    let mut run = TineRun::new(TINE, &project, &server.base_url())
        .env("TINE_MCP_TIMEOUT", "60000")
        .args(["--mcp-config", config, "--allowedTools", "mcp__srv2"]);
    if wire == Wire::OpenAi {
        run = run
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env("OPENAI_BASE_URL", server.openai_base_url())
            .env("OPENAI_API_KEY", "test-key")
            .env("OPENAI_MODEL", "qwen2.5-coder:7b")
            .args(["--provider", "openai"]);
    }
    let out = run.args(["-p", "use tool 7"]).run().await;
    out.assert_success();
    let records: Vec<RequestRecord> = server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/messages" || r.path == "/v1/chat/completions")
        .collect();
    server.stop().await;
    records
}

fn usage(record: &RequestRecord) -> Usage {
    record.usage.expect("an answered request")
}

fn prompt(record: &RequestRecord) -> u64 {
    usage(record).prompt_tokens()
}

/// Input + 1.25 x cache writes + 0.1 x cache reads, over the requests.
fn billed(records: &[RequestRecord]) -> f64 {
    records
        .iter()
        .map(|r| {
            let u = usage(r);
            u.input_tokens as f64
                + 1.25 * u.cache_creation_input_tokens as f64
                + 0.1 * u.cache_read_input_tokens as f64
        })
        .sum()
}

fn tools_bytes(record: &RequestRecord) -> usize {
    record
        .json()
        .map_or(0, |body| body["tools"].to_string().len())
}

/// The chat tool message that answered the ToolSearch (the request after it).
fn loaded_text(record: &RequestRecord) -> String {
    let body = record.json().expect("a body");
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// The loaded definition's tokens on the Messages API (its entry in the array).
fn auto_definition_tokens(record: &RequestRecord) -> usize {
    let body = record.json().expect("a body");
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == TOOL)
        .map_or(0, |t| t.to_string().len().div_ceil(4))
}

fn array_fixed(records: &[RequestRecord]) -> bool {
    let arrays: Vec<String> = records
        .iter()
        .filter_map(RequestRecord::json)
        .map(|b: Value| b["tools"].to_string())
        .collect();
    arrays.windows(2).all(|w| w[0] == w[1])
}

fn servers_config(binary: &Path) -> String {
    let servers: serde_json::Map<String, Value> = (0..SERVERS)
        .map(|i| {
            (
                format!("srv{i}"),
                json!({
                    "command": binary.display().to_string(),
                    "args": ["--tools", GENERATED_PER_SERVER.to_string(), "--no-resources"],
                }),
            )
        })
        .collect();
    json!({ "mcpServers": servers }).to_string()
}

/// tine-mcp's stdio test server beside `tine`.
fn test_server_binary() -> PathBuf {
    tine_e2e::mcp_test_server(Path::new(TINE))
}
