//! Start-up: from [`SessionOptions`], the environment and the settings files to a ready
//! engine with its forks' parent, stop-hook pipeline and memory, in stages that each return
//! their typed part: where the session is and its provider (`ground`), what may run
//! (`policy`), the tools (`toolset`), the context rendered once (`context`), the work beside
//! the main thread (`background`), and the main thread (`engine`). The order is chosen for
//! speed and clear failures: credentials first (a missing key is one line and nothing else),
//! then settings (fail closed), permissions, tools, context; no network before the first
//! model request, and nothing under `TINE_HOME` is scanned beyond the files named here. Every
//! warning is a [`Notice`], returned with the session, never printed.

mod background;
mod context;
mod engine;
mod ground;
mod policy;
mod toolset;

use std::path::PathBuf;
use std::sync::Arc;

use tine_compaction::SessionCompactor;
use tine_config::settings::LoadedSettings;
use tine_config::transcript_path;
use tine_fork_runtime::{BackgroundEvent, StopHookPipeline, UsageLedger};
use tine_memory::AutoMemory;
use tine_query_loop::{QueryEngine, latest_session};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use context::gather_context;
pub use ground::{settings_paths, user_home_from_env};

use crate::emit::Emitter;
use crate::error::StartError;
use crate::hooks::SessionHooks;
use crate::mcp::SessionMcp;
use crate::options::{Resume, SessionOptions};
use crate::permission::Permissions;
use crate::private_state::tighten_own_state;
use crate::protocol::{HistoryItem, Notice, SessionInfo};

/// Everything the session's task owns.
pub(crate) struct Assembled {
    pub engine: QueryEngine,
    pub pipeline: Arc<StopHookPipeline>,
    pub background: mpsc::UnboundedReceiver<BackgroundEvent>,
    pub memory: Option<AutoMemory>,
    pub ledger: UsageLedger,
    /// The session's tasks (background agents), shared with the handle.
    pub tasks: tine_fork_runtime::TaskRegistry,
    pub permissions: Arc<Permissions>,
    /// The MCP servers, when any is configured.
    pub mcp: Option<SessionMcp>,
    pub info: SessionInfo,
    /// A resumed conversation, shown again.
    pub history: Option<Vec<HistoryItem>>,
    /// The settings as loaded at start (`/permissions` lists their rules).
    pub settings: Arc<LoadedSettings>,
    /// Said in start-up's order, after `Configured` and the history.
    pub notices: Vec<Notice>,
    pub hooks: SessionHooks,
    /// Where custom slash commands are looked up, in order.
    pub command_dirs: Vec<PathBuf>,
    /// The skills read at start (`/NAME`, `/skills`).
    pub skills: crate::skills::SessionSkills,
    /// The plugins read at start (their commands, `/plugin`).
    pub plugins: Arc<crate::plugins::SessionPlugins>,
    /// SessionStart's `source` is `clear` (else `startup`, or `resume` for a resumed one).
    pub cleared: bool,
    /// The compaction levels; their window is what the usage figure is shown against.
    pub compactor: Arc<SessionCompactor>,
    /// `--json-schema`: where the StructuredOutput tool leaves the answer.
    pub structured: Option<crate::structured::StructuredSlot>,
    /// The away summary, when on.
    pub away: Option<crate::away::AwaySummarizer>,
    /// Speculation, when on.
    pub speculator: Option<crate::speculation::Speculator>,
    /// `--fallback-model`'s switch, followed after each turn.
    pub fallback: Option<crate::main_client::FallbackSwitch>,
    /// The prompts sent and their checkpoints.
    pub rewinds: Arc<crate::rewind::Rewinds>,
}

/// Marks the end of a stage of a run (start-up's, and the end's) for `TINE_PROFILE_STARTUP`:
/// a `tracing` event of target `tine_startup` the cli's profile catches (nothing listens
/// otherwise).
pub(crate) fn stage_done(stage: &'static str) {
    tracing::debug!(target: "tine_startup", stage);
}

