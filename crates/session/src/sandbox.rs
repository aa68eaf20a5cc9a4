//! The Bash sandbox's settings and the session's decision: on or off, with which write roots,
//! network or not, and what to do when the kernel cannot enforce it.
//!
//! The `sandbox` object follows Claude Code's where the two overlap: `enabled` (default false),
//! `failIfUnavailable` (refuse to start rather than run unsandboxed), `filesystem.allowWrite`
//! (more directories Bash may write to); `allowNetwork` (default false) is tine's, since
//! Landlock restricts by port, not by domain. `--sandbox` turns it on for one run.
//!
//! Project settings (`.tine/settings.json`, checked in with a repository) may only tighten it:
//! their `enabled: true`, `failIfUnavailable: true` and `allowNetwork: false` count, their
//! opposites and their `allowWrite` are ignored with a warning, so a cloned repository cannot
//! turn off or widen the sandbox its user asked for.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tine_config::settings::{LoadedSettings, SettingsFormat, SettingsLayer, SettingsSource};
use tine_tools::sandbox::{BashSandbox, SandboxPolicy, SandboxSupport, probe};

/// The resolved `sandbox` settings of every source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// Whether Bash runs sandboxed.
    pub enabled: bool,
    /// Which source turned it on (or off), for `tine doctor`.
    pub enabled_by: Option<SettingsSource>,
    /// Refuse to start rather than run unsandboxed.
    pub fail_if_unavailable: bool,
    /// Whether sandboxed commands may use the network.
    pub allow_network: bool,
    /// `filesystem.allowWrite` of every trusted source, resolved.
    pub allow_write: Vec<PathBuf>,
    /// Keys that were ignored, and why (shown once at start and by `tine doctor`).
    pub warnings: Vec<String>,
}

fn origin(layer: &SettingsLayer) -> String {
    layer.path.as_ref().map_or_else(
        || "--settings (inline JSON)".to_owned(),
        |p| p.display().to_string(),
    )
}

impl SandboxSettings {
    /// Reads `sandbox` from every source, lowest precedence first (a higher source's value
    /// wins), with the project-settings rule of the module doc.
    pub fn from_settings(loaded: &LoadedSettings, home: Option<&Path>) -> Self {
        let mut out = SandboxSettings::default();
        for layer in &loaded.layers {
            let Some(value) = layer.raw.get("sandbox") else {
                continue;
            };
            let Some(object) = value.as_object() else {
                out.warnings.push(format!(
                    "{}: `sandbox` must be an object (ignored)",
                    origin(layer)
                ));
                continue;
            };
            let project = layer.source == SettingsSource::Project;
            for (key, value) in object {
                out.read_key(layer, project, key, value, home);
            }
        }
        out
    }

    fn read_key(
        &mut self,
        layer: &SettingsLayer,
        project: bool,
        key: &str,
        value: &Value,
        home: Option<&Path>,
    ) {
        let from = origin(layer);
        let loosening = |what: &str| {
            format!(
                "{from}: `sandbox.{key}: {what}` is ignored in project settings (a checked-in \
                 file may only tighten the sandbox; set it in your user or local settings)"
            )
        };
        match key {
            "enabled" | "failIfUnavailable" | "allowNetwork" => {
                let Some(on) = value.as_bool() else {
                    self.warnings.push(format!(
                        "{from}: `sandbox.{key}` must be true or false (ignored)"
                    ));
                    return;
                };
                // The tightening value of each key.
                let tight = key != "allowNetwork";
                if project && on != tight {
                    self.warnings.push(loosening(&on.to_string()));
                    return;
                }
                match key {
                    "enabled" => {
                        self.enabled = on;
                        self.enabled_by = Some(layer.source);
                    }
                    "failIfUnavailable" => self.fail_if_unavailable = on,
                    _ => self.allow_network = on,
                }
            }
            "filesystem" => {
                let Some(write) = value.get("allowWrite") else {
                    return;
                };
                if project {
                    self.warnings.push(format!(
                        "{from}: `sandbox.filesystem.allowWrite` is ignored in project settings \
                         (a checked-in file may only tighten the sandbox; set it in your user or \
                         local settings)"
                    ));
                    return;
                }
                let Some(list) = write.as_array() else {
                    self.warnings.push(format!(
                        "{from}: `sandbox.filesystem.allowWrite` must be a list of paths (ignored)"
                    ));
                    return;
                };
                for entry in list {
                    match entry.as_str() {
                        Some(path) => {
                            let path = resolve(path, &layer.base_dir, home);
                            if !self.allow_write.contains(&path) {
                                self.allow_write.push(path);
                            }
                        }
                        None => self.warnings.push(format!(
                            "{from}: `sandbox.filesystem.allowWrite` entry {entry} is not a \
                             path (ignored)"
                        )),
                    }
                }
            }
            // Claude Code's own keys in its files are expected there; only tine's files warn.
            _ if layer.format == SettingsFormat::ClaudeCode => {}
            other => self.warnings.push(format!(
                "{from}: `sandbox.{other}` is not supported by tine (ignored)"
            )),
        }
    }
}

