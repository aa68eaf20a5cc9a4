//! The fifth stage: the work beside the main thread. Auto memory (its guarded tools, its
//! index in the user context) and the skills' listing, the one tool context the engine and
//! the forks' parent share, the parent itself (the session's token, so a fork outlives the
//! turn that started it), the stop-hook pipeline with its jobs (extraction, dream, Magic Docs)
//! and the user's Stop hooks, compaction, speculation and the away summary.

use std::sync::Arc;
use std::time::Duration;

use tine_api_client::ModelClient;
use tine_compaction::{CompactionConfig, SessionCompactor};
use tine_config::SessionId;
use tine_config::settings::LoadedSettings;
use tine_fork_runtime::{
    BackgroundEvent, CacheSafeSlot, ParentContext, SessionLocation, SharedReplacements,
    SideQuerySummarizer, StopHookPipeline, UsageLedger,
};
use tine_memory::{
    AutoMemory, DreamOptions, ExtractionOptions, MemoryEnv, MemoryResolution, guard_memory_writes,
    resolve_memory_dir,
};
use tine_query_loop::hooks::{HookEvent, Hooks};
use tine_tools::{EditorFs, EditorTerm, Tool, ToolContext, WebFetchSummarizer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::ground::Ground;
use super::policy::Policy;
use super::toolset::ToolSet;
use crate::hooks::SessionHooks;
use crate::options::SessionOptions;
use crate::private_state::tighten_memory_dir;
use crate::protocol::Notice;

/// The work beside the main thread, and what the engine shares with it.
pub(crate) struct Background {
    pub memory: Option<AutoMemory>,
    pub ledger: UsageLedger,
    /// The tools, memory writes guarded.
    pub tools: Arc<[Arc<dyn Tool>]>,
    /// The user context with memory's index and the skills' listing.
    pub user_context: Arc<str>,
    pub tool_context: ToolContext,
    pub parent: Arc<ParentContext>,
    /// The engine's content-replacement decisions, shared with the parent.
    pub replacements: SharedReplacements,
    pub pipeline: Arc<StopHookPipeline>,
    pub events: mpsc::UnboundedReceiver<BackgroundEvent>,
    pub magic: Option<tine_memory::MagicDocsJob>,
    pub compactor: Arc<SessionCompactor>,
    pub speculator: Option<crate::speculation::Speculator>,
    /// The away summary and the idle gap after which it is offered.
    pub away: Option<(crate::away::AwaySummarizer, Duration)>,
}

/// What the background stage needs besides the earlier stages.
pub(crate) struct Inputs<'a> {
    pub options: &'a SessionOptions,
    pub ground: &'a Ground,
    pub policy: &'a mut Policy,
    pub toolset: &'a ToolSet,
    pub user_context: Arc<str>,
    pub client: &'a Arc<dyn ModelClient>,
    pub session_id: &'a SessionId,
    pub hooks: &'a SessionHooks,
    pub session_token: &'a CancellationToken,
}

impl Background {
    pub(crate) fn start(inputs: Inputs<'_>, notices: &mut Vec<Notice>) -> Self {
        let Inputs {
            options,
            ground,
            policy,
            toolset,
            user_context,
            client,
            session_id,
            hooks,
            session_token,
        } = inputs;
        let Ground {
            cwd, home, loaded, ..
        } = ground;
        let bare = options.bare;
        let ledger = UsageLedger::default();
        let memory = start_memory(options, ground, policy, client, &ledger, notices);
        // Memory writes from this session and its forks go through the memory lock and index
        // merge; the wrapped tools serialize as the real ones, so the tool array is unchanged.
        let tools: Arc<[Arc<dyn Tool>]> = match &memory {
            None => Arc::clone(&toolset.tools),
            Some(memory) => match guard_memory_writes(&toolset.tools, memory.dir().path()) {
                Ok(guarded) => guarded.into(),
                Err(error) => {
                    notices.push(Notice::warning(format!(
                        "memory writes are not guarded: {error}"
                    )));
                    Arc::clone(&toolset.tools)
                }
            },
        };
        // The memory index joins the user context once, so every request keeps the same
        // bytes (and a resumed session replays them from its transcript); the skills' names
        // and descriptions likewise (never their bodies).
        let user_context: Arc<str> = match &memory {
            None => user_context,
            Some(memory) => Arc::from(format!("{user_context}\n\n{}", memory.context())),
        };
        let user_context = match bare {
            true => user_context,
            false => crate::skills::with_listing(user_context, &toolset.skills.skills),
        };
        // One tool context (cwd, file-state cache) for the session and its forks' parent. The
        // parent holds the session's token, so a fork outlives the turn that started it; each
        // turn runs on a child of it. WebFetch's answers come from the small fast model,
        // recorded in the ledger.
        let small_model = ground.small_model.clone();
        let away = crate::away::configure(loaded, bare, client, &small_model, &ledger, notices);
        let mut tool_context = ToolContext::new(cwd)
            .with_cancellation(session_token.clone())
            .with_ext(WebFetchSummarizer(Arc::new(
                SideQuerySummarizer::new(Arc::clone(client), small_model)
                    .with_ledger(ledger.clone()),
            )));
        if let Some(sandbox) = policy.sandbox.take() {
            tool_context = tool_context.with_sandbox(sandbox);
        }
        if let Some(editor) = &options.editor_files {
            tool_context = tool_context.with_ext(EditorFs(Arc::clone(editor)));
        }
        if let Some(terminal) = &options.editor_terminal {
            tool_context = tool_context.with_ext(EditorTerm(Arc::clone(terminal)));
        }
        // The engine's own decisions on oversized tool results, shared with the parent, so a
        // fork's prefix serializes as the main thread's requests did.
        let replacements = SharedReplacements::default();
        let mut parent = ParentContext::new(
            Arc::clone(client),
            Arc::clone(&tools),
            tool_context.clone(),
            SessionLocation {
                home: home.clone(),
                cwd: cwd.clone(),
                session_id: session_id.clone(),
            },
        )
        .with_ledger(ledger.clone());
        parent.content_replacements = Arc::clone(&replacements);
        let parent = Arc::new(parent);
        let speculator = (!bare && crate::speculation::enabled(loaded))
            .then(|| crate::speculation::Speculator::new(Arc::clone(&parent), &policy.context));
        let (events_tx, events) = mpsc::unbounded_channel();
        let mut pipeline =
            StopHookPipeline::new(Arc::clone(&parent), CacheSafeSlot::new()).with_events(events_tx);
        // Extraction, then auto dream (main thread only: forks never run the pipeline).
        for job in memory.iter().flat_map(AutoMemory::jobs) {
            pipeline = pipeline.with_job(job);
        }
        let magic = crate::magic::install(loaded, bare, &policy.context, &tool_context, notices);
        if let Some(job) = &magic {
            pipeline = pipeline.with_job(Arc::new(job.clone()));
        }
        if let Some(stop_hooks) = hooks.stop_hooks() {
            pipeline = pipeline.with_user_hooks(stop_hooks);
        }
        let compactor = compactor(
            loaded,
            &parent,
            &user_context,
            memory.as_ref(),
            hooks.hooks(),
            notices,
        );
        Self {
            memory,
            ledger,
            tools,
            user_context,
            tool_context,
            parent,
            replacements,
            pipeline: Arc::new(pipeline),
            events,
            magic,
            compactor,
            speculator,
            away,
        }
    }
}

