//! `TINE_PROFILE_STARTUP=1`: each phase of a run on stderr, from `main` to the exit: its time,
//! and the resident set when it ended (the binary's and libraries' pages, anonymous memory,
//! threads); at the exit, where the resident pages are (`/proc/self/smaps`, by mapping) and the
//! peak. The session's own stages (`tine_session`: ground, policy, toolset, ..., drained)
//! arrive as `tracing` events of target `tine_startup`, caught by a layer installed only in
//! this mode (so `--verbose`'s file log is off while profiling).

use std::io::Write as _;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Instant;

/// The target of the session's stage events.
const TARGET: &str = "tine_startup";

struct Clock {
    start: Instant,
    last: Instant,
}

static CLOCK: OnceLock<Mutex<Clock>> = OnceLock::new();

/// The phases of one run (a no-op unless `TINE_PROFILE_STARTUP` is set).
pub(crate) struct StartupProfile {
    enabled: bool,
}

impl StartupProfile {
    pub(crate) fn from_env() -> Self {
        let enabled =
            std::env::var_os("TINE_PROFILE_STARTUP").is_some_and(|v| v != "0" && !v.is_empty());
        if enabled {
            let now = Instant::now();
            let _ = CLOCK.set(Mutex::new(Clock {
                start: now,
                last: now,
            }));
            install_layer();
        }
        Self { enabled }
    }

    /// Ends the phase called `name`.
    pub(crate) fn mark(&mut self, name: &str) {
        if self.enabled {
            mark(name);
        }
    }

    /// The last word: where the resident pages are, and the peak.
    pub(crate) fn finish(&mut self) {
        if self.enabled {
            mark("exit");
            resident_breakdown();
        }
    }
}

fn mark(name: &str) {
    let Some(clock) = CLOCK.get() else { return };
    let mut clock = clock.lock().unwrap_or_else(PoisonError::into_inner);
    let now = Instant::now();
    let rss = Resident::now();
    // Never a panic for a closed stderr: this runs inside the session's tasks too.
    let _ = writeln!(
        std::io::stderr(),
        "[startup] {name:<22} {:>8.3} ms  (total {:>8.3} ms)  rss {:>6.2} MiB (file {:>5.2}, anon {:>5.2}) threads {}",
        (now - clock.last).as_secs_f64() * 1e3,
        (now - clock.start).as_secs_f64() * 1e3,
        mib(rss.file + rss.anon),
        mib(rss.file),
        mib(rss.anon),
        rss.threads,
    );
    clock.last = now;
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The resident set now, from `/proc/self/status` (KiB).
#[derive(Default)]
struct Resident {
    file: u64,
    anon: u64,
    peak: u64,
    threads: u64,
}

impl Resident {
    fn now() -> Self {
        let mut out = Self::default();
        let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
            return out;
        };
        for line in status.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let number = || {
                value
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            };
            match key {
                "RssFile" | "RssShmem" => out.file += number(),
                "RssAnon" => out.anon = number(),
                "VmHWM" => out.peak = number(),
                "Threads" => out.threads = number(),
                _ => {}
            }
        }
        out
    }
}

/// Where the resident pages are: the binary's segments, each library, the heap, the stacks
/// and the rest of the anonymous memory, from `/proc/self/smaps`.
fn resident_breakdown() {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return;
    };
    let exe = std::env::current_exe().ok();
    let mut parts: Vec<(String, u64)> = Vec::new();
    let mut current = String::new();
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if first.contains('-') && first.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            let perms = fields.next().unwrap_or_default();
            let path = fields.nth(3).unwrap_or_default();
            current = match path {
                "" => "anonymous (thread stacks, malloc arenas)".to_owned(),
                path if exe.as_ref().is_some_and(|e| e.as_os_str() == path) => {
                    match perms {
                        p if p.contains('x') => "tine: code (.text)".to_owned(),
                        "r--p" => "tine: read-only data, relocations, relro".to_owned(),
                        _ => "tine: data".to_owned(),
                    }
                }
                path if path.starts_with('/') => path
                    .rsplit('/')
                    .next()
                    .map_or_else(|| path.to_owned(), str::to_owned),
                other => other.to_owned(),
            };
        } else if first == "Rss:" {
            let kib: u64 = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            match parts.iter_mut().find(|(name, _)| *name == current) {
                Some((_, total)) => *total += kib,
                None => parts.push((current.clone(), kib)),
            }
        }
    }
    parts.sort_by(|a, b| b.1.cmp(&a.1));
    let now = Resident::now();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "[startup] resident at exit {:.2} MiB (peak {:.2} MiB):",
        mib(now.file + now.anon),
        mib(now.peak)
    );
    for (name, kib) in parts.iter().filter(|(_, kib)| *kib >= 64) {
        let _ = writeln!(err, "[startup]   {:>6.2} MiB  {name}", mib(*kib));
    }
}

/// Catches the session's stage events (`tracing`, target `tine_startup`, field `stage`).
fn install_layer() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    let layer = StageLayer.with_filter(tracing_subscriber::filter::filter_fn(|meta| {
        meta.target() == TARGET
    }));
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer));
}

struct StageLayer;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for StageLayer {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        struct Stage(String);
        impl tracing::field::Visit for Stage {
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                if field.name() == "stage" {
                    self.0 = value.to_owned();
                }
            }
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "stage" {
                    self.0 = format!("{value:?}");
                }
            }
        }
        let mut stage = Stage(String::new());
        event.record(&mut stage);
        mark(&format!("  {}", stage.0));
    }
}
