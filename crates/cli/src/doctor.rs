//! `tine doctor [--settings FILE|JSON]`: what a session started here would run with (version,
//! model, endpoint, where the credentials come from, each settings file a session reads,
//! tine's and Claude Code's `.claude/` ones, and its state, the Bash sandbox, MCP servers,
//! TINE_HOME and the memory directory), and what is broken. Exit 0 unless something is
//! broken; each problem is named at the end, settings errors that would stop a session as
//! "tine will not start: ...". Never prints a secret: credentials are named by their variable
//! only.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use tine_api_client::{ClientConfig, DEFAULT_BASE_URL};
use tine_config::settings::{
    self, FlagSettings, LoadedSettings, SettingsError, SettingsFormat, SettingsPaths,
    SettingsSource,
};
use tine_config::tine_home_from_env;
use tine_memory::{MemoryEnv, MemoryResolution, memory_path, resolve_memory_dir};
use tine_permissions::PermissionSettings;

use crate::sandbox_exec;
use crate::sandbox_settings::{SandboxSettings, write_roots};
use crate::setup::{DEFAULT_MODEL, settings_paths, user_home};

const USAGE: &str = "usage: tine doctor [--settings FILE|JSON]";

/// The report being written, and the problems found on the way.
struct Report {
    entries: Vec<Entry>,
    problems: Vec<String>,
}

enum Entry {
    Heading(String),
    /// A labelled value; the labels are padded to the longest at the end.
    Line(String, String),
    /// An indented note under the line before.
    Note(String),
}

/// The label column's least width.
const LABEL_WIDTH: usize = 16;

impl Report {
    fn line(&mut self, label: &str, value: impl std::fmt::Display) {
        self.entries
            .push(Entry::Line(label.to_owned(), value.to_string()));
    }

    fn note(&mut self, note: impl std::fmt::Display) {
        self.entries.push(Entry::Note(note.to_string()));
    }

    fn heading(&mut self, heading: &str) {
        self.entries.push(Entry::Heading(heading.to_owned()));
    }

    fn problem(&mut self, problem: impl Into<String>) {
        self.problems.push(problem.into());
    }

    /// The report, every value starting in one column however long a label is.
    fn text(&self) -> String {
        let width = self
            .entries
            .iter()
            .map(|e| match e {
                Entry::Line(label, _) => label.chars().count(),
                _ => 0,
            })
            .max()
            .unwrap_or(0)
            .max(LABEL_WIDTH);
        let mut text = String::new();
        for entry in &self.entries {
            let _ = match entry {
                Entry::Heading(heading) => writeln!(text, "{heading}"),
                Entry::Line(label, value) => writeln!(text, "  {label:<width$} {value}"),
                Entry::Note(note) => writeln!(text, "  {:<width$}   {note}", ""),
            };
        }
        text
    }
}

/// Runs `tine doctor` on its arguments (after `doctor`).
pub fn run(args: &[String]) -> ExitCode {
    let flag = match args {
        [] => None,
        [name, value] if name == "--settings" => Some(FlagSettings::from_arg(value)),
        _ => {
            eprintln!("tine doctor: {USAGE}");
            return ExitCode::from(2);
        }
    };
    let report = diagnose(flag);
    print!("{}", report.text());
    if report.problems.is_empty() {
        println!("ok: nothing broken");
        return ExitCode::SUCCESS;
    }
    println!("{} problem(s):", report.problems.len());
    for problem in &report.problems {
        println!("  - {problem}");
    }
    ExitCode::FAILURE
}

