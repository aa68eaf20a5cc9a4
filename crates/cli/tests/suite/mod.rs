//! The suites, and the few lines they all share.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp;
mod acp_client;
mod acp_editor;
mod agents;
mod agents_worktree;
mod compaction;
mod compaction_contract;
mod compaction_tui;
mod doctor;
mod dream;
mod dream_contract;
mod flags;
mod fuzz_acp_input;
mod fuzz_sdk_input;
mod headless;
mod hooks;
mod local_model;
mod magic_docs;
mod mcp;
mod mcp_plan;
mod mcp_sdk;
mod mcp_session;
mod memory;
mod memory_forks;
mod micro_compaction;
mod older_modes;
mod orphans;
mod outside_reads;
mod plugins;
mod provider;
mod recovery;
mod resume;
mod retries;
mod rewind;
mod sandbox;
mod sdk_control;
mod sdk_flags;
mod sdk_initialize;
mod sdk_resume;
mod security;
mod session_cache;
mod settings_fail_closed;
mod settings_writer;
mod signals;
mod skills;
mod slash_commands;
mod small_window;
mod state;
mod status_line;
mod stuck;
mod terminal;
mod terminal_keys;
mod thinking;
mod tool_hooks;
mod tool_search;
mod tools_media;
mod trust;
mod wire;
mod working_day;

use std::path::Path;

use serde_json::Value;
use tine_e2e::tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, TineRun, request_bodies};

/// The binary under test, built fresh by cargo for these tests.
pub(crate) const TINE: &str = env!("CARGO_BIN_EXE_tine");

pub(crate) async fn mock(scenario: Scenario) -> MockServer {
    MockServer::start(MockConfig::new(scenario)).await.unwrap()
}

/// `tine` in `project` against `server`.
pub(crate) fn tine(project: &Project, server: &MockServer) -> TineRun {
    TineRun::new(TINE, project, &server.base_url())
}

/// The flags of a headless session that reads and writes stream-json.
pub(crate) const STREAM_JSON: [&str; 6] = [
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
];

/// An SDK user message as one stream-json input line, newline included.
pub(crate) fn user_line(text: &str) -> String {
    serde_json::json!({"type": "user", "message": {"role": "user", "content": text}}).to_string()
        + "\n"
}

/// `prompts` as stream-json input: one SDK user message a line.
pub(crate) fn stream_json_input(prompts: &[&str]) -> String {
    prompts.iter().map(|p| user_line(p)).collect()
}

/// The names in a request's tool array, in order.
pub(crate) fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// A model that makes `calls` in its first reply, then says it is done.
pub(crate) async fn model_calling(calls: &[(&str, Value)]) -> MockServer {
    let mut reply = Reply::text("Trying.");
    for (tool, input) in calls {
        reply = reply.with_tool_use(tool, input.clone());
    }
    mock(
        Scenario::new()
            .rule(Rule::new().assistant_turns(0).reply(reply))
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done."))),
    )
    .await
}

/// The tool results the model received in its second request, in call order.
pub(crate) fn tool_results(server: &MockServer) -> Vec<Value> {
    let bodies = request_bodies(server);
    let last = bodies[1]["messages"].as_array().unwrap().last().unwrap();
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|block| block["type"] == "tool_result")
        .cloned()
        .collect()
}

/// `~/.ssh/id_rsa` holding `key` (`HOME` is the project's home).
pub(crate) fn plant_ssh_key(project: &Project, key: &str) {
    let ssh = project.home().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_rsa"), key).unwrap();
}

/// Every file under `dir` as text (transcripts, logs, memory), except `.ssh/`, where the
/// suites plant a key (the tine home is also `HOME`).
pub(crate) fn text_under(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|name| name == ".ssh") {
            continue;
        }
        if path.is_dir() {
            out.push_str(&text_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}
