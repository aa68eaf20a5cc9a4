//! Start-up: from the command line and the environment to a ready [`QueryEngine`]. The order is
//! chosen for speed and for clear failures: credentials first (a missing key is one line and
//! nothing else), then settings, permissions, tools, context; no network before the first model
//! request, and nothing under `TINE_HOME` is scanned beyond the files named here.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use tine_api_client::{ClientConfig, HttpClient, ModelClient, ToolDefinition};
use tine_compaction::{CompactHookCommands, CompactHooks, CompactionConfig, SessionCompactor};
use tine_config::settings::{self, FlagSettings, LoadedSettings, SettingsError, SettingsPaths};
use tine_config::{
    Adoption, SessionId, adopt_legacy_project_dir, private_fs, project_dir, tine_home_from_env,
    transcript_path,
};
use tine_fork_runtime::{
    BackgroundEvent, CacheBreakDetector, CacheSafeSlot, DEFAULT_SMALL_FAST_MODEL, ParentContext,
    SessionInfo, SideQuerySummarizer, StopHookPipeline, UsageLedger,
};
use tine_memory::{
    AutoMemory, DreamOptions, ExtractionOptions, MemoryEnv, MemoryResolution, guard_memory_writes,
    resolve_memory_dir,
};
use tine_query_loop::{
    BASE_SYSTEM_PROMPT, CommandStopHooks, EngineConfig, EnvironmentFacts, GatherOptions,
    HooksSettings, QueryEngine, SessionContext, StopHookCommand, StopHooks, latest_session,
};
use tine_tools::permissions::{
    PermissionContext, PermissionMode, PermissionRule, RuleBehavior, RuleSource,
};
use tine_tools::{Tool, ToolContext, ToolPool};
use tokio::sync::mpsc;

use crate::args::{Args, split_rules};
use crate::permission::HeadlessPermissions;
use crate::profile::StartupProfile;

/// The model when neither `--model` nor `ANTHROPIC_MODEL` nor settings name one.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// A ready session and what the output needs to know about it.
pub struct Session {
    pub engine: QueryEngine,
    pub model: String,
    pub cwd: PathBuf,
    pub tool_names: Vec<String>,
    pub permission_mode: PermissionMode,
    /// The main thread's stop hooks: saves the cache-safe params, runs the background jobs.
    pub pipeline: Arc<StopHookPipeline>,
    /// What the background jobs report (memory saved, failures).
    pub background: mpsc::UnboundedReceiver<BackgroundEvent>,
    /// Auto memory, when on (recall before each turn).
    pub memory: Option<AutoMemory>,
    /// Side queries' and forks' usage (recall, memory extraction, WebFetch), by query source.
    pub ledger: UsageLedger,
}