pub(crate) async fn assemble(
    options: SessionOptions,
    session_token: &CancellationToken,
    events: &Emitter,
) -> Result<Assembled, StartError> {
    let mut notices = Vec::new();
    let (ground, client) = ground::Ground::read(&options, &mut notices)?;
    stage_done("ground");
    let mut policy = policy::Policy::decide(&options, &ground, &mut notices)?;
    stage_done("policy");
    let mut toolset = toolset::ToolSet::assemble(
        &options,
        &ground,
        &mut policy,
        session_token,
        events,
        &mut notices,
    )
    .await?;
    stage_done("toolset");
    let rendered =
        context::Rendered::render(&options, &ground, &policy, toolset.structured.is_some()).await;
    stage_done("context");
    let session = session_id(&options, &ground).await?;
    let client = client.ready().await?;
    // Which tools wait behind ToolSearch, decided once on the endpoint's window: the array is
    // serialized once and its bytes are paid on every request.
    toolset.defer_rarely_used(
        &ground,
        client.context_window(&ground.model),
        policy.mode == tine_permissions::PermissionMode::Plan,
        &mut notices,
    );
    stage_done("client");
    // One value for every hook event (see `hooks`).
    let hooks = SessionHooks::new(
        std::mem::take(&mut policy.hooks),
        session.0.clone(),
        transcript_path(&ground.home, &ground.cwd, &session.0),
        ground.cwd.clone(),
        events.clone(),
        options.include_hook_events,
    );
    // This session's transcript, when resumed, was opened by an older tine too.
    tighten_own_state(
        &ground.home,
        &[],
        &[transcript_path(&ground.home, &ground.cwd, &session.0)],
    );
    let background = background::Background::start(
        background::Inputs {
            options: &options,
            ground: &ground,
            policy: &mut policy,
            toolset: &toolset,
            // The deferred tools are named in the first user message, frozen with the rest.
            user_context: crate::tool_search::with_reminder(
                Arc::clone(&rendered.user_context),
                &toolset.definitions,
            ),
            client: &client,
            session_id: &session.0,
            hooks: &hooks,
            session_token,
        },
        &mut notices,
    );
    let plugins = Arc::clone(&ground.plugins);
    stage_done("background");
    let (main, loaded) = engine::MainThread::start(
        engine::Parts {
            options: &options,
            ground,
            policy,
            toolset: &mut toolset,
            rendered,
            background: &background,
            client,
            session,
            hooks: &hooks,
            session_token,
            events,
        },
        &mut notices,
    )
    .await?;
    stage_done("engine");
    Ok(Assembled {
        engine: main.engine,
        pipeline: background.pipeline,
        background: background.events,
        memory: background.memory,
        ledger: background.ledger,
        tasks: main.tasks,
        permissions: main.permissions,
        mcp: toolset.mcp,
        info: main.info,
        history: main.history,
        settings: Arc::new(loaded),
        notices,
        hooks,
        command_dirs: main.command_dirs,
        skills: toolset.skills,
        plugins,
        cleared: options.cleared,
        compactor: background.compactor,
        structured: toolset.structured,
        away: background.away.map(|(summarizer, _)| summarizer),
        speculator: background.speculator,
        fallback: main.fallback,
        rewinds: main.rewinds,
    })
}

/// The session's id, and whether it resumes one: the id comes first, since the hooks are
/// told it and the transcript path.
async fn session_id(
    options: &SessionOptions,
    ground: &ground::Ground,
) -> Result<(tine_config::SessionId, bool), StartError> {
    let (home, cwd) = (&ground.home, &ground.cwd);
    let resumed = match &options.resume {
        Resume::New => {
            return Ok((
                crate::flags::new_session_id(options.session_id.as_ref(), home, cwd)?,
                false,
            ));
        }
        Resume::Id(id) => id.clone(),
        Resume::Latest => match latest_session(home, cwd).await? {
            Some(id) => id,
            None => return Err(StartError::NoSessionToContinue { cwd: cwd.clone() }),
        },
    };
    match options.fork_session {
        true => Ok((
            crate::flags::fork_session(options, home, cwd, &resumed).await?,
            true,
        )),
        false => Ok((resumed, true)),
    }
}
