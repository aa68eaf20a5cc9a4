//! `tine doctor [--settings FILE|JSON] [--provider anthropic|openai] [--model NAME] [--check]`:
//! what a session started here would run with (version, provider, model, endpoint, where the
//! credentials come from, the context window, each settings file a session reads, tine's and
//! Claude Code's `.claude/` ones, and its state, the Bash sandbox, MCP servers, TINE_HOME and
//! the memory directory), and what is broken. Exit 0 unless something is broken; each problem
//! is named at the end, settings errors that would stop a session as "tine will not start:
//! ...". Never prints a secret: credentials are named by their variable only. No network
//! unless `--check`, which sends one tiny request (no retries, everything bounded by
//! [`CHECK_TIMEOUT`]) and says whether it was answered.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use tine_api_client::{
    DEFAULT_BASE_URL, DEFAULT_OPENAI_BASE_URL, Message, MessagesRequest, ModelClient, Provider,
    ProviderConfig, RetryPolicy, collect_message, model_info,
};
use tine_config::settings::{
    self, FlagSettings, LoadedSettings, SettingsError, SettingsFormat, SettingsPaths,
    SettingsSource,
};
use tine_config::tine_home_from_env;
use tine_memory::{MemoryEnv, MemoryResolution, memory_path, resolve_memory_dir};
use tine_permissions::PermissionSettings;

use crate::args::DoctorArgs;
use crate::setup::{settings_paths, user_home};
use tine_session::provider;
use tine_session::sandbox::{SandboxSettings, write_roots};

/// The longest `--check` waits for its answer, connection included.
pub(crate) const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

/// `tine doctor`'s options, as read from the command line.
#[derive(Debug, Default)]
struct Options {
    settings: Option<FlagSettings>,
    provider: Option<Provider>,
    model: Option<String>,
    check: bool,
}

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

/// Runs `tine doctor`.
pub(crate) fn run(args: &DoctorArgs) -> ExitCode {
    let options = Options {
        settings: args.settings.as_deref().map(FlagSettings::from_arg),
        provider: args.provider,
        model: args.model.clone(),
        check: args.check,
    };
    let report = diagnose(options);
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

fn diagnose(mut options: Options) -> Report {
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
        let paths = settings_paths(&cwd, home, user_home.as_deref(), options.settings.take());
        (settings::load(&paths), paths)
    });

    let no_settings = LoadedSettings::default();
    let settings = loaded.as_ref().map_or(&no_settings, |(l, _)| l);
    if let Some((config, model)) = model_and_endpoint(&mut report, settings, &options)
        && options.check
    {
        check(&mut report, config, &model);
    }
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
            MemoryResolution::Enabled(_) => match memory_path(&resolution) {
                Ok((path, from)) => format!("{}  ({from})", path.display()),
                Err(why) => why,
            },
            MemoryResolution::Disabled(why) => format!("off ({why})"),
        };
        report.line("memory", memory);
    }
    report
}