/// Builds the session. Settings warnings (a wrong-typed key, an unknown key, a bad allow rule)
/// go to stderr and the run goes on; settings that could not be read fully (see
/// [`check_settings`]) and errors in the command line itself stop it.
pub async fn build(args: &Args, profile: &mut StartupProfile) -> Result<Session> {
    // Credentials first: without them nothing else matters, and the message is one line.
    let client_config = ClientConfig::from_env().map_err(|e| anyhow!(e))?;
    // Building the HTTP client (TLS roots) is the costliest step of start-up and needs nothing
    // else: it runs on a blocking thread while settings, tools and context are read.
    let client_task = tokio::task::spawn_blocking(move || HttpClient::new(client_config));
    profile.mark("credentials");

    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("cannot use {} as the working directory", cwd.display()))?;
    let home = tine_home_from_env().map_err(|e| anyhow!(e))?;
    if let Some(path) = crate::logging::init(&home, args.verbose) {
        tracing::info!(log = %path.display(), "tine starting");
    }
    adopt_project_folder(&home, &cwd);
    // An older tine made these 0755/0644: tighten what this run uses.
    tighten_own_state(
        &home,
        &[project_dir(&home, &cwd), home.join("logs")],
        &[home.join("logs").join("tine.log")],
    );

    let user_home = user_home();
    let paths = settings_paths(
        &cwd,
        &home,
        user_home.as_deref(),
        args.settings.as_deref().map(FlagSettings::from_arg),
    );
    let loaded = settings::load(&paths);
    // The permission engine parses the rules and modes settings hand over as text; what it
    // cannot understand is judged with the rest (a deny rule it cannot read stops the run).
    let (mut permissions, rule_errors) =
        PermissionContext::from_settings(&loaded, cwd.clone(), user_home.clone(), None);
    check_settings(&loaded, &rule_errors)?;
    profile.mark("settings");

    let mode = args
        .permission_mode
        .as_deref()
        .map(parse_mode)
        .transpose()?;
    if let Some(mode) = mode {
        permissions.mode = mode;
    }
    let bash_sandbox = crate::sandbox_settings::session_sandbox(
        args.sandbox,
        &cwd,
        &loaded,
        user_home.as_deref(),
    )?;
    add_cli_rules(&mut permissions, &args.allowed_tools, RuleBehavior::Allow)?;
    add_cli_rules(&mut permissions, &args.disallowed_tools, RuleBehavior::Deny)?;
    if permissions.mode == PermissionMode::BypassPermissions
        && let Some(file) = loaded.bypass_disabled_by()
    {
        if mode.is_some() {
            bail!(
                "--permission-mode bypassPermissions is disabled by {file} \
                 (permissions.disableBypassPermissionsMode)"
            );
        }
        eprintln!(
            "tine: warning: defaultMode bypassPermissions is disabled by {file} \
             (permissions.disableBypassPermissionsMode); using default"
        );
        permissions.mode = PermissionMode::Default;
    }
    let permission_mode = permissions.mode;

    let pool = ToolPool::builtin(|name| permissions.is_tool_denied(name));
    let tools: Arc<[Arc<dyn Tool>]> = pool.tools().iter().cloned().collect();
    let mut tool_definitions: Arc<[ToolDefinition]> = tine_query_loop::tool_definitions(&tools);
    if let Some(sandbox) = &bash_sandbox {
        // Decided once at start: every request of the session sends the same tool array.
        let note = sandbox.model_note();
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
    let tool_names = pool.names().into_iter().map(str::to_owned).collect();
    profile.mark("tools");

    let model = model(args, &loaded);
    let context = gather_context(&home, &cwd, &model, args.bare).await;
    // Rendered once: every request of the session sends these bytes. The system prompt depends
    // only on settings and version; the date and git status go in the first user message.
    let rendered = context.render(BASE_SYSTEM_PROMPT, args.append_system_prompt.as_deref());
    profile.mark("context");

    // Auto memory: not with --bare (no background work), not when turned off.
    let memory_dir = if args.bare {
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
    let (session_id, resuming) = session_id(args, &home, &cwd).await?;
    let stop_commands = stop_commands(&loaded);
    let client = client_task
        .await
        .context("the HTTP client could not be built")?
        .map_err(|e| anyhow!(e))?;
    let client: Arc<dyn ModelClient> = Arc::new(client);
    profile.mark("client");
    let user_hooks: Option<Arc<dyn StopHooks>> = if stop_commands.is_empty() {
        None
    } else {
        Some(Arc::new(CommandStopHooks {
            commands: stop_commands,
            session_id: session_id.clone(),
            transcript_path: transcript_path(&home, &cwd, &session_id),
            cwd: cwd.clone(),
        }))
    };

    // This session's transcript, when resumed, was opened by an older tine too.
    tighten_own_state(&home, &[], &[transcript_path(&home, &cwd, &session_id)]);

    let ledger = UsageLedger::default();
    let memory = match memory_dir {
        None => None,
        Some(dir) => {
            tighten_memory_dir(&home, dir.path());
            let (options, warning) = ExtractionOptions::from_settings(&loaded);
            if let Some(warning) = warning {
                eprintln!("tine: warning: {warning}");
            }
            let ledger = Some(ledger.clone());
            let (dream, warnings) = DreamOptions::from_settings(&loaded);
            for warning in warnings {
                eprintln!("tine: warning: {warning}");
            }
            match AutoMemory::start_with(
                dir,
                Arc::clone(&client),
                &model,
                ledger,
                options,
                Some(&permissions),
            )
            .and_then(|memory| memory.with_dream(dream))
            {
                Ok(memory) => Some(memory),
                Err(error) => {
                    eprintln!("tine: warning: auto memory is off for this session: {error}");
                    None
                }
            }
        }
    };
    // Memory writes from this session and its forks go through the memory lock and index
    // merge; the wrapped tools serialize as the real ones, so the tool array is unchanged.
    let tools: Arc<[Arc<dyn Tool>]> = match &memory {
        None => tools,
        Some(memory) => match guard_memory_writes(&tools, memory.dir().path()) {
            Ok(guarded) => guarded.into(),
            Err(error) => {
                eprintln!("tine: warning: memory writes are not guarded: {error}");
                tools
            }
        },
    };
    // The memory index joins the user context once, so every request keeps the same bytes
    // (and a resumed session replays them from its transcript).
    let user_context: Arc<str> = match &memory {
        None => rendered.user_context,
        Some(memory) => Arc::from(format!("{}\n\n{}", rendered.user_context, memory.context())),
    };

    // One tool context for the session and its forks' parent. WebFetch's answers come from
    // the small fast model, recorded in the ledger.
    let small_model = std::env::var("ANTHROPIC_SMALL_FAST_MODEL")
        .ok()
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_SMALL_FAST_MODEL.to_owned());
    let mut tool_context = ToolContext::new(&cwd).with_web_summarizer(Arc::new(
        SideQuerySummarizer::new(Arc::clone(&client), small_model).with_ledger(ledger.clone()),
    ));
    if let Some(sandbox) = bash_sandbox {
        tool_context = tool_context.with_sandbox(sandbox);
    }
    // The forks' requests are billed to the ledger too, under their query source.
    let parent = Arc::new(
        ParentContext::new(
            Arc::clone(&client),
            Arc::clone(&tools),
            tool_context.clone(),
            SessionInfo {
                home: home.clone(),
                cwd: cwd.clone(),
                session_id: session_id.clone(),
            },
        )
        .with_ledger(ledger.clone()),
    );
    let (events_tx, background) = mpsc::unbounded_channel();
    let mut pipeline =
        StopHookPipeline::new(Arc::clone(&parent), CacheSafeSlot::new()).with_events(events_tx);
    // Extraction, then auto dream (main thread only: forks never run the pipeline).
    for job in memory.iter().flat_map(AutoMemory::jobs) {
        pipeline = pipeline.with_job(job);
    }
    if let Some(hooks) = user_hooks {
        pipeline = pipeline.with_user_hooks(hooks);
    }
    let pipeline = Arc::new(pipeline);

    // Cache breaks are logged always and shown with --verbose.
    let mut detector = CacheBreakDetector::new();
    if args.verbose {
        detector = detector.with_callback(Arc::new(|cache_break| {
            eprintln!("[tine] cache break: {cache_break}");
        }));
    }
    let compactor = compactor(&loaded, &parent, &user_context, memory.as_ref(), &cwd);

    let config = EngineConfig {
        client,
        model: model.clone(),
        cwd: cwd.clone(),
        home: home.clone(),
        system_prompt: rendered.system_prompt,
        user_context: Some(user_context),
        tools,
        tool_definitions,
        thinking: None,
        max_turns: args.max_turns,
        can_use_tool: Arc::new(HeadlessPermissions::new(permissions)),
        // Headless: nobody to ask; the checker already turns asks into denials.
        prompter: None,
        tool_context: Some(tool_context),
        stop_hooks: Some(pipeline.clone()),
        compactor: Some(compactor),
        post_sampling: None,
        on_request: args.verbose.then(request_logger),
        monitor: Some(Arc::new(detector)),
        persist: true,
    };
    let engine = match (resuming, &memory) {
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
    if let (Some(memory), Some(annotator)) = (&memory, engine.transcript_annotator()) {
        memory.record_in(annotator);
    }
    for warning in engine.resume_warnings() {
        eprintln!(
            "tine: warning: {}: {warning}",
            engine.transcript_path().display()
        );
    }
    profile.mark("session");
    Ok(Session {
        engine,
        model,
        cwd,
        tool_names,
        permission_mode,
        pipeline,
        background,
        memory,
        ledger,
    })
}

/// The user's home (`$HOME`), where `~/.claude/settings.json` and `~` rules are.
pub(crate) fn user_home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The settings files a session at `cwd` reads (`tine doctor` lists the same ones).
pub(crate) fn settings_paths(
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

/// Compaction (auto, reactive, manual) on the forks' parent, with the PreCompact/PostCompact
/// hooks of settings and memory's extraction before history is dropped.
fn compactor(
    loaded: &LoadedSettings,
    parent: &Arc<ParentContext>,
    user_context: &Arc<str>,
    memory: Option<&AutoMemory>,
    cwd: &Path,
) -> Arc<SessionCompactor> {
    let setting = loaded
        .get(tine_compaction::AUTO_COMPACT_SETTING)
        .and_then(|(v, _)| v.as_bool());
    let (config, warnings) = CompactionConfig::from_env(|name| std::env::var(name).ok(), setting);
    for warning in warnings {
        eprintln!("tine: warning: {warning}");
    }
    let mut compactor = SessionCompactor::new(Arc::clone(parent), config)
        .with_user_context(Some(Arc::clone(user_context)));
    let mut commands = CompactHookCommands::default();
    for layer in &loaded.layers {
        // A malformed `hooks` object was reported with the Stop hooks.
        if let Some(Ok(layer_commands)) = layer
            .raw
            .get("hooks")
            .map(CompactHookCommands::from_hooks_value)
        {
            commands.merge(layer_commands);
        }
    }
    if !commands.is_empty() {
        let session = &parent.session;
        compactor = compactor.with_hooks(CompactHooks {
            commands,
            session_id: session.session_id.clone(),
            transcript_path: transcript_path(&session.home, cwd, &session.session_id),
            cwd: cwd.to_path_buf(),
        });
    }
    if let Some(memory) = memory {
        let job = memory.extraction_job();
        compactor =
            compactor.with_before_compaction(Arc::new(move |ctx| job.before_compaction(ctx)));
    }
    Arc::new(compactor)
}

/// Fail closed: print every settings warning, and refuse to start (exit 1) when a file that
/// exists could not be read or parsed, `--settings` names one that cannot be read, or a deny or
/// ask rule could not be understood (`rule_errors`, the permission engine's): running without
/// it would allow what the user forbade.
fn check_settings(loaded: &LoadedSettings, rule_errors: &[SettingsError]) -> Result<()> {
    let problems = || loaded.errors.iter().chain(rule_errors);
    for warning in problems().filter(|e| !e.is_fatal()) {
        eprintln!("tine: warning: {warning}");
    }
    let mut fatal = problems().filter(|e| e.is_fatal()).peekable();
    if fatal.peek().is_none() {
        return Ok(());
    }
    for error in fatal {
        eprintln!("tine: error: {error}");
    }
    bail!("{}", settings::REFUSAL)
}

/// Tightens tine's own state under `home` (TINE_HOME) that this run uses: `home` itself and
/// every directory from it down to each of `dirs`, to 0700; each of `files` to 0600. Only
/// paths under `home`, owned by the user and group or other accessible, are changed
/// (`private_fs::tighten_dir`); a failure is logged, never fatal.
fn tighten_own_state(home: &Path, dirs: &[PathBuf], files: &[PathBuf]) {
    let mut chain = vec![home.to_path_buf()];
    for dir in dirs {
        let Ok(rel) = dir.strip_prefix(home) else {
            continue;
        };
        let mut current = home.to_path_buf();
        for part in rel.components() {
            current.push(part);
            if !chain.contains(&current) {
                chain.push(current.clone());
            }
        }
    }
    for dir in &chain {
        report_tightened(dir, private_fs::tighten_dir(dir));
    }
    for file in files.iter().filter(|f| f.starts_with(home)) {
        report_tightened(file, private_fs::tighten_file(file));
    }
}

/// The memory directory, its subdirectories and its files, when it lies under TINE_HOME
/// (the default place). A directory the user chose elsewhere (`autoMemoryDirectory`) keeps
/// its modes: it may be shared on purpose.
fn tighten_memory_dir(home: &Path, dir: &Path) {
    if !dir.starts_with(home) {
        return;
    }
    let mut dirs = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), 0)];
    while let Some((current, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            // `file_type` does not follow links: a link's target is not tine's to change.
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && depth < 4 => {
                    dirs.push(entry.path());
                    pending.push((entry.path(), depth + 1));
                }
                Ok(kind) if kind.is_file() => files.push(entry.path()),
                _ => {}
            }
        }
    }
    tighten_own_state(home, &dirs, &files);
}

