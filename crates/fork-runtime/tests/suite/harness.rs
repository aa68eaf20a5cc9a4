//! A main-thread session on the in-process mock in a scratch project, wired as the CLI wires
//! it (tine-test-support), carrying a user context a fork must send unchanged.

use std::sync::Arc;

use tine_fork_runtime::{ParentContext, StopHookPipeline};
use tine_mock_api::{MockServer, Scenario};
use tine_query_loop::QueryEngine;
use tine_test_support::{EventTally, ScratchProject, SessionBuilder, server};

pub(super) use tine_test_support::tool_setup;

/// What the engine puts before the session's first prompt (the cli's instruction files,
/// environment and memory index); a fork must send it unchanged.
pub(super) const USER_CONTEXT: &str =
    "<system-reminder>\nAGENTS.md: run the tests before committing.\n</system-reminder>";

pub(super) struct Session {
    pub server: MockServer,
    pub project: ScratchProject,
    pub parent: Arc<ParentContext>,
    pub pipeline: Arc<StopHookPipeline>,
    pub engine: QueryEngine,
    pub events: EventTally,
}

pub(super) async fn session(
    scenario: Scenario,
    build: impl FnOnce(StopHookPipeline) -> StopHookPipeline + Send + 'static,
) -> Session {
    let server = server(scenario).await;
    let project = ScratchProject::new();
    let s = SessionBuilder::new(project.home(), project.cwd())
        .user_context(USER_CONTEXT)
        .pipeline(build)
        .start(&server)
        .await;
    Session {
        server,
        project,
        parent: s.parent,
        pipeline: s.pipeline,
        engine: s.engine,
        events: s.events,
    }
}
