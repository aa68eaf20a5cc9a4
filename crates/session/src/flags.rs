//! Start-up's part of the command-line flags that shape a session (Claude Code's): the system
//! prompt (`--system-prompt` replacing tine's, `--append-system-prompt`), `--add-dir`,
//! `--session-id`, `--fallback-model`, `--fork-session` and the flags only the Anthropic
//! provider takes (`--betas`, `--effort`). Each is checked before anything runs; a bad value is
//! a [`StartError::Flag`] the user can act on.

use std::path::{Path, PathBuf};

use tine_config::settings::SettingsSource;
use tine_config::{SessionId, transcript_path};
use tine_permissions::PermissionContext;
use tine_query_loop::{BASE_SYSTEM_PROMPT, LEAN_SYSTEM_PROMPT, SessionContext};

use crate::error::StartError;
use crate::options::SessionOptions;

/// `--betas` and `--effort` are the Messages API's: the openai provider refuses them rather
/// than dropping them unsaid.
pub(crate) fn anthropic_only(options: &SessionOptions) -> Result<(), StartError> {
    let flag = if !options.betas.is_empty() {
        "--betas"
    } else if options.effort.is_some() {
        "--effort"
    } else {
        return Ok(());
    };
    Err(StartError::Flag(format!(
        "{flag} is an Anthropic Messages API option: the openai provider has none (drop it, or \
         use --provider anthropic)"
    )))
}

/// Whose a file found on disk is, for `--setting-sources`: the user's under `TINE_HOME` or
/// `~/.claude`, else the project's (`.tine/` and `.claude/` folders of the project).
pub(crate) fn file_scope(path: &Path, home: &Path, user_home: Option<&Path>) -> SettingsSource {
    let users = path.starts_with(home)
        || user_home.is_some_and(|user_home| path.starts_with(user_home.join(".claude")));
    match users {
        true => SettingsSource::User,
        false => SettingsSource::Project,
    }
}

/// `--fork-session`: the conversation of `from` copied into a new session (`--session-id`'s
/// id, else a fresh one), cut after `--resume-session-at`'s message when given; `from`'s
/// transcript is only read. Returns the new session's id.
pub(crate) async fn fork_session(
    options: &SessionOptions,
    home: &Path,
    cwd: &Path,
    from: &SessionId,
) -> Result<SessionId, StartError> {
    let to = new_session_id(options.session_id.as_ref(), home, cwd)?;
    tine_query_loop::fork_transcript(home, cwd, from, &to, options.resume_session_at.as_deref())
        .await?;
    Ok(to)
}

/// The session's system prompt, rendered once (every request sends these bytes): tine's
/// default with the model line, or `custom` as given; then `append`, then what a
/// `--json-schema` session must know.
pub(crate) fn system_prompt(
    context: &SessionContext,
    custom: Option<&str>,
    append: Option<&str>,
    structured: bool,
    lean: bool,
) -> String {
    let note = structured.then_some(crate::structured::SYSTEM_NOTE);
    let append = match (append.map(str::trim).filter(|a| !a.is_empty()), note) {
        (Some(append), Some(note)) => Some(format!("{append}\n\n{note}")),
        (Some(append), None) => Some(append.to_owned()),
        (None, note) => note.map(str::to_owned),
    };
    match custom {
        None => context
            .render(
                match lean {
                    true => LEAN_SYSTEM_PROMPT,
                    false => BASE_SYSTEM_PROMPT,
                },
                append.as_deref(),
            )
            .system_prompt
            .to_string(),
        Some(custom) => {
            let mut out = custom.trim_end().to_owned();
            if let Some(append) = append {
                // An empty custom prompt (the Agent SDK's default): the appended text alone.
                if !out.is_empty() {
                    out.push_str("\n\n");
                }
                out.push_str(&append);
            }
            out
        }
    }
}