fn report_tightened(path: &Path, result: std::io::Result<private_fs::Tightened>) {
    match result {
        Ok(private_fs::Tightened::Changed { from, to }) => tracing::info!(
            path = %path.display(),
            "made tine's own state private: mode {from:o} -> {to:o}"
        ),
        Ok(private_fs::Tightened::Unchanged) => {}
        Err(error) => tracing::warn!(path = %path.display(), %error, "cannot tighten the mode"),
    }
}

/// Moves this directory's sessions out of the folder an older version named after the
/// sanitized path alone (shared by paths that sanitize alike). Never fails the run.
fn adopt_project_folder(home: &Path, cwd: &Path) {
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
        }) => eprintln!(
            "tine: note: {} held the sessions of several directories (older versions named \
             folders ambiguously); this directory's {sessions} session(s) moved to {}, the \
             other {left} and any memory there stay where they are",
            from.display(),
            to.display()
        ),
        Err(error) => eprintln!(
            "tine: warning: cannot move this directory's sessions out of the folder of an \
             older version: {error}"
        ),
    }
}

/// The id of the session to run, and whether it is resumed (`--resume`, `--continue`).
async fn session_id(args: &Args, home: &Path, cwd: &Path) -> Result<(SessionId, bool)> {
    if let Some(id) = &args.resume {
        return Ok((SessionId::parse(id).map_err(|e| anyhow!(e))?, true));
    }
    if args.continue_session {
        let Some(id) = latest_session(home, cwd).await? else {
            bail!(
                "no session to continue in {}: start one with `tine -p PROMPT`",
                cwd.display()
            );
        };
        return Ok((id, true));
    }
    Ok((SessionId::new_random(), false))
}

