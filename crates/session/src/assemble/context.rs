//! The fourth stage: the session's surroundings rendered once. The system prompt depends only
//! on settings and version (and `--system-prompt`, `--append-system-prompt`); the environment,
//! date, git status and instruction files (those of the `--setting-sources` read) go in the
//! first user message. Every request of the
//! session sends these bytes, and a resumed session replays them from its transcript.

use std::path::Path;
use std::sync::Arc;

use tine_config::settings::SettingsSource;
use tine_query_loop::{EnvironmentFacts, GatherOptions, InstructionSource, SessionContext};

use super::ground::Ground;
use super::policy::Policy;
use crate::options::SessionOptions;

/// What every request of the session starts with.
pub(crate) struct Rendered {
    pub context: SessionContext,
    /// The user context as rendered (memory's index and the skills' listing join it later).
    pub user_context: Arc<str>,
    pub system_prompt: Arc<str>,
}

impl Rendered {
    pub(crate) async fn render(
        options: &SessionOptions,
        ground: &Ground,
        policy: &Policy,
        structured: bool,
    ) -> Self {
        let model = &ground.model;
        let mut context = gather_context(&ground.home, &ground.cwd, model, options.bare).await;
        // `--setting-sources`: a source not read gives no instruction files either (Claude
        // Code reads CLAUDE.md only with `project`).
        context
            .instructions
            .retain(|file| ground.paths.reads(instruction_scope(file.source)));
        // The model is told every directory it may work in, as Claude Code tells it.
        context.environment.additional_directories = policy.context.additional_directories.clone();
        let user_context: Arc<str> = context.user_context().into();
        // `outputStyle`: the style's instructions join the appended text (a custom system
        // prompt, the Agent SDK's, takes none: the app chose its prompt whole).
        let style = options.system_prompt.is_none().then(|| {
            crate::output_style::system_prompt_part(
                &ground.loaded,
                &ground.cwd,
                &ground.home,
                ground.user_home.as_deref(),
            )
        });
        let append = match (options.append_system_prompt.as_deref(), style.flatten()) {
            (Some(append), Some(style)) => Some(format!("{style}\n\n{append}")),
            (None, Some(style)) => Some(style),
            (append, None) => append.map(str::to_owned),
        };
        let system_prompt: Arc<str> = crate::flags::system_prompt(
            &context,
            options.system_prompt.as_deref(),
            append.as_deref(),
            structured,
            ground.lean.is_some(),
        )
        .into();
        Self {
            context,
            user_context,
            system_prompt,
        }
    }
}

/// The settings source whose scope an instruction file shares.
fn instruction_scope(source: InstructionSource) -> SettingsSource {
    match source {
        InstructionSource::User => SettingsSource::User,
        InstructionSource::Project => SettingsSource::Project,
        InstructionSource::Local => SettingsSource::Local,
    }
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
