//! tine-config: the ground floor. Where tine's files live, how tine writes its own state, and
//! what the settings files say, for every crate above (memory, the cli's models and hooks,
//! MCP, the permission engine, the TUI). It knows no product crate: permission rules and
//! modes are handed out as the text the user wrote, with its file and line, and the
//! permission engine (`tine-permissions`) parses them.
//!
//! Modules in reading order (`paths` is private, its items re-exported at the root; `private_fs`,
//! `settings`, `trust` and `plugins` are public namespaces of functions such as [`settings::load`] and
//! [`private_fs::create_dir_all`]):
//!
//! - `paths`: `TINE_HOME`, a project's folder under `projects/` (the sanitized path plus a
//!   hash of the whole path, so look-alike paths never share one), transcript paths,
//!   [`SessionId`], and adopting the folders of older versions (`paths/legacy.rs`).
//! - [`private_fs`]: how tine creates its own state (directories 0700, files 0600, atomic
//!   replacement), used by every crate that writes under `TINE_HOME` or into memory.
//! - [`settings`]: the settings sources and their precedence, each file checked key by key
//!   and every problem named with file and line (fail closed), and the one writer of settings
//!   files ([`settings::edit_file`]: a change in place, comments and trailing commas kept).
//! - [`trust`]: the folders a person trusts (`$TINE_HOME/trust.json`; a parent's trust counts).
//! - [`plugins`]: Claude Code's plugins as files: `plugin.json`, `marketplace.json`, the stores
//!   of installed plugins (`TINE_HOME/plugins/`, `~/.claude/plugins/`), `enabledPlugins`.
//!
//! # Example
//!
//! Load every settings source of a project and ask which one sets a key:
//!
//! ```
//! use tine_config::settings::{self, SettingsPaths};
//! use tine_config::SettingsSource;
//!
//! let home = tempfile::tempdir()?;
//! let project = tempfile::tempdir()?;
//! std::fs::create_dir(project.path().join(".tine"))?;
//! std::fs::write(home.path().join("settings.json"), r#"{"model": "claude-sonnet-4-5"}"#)?;
//! std::fs::write(
//!     project.path().join(".tine/settings.local.json"),
//!     "{ // comments and trailing commas are fine\n \"model\": \"claude-opus-4-1\", }",
//! )?;
//!
//! let paths = SettingsPaths::new(project.path(), home.path())
//!     .with_managed(home.path().join("managed-settings.json"));
//! let loaded = settings::load(&paths);
//! assert_eq!(loaded.fatal_errors().count(), 0);
//! let (model, source) = loaded.get("model").unwrap();
//! assert_eq!(model, "claude-opus-4-1");
//! assert_eq!(source, SettingsSource::Local);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! `examples/layered_settings.rs` does the same with every source and prints the rules and
//! warnings (`cargo run -p tine-config --example layered_settings`).
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod paths;
pub mod plugins;
pub mod private_fs;
pub mod settings;
pub mod trust;

pub use paths::{
    Adoption, PathsError, SessionId, adopt_legacy_project_dir, legacy_project_dir, project_dir,
    project_dir_name, recorded_cwd, recorded_in, sanitize_path, subagent_transcript_path,
    tine_home, tine_home_from_env, transcript_path,
};
pub use settings::{
    FlagSettings, HookSetting, LoadedSettings, Location, RuleList, SettingText, SettingsError,
    SettingsFormat, SettingsLayer, SettingsPaths, SettingsSource,
};