/// `--verbose`: what each request carries, on stderr.
fn request_logger() -> tine_query_loop::RequestObserver {
    Arc::new(|request: &tine_api_client::MessagesRequest| {
        eprintln!(
            "[tine] POST /v1/messages: model {}, {} messages, {} tools, max_tokens {}, {} bytes",
            request.model,
            request.messages.len(),
            request.tools.len(),
            request.max_tokens,
            request.to_json_bytes().len()
        );
    })
}

fn parse_mode(text: &str) -> Result<PermissionMode> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|_| {
        anyhow!(
            "unknown --permission-mode `{text}`: use default, acceptEdits, plan, \
             bypassPermissions or dontAsk"
        )
    })
}

fn add_cli_rules(
    permissions: &mut PermissionContext,
    values: &[String],
    behavior: RuleBehavior,
) -> Result<()> {
    let flag = match behavior {
        RuleBehavior::Allow => "--allowedTools",
        RuleBehavior::Deny => "--disallowedTools",
        RuleBehavior::Ask => "--askTools",
    };
    for text in split_rules(values) {
        let rule = PermissionRule::from_str(&text)
            .map_err(|error| anyhow!("invalid rule `{text}` in {flag}: {error}"))?;
        permissions.add_session_rule(rule, behavior, RuleSource::CliArg);
    }
    Ok(())
}

