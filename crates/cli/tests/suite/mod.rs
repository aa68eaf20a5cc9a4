//! The suites, and the few lines they all share.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod compaction;
mod compaction_contract;
mod doctor;
mod dream;
mod headless;
mod hooks;
mod mcp;
mod memory;
mod memory_forks;
mod older_modes;
mod outside_reads;
mod provider;
mod recovery;
mod resume;
mod retries;
mod sandbox;
mod security;
mod session_cache;
mod settings_fail_closed;
mod signals;
mod state;
mod stuck;
mod terminal;
mod tool_hooks;
mod wire;

use tine_e2e::tine_mock_api::{MockConfig, MockServer, Scenario};
use tine_e2e::{Project, TineRun};

/// The binary under test, built fresh by cargo for these tests.
pub const TINE: &str = env!("CARGO_BIN_EXE_tine");

pub async fn mock(scenario: Scenario) -> MockServer {
    MockServer::start(MockConfig::new(scenario)).await.unwrap()
}

/// `tine` in `project` against `server`.
pub fn tine(project: &Project, server: &MockServer) -> TineRun {
    TineRun::new(TINE, project, &server.base_url())
}