/// Auto memory: not with `--bare` (no background work), not when turned off; a memory that
/// cannot start is a warning and the session goes on without it.
fn start_memory(
    options: &SessionOptions,
    ground: &Ground,
    policy: &Policy,
    client: &Arc<dyn ModelClient>,
    ledger: &UsageLedger,
    notices: &mut Vec<Notice>,
) -> Option<AutoMemory> {
    if options.bare {
        return None;
    }
    let Ground {
        cwd, home, loaded, ..
    } = ground;
    let dir = match resolve_memory_dir(&MemoryEnv::from_process(), loaded, home, cwd) {
        MemoryResolution::Enabled(dir) => dir,
        MemoryResolution::Disabled(why) => {
            tracing::info!(%why, "auto memory is off");
            return None;
        }
    };
    tighten_memory_dir(home, dir.path());
    let (extraction, warning) = ExtractionOptions::from_settings(loaded);
    notices.extend(warning.map(|w| Notice::warning(w.to_string())));
    let (dream, warnings) = DreamOptions::from_settings(loaded);
    notices.extend(warnings.into_iter().map(|w| Notice::warning(w.to_string())));
    let started = AutoMemory::start_with(
        dir,
        Arc::clone(client),
        &ground.model,
        Some(ledger.clone()),
        extraction,
        Some(&policy.context),
    )
    .and_then(|memory| memory.with_dream(dream));
    match started {
        Ok(memory) => Some(memory),
        Err(error) => {
            notices.push(Notice::warning(format!(
                "auto memory is off for this session: {error}"
            )));
            None
        }
    }
}

/// Compaction (auto, reactive, manual) on the forks' parent: `autoCompactEnabled`,
/// `TINE_AUTO_COMPACT_WINDOW` / `CLAUDE_CODE_AUTO_COMPACT_WINDOW` and `DISABLE_AUTOCOMPACT`
/// (their warnings are notices), the PreCompact/PostCompact hooks of settings, and memory's
/// extraction before history is dropped.
fn compactor(
    loaded: &LoadedSettings,
    parent: &Arc<ParentContext>,
    user_context: &Arc<str>,
    memory: Option<&AutoMemory>,
    hooks: Option<Hooks>,
    notices: &mut Vec<Notice>,
) -> Arc<SessionCompactor> {
    let setting = loaded
        .get(tine_compaction::AUTO_COMPACT_SETTING)
        .and_then(|(v, _)| v.as_bool());
    let (config, warnings) = CompactionConfig::from_env(|name| std::env::var(name).ok(), setting);
    notices.extend(warnings.into_iter().map(|w| Notice::warning(w.to_string())));
    let mut compactor = SessionCompactor::new(Arc::clone(parent), config)
        .with_user_context(Some(Arc::clone(user_context)));
    if let Some(hooks) =
        hooks.filter(|h| h.has(HookEvent::PreCompact) || h.has(HookEvent::PostCompact))
    {
        compactor = compactor.with_hooks(hooks);
    }
    if let Some(memory) = memory {
        let job = memory.extraction_job();
        compactor =
            compactor.with_before_compaction(Arc::new(move |ctx| job.before_compaction(ctx)));
    }
    Arc::new(compactor)
}
