//! Start-up: from [`SessionOptions`], the environment and the settings files to a ready
//! engine with its forks' parent, stop-hook pipeline and memory. The order is chosen for speed
//! and clear failures: credentials first (a missing key is one line and nothing else), then
//! settings, permissions, tools, context; no network before the first model request, and
//! nothing under `TINE_HOME` is scanned beyond the files named here. Every warning is a
//! [`Notice`], returned with the session, never printed.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use tine_api_client::ToolArray;
use tine_compaction::{CompactionConfig, SessionCompactor};
use tine_config::settings::{self, FlagSettings, LoadedSettings, SettingsError, SettingsPaths};
use tine_config::{
    Adoption, adopt_legacy_project_dir, project_dir, tine_home_from_env, transcript_path,
};
use tine_fork_runtime::{
    BackgroundEvent, CacheBreakDetector, CacheSafeSlot, ParentContext, SessionLocation,
    SharedReplacements, SideQuerySummarizer, StopHookPipeline, UsageLedger,
};
use tine_memory::{
    AutoMemory, DreamOptions, ExtractionOptions, MemoryEnv, MemoryResolution, guard_memory_writes,
    resolve_memory_dir,
};
use tine_permissions::{
    PermissionContext, PermissionMode, PermissionRule, RuleBehavior, RuleSource,
};
use tine_query_loop::hooks::{HookConfig, HookEvent, Hooks};
use tine_query_loop::{
    EngineConfig, EnvironmentFacts, GatherOptions, QueryEngine, SessionContext, latest_session,
};
use tine_tools::{Tool, ToolContext, ToolPool, WebFetchSummarizer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::can_use_tool::SessionPermissions;
use crate::emit::Emitter;
use crate::error::StartError;
use crate::hooks::SessionHooks;
use crate::mcp::SessionMcp;
use crate::options::{Resume, SessionOptions};
use crate::permission::Permissions;
use crate::private_state::{tighten_memory_dir, tighten_own_state};
use crate::protocol::{HistoryItem, Notice, RequestSummary, SessionEvent, SessionInfo};
use crate::provider::ProviderParts;

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
}

