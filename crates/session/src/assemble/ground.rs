//! The first stage of start-up: where the session is (its working directory, `TINE_HOME`, the
//! user's home), the settings files it reads, loaded once, and the provider with its
//! credentials, checked before anything else (a missing key is one line).

use std::path::{Path, PathBuf};

use tine_config::settings::{self, FlagSettings, LoadedSettings, SettingsPaths};
use tine_config::{Adoption, adopt_legacy_project_dir, project_dir, tine_home_from_env};

use crate::error::StartError;
use crate::options::SessionOptions;
use crate::private_state::tighten_own_state;
use crate::protocol::Notice;
use crate::provider::{PendingClient, ProviderParts};

/// Where the session is, its settings and its provider.
pub(crate) struct Ground {
    pub cwd: PathBuf,
    pub home: PathBuf,
    pub user_home: Option<PathBuf>,
    pub paths: SettingsPaths,
    pub loaded: LoadedSettings,
    /// The model: an alias resolved (anthropic), or verbatim (openai).
    pub model: String,
    /// WebFetch's and side queries' model.
    pub small_model: String,
    /// The plugins of `--plugin-dir` and those settings enable, read once: their hooks,
    /// servers, agents, skills and commands join the session's own.
    pub plugins: std::sync::Arc<crate::plugins::SessionPlugins>,
    /// The model's window when the prefix is lean (`crate::lean`): the core tools and a
    /// short system prompt.
    pub lean: Option<u64>,
}

impl Ground {
    /// Where the session is, and its client (being built meanwhile).
    pub(crate) fn read(
        options: &SessionOptions,
        notices: &mut Vec<Notice>,
    ) -> Result<(Self, PendingClient), StartError> {
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
        if let Some(sources) = &options.setting_sources {
            paths = paths.with_only_sources(sources.clone());
        }
        let loaded = settings::load(&paths);
        // The provider and its credentials first: without them nothing else matters, and
        // the message is one line. Building the HTTP client (TLS roots) is the costliest step
        // of start-up and needs nothing else: it runs on a blocking thread meanwhile.
        let provider = ProviderParts::choose(options, &loaded)?;
        notices.extend(provider.warnings.iter().cloned().map(Notice::warning));
        adopt_project_folder(&home, &cwd, notices);
        // An older tine made these 0755/0644: tighten what this run uses.
        tighten_own_state(
            &home,
            &[project_dir(&home, &cwd), home.join("logs")],
            &[home.join("logs").join("tine.log")],
        );
        let ProviderParts {
            model,
            small_model,
            client,
            ..
        } = provider;
        let window = client.known_window(&model);
        let profile = std::env::var(crate::lean::PROFILE_ENV).ok();
        let lean = crate::lean::decide(window, profile.as_deref(), notices).then_some(window);
        // After the credentials (a missing key is one line), before anything uses their parts.
        let plugins = crate::plugins::SessionPlugins::load(
            &crate::plugins::PluginPlaces {
                cwd: &cwd,
                home: &home,
                user_home: user_home.as_deref(),
            },
            &loaded,
            &options.plugin_dirs,
            options.bare,
        );
        notices.extend(plugins.warnings.iter().cloned().map(Notice::warning));
        Ok((
            Self {
                cwd,
                home,
                user_home,
                paths,
                loaded,
                model,
                small_model,
                plugins: std::sync::Arc::new(plugins),
                lean,
            },
            client,
        ))
    }
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