/// `~/x` against the home directory, a relative path against the source's base directory.
fn resolve(path: &str, base_dir: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => base_dir.join(path),
    }
}

/// Where sandboxed Bash may write: the project, the `--add-dir` directories, the additional
/// directories of trusted sources, `allowWrite`, and the temporary directories (Bash itself
/// keeps a file there per call).
pub fn write_roots(
    cwd: &Path,
    add_dirs: &[PathBuf],
    loaded: &LoadedSettings,
    settings: &SandboxSettings,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut roots = vec![cwd.to_path_buf()];
    roots.extend(add_dirs.iter().cloned());
    roots.extend(
        loaded
            .additional_directories(home)
            .into_iter()
            .filter(|(_, source)| *source != SettingsSource::Project)
            .map(|(path, _)| path),
    );
    roots.extend(settings.allow_write.iter().cloned());
    roots.push(std::env::temp_dir());
    roots.push(PathBuf::from("/tmp"));
    let mut unique: Vec<PathBuf> = Vec::new();
    for root in roots {
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        if !unique.contains(&root) {
            unique.push(root);
        }
    }
    unique
}

/// What the sandbox decision came to.
pub(crate) struct SandboxOutcome {
    /// `None`: Bash runs unsandboxed.
    pub sandbox: Option<BashSandbox>,
    /// Said as warnings, in start-up's order.
    pub warnings: Vec<String>,
}

