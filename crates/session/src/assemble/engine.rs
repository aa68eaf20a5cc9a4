//! The last stage: the main thread. The session's permission checker (asks to a person, or
//! denials headless), the main thread's client (the fallback model on overload, raw stream
//! events), the engine on its transcript (new, or resumed with memory's cursor taken back),
//! the sub-agents' runtime on the tool context, and what a front end is told: the session's
//! [`SessionInfo`] and, resumed, its history.

use std::sync::Arc;

use tine_api_client::ModelClient;
use tine_config::SessionId;
use tine_fork_runtime::{CacheBreakDetector, TaskRegistry};
use tine_permissions::PermissionMode;
use tine_query_loop::{EngineConfig, QueryEngine, SpendingLimit};

use super::background::Background;
use super::context::Rendered;
use super::ground::Ground;
use super::policy::Policy;
use super::toolset::ToolSet;
use crate::can_use_tool::SessionPermissions;
use crate::emit::Emitter;
use crate::error::StartError;
use crate::history::ChainPrompt;
use crate::hooks::SessionHooks;
use crate::options::{Approvals, SessionOptions};
use crate::permission::Permissions;
use crate::protocol::{HistoryItem, Notice, RequestSummary, SessionEvent, SessionInfo};

/// The main thread, and what the front end is told about it.
pub(crate) struct MainThread {
    pub engine: QueryEngine,
    pub permissions: Arc<Permissions>,
    pub tasks: TaskRegistry,
    pub fallback: Option<crate::main_client::FallbackSwitch>,
    pub info: SessionInfo,
    pub history: Option<Vec<HistoryItem>>,
    pub command_dirs: Vec<std::path::PathBuf>,
    /// The prompts sent and their checkpoints.
    pub rewinds: Arc<crate::rewind::Rewinds>,
}

/// What the main thread is made of.
pub(crate) struct Parts<'a> {
    pub options: &'a SessionOptions,
    pub ground: Ground,
    pub policy: Policy,
    pub toolset: &'a mut ToolSet,
    pub rendered: Rendered,
    pub background: &'a Background,
    pub client: Arc<dyn ModelClient>,
    pub session: (SessionId, bool),
    pub hooks: &'a SessionHooks,
    pub session_token: &'a tokio_util::sync::CancellationToken,
    pub events: &'a Emitter,
}