/// `--model`, else `ANTHROPIC_MODEL`, else the settings' `model`, else the default.
fn model(args: &Args, loaded: &LoadedSettings) -> String {
    model_from(args.model.as_deref(), loaded)
}

/// [`model`] for a command without `Args` (`tine memory dream`).
pub(crate) fn model_from(flag: Option<&str>, loaded: &LoadedSettings) -> String {
    flag.map(str::to_owned)
        .filter(|m| !m.trim().is_empty())
        .or_else(|| {
            std::env::var("ANTHROPIC_MODEL")
                .ok()
                .filter(|m| !m.trim().is_empty())
        })
        .or_else(|| {
            loaded
                .get("model")
                .and_then(|(v, _)| v.as_str())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned())
}

/// The session's surroundings. `--bare`: only the environment facts (no instruction files, no
/// git). Otherwise git runs only inside a repository, so a plain directory costs no process.
pub(crate) async fn gather_context(
    home: &Path,
    cwd: &Path,
    model: &str,
    bare: bool,
) -> SessionContext {
    if bare {
        let os_version = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|r| format!("Linux {}", r.trim()));
        let date = tine_query_loop::timestamp::utc_date(std::time::SystemTime::now());
        return SessionContext {
            environment: EnvironmentFacts {
                cwd: cwd.to_path_buf(),
                is_git_repo: false,
                platform: std::env::consts::OS.to_owned(),
                os_version,
                date,
                model: model.to_owned(),
            },
            git: None,
            instructions: Vec::new(),
        };
    }
    let mut options = GatherOptions::new(home.to_path_buf(), cwd.to_path_buf(), model);
    options.git = tine_query_loop::context::find_repo_root(cwd).is_some();
    SessionContext::gather(&options).await
}

/// The Stop hooks of every settings source, lowest precedence first; a malformed `hooks` object
/// is a warning.
fn stop_commands(loaded: &LoadedSettings) -> Vec<StopHookCommand> {
    let mut hooks = HooksSettings::default();
    for layer in &loaded.layers {
        let Some(value) = layer.raw.get("hooks") else {
            continue;
        };
        match HooksSettings::from_value(value) {
            Ok(layer_hooks) => hooks.merge(layer_hooks),
            Err(error) => {
                let origin = layer
                    .path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "--settings".to_owned());
                eprintln!("tine: warning: {origin}: `hooks` is malformed: {error} (ignored)");
            }
        }
    }
    hooks.stop_commands()
}