/// `--add-dir` directories join the project's (relative ones from `cwd`), each resolved
/// through its links so the path resolver compares real paths. Returns them resolved (the Bash
/// sandbox's writable roots take them too).
pub(crate) fn add_directories(
    permissions: &mut PermissionContext,
    dirs: &[PathBuf],
    cwd: &Path,
) -> Result<Vec<PathBuf>, StartError> {
    let mut added = Vec::new();
    for dir in dirs {
        let joined = if dir.is_absolute() {
            dir.clone()
        } else {
            cwd.join(dir)
        };
        let real = std::fs::canonicalize(&joined).map_err(|error| {
            StartError::Flag(format!(
                "--add-dir {}: the directory cannot be used: {error}",
                dir.display()
            ))
        })?;
        if !real.is_dir() {
            return Err(StartError::Flag(format!(
                "--add-dir {}: {} is not a directory",
                dir.display(),
                real.display()
            )));
        }
        if !permissions.additional_directories.contains(&real) {
            permissions.additional_directories.push(real.clone());
        }
        if !added.contains(&real) {
            added.push(real);
        }
    }
    Ok(added)
}

/// The id of a new session: `--session-id`'s when it names no transcript of this directory
/// yet, else a fresh one.
pub(crate) fn new_session_id(
    requested: Option<&SessionId>,
    home: &Path,
    cwd: &Path,
) -> Result<SessionId, StartError> {
    let Some(id) = requested else {
        return Ok(SessionId::new_random());
    };
    let path = transcript_path(home, cwd, id);
    if path.exists() {
        return Err(StartError::Flag(format!(
            "--session-id {id}: that session id is already in use ({}); resume it with \
             `tine -r {id}` or pick another id",
            path.display()
        )));
    }
    Ok(id.clone())
}

/// `--fallback-model` as a model id (aliases resolved), refused when it is the main model.
pub(crate) fn fallback_model(
    fallback: Option<&str>,
    main: &str,
) -> Result<Option<String>, StartError> {
    let Some(fallback) = fallback.map(str::trim).filter(|f| !f.is_empty()) else {
        return Ok(None);
    };
    let fallback = tine_api_client::resolve_model_alias(fallback);
    if fallback == main {
        return Err(StartError::Flag(format!(
            "--fallback-model {fallback} is the main model: the fallback model cannot be the \
             same as the main model; specify a different model for --fallback-model"
        )));
    }
    Ok(Some(fallback))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_under_the_homes_are_the_users() {
        let (home, user) = (Path::new("/h/.tine"), Some(Path::new("/h")));
        let scope = |path: &str| file_scope(Path::new(path), home, user);
        assert_eq!(scope("/h/.tine/agents/a.md"), SettingsSource::User);
        assert_eq!(scope("/h/.claude/commands/c.md"), SettingsSource::User);
        assert_eq!(
            scope("/h/work/.claude/agents/a.md"),
            SettingsSource::Project
        );
        assert_eq!(scope("/p/.tine/skills/s/SKILL.md"), SettingsSource::Project);
    }

    #[test]
    fn the_fallback_must_differ_from_the_main_model() {
        assert_eq!(
            fallback_model(Some("haiku"), "claude-sonnet-5-5").unwrap(),
            Some("claude-haiku-5-5".to_owned())
        );
        let error = fallback_model(Some("sonnet"), "claude-sonnet-5-5").unwrap_err();
        assert!(error.to_string().contains("cannot be the same"), "{error}");
        assert_eq!(fallback_model(None, "m").unwrap(), None);
    }

    #[test]
    fn added_directories_must_exist_and_are_resolved() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, root.path().join("link")).unwrap();
        std::fs::write(root.path().join("file"), "x").unwrap();
        let mut permissions =
            PermissionContext::new(tine_permissions::PermissionMode::Default, root.path());
        let added =
            add_directories(&mut permissions, &[PathBuf::from("link")], root.path()).unwrap();
        let real = std::fs::canonicalize(&real).unwrap();
        assert_eq!(permissions.additional_directories, vec![real.clone()]);
        assert_eq!(added, vec![real]);
        for bad in ["missing", "file"] {
            let error =
                add_directories(&mut permissions, &[PathBuf::from(bad)], root.path()).unwrap_err();
            assert!(error.to_string().contains("--add-dir"), "{error}");
        }
    }
}