impl MainThread {
    pub(crate) async fn start(
        parts: Parts<'_>,
        notices: &mut Vec<Notice>,
    ) -> Result<(Self, tine_config::settings::LoadedSettings), StartError> {
        let Parts {
            options,
            ground,
            policy,
            toolset,
            rendered,
            background,
            client,
            session: (session_id, resuming),
            hooks,
            session_token,
            events,
        } = parts;
        let model = ground.model.clone();
        let added_dirs = policy.context.additional_directories.clone();
        let status_line = crate::status_line::read(&ground.loaded).unwrap_or_else(|warning| {
            notices.push(Notice::warning(warning));
            None
        });
        let output_style = crate::status_line::output_style_name(&ground.loaded);
        let fallback_model =
            crate::flags::fallback_model(options.fallback_model.as_deref(), &model)?;
        let permissions = Arc::new(
            Permissions::new(
                policy.context,
                ground.paths,
                options.approvals,
                policy.bypass_disabled_by.clone(),
                events.clone(),
            )
            .with_hooks(hooks.hooks())
            .with_prompt_tool(toolset.prompt_tool.take()),
        );
        let (rewinds, warning) = crate::rewind::Rewinds::open(
            &tine_config::project_dir(&ground.home, &ground.cwd).join("checkpoints"),
            &ground.cwd,
            session_id.as_str(),
            crate::rewind::config(&ground.loaded, options.bare),
            Some(events.clone()),
            // A person types meanwhile; headless, the first tool call starts it.
            options.approvals == Approvals::Interactive,
        );
        notices.extend(warning.map(Notice::warning));
        // Cache breaks are logged always and reported with `verbose`.
        let mut detector = CacheBreakDetector::new();
        if options.verbose {
            let events = events.clone();
            detector = detector.with_callback(Arc::new(move |cache_break| {
                let _ = events.emit(SessionEvent::CacheBreak(cache_break.to_string()));
            }));
        }
        let (main_client, fallback) = crate::main_client::MainThreadClient::wrap(
            client,
            &model,
            fallback_model,
            options.include_partial_messages,
            events,
        );
        let endpoint = tine_api_client::ModelClient::endpoint(&main_client);
        let config = EngineConfig {
            client: main_client,
            model: model.clone(),
            cwd: ground.cwd.clone(),
            home: ground.home.clone(),
            system_prompt: rendered.system_prompt,
            user_context: Some(Arc::clone(&background.user_context)),
            tools: Arc::clone(&background.tools),
            tool_definitions: toolset.definitions.clone(),
            thinking: crate::thinking::session_thinking(
                options.thinking,
                std::env::var("MAX_THINKING_TOKENS").ok().as_deref(),
                &ground.loaded,
            ),
            max_turns: options.max_turns,
            can_use_tool: Arc::new(SessionPermissions(
                Arc::clone(&permissions),
                Arc::clone(&rewinds),
            )),
            // The checker asks the person itself (it knows the ask's suggestions); the loop's
            // prompter would only see a reason.
            prompter: None,
            tool_context: Some(
                background
                    .tool_context
                    .clone()
                    .with_cancellation(session_token.child_token()),
            ),
            stop_hooks: Some(background.pipeline.clone()),
            hooks: hooks.hooks(),
            compactor: Some(background.compactor.clone()),
            post_sampling: None,
            on_request: options
                .verbose
                .then(|| request_observer(events.clone(), endpoint)),
            monitor: Some(Arc::new(detector)),
            persist: options.persist,
        };
        // `--resume-session-at`: a fork's transcript was already cut there when it was copied.
        let at = match options.fork_session {
            true => None,
            false => options.resume_session_at.as_deref(),
        };
        // The resumed chain, seen once as the engine reads it: the prompts a rewind can go
        // back to and, for a front end that shows it (not headless `-p`), the history.
        let shows_history = options.approvals != Approvals::Headless;
        let mut chain_seen: Option<(Option<Vec<HistoryItem>>, Vec<ChainPrompt>)> = None;
        let on_chain = |chain: &[tine_query_loop::TranscriptRecord]| {
            chain_seen = Some((
                shows_history.then(|| crate::history::of_chain(chain)),
                crate::history::prompts_of(chain),
            ));
        };
        let mut engine = match (resuming, &background.memory) {
            (true, Some(memory)) => {
                // Extraction takes its cursor back, so it looks only at what is new; the
                // conversation starts with the index as it was then, so recall does not rely
                // on today's being in it.
                memory.recall().forget_context();
                let job = memory.extraction_job();
                QueryEngine::resume_at(
                    config,
                    session_id,
                    at,
                    move |record| job.restore(record),
                    on_chain,
                )
                .await?
            }
            (true, None) => {
                QueryEngine::resume_at(config, session_id, at, |_| {}, on_chain).await?
            }
            (false, _) => QueryEngine::with_session_id(config, session_id).await?,
        };
        // Both are fixed for the session: the effort is part of every request's bytes.
        engine.set_effort(options.effort);
        engine.set_spending_limit(options.max_budget_usd.map(|limit_usd| {
            let ledger = background.ledger.clone();
            SpendingLimit {
                limit_usd,
                spent_elsewhere: Arc::new(move || ledger.total().cost_usd),
            }
        }));
        if resuming {
            crate::magic::resume(background.magic.as_ref(), &engine);
        }
        if let (Some(memory), Some(annotator)) = (&background.memory, engine.transcript_annotator())
        {
            memory.record_in(annotator);
        }
        engine.share_replacements(Arc::clone(&background.replacements));
        let agents = Arc::clone(&toolset.agents);
        let tasks = crate::agents::install(
            &engine,
            &background.parent,
            agents,
            &ground.home,
            &rendered.context,
        );
        for warning in engine.resume_warnings() {
            notices.push(Notice::warning(format!(
                "{}: {warning}",
                engine.transcript_path().display()
            )));
        }
        let (cwd, home) = (ground.cwd, ground.home);
        let mut command_dirs =
            crate::custom_commands::command_dirs(&cwd, &home, ground.user_home.as_deref());
        // `--setting-sources`: a scope not read gives no custom commands either.
        if let Some(sources) = &options.setting_sources {
            command_dirs.retain(|dir| {
                sources.contains(&crate::flags::file_scope(
                    dir,
                    &home,
                    ground.user_home.as_deref(),
                ))
            });
        }
        // Resumed at a message: the history shown ends there too.
        let history = match chain_seen {
            None => None,
            Some((items, prompts)) => {
                rewinds.seed(prompts);
                items
            }
        };
        let context_window = background.compactor.thresholds(&model).window;
        let info = SessionInfo {
            session_id: engine.session_id().clone(),
            cwd,
            home,
            model,
            tools: toolset.names.clone(),
            permission_mode: policy.mode,
            // Shift+Tab reaches bypassPermissions only in a session started in it, as in
            // Claude Code (three presses must not turn every check off); never when settings
            // disable it.
            bypass_available: options.approvals == Approvals::Interactive
                && policy.mode == PermissionMode::BypassPermissions
                && policy.bypass_disabled_by.is_none(),
            transcript_path: engine.transcript_path().clone(),
            resumed: resuming,
            memory: background.memory.is_some(),
            thinking: engine.thinking().is_some(),
            away_after: background.away.as_ref().map(|(_, idle)| *idle),
            speculation: background.speculator.is_some(),
            commands: crate::command_table::table(
                &command_dirs,
                &toolset.skills.skills,
                &ground.plugins,
            ),
            status_line,
            output_style,
            added_dirs,
            context_window,
        };
        Ok((
            Self {
                engine,
                permissions,
                tasks,
                fallback,
                info,
                history,
                command_dirs,
                rewinds,
            },
            ground.loaded,
        ))
    }
}

/// Verbose: what each request carries.
fn request_observer(events: Emitter, endpoint: String) -> tine_query_loop::RequestObserver {
    Arc::new(move |request: &tine_api_client::MessagesRequest| {
        let _ = events.emit(SessionEvent::Request(RequestSummary {
            endpoint: endpoint.clone(),
            model: request.model.clone(),
            messages: request.messages.len(),
            tools: request.tools.len(),
            max_tokens: request.max_tokens,
            bytes: request.to_json_bytes().len(),
        }));
    })
}
