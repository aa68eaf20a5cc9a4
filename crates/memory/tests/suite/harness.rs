//! A project with a memory directory, and main-thread sessions on the in-process mock wired as
//! the CLI wires them (tine-test-support), with the extraction job when asked.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tine_fork_runtime::{BackgroundJob, JobOutcome};
use tine_memory::{DirSource, ExtractionJob, MemoryDir};
use tine_mock_api::MockServer;
use tine_test_support::{ScratchProject, SessionBuilder};

pub(super) use tine_test_support::{
    Session, big_system_prompt, body_has, client_for, last_user_has, server, tool_setup,
};

/// A scratch world: tine home, a project (the cwd), and the memory directory.
pub(super) struct World {
    pub project: ScratchProject,
    pub home: PathBuf,
    pub cwd: PathBuf,
    pub memory: MemoryDir,
}

impl World {
    pub(super) fn new() -> Self {
        let project = ScratchProject::new();
        let home = project.home().to_path_buf();
        let cwd = project.cwd().to_path_buf();
        let memory = MemoryDir::new(
            tine_memory::default_memory_dir(&home, &cwd),
            DirSource::Default,
        );
        memory.ensure().unwrap();
        Self {
            project,
            home,
            cwd,
            memory,
        }
    }

    pub(super) fn mem(&self) -> &Path {
        self.memory.path()
    }

    /// The temporary root holding home and project (canonical).
    pub(super) fn root(&self) -> &Path {
        self.project.root()
    }

    /// Files under `dir`, relative, sorted (hidden ones included).
    pub(super) fn files_under(dir: &Path) -> Vec<String> {
        ScratchProject::files_under(dir)
    }
}

/// A session of `world` on `server`; `user_context` is what the CLI puts before the first
/// prompt (the memory index), `job` the extraction job if registered.
pub(super) async fn session(
    world: &World,
    server: &MockServer,
    user_context: Option<String>,
    job: Option<Arc<dyn BackgroundJob>>,
) -> Session {
    session_with(
        world,
        server,
        user_context,
        job.into_iter().collect(),
        false,
    )
    .await
}

/// Like [`session`], with several jobs, and the tools wrapped by `guard_memory_writes` as the
/// CLI wires them when `guarded`.
pub(super) async fn session_with(
    world: &World,
    server: &MockServer,
    user_context: Option<String>,
    jobs: Vec<Arc<dyn BackgroundJob>>,
    guarded: bool,
) -> Session {
    let mut builder = SessionBuilder::new(&world.home, &world.cwd);
    if guarded {
        let mem = world.mem().to_path_buf();
        builder = builder.wrap_tools(move |tools| {
            tine_memory::guard_memory_writes(&tools, &mem)
                .unwrap()
                .into()
        });
    }
    if let Some(context) = user_context {
        builder = builder.user_context(context);
    }
    for job in jobs {
        builder = builder.job(job);
    }
    builder.start(server).await
}

pub(super) fn extraction_job(world: &World) -> Arc<ExtractionJob> {
    Arc::new(ExtractionJob::new(world.memory.clone()).unwrap())
}

/// What a memory test asks of a session once its turns are done.
#[allow(async_fn_in_trait)]
pub(super) trait Extracted {
    /// Flushes the batched work and waits for the background jobs, as `-p` does at exit;
    /// returns the extraction outcomes seen so far.
    async fn drain(&self) -> Vec<JobOutcome>;

    /// Waits for the background jobs without flushing (what a turn's end alone started);
    /// returns the extraction outcomes seen so far.
    async fn wait(&self) -> Vec<JobOutcome>;
}

impl Extracted for Session {
    async fn drain(&self) -> Vec<JobOutcome> {
        self.pipeline.flush();
        self.wait().await
    }

    async fn wait(&self) -> Vec<JobOutcome> {
        self.wait_jobs().await;
        self.events.outcomes("extract_memories")
    }
}