pub(crate) async fn assemble(
    options: SessionOptions,
    session_token: &CancellationToken,
    events: &Emitter,
) -> Result<Assembled, StartError> {
    let interactive = options.approvals == crate::options::Approvals::Interactive;
    let mut notices = Vec::new();
    let bare = options.bare;
    let cwd = std::fs::canonicalize(&options.cwd).map_err(|e| StartError::Cwd {
        path: options.cwd.clone(),
        message: e.to_string(),
    })?;
    let home = match &options.home {
        Some(home) => home.clone(),
        None => tine_home_from_env()?,
    };
    let user_home = options.user_home.clone().or_else(user_home_from_env);
    let mut paths = settings_paths(
        &cwd,
        &home,
        user_home.as_deref(),
        options.settings_flag.as_deref().map(FlagSettings::from_arg),
    );
    if let Some(managed) = &options.managed_settings {
        paths = paths.with_managed(managed);
    }
    let loaded = settings::load(&paths);
    // The provider and its credentials first: without them nothing else matters, and the
    // message is one line. Building the HTTP client (TLS roots) is the costliest step of
    // start-up and needs nothing else: it runs on a blocking thread while the rest is read.
    let provider = ProviderParts::choose(&options, &loaded)?;
    notices.extend(provider.warnings.iter().cloned().map(Notice::warning));
    adopt_project_folder(&home, &cwd, &mut notices);
    // An older tine made these 0755/0644: tighten what this run uses.
    tighten_own_state(
        &home,
        &[project_dir(&home, &cwd), home.join("logs")],
        &[home.join("logs").join("tine.log")],
    );
    // The permission engine parses the rules and modes settings hand over as text; what it
    // cannot understand is judged with the rest (a deny rule it cannot read stops the run).
    let (mut permissions, mut rule_errors) =
        PermissionContext::from_settings(&loaded, cwd.clone(), user_home.clone(), None);
    // Hooks likewise: one that cannot be run as written stops the session (it may be a guard).
    let (hook_config, hook_errors) = HookConfig::from_settings(&loaded);
    rule_errors.extend(hook_errors);
    check_settings(&loaded, &rule_errors, &mut notices)?;
    let mode = options.permission_mode;
    if let Some(mode) = mode {
        permissions.mode = mode;
    }
    let add_dirs = crate::flags::add_directories(&mut permissions, &options.add_dirs, &cwd)?;

    let bash_sandbox = {
        let outcome = crate::sandbox::decide(
            options.sandbox,
            options.sandbox_launcher.as_deref(),
            &cwd,
            &loaded,
            user_home.as_deref(),
            &add_dirs,
        )
        .map_err(StartError::Sandbox)?;
        notices.extend(outcome.warnings.into_iter().map(Notice::warning));
        outcome.sandbox
    };
    add_rules(
        &mut permissions,
        &options.allowed_tools,
        RuleBehavior::Allow,
    )?;
    add_rules(
        &mut permissions,
        &options.disallowed_tools,
        RuleBehavior::Deny,
    )?;
    let bypass_disabled_by = loaded.bypass_disabled_by();
    if permissions.mode == PermissionMode::BypassPermissions
        && let Some(file) = &bypass_disabled_by
    {
        if mode.is_some() {
            return Err(StartError::BypassDisabled { file: file.clone() });
        }
        notices.push(Notice::warning(format!(
            "defaultMode bypassPermissions is disabled by {file} \
             (permissions.disableBypassPermissionsMode); using default"
        )));
        permissions.mode = PermissionMode::Default;
    }
    let permission_mode = permissions.mode;

    let (mcp, mcp_tools) = crate::mcp::start(
        options.approvals == crate::options::Approvals::Interactive,
        session_token,
        &options.mcp_configs,
        options.strict_mcp_config || options.bare,
        &cwd,
        &home,
        user_home.as_deref(),
        &loaded,
        events,
        &mut permissions,
        &mut notices,
    )
    .await;
    let agents = crate::agents::definitions(&cwd, &home, user_home.as_deref(), &mut notices);
    let skills =
        crate::skills::SessionSkills::load(&cwd, &home, user_home.as_deref(), &mut notices);
    // `--json-schema`: the StructuredOutput tool is in the array from the first request.
    let structured = match &options.json_schema {
        Some(schema) => {
            crate::structured::check_schema(schema).map_err(StartError::Flag)?;
            Some(crate::structured::StructuredSlot::default())
        }
        None => None,
    };
    let structured_tool =
        options
            .json_schema
            .clone()
            .zip(structured.clone())
            .map(|(schema, slot)| {
                Arc::new(crate::structured::StructuredOutputTool::new(schema, slot))
                    as Arc<dyn Tool>
            });
    let pool = ToolPool::assemble(
        tine_tools::builtin_tools()
            .into_iter()
            .chain(crate::agents::tools(&agents))
            .chain(structured_tool)
            .chain(crate::skill_tool::tool(&skills, bare)),
        mcp_tools,
        |name| permissions.is_tool_denied(name),
    );
    let tools: Arc<[Arc<dyn Tool>]> = pool.tools().iter().cloned().collect();
    let prompt_tool = options
        .permission_prompt_tool
        .as_deref()
        .map(|name| crate::prompt_tool::find(&tools, name))
        .transpose()
        .map_err(StartError::Flag)?;
    let mut tool_definitions: ToolArray = pool.definitions().clone();
    if let Some(sandbox) = &bash_sandbox {
        // Decided once at start: every request of the session sends the same tool array.
        let note = sandbox.model_note();
        // The one re-serialization of the array, before any request.
        tool_definitions = tool_definitions
            .iter()
            .cloned()
            .map(|mut definition| {
                if definition.name == "Bash" {
                    definition.description.push_str(&note);
                }
                definition
            })
            .collect();
    }
    let tool_definitions = crate::web_search::offer(tool_definitions, &permissions);
    let mut tool_names: Vec<String> = pool.names().into_iter().map(str::to_owned).collect();
    if tool_definitions.has_server_tool("web_search") {
        tool_names.push(crate::web_search::WEB_SEARCH_RULE.to_owned());
    }

    let model = provider.model.clone();
    let mut context = gather_context(&home, &cwd, &model, options.bare).await;
    // The model is told every directory it may work in, as Claude Code tells it.
    context.environment.additional_directories = permissions.additional_directories.clone();
    // Rendered once: every request of the session sends these bytes. The system prompt depends
    // only on settings and version; the date and git status go in the first user message.
    let rendered_user_context: Arc<str> = context.user_context().into();
    let system_prompt: Arc<str> = crate::flags::system_prompt(
        &context,
        options.system_prompt.as_deref(),
        options.append_system_prompt.as_deref(),
        structured.is_some(),
    )
    .into();
    let fallback_model = crate::flags::fallback_model(options.fallback_model.as_deref(), &model)?;

    // Auto memory: not with --bare (no background work), not when turned off.
    let memory_dir = if options.bare {
        None
    } else {
        match resolve_memory_dir(&MemoryEnv::from_process(), &loaded, &home, &cwd) {
            MemoryResolution::Enabled(dir) => Some(dir),
            MemoryResolution::Disabled(why) => {
                tracing::info!(%why, "auto memory is off");
                None
            }
        }
    };

    // The session id comes first: the Stop hooks are told it and the transcript path.
    let (session_id, resuming) = match &options.resume {
        Resume::New => (
            crate::flags::new_session_id(options.session_id.as_ref(), &home, &cwd)?,
            false,
        ),
        Resume::Id(id) => (id.clone(), true),
        Resume::Latest => match latest_session(&home, &cwd).await? {
            Some(id) => (id, true),
            None => return Err(StartError::NoSessionToContinue { cwd }),
        },
    };
    let client = provider.client.ready().await?;
    // One value for every hook event (see `hooks`).
    let hooks = SessionHooks::new(
        hook_config,
        session_id.clone(),
        transcript_path(&home, &cwd, &session_id),
        cwd.clone(),
        events.clone(),
    );

    // This session's transcript, when resumed, was opened by an older tine too.
    tighten_own_state(&home, &[], &[transcript_path(&home, &cwd, &session_id)]);

    let ledger = UsageLedger::default();
    let memory = memory_dir.and_then(|dir| {
        tighten_memory_dir(&home, dir.path());
        let (extraction, warning) = ExtractionOptions::from_settings(&loaded);
        notices.extend(warning.map(|w| Notice::warning(w.to_string())));
        let (dream, warnings) = DreamOptions::from_settings(&loaded);
        notices.extend(warnings.into_iter().map(|w| Notice::warning(w.to_string())));
        let started = AutoMemory::start_with(
            dir,
            Arc::clone(&client),
            &model,
            Some(ledger.clone()),
            extraction,
            Some(&permissions),
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
    });
    // Memory writes from this session and its forks go through the memory lock and index
    // merge; the wrapped tools serialize as the real ones, so the tool array is unchanged.
    let tools: Arc<[Arc<dyn Tool>]> = match &memory {
        None => tools,
        Some(memory) => match guard_memory_writes(&tools, memory.dir().path()) {
            Ok(guarded) => guarded.into(),
            Err(error) => {
                notices.push(Notice::warning(format!(
                    "memory writes are not guarded: {error}"
                )));
                tools
            }
        },
    };
    // The memory index joins the user context once, so every request keeps the same bytes
    // (and a resumed session replays them from its transcript).
    let user_context: Arc<str> = match &memory {
        None => rendered_user_context,
        Some(memory) => Arc::from(format!("{rendered_user_context}\n\n{}", memory.context())),
    };
    // The skills' names and descriptions, likewise once (never their bodies).
    let user_context = match bare {
        true => user_context,
        false => crate::skills::with_listing(user_context, &skills.skills),
    };

    // One tool context (cwd, file-state cache) for the session and its forks' parent. The
    // parent holds the session's token, so a fork outlives the turn that started it; each
    // turn runs on a child of it (see `actor`). WebFetch's answers come from the small fast
    // model, recorded in the ledger.
    let small_model = provider.small_model;
    let away = crate::away::configure(&loaded, bare, &client, &small_model, &ledger, &mut notices);
    let mut tool_context = ToolContext::new(&cwd)
        .with_cancellation(session_token.clone())
        .with_ext(WebFetchSummarizer(Arc::new(
            SideQuerySummarizer::new(Arc::clone(&client), small_model).with_ledger(ledger.clone()),
        )));
    if let Some(sandbox) = bash_sandbox {
        tool_context = tool_context.with_sandbox(sandbox);
    }
    // The engine's own decisions on oversized tool results, shared with the parent, so a
    // fork's prefix serializes as the main thread's requests did.
    let replacements = SharedReplacements::default();
    let mut parent = ParentContext::new(
        Arc::clone(&client),
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
    let speculator = (!bare && crate::speculation::enabled(&loaded))
        .then(|| crate::speculation::Speculator::new(Arc::clone(&parent), &permissions));
    let (background_tx, background) = mpsc::unbounded_channel();
    let mut pipeline =
        StopHookPipeline::new(Arc::clone(&parent), CacheSafeSlot::new()).with_events(background_tx);
    // Extraction, then auto dream (main thread only: forks never run the pipeline).
    for job in memory.iter().flat_map(AutoMemory::jobs) {
        pipeline = pipeline.with_job(job);
    }
    let magic = crate::magic::install(&loaded, bare, &permissions, &tool_context, &mut notices);
    if let Some(job) = &magic {
        pipeline = pipeline.with_job(Arc::new(job.clone()));
    }
    if let Some(stop_hooks) = hooks.stop_hooks() {
        pipeline = pipeline.with_user_hooks(stop_hooks);
    }
    let pipeline = Arc::new(pipeline);

    // Cache breaks are logged always and reported with `verbose`.
    let mut detector = CacheBreakDetector::new();
    if options.verbose {
        let events = events.clone();
        detector = detector.with_callback(Arc::new(move |cache_break| {
            let _ = events.emit(SessionEvent::CacheBreak(cache_break.to_string()));
        }));
    }
    let compactor = compactor(
        &loaded,
        &parent,
        &user_context,
        memory.as_ref(),
        hooks.hooks(),
        &mut notices,
    );
    let permissions = Arc::new(
        Permissions::new(
            permissions,
            paths,
            options.approvals,
            bypass_disabled_by.clone(),
            events.clone(),
        )
        .with_hooks(hooks.hooks())
        .with_prompt_tool(prompt_tool),
    );

    let (main_client, fallback) = crate::main_client::MainThreadClient::wrap(
        client,
        &model,
        fallback_model,
        options.include_partial_messages,
        events,
    );
    let config = EngineConfig {
        client: main_client,
        model: model.clone(),
        cwd: cwd.clone(),
        home: home.clone(),
        system_prompt,
        user_context: Some(user_context),
        tools,
        tool_definitions,
        thinking: crate::thinking::session_thinking(
            std::env::var("MAX_THINKING_TOKENS").ok().as_deref(),
            &loaded,
        ),
        max_turns: options.max_turns,
        can_use_tool: Arc::new(SessionPermissions(Arc::clone(&permissions))),
        // The checker asks the person itself (it knows the ask's suggestions); the loop's
        // prompter would only see a reason.
        prompter: None,
        tool_context: Some(tool_context.with_cancellation(session_token.child_token())),
        stop_hooks: Some(pipeline.clone()),
        hooks: hooks.hooks(),
        compactor: Some(compactor.clone()),
        post_sampling: None,
        on_request: options.verbose.then(|| request_observer(events.clone())),
        monitor: Some(Arc::new(detector)),
        persist: options.persist,
    };
    let mut engine = match (resuming, &memory) {
        (true, Some(memory)) => {
            // Extraction takes its cursor back, so it looks only at what is new; the
            // conversation starts with the index as it was then, so recall does not rely on
            // today's being in it.
            memory.recall().forget_context();
            let job = memory.extraction_job();
            QueryEngine::resume_with(config, session_id, move |record| job.restore(record)).await?
        }
        (true, None) => QueryEngine::resume(config, session_id).await?,
        (false, _) => QueryEngine::with_session_id(config, session_id).await?,
    };
    if resuming {
        crate::magic::resume(magic.as_ref(), &engine);
    }
    if let (Some(memory), Some(annotator)) = (&memory, engine.transcript_annotator()) {
        memory.record_in(annotator);
    }
    engine.share_replacements(replacements);
    let tasks = crate::agents::install(&engine, &parent, agents, &home, &context);
    for warning in engine.resume_warnings() {
        notices.push(Notice::warning(format!(
            "{}: {warning}",
            engine.transcript_path().display()
        )));
    }
    let command_dirs = crate::custom_commands::command_dirs(&cwd, &home, user_home.as_deref());
    let history = match resuming {
        true => Some(crate::history::load(&home, &cwd, engine.session_id(), &mut notices).await),
        false => None,
    };
    let info = SessionInfo {
        session_id: engine.session_id().clone(),
        cwd,
        home,
        model,
        tools: tool_names,
        permission_mode,
        // Shift+Tab reaches bypassPermissions only in a session started in it, as in Claude
        // Code (three presses must not turn every check off); never when settings disable it.
        bypass_available: interactive
            && permission_mode == PermissionMode::BypassPermissions
            && bypass_disabled_by.is_none(),
        transcript_path: engine.transcript_path().clone(),
        resumed: resuming,
        memory: memory.is_some(),
        thinking: engine.thinking().is_some(),
        away_after: away.as_ref().map(|(_, idle)| *idle),
        speculation: speculator.is_some(),
        commands: crate::command_table::table(&command_dirs, &skills.skills),
    };
    Ok(Assembled {
        engine,
        pipeline,
        background,
        memory,
        ledger,
        tasks,
        permissions,
        mcp,
        info,
        history,
        settings: Arc::new(loaded),
        notices,
        hooks,
        command_dirs,
        skills,
        cleared: options.cleared,
        compactor,
        structured,
        away: away.map(|(summarizer, _)| summarizer),
        speculator,
        fallback,
    })
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

/// The user's home (`$HOME`), where `~/.claude/settings.json` and `~` rules are.
pub fn user_home_from_env() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The settings files a session at `cwd` reads (`tine doctor` lists the same ones); the
/// managed file is `TINE_MANAGED_SETTINGS`'s.
pub fn settings_paths(
    cwd: &Path,
    home: &Path,
    user_home: Option<&Path>,
    flag: Option<FlagSettings>,
) -> SettingsPaths {
    let mut paths = SettingsPaths::new(cwd, home);
    if let Some(user_home) = user_home {
        paths = paths.with_user_home(user_home);
    }
    if let Some(flag) = flag {
        paths = paths.with_flag(flag);
    }
    if let Some(managed) = std::env::var_os("TINE_MANAGED_SETTINGS") {
        paths = paths.with_managed(managed);
    }
    paths
}

/// Fail closed: every settings warning is a notice, and start-up is refused when a file that
/// exists could not be read or parsed, `--settings` names one that cannot be read, or a deny
/// or ask rule could not be understood (`rule_errors`, the permission engine's): running
/// without it would allow what the user forbade.
fn check_settings(
    loaded: &LoadedSettings,
    rule_errors: &[SettingsError],
    notices: &mut Vec<Notice>,
) -> Result<(), StartError> {
    let problems = || loaded.errors.iter().chain(rule_errors);
    let warnings: Vec<String> = problems()
        .filter(|e| !e.is_fatal())
        .map(ToString::to_string)
        .collect();
    let errors: Vec<String> = problems()
        .filter(|e| e.is_fatal())
        .map(ToString::to_string)
        .collect();
    if errors.is_empty() {
        notices.extend(warnings.into_iter().map(Notice::warning));
        return Ok(());
    }
    Err(StartError::Settings {
        warnings,
        errors,
        refusal: settings::REFUSAL.to_owned(),
    })
}

/// Moves this directory's sessions out of the folder an older version named after the
/// sanitized path alone (shared by paths that sanitize alike). Never fails the start.
fn adopt_project_folder(home: &Path, cwd: &Path, notices: &mut Vec<Notice>) {
    match adopt_legacy_project_dir(home, cwd) {
        Ok(Adoption::Nothing) => {}
        Ok(adoption @ Adoption::Renamed { .. }) => {
            tracing::info!(?adoption, "adopted the project folder of an older version");
        }
        Ok(Adoption::Moved {
            from,
            to,
            sessions,
            left,
        }) => notices.push(Notice::info(format!(
            "{} held the sessions of several directories (older versions named \
             folders ambiguously); this directory's {sessions} session(s) moved to {}, the \
             other {left} and any memory there stay where they are",
            from.display(),
            to.display()
        ))),
        Err(error) => notices.push(Notice::warning(format!(
            "cannot move this directory's sessions out of the folder of an \
             older version: {error}"
        ))),
    }
}

/// Verbose: what each request carries.
fn request_observer(events: Emitter) -> tine_query_loop::RequestObserver {
    Arc::new(move |request: &tine_api_client::MessagesRequest| {
        let _ = events.emit(SessionEvent::Request(RequestSummary {
            model: request.model.clone(),
            messages: request.messages.len(),
            tools: request.tools.len(),
            max_tokens: request.max_tokens,
            bytes: request.to_json_bytes().len(),
        }));
    })
}

fn add_rules(
    permissions: &mut PermissionContext,
    values: &[String],
    behavior: RuleBehavior,
) -> Result<(), StartError> {
    let flag = match behavior {
        RuleBehavior::Allow => "--allowedTools",
        RuleBehavior::Deny => "--disallowedTools",
        RuleBehavior::Ask => "--askTools",
    };
    for text in values {
        let rule = PermissionRule::from_str(text).map_err(|error| {
            StartError::Rule(format!("invalid rule `{text}` in {flag}: {error}"))
        })?;
        permissions.add_session_rule(rule, behavior, RuleSource::CliArg);
    }
    Ok(())
}

/// The session's surroundings. `bare`: only the environment facts (no instruction files, no
/// git). Otherwise git runs only inside a repository, so a plain directory costs no process.
pub async fn gather_context(home: &Path, cwd: &Path, model: &str, bare: bool) -> SessionContext {
    if bare {
        let os_version = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|r| format!("Linux {}", r.trim()));
        let date = tine_query_loop::utc_date(std::time::SystemTime::now());
        return SessionContext {
            environment: EnvironmentFacts {
                cwd: cwd.to_path_buf(),
                is_git_repo: false,
                platform: std::env::consts::OS.to_owned(),
                os_version,
                date,
                model: model.to_owned(),
                additional_directories: Vec::new(),
            },
            git: None,
            instructions: Vec::new(),
        };
    }
    let mut options = GatherOptions::new(home.to_path_buf(), cwd.to_path_buf(), model);
    options.git = tine_query_loop::find_repo_root(cwd).is_some();
    SessionContext::gather(&options).await
}