/// The provider, model, endpoint, credentials and context window; the client's configuration
/// and the model when both are usable.
fn model_and_endpoint(
    report: &mut Report,
    loaded: &LoadedSettings,
    options: &Options,
) -> Option<(ProviderConfig, String)> {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let choice = match provider::choose(options.provider, loaded) {
        Ok(choice) => choice,
        Err(error) => {
            report.line("provider", "unusable");
            report.problem(error.to_string());
            return None;
        }
    };
    let kind = choice.provider;
    report.line(
        "provider",
        format!("{kind} ({}): {}", choice.source, kind.describe()),
    );
    for warning in &choice.warnings {
        report.line("warning", warning);
    }
    let model = match provider::model(kind, options.model.as_deref(), loaded) {
        Ok(model) => {
            report.line("model", format!("{} ({})", model.value, model.source));
            Some(model.value)
        }
        Err(error) => {
            report.line("model", "none");
            report.problem(error.to_string());
            None
        }
    };
    let (endpoint, credentials) = match kind {
        Provider::Anthropic => {
            let endpoint = env("ANTHROPIC_BASE_URL").map_or_else(
                || format!("{DEFAULT_BASE_URL} (default)"),
                |url| format!("{url} (ANTHROPIC_BASE_URL)"),
            );
            let sources: Vec<&str> = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]
                .into_iter()
                .filter(|name| env(name).is_some())
                .collect();
            (
                endpoint,
                (!sources.is_empty()).then(|| sources.join(" and ")),
            )
        }
        Provider::OpenAi => {
            let endpoint = provider::openai_var(loaded, "OPENAI_BASE_URL").map_or_else(
                || format!("{DEFAULT_OPENAI_BASE_URL} (default)"),
                |url| format!("{} ({})", url.value, url.source),
            );
            let key = provider::openai_var(loaded, "OPENAI_API_KEY").map(|k| k.source);
            (endpoint, key)
        }
    };
    report.line("endpoint", endpoint);
    match credentials {
        None => report.line("credentials", "none"),
        Some(sources) => report.line("credentials", format!("from {sources} (value not shown)")),
    }
    // The client's own check: a missing key, a base URL that is not http(s), a bad window.
    let config = match provider::client_config(kind, loaded) {
        Ok(config) => Some(config),
        Err(error) => {
            report.problem(error.to_string());
            None
        }
    };
    let model = model?;
    let configured = match &config {
        Some(ProviderConfig::Anthropic(c)) => c.context_window,
        Some(ProviderConfig::OpenAi(c)) => c.context_window,
        None => None,
    };
    let info = model_info(&model);
    let window = match configured {
        Some(tokens) => format!("{tokens} tokens (TINE_CONTEXT_WINDOW)"),
        None if info.known => format!("{} tokens", info.context_window),
        None => format!(
            "{} tokens (assumed: tine does not know this model; set TINE_CONTEXT_WINDOW)",
            info.context_window
        ),
    };
    report.line("context window", window);
    if let Some(note) = info.note(&model) {
        report.line("prices", note);
    }
    let small = provider::small_model(kind, &model, loaded);
    report.line("small model", format!("{} ({})", small.value, small.source));
    if !options.check {
        report.line(
            "check",
            "not run (tine doctor --check sends one tiny request)",
        );
    }
    Some((config?, model))
}

/// `--check`: one tiny request, no retries, bounded; its outcome is a line and maybe a problem.
fn check(report: &mut Report, config: ProviderConfig, model: &str) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            report.problem(format!(
                "cannot start the async runtime for --check: {error}"
            ));
            return;
        }
    };
    let url = config.base_url().to_owned();
    let started = Instant::now();
    let outcome = runtime.block_on(async {
        let client = config
            .with_retry(RetryPolicy::none())
            .with_timeout(CHECK_TIMEOUT)
            .build()?;
        let request = MessagesRequest::new(model, 16, vec![Message::user("Reply with: ok")]);
        match tokio::time::timeout(CHECK_TIMEOUT, collect_message(client.stream(request))).await {
            Ok(result) => result.map(|(message, _)| message),
            Err(_) => Err(tine_api_client::ApiError::Timeout {
                what: "the check's answer".to_owned(),
                after: CHECK_TIMEOUT,
            }),
        }
    });
    let elapsed = started.elapsed().as_millis();
    match outcome {
        Ok(message) => {
            let said: String = message.text().trim().chars().take(40).collect();
            report.line(
                "check",
                format!("ok: {model} at {url} answered in {elapsed} ms ({said:?})"),
            );
        }
        Err(error) => {
            report.line("check", format!("failed after {elapsed} ms"));
            report.problem(format!("the check request to {url} failed: {error}"));
        }
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
    let support = tine_tools::sandbox::probe();
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
    let roots: Vec<String> = write_roots(cwd, &[], loaded, &settings, home)
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
