//! Running a case over either wire: the mock answers `/v1/messages` and
//! `/v1/chat/completions` from the same scenario, so a test written once checks both providers.

use serde_json::Value;
use tine_e2e::tine_mock_api::MockServer;
use tine_e2e::{Project, TineRun};

use super::tine;

/// Which wire format a run talks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wire {
    /// The Messages API (the default provider).
    Anthropic,
    /// OpenAI-compatible chat completions (`--provider openai`).
    OpenAi,
}

/// The model of openai runs: a local model's name, sent verbatim.
pub(super) const LOCAL_MODEL: &str = "qwen2.5-coder:7b";

/// The key of openai runs: the same dummy the Anthropic runs use, so "the key never reaches a
/// log" checks hold for both.
pub(super) const OPENAI_TEST_KEY: &str = "test-key";

impl Wire {
    /// The model name the run uses.
    pub(super) fn model(self) -> &'static str {
        match self {
            Wire::Anthropic => "claude-opus-5-5",
            Wire::OpenAi => LOCAL_MODEL,
        }
    }
}

/// `tine` in `project` against `server` over `wire`. For openai: `--provider openai`,
/// `OPENAI_BASE_URL` at the mock's `/v1`, a key, a local model, and no Anthropic variables.
pub(super) fn tine_on(wire: Wire, project: &Project, server: &MockServer) -> TineRun {
    let run = tine(project, server);
    match wire {
        Wire::Anthropic => run,
        Wire::OpenAi => run
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env("OPENAI_BASE_URL", server.openai_base_url())
            .env("OPENAI_API_KEY", OPENAI_TEST_KEY)
            .env("OPENAI_MODEL", LOCAL_MODEL)
            .args(["--provider", "openai"]),
    }
}

/// The model requests' bodies in Messages form (chat requests as the mock converted them), in
/// order. Panics if a run mixed the two routes: a provider talks one wire only.
pub(super) fn model_bodies(server: &MockServer) -> Vec<Value> {
    let records: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/messages" || r.path == "/v1/chat/completions")
        .collect();
    let paths: std::collections::BTreeSet<&str> = records.iter().map(|r| r.path.as_str()).collect();
    assert!(paths.len() <= 1, "requests went to both wires: {paths:?}");
    records.iter().filter_map(|r| r.messages_form()).collect()
}

/// Whether a tool result block (in Messages form) reports an error: `is_error` on the Messages
/// API; chat completions has no such field, so the client marks the text `Error: `.
pub(super) fn is_error_result(wire: Wire, block: &Value) -> bool {
    match wire {
        Wire::Anthropic => block["is_error"] == Value::Bool(true),
        Wire::OpenAi => block["content"]
            .as_str()
            .is_some_and(|text| text.starts_with("Error: ")),
    }
}

/// `both_wires!(case, ...)`: for each `async fn case(wire: Wire)`, a module `case` with the
/// tests `anthropic` and `openai`.
macro_rules! both_wires {
    ($($case:ident),+ $(,)?) => {
        $(
            mod $case {
                use super::super::wire::Wire;

                #[tokio::test]
                async fn anthropic() {
                    super::$case(Wire::Anthropic).await;
                }

                #[tokio::test]
                async fn openai() {
                    super::$case(Wire::OpenAi).await;
                }
            }
        )+
    };
}

pub(crate) use both_wires;