/// The session's sandbox (`flag`: `--sandbox`; `launcher`: the program that runs `__sandbox`):
/// none when it is off, or unavailable and allowed to fall back (with one warning); an error
/// when it is unavailable and `failIfUnavailable` is set. The warnings are the session's
/// notices, said in start-up's order.
pub(crate) fn decide(
    flag: bool,
    launcher: Option<&Path>,
    cwd: &Path,
    loaded: &LoadedSettings,
    home: Option<&Path>,
    add_dirs: &[PathBuf],
) -> Result<SandboxOutcome, String> {
    let settings = SandboxSettings::from_settings(loaded, home);
    let mut warnings = settings.warnings.clone();
    if !(flag || settings.enabled) {
        return Ok(SandboxOutcome {
            sandbox: None,
            warnings,
        });
    }
    let support = match launcher {
        Some(_) => probe(),
        None => SandboxSupport::Unavailable {
            reason: "no sandbox launcher was given to the session (the tine binary runs one)"
                .to_owned(),
        },
    };
    match (launcher, support) {
        (Some(launcher), SandboxSupport::Available { abi, network }) => {
            if !settings.allow_network && !network {
                warnings.push(format!(
                    "the Bash sandbox cannot turn the network off here (Landlock \
                     ABI {abi}; it needs ABI 4, Linux 6.7): only writes are restricted"
                ));
            }
            let policy = SandboxPolicy {
                write_roots: write_roots(cwd, add_dirs, loaded, &settings, home),
                allow_network: settings.allow_network,
            };
            tracing::info!(%policy, abi, "Bash sandbox on");
            let sandbox = BashSandbox::new(launcher.to_path_buf(), policy);
            Ok(SandboxOutcome {
                sandbox: Some(if network {
                    sandbox
                } else {
                    sandbox.network_not_enforced()
                }),
                warnings,
            })
        }
        (_, support) => {
            let reason = match support {
                SandboxSupport::Unavailable { reason } => reason,
                SandboxSupport::Available { .. } => "cannot find the tine binary".to_owned(),
            };
            if settings.fail_if_unavailable {
                return Err(format!(
                    "the Bash sandbox is required (sandbox.failIfUnavailable) but unavailable: \
                     {reason}"
                ));
            }
            warnings.push(format!(
                "the Bash sandbox is unavailable ({reason}); Bash commands run \
                 unsandboxed"
            ));
            Ok(SandboxOutcome {
                sandbox: None,
                warnings,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;
    use tine_config::settings::{LoadedSettings, SettingsFormat, SettingsLayer, SettingsSource};

    use super::*;

    fn layer(source: SettingsSource, value: serde_json::Value) -> SettingsLayer {
        SettingsLayer {
            source,
            format: SettingsFormat::Tine,
            path: Some(PathBuf::from(format!("/s/{}.json", source.as_str()))),
            raw: value.as_object().cloned().unwrap_or_default(),
            permissions: Default::default(),
            base_dir: PathBuf::from("/base"),
            hooks: Vec::new(),
        }
    }

    fn loaded(layers: Vec<SettingsLayer>) -> LoadedSettings {
        LoadedSettings {
            layers,
            ..LoadedSettings::default()
        }
    }

    #[test]
    fn higher_sources_win_and_paths_resolve() {
        let settings = SandboxSettings::from_settings(
            &loaded(vec![
                layer(
                    SettingsSource::User,
                    json!({"sandbox": {"enabled": true, "allowNetwork": true,
                        "filesystem": {"allowWrite": ["~/cache", "rel", "/abs"]}}}),
                ),
                layer(
                    SettingsSource::Local,
                    json!({"sandbox": {"allowNetwork": false, "failIfUnavailable": true}}),
                ),
            ]),
            Some(Path::new("/home/u")),
        );
        assert!(settings.enabled && settings.fail_if_unavailable && !settings.allow_network);
        assert_eq!(settings.enabled_by, Some(SettingsSource::User));
        assert_eq!(
            settings.allow_write,
            vec![
                PathBuf::from("/home/u/cache"),
                PathBuf::from("/base/rel"),
                PathBuf::from("/abs")
            ]
        );
        assert!(settings.warnings.is_empty(), "{:?}", settings.warnings);
    }

    #[test]
    fn project_settings_only_tighten() {
        let settings = SandboxSettings::from_settings(
            &loaded(vec![
                layer(SettingsSource::User, json!({"sandbox": {"enabled": true}})),
                layer(
                    SettingsSource::Project,
                    json!({"sandbox": {"enabled": false, "allowNetwork": true,
                        "failIfUnavailable": true, "filesystem": {"allowWrite": ["/"]}}}),
                ),
            ]),
            None,
        );
        assert!(settings.enabled && !settings.allow_network && settings.fail_if_unavailable);
        assert!(settings.allow_write.is_empty());
        assert_eq!(settings.warnings.len(), 3, "{:?}", settings.warnings);
        // ...and can turn it on.
        let on = SandboxSettings::from_settings(
            &loaded(vec![layer(
                SettingsSource::Project,
                json!({"sandbox": {"enabled": true}}),
            )]),
            None,
        );
        assert!(on.enabled && on.warnings.is_empty());
    }

    #[test]
    fn wrong_types_and_unknown_keys_are_warnings() {
        let settings = SandboxSettings::from_settings(
            &loaded(vec![
                layer(SettingsSource::User, json!({"sandbox": true})),
                layer(
                    SettingsSource::Local,
                    json!({"sandbox": {"enabled": "yes", "network": {"allowedDomains": ["x"]},
                        "filesystem": {"allowWrite": "/x"}}}),
                ),
            ]),
            None,
        );
        assert!(!settings.enabled);
        let text = settings.warnings.join("\n");
        for expected in [
            "`sandbox` must be an object",
            "`sandbox.enabled` must be true or false",
            "`sandbox.network` is not supported",
            "`sandbox.filesystem.allowWrite` must be a list",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
        }
    }
}
