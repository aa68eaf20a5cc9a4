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
                path if exe.as_ref().is_some_and(|e| e.as_os_str() == path) => match perms {
                    p if p.contains('x') => "tine: code (.text)".to_owned(),
                    "r--p" => "tine: read-only data, relocations, relro".to_owned(),
                    _ => "tine: data".to_owned(),
                },
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
    parts.sort_by_key(|part| std::cmp::Reverse(part.1));
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
    if let Some(code) = CodeSplit::now() {
        let _ = writeln!(
            err,
            "[startup]   of the code: {:.2} MiB in the start-up layout (.text.hot, {:.2} MiB), {:.2} MiB outside it",
            mib(code.layout_resident),
            mib(code.layout_size),
            mib(code.outside_resident),
        );
    }
}

/// The binary's resident code, inside and outside the start-up layout (`.text.hot`, see
/// `build.rs`): code outside it that grows means the layout wants generating again.
struct CodeSplit {
    layout_resident: u64,
    layout_size: u64,
    outside_resident: u64,
}

impl CodeSplit {
    /// `None` without a layout, or where `/proc` does not tell (KiB).
    fn now() -> Option<Self> {
        use std::io::{Read as _, Seek as _, SeekFrom};
        let exe = std::env::current_exe().ok()?;
        let (offset, size) = section(&exe, ".text.hot")?;
        let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
        // The executable mapping of the binary: start, end, file offset.
        let (start, end, mapped_at) = maps.lines().find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [range, perms, file_offset, _, _, path] = fields[..] else {
                return None;
            };
            if !perms.contains('x') || std::path::Path::new(path) != exe {
                return None;
            }
            let (start, end) = range.split_once('-')?;
            Some((
                u64::from_str_radix(start, 16).ok()?,
                u64::from_str_radix(end, 16).ok()?,
                u64::from_str_radix(file_offset, 16).ok()?,
            ))
        })?;
        let layout = start + offset.checked_sub(mapped_at)?..start + offset - mapped_at + size;
        let pages = usize::try_from((end - start) / 4096).ok()?;
        let mut entries = vec![0u8; pages * 8];
        let mut pagemap = std::fs::File::open("/proc/self/pagemap").ok()?;
        pagemap.seek(SeekFrom::Start(start / 4096 * 8)).ok()?;
        pagemap.read_exact(&mut entries).ok()?;
        let mut split = Self {
            layout_resident: 0,
            layout_size: size / 1024,
            outside_resident: 0,
        };
        for (page, entry) in entries.chunks_exact(8).enumerate() {
            let entry = u64::from_le_bytes(entry.try_into().ok()?);
            if entry >> 63 == 0 {
                continue;
            }
            match layout.contains(&(start + page as u64 * 4096)) {
                true => split.layout_resident += 4,
                false => split.outside_resident += 4,
            }
        }
        Some(split)
    }
}

/// The file offset and size of section `name` of an ELF64 (little-endian) file.
fn section(path: &std::path::Path, name: &str) -> Option<(u64, u64)> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let mut header = [0u8; 64];
    file.read_exact(&mut header).ok()?;
    if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return None;
    }
    let u16_at =
        |b: &[u8], at: usize| Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?));
    let u32_at =
        |b: &[u8], at: usize| Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?));
    let u64_at =
        |b: &[u8], at: usize| Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?));
    let table = u64_at(&header, 0x28)?;
    let entry = usize::from(u16_at(&header, 0x3A)?);
    let count = usize::from(u16_at(&header, 0x3C)?);
    let names_index = usize::from(u16_at(&header, 0x3E)?);
    let mut headers = vec![0u8; entry * count];
    file.seek(SeekFrom::Start(table)).ok()?;
    file.read_exact(&mut headers).ok()?;
    let names_header = headers.get(names_index * entry..(names_index + 1) * entry)?;
    let mut names = vec![0u8; usize::try_from(u64_at(names_header, 32)?).ok()?];
    file.seek(SeekFrom::Start(u64_at(names_header, 24)?)).ok()?;
    file.read_exact(&mut names).ok()?;
    headers.chunks_exact(entry).find_map(|h| {
        let at = usize::try_from(u32_at(h, 0)?).ok()?;
        let end = at + names.get(at..)?.iter().position(|&b| b == 0)?;
        (names.get(at..end)? == name.as_bytes()).then(|| Some((u64_at(h, 24)?, u64_at(h, 32)?)))?
    })
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