fn diagnose(flag: Option<FlagSettings>) -> Report {
    let mut report = Report {
        entries: Vec::new(),
        problems: Vec::new(),
    };
    report.heading(concat!("tine ", env!("CARGO_PKG_VERSION")));
    let cwd = match std::env::current_dir() {
        Ok(cwd) => std::fs::canonicalize(&cwd).unwrap_or(cwd),
        Err(error) => {
            report.problem(format!("cannot read the current directory: {error}"));
            return report;
        }
    };
    let home = match tine_home_from_env() {
        Ok(home) => Some(home),
        Err(error) => {
            report.problem(error.to_string());
            None
        }
    };
    let user_home = user_home();
    // The very files a session reads, tine's and Claude Code's.
    let loaded = home.as_ref().map(|home| {
        let paths = settings_paths(&cwd, home, user_home.as_deref(), flag);
        (settings::load(&paths), paths)
    });

    model_and_endpoint(&mut report, loaded.as_ref().map(|(l, _)| l));
    if let Some((loaded, paths)) = &loaded {
        settings_files(&mut report, loaded, paths);
        sandbox(&mut report, &cwd, loaded, user_home.as_deref());
        if let Some(home) = &home {
            mcp(&mut report, &cwd, home, user_home.as_deref(), loaded);
        }
    }
    report.heading("paths");
    report.line("cwd", cwd.display());
    match &home {
        Some(home) => report.line("TINE_HOME", home.display()),
        None => report.line("TINE_HOME", "cannot be resolved"),
    }
    if let (Some(home), Some((loaded, _))) = (&home, &loaded) {
        let resolution = resolve_memory_dir(&MemoryEnv::from_process(), loaded, home, &cwd);
        let memory = match &resolution {
            MemoryResolution::Enabled(_) => memory_path(&resolution).trim_end().replace('\t', "  "),
            MemoryResolution::Disabled(why) => format!("off ({why})"),
        };
        report.line("memory", memory);
    }
    report
}

fn model_and_endpoint(report: &mut Report, loaded: Option<&LoadedSettings>) {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let model = env("ANTHROPIC_MODEL")
        .map(|m| format!("{m} (ANTHROPIC_MODEL)"))
        .or_else(|| {
            loaded
                .and_then(|l| l.get("model"))
                .and_then(|(v, source)| v.as_str().map(|m| format!("{m} (model in {source})")))
        })
        .unwrap_or_else(|| format!("{DEFAULT_MODEL} (default)"));
    report.line("provider", "Anthropic Messages API");
    report.line("model", model);
    let endpoint = env("ANTHROPIC_BASE_URL").map_or_else(
        || format!("{DEFAULT_BASE_URL} (default)"),
        |url| format!("{url} (ANTHROPIC_BASE_URL)"),
    );
    report.line("endpoint", endpoint);
    let sources: Vec<&str> = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]
        .into_iter()
        .filter(|name| env(name).is_some())
        .collect();
    if sources.is_empty() {
        report.line("credentials", "none");
    } else {
        report.line(
            "credentials",
            format!("from {} (value not shown)", sources.join(" and ")),
        );
    }
    // The client's own check: missing credentials, a base URL that is not http(s).
    if let Err(error) = ClientConfig::from_env() {
        report.problem(error.to_string());
    }
}

fn origin_label(path: Option<&Path>) -> String {
    path.map_or_else(
        || "--settings (inline JSON)".to_owned(),
        |p| p.display().to_string(),
    )
}

/// Every settings file a session reads, in precedence order (lowest first): in each scope
/// Claude Code's file, then tine's. `None` is inline `--settings` JSON.
fn settings_sources(paths: &SettingsPaths) -> Vec<(SettingsSource, SettingsFormat, Option<&Path>)> {
    let mut out = Vec::new();
    for source in SettingsSource::ALL {
        let claude = match source {
            SettingsSource::User => paths.claude_user.as_deref(),
            SettingsSource::Project => Some(paths.claude_project.as_path()),
            SettingsSource::Local => Some(paths.claude_local.as_path()),
            SettingsSource::Flag | SettingsSource::Managed => None,
        };
        if let Some(path) = claude {
            out.push((source, SettingsFormat::ClaudeCode, Some(path)));
        }
        if source == SettingsSource::Flag && paths.flag.is_none() {
            continue;
        }
        out.push((source, SettingsFormat::Tine, paths.path_of(source)));
    }
    out
}

fn settings_files(report: &mut Report, loaded: &LoadedSettings, paths: &SettingsPaths) {
    report.heading("settings");
    let rule_errors = PermissionSettings::read(loaded).errors;
    let errors: Vec<&SettingsError> = loaded.errors.iter().chain(&rule_errors).collect();
    let sources = settings_sources(paths);
    let mut fatal_total = 0;
    for (source, format, path) in &sources {
        let label = origin_label(*path);
        let own: Vec<&&SettingsError> = errors.iter().filter(|e| e.file() == label).collect();
        let fatal = own.iter().filter(|e| e.is_fatal()).count();
        let warnings = own.len() - fatal;
        fatal_total += fatal;
        let status = match (
            loaded.layer_from(*source, *format).is_some(),
            fatal,
            warnings,
        ) {
            (true, 0, 0) => "loaded".to_owned(),
            (true, 0, w) => format!("loaded with {w} warning(s)"),
            (true, f, w) => format!(
                "tine will not start: {f} error(s){}",
                if w > 0 {
                    format!(", {w} warning(s)")
                } else {
                    String::new()
                }
            ),
            (false, 0, 0) => "not found".to_owned(),
            (false, _, _) => "error: not loaded (tine will not start)".to_owned(),
        };
        let whose = match format {
            SettingsFormat::Tine => "",
            SettingsFormat::ClaudeCode => " (Claude Code's)",
        };
        report.line(source.as_str(), format!("{label}{whose}: {status}"));
        for error in &own {
            let kind = if error.is_fatal() { "error" } else { "warning" };
            report.note(format!("{kind}: {error}"));
        }
    }
    // Errors that name no file listed (should not happen; never hide one).
    for error in &errors {
        if !sources
            .iter()
            .any(|(_, _, p)| origin_label(*p) == error.file())
        {
            // A warning costs only what it names: listed, not a problem.
            report.line("other", error);
            if error.is_fatal() {
                fatal_total += 1;
            }
        }
    }
    if fatal_total > 0 {
        report.line(
            "start",
            format!("tine will not start: {fatal_total} settings error(s) above"),
        );
        for error in errors.iter().filter(|e| e.is_fatal()) {
            report.problem(format!("tine will not start: {error}"));
        }
    }
}

fn sandbox(report: &mut Report, cwd: &Path, loaded: &LoadedSettings, home: Option<&Path>) {
    report.heading("bash sandbox");
    let support = sandbox_exec::probe();
    report.line("kernel", &support);
    let settings = SandboxSettings::from_settings(loaded, home);
    let enabled = match (settings.enabled, settings.enabled_by) {
        (true, Some(source)) => format!("yes (sandbox.enabled in {source})"),
        (false, Some(source)) => format!("no (sandbox.enabled: false in {source}; --sandbox)"),
        (_, None) => "no (turn on with `\"sandbox\": {\"enabled\": true}` or --sandbox)".to_owned(),
    };
    report.line("enabled", enabled);
    report.line(
        "network",
        if settings.allow_network {
            "allowed (sandbox.allowNetwork)"
        } else {
            "off when sandboxed (sandbox.allowNetwork: false)"
        },
    );
    let roots: Vec<String> = write_roots(cwd, loaded, &settings, home)
        .iter()
        .map(|r| r.display().to_string())
        .collect();
    report.line("writes", roots.join(", "));
    for warning in &settings.warnings {
        report.line("warning", warning);
    }
    if settings.enabled && !support.is_available() {
        if settings.fail_if_unavailable {
            report.problem(format!(
                "the Bash sandbox is required (sandbox.failIfUnavailable) but {support}"
            ));
        } else {
            report.line(
                "fallback",
                "Bash will run unsandboxed, with a warning at start",
            );
        }
    }
}

/// MCP is not built yet: name what is configured so nobody thinks it is in use.
/// Each configured MCP server and the state it reaches when started now (a `.mcp.json` server
/// nobody trusted is not started). A server that cannot start is reported, not a problem: a
/// session runs without it.
fn mcp(
    report: &mut Report,
    cwd: &Path,
    home: &Path,
    user_home: Option<&Path>,
    loaded: &LoadedSettings,
) {
    report.heading("mcp");
    match crate::mcp_cmd::statuses(cwd, home, user_home, loaded) {
        Ok(infos) if infos.is_empty() => report.line("servers", "none configured"),
        Ok(infos) => {
            report.line("servers", format!("{} configured", infos.len()));
            for info in infos {
                report.line(
                    &info.name,
                    format!(
                        "{} ({}): {}",
                        info.status,
                        info.scope.as_str(),
                        info.summary
                    ),
                );
            }
        }
        Err(error) => report.line("servers", format!("cannot be checked: {error:#}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_longer_than_the_column_keeps_every_value_aligned() {
        let mut report = Report {
            entries: Vec::new(),
            problems: Vec::new(),
        };
        report.heading("settings");
        report.line("model", "m");
        report.line("a label of 24 characters", "v");
        report.note("warning: w");
        assert_eq!(
            report.text(),
            "settings\n  \
             model                    m\n  \
             a label of 24 characters v\n  \
             \x20                          warning: w\n"
        );

        // Short labels only: the usual 16-character column.
        let mut short = Report {
            entries: Vec::new(),
            problems: Vec::new(),
        };
        short.line("cwd", "/x");
        assert_eq!(short.text(), format!("  {:<16} /x\n", "cwd"));
    }
}
