//! When a dream runs (seed 001 §16.2.4 ②, seed 003 §十): the gates, cheapest first.
//!
//! 1. Enabled: `autoDreamEnabled` (default true); the job exists only when auto memory is on
//!    and not `--bare`.
//! 2. Time: hours since the last consolidation (the lock's mtime: one `stat`) ≥
//!    `autoDreamMinHours` (default 24). Almost every turn ends here.
//! 3. Scan throttle: the session scan runs at most once per 10 minutes per process.
//! 4. Sessions: transcripts of this project touched since the last consolidation, the current
//!    session excluded, ≥ `autoDreamMinSessions` (default 5). One directory listing.
//! 5. The lock ([`ConsolidationLock`]): taken, with the time gate checked again under it, or
//!    skip.
//!
//! The settings are read from user, local, flag and managed settings, never from project
//! settings: a cloned repository must not tune (or switch on) background work.
//! Filesystem metadata and the clock go through [`DreamIo`], so tests can move time and count
//! what a gate costs.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

use tine_config::SessionId;
use tine_config::settings::{LoadedSettings, SettingsSource};

use crate::consolidation_lock::{Acquire, ConsolidationLock, age, recorded_consolidation};
use crate::error::MemoryError;

/// The fork's turn cap: consolidation reads and rewrites several files.
pub(crate) const DREAM_MAX_TURNS: u32 = 30;
/// Default of `autoDreamMinHours`.
pub const DEFAULT_DREAM_MIN_HOURS: f64 = 24.0;
/// Default of `autoDreamMinSessions`.
pub const DEFAULT_DREAM_MIN_SESSIONS: usize = 5;
/// The session scan runs at most this often per process.
pub(crate) const DREAM_SCAN_INTERVAL: Duration = Duration::from_secs(10 * 60);
/// The setting that turns auto dream on or off.
pub(crate) const DREAM_ENABLED_SETTING: &str = "autoDreamEnabled";
/// The setting for the hours between consolidations.
pub(crate) const DREAM_MIN_HOURS_SETTING: &str = "autoDreamMinHours";
/// The setting for the sessions between consolidations.
pub(crate) const DREAM_MIN_SESSIONS_SETTING: &str = "autoDreamMinSessions";

/// How auto dream behaves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DreamOptions {
    /// Whether auto dream runs at all.
    pub enabled: bool,
    /// Hours since the last consolidation before another may run.
    pub min_hours: f64,
    /// Other sessions since the last consolidation before another may run.
    pub min_sessions: usize,
    /// The fork's turn limit.
    pub max_turns: u32,
}

impl Default for DreamOptions {
    fn default() -> Self {
        Self {
            enabled: true,
            min_hours: DEFAULT_DREAM_MIN_HOURS,
            min_sessions: DEFAULT_DREAM_MIN_SESSIONS,
            max_turns: DREAM_MAX_TURNS,
        }
    }
}

impl DreamOptions {
    /// The options from settings (never project settings), with a warning for each value that
    /// was ignored, for the host to show.
    pub fn from_settings(settings: &LoadedSettings) -> (Self, Vec<String>) {
        let mut options = Self::default();
        let mut warnings = Vec::new();
        for key in [
            DREAM_ENABLED_SETTING,
            DREAM_MIN_HOURS_SETTING,
            DREAM_MIN_SESSIONS_SETTING,
        ] {
            if settings
                .layers
                .iter()
                .any(|l| l.source == SettingsSource::Project && l.raw.contains_key(key))
            {
                warnings.push(format!(
                    "`{key}` in projectSettings is ignored (a repository must not tune memory \
                     consolidation); set it in your user or local settings"
                ));
            }
            let Some((value, source)) = settings.get_excluding(key, &[SettingsSource::Project])
            else {
                continue;
            };
            let bad = |expected: &str| {
                format!(
                    "`{key}` in {} must be {expected}, not {value}; using the default",
                    source.as_str()
                )
            };
            match key {
                DREAM_ENABLED_SETTING => match value.as_bool() {
                    Some(on) => options.enabled = on,
                    None => warnings.push(bad("true or false")),
                },
                DREAM_MIN_HOURS_SETTING => match value.as_f64() {
                    Some(hours) if hours >= 0.0 && hours.is_finite() => options.min_hours = hours,
                    _ => warnings.push(bad("a number of hours >= 0")),
                },
                _ => match value.as_u64().and_then(|n| usize::try_from(n).ok()) {
                    Some(n) => options.min_sessions = n,
                    None => warnings.push(bad("a whole number of sessions >= 0")),
                },
            }
        }
        (options, warnings)
    }

    /// Whether a consolidation at `last` (none: never) is old enough at `now`.
    pub fn is_due(&self, last: Option<SystemTime>, now: SystemTime) -> bool {
        match age(last, now) {
            None => true,
            Some(age) => age.as_secs_f64() >= self.min_hours * 3_600.0,
        }
    }
}

/// What a `stat` says (the part the gates use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    /// The file's length in bytes.
    pub len: u64,
    /// When it was last modified.
    pub modified: SystemTime,
}

/// The clock and the filesystem metadata the gates read. [`SystemIo`] in production; tests
/// wrap it to move time and count calls.
pub trait DreamIo: Send + Sync {
    /// Now.
    fn now(&self) -> SystemTime;
    /// One `stat` of `path`.
    fn stat(&self, path: &Path) -> std::io::Result<FileStamp>;
    /// One listing of `dir`: the regular files in it, by name.
    fn scan_dir(&self, dir: &Path) -> std::io::Result<Vec<(String, FileStamp)>>;
}

/// The real clock and filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemIo;

impl DreamIo for SystemIo {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    fn stat(&self, path: &Path) -> std::io::Result<FileStamp> {
        let meta = std::fs::metadata(path)?;
        Ok(FileStamp {
            len: meta.len(),
            modified: meta.modified()?,
        })
    }

    fn scan_dir(&self, dir: &Path) -> std::io::Result<Vec<(String, FileStamp)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)?.flatten() {
            // A file that vanished or cannot be stat'ed is skipped.
            let Ok(meta) = entry.metadata() else { continue };
            let (true, Ok(modified), Ok(name)) = (
                meta.is_file(),
                meta.modified(),
                entry.file_name().into_string(),
            ) else {
                continue;
            };
            out.push((
                name,
                FileStamp {
                    len: meta.len(),
                    modified,
                },
            ));
        }
        Ok(out)
    }
}

/// When the session scan last ran. [`ScanThrottle::process`] is the one a host uses (the
/// throttle is per process, whatever the number of sessions in it); tests make their own.
#[derive(Debug, Clone, Default)]
pub struct ScanThrottle {
    last: Arc<Mutex<Option<SystemTime>>>,
}

impl ScanThrottle {
    /// A throttle that lets the first scan through.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process's throttle for the memory directory `dir`: one per project and process,
    /// whatever the number of sessions of that project in it (sessions of other projects in
    /// the same process scan their own transcripts and are not held back by this one).
    pub fn process(dir: &std::path::Path) -> Self {
        static PROCESS: OnceLock<
            Mutex<std::collections::HashMap<std::path::PathBuf, ScanThrottle>>,
        > = OnceLock::new();
        let mut map = PROCESS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        map.entry(dir.to_path_buf()).or_default().clone()
    }

    /// Whether a scan may run at `now`; if so, it counts as run.
    pub fn try_start(&self, now: SystemTime) -> bool {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let open = match *last {
            None => true,
            // A clock that went backwards does not hold the scan back.
            Some(at) => now
                .duration_since(at)
                .map_or(true, |d| d >= DREAM_SCAN_INTERVAL),
        };
        if open {
            *last = Some(now);
        }
        open
    }
}

/// What the gates are asked about.
pub struct Gates<'a> {
    /// The memory directory.
    pub dir: &'a Path,
    /// This project's transcripts (`<home>/projects/<project>/`).
    pub transcripts: &'a Path,
    /// The session asking, which does not count.
    pub current_session: &'a str,
    /// The dream's settings.
    pub options: &'a DreamOptions,
    /// The clock and the filesystem.
    pub io: &'a dyn DreamIo,
    /// The process's scan throttle.
    pub throttle: &'a ScanThrottle,
}

/// Everything a dream needs once the gates passed: the held lock and what to review.
#[derive(Debug)]
pub struct Ready {
    /// The consolidation lock, held.
    pub lock: ConsolidationLock,
    /// The sessions since the last consolidation, newest first.
    pub sessions: Vec<String>,
}

/// Which gate stopped the dream, or the lock to dream under.
#[derive(Debug)]
pub enum GateOutcome {
    /// Auto dream is off.
    Disabled,
    /// The last consolidation is too recent.
    TooSoon {
        /// Hours since the last consolidation.
        hours_since: f64,
    },
    /// The sessions were scanned too recently in this process.
    Throttled,
    /// Too few sessions since the last consolidation.
    TooFewSessions {
        /// Sessions found.
        found: usize,
        /// Sessions needed.
        needed: usize,
    },
    /// Another process (or session) is consolidating.
    Locked,
    /// Another consolidation finished just before the lock was taken.
    Recent,
    /// Every gate passed: dream now, under this lock.
    Ready(Box<Ready>),
}

impl GateOutcome {
    /// One line for logs and `tine memory dream`.
    pub fn describe(&self) -> String {
        match self {
            Self::Disabled => "auto dream is off".to_owned(),
            Self::TooSoon { hours_since } => {
                format!("{hours_since:.1} h since the last consolidation")
            }
            Self::Throttled => "the session scan ran less than 10 minutes ago".to_owned(),
            Self::TooFewSessions { found, needed } => {
                format!("{found} session(s) since the last consolidation, {needed} needed")
            }
            Self::Locked => "another session is consolidating".to_owned(),
            Self::Recent => "another session just consolidated".to_owned(),
            Self::Ready(ready) => format!("ready: {} session(s)", ready.sessions.len()),
        }
    }
}

impl Gates<'_> {
    /// The last consolidation: one `stat` of the lock (none when there is no lock yet).
    pub fn last_consolidation(&self) -> Result<Option<SystemTime>, MemoryError> {
        let path = ConsolidationLock::path(self.dir);
        match self.io.stat(&path) {
            Ok(stamp) => Ok(recorded_consolidation(stamp.len, stamp.modified)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(MemoryError::io("cannot read the dream lock", path, e)),
        }
    }

    /// Runs the gates in order; the first that fails ends it.
    pub fn check(&self) -> Result<GateOutcome, MemoryError> {
        if !self.options.enabled {
            return Ok(GateOutcome::Disabled);
        }
        let now = self.io.now();
        let last = self.last_consolidation()?;
        if !self.options.is_due(last, now) {
            let hours_since = age(last, now).map_or(0.0, |a| a.as_secs_f64() / 3_600.0);
            return Ok(GateOutcome::TooSoon { hours_since });
        }
        if !self.throttle.try_start(now) {
            return Ok(GateOutcome::Throttled);
        }
        let sessions = self.sessions_since(last)?;
        if sessions.len() < self.options.min_sessions {
            return Ok(GateOutcome::TooFewSessions {
                found: sessions.len(),
                needed: self.options.min_sessions,
            });
        }
        self.lock(sessions, |prior| self.options.is_due(prior, self.io.now()))
    }

    /// No time or session gate (`tine memory dream`): the sessions since the last
    /// consolidation are listed for the prompt, and the lock is still taken.
    pub fn force(&self) -> Result<GateOutcome, MemoryError> {
        let last = self.last_consolidation()?;
        let sessions = self.sessions_since(last)?;
        self.lock(sessions, |_| true)
    }

    fn lock(
        &self,
        sessions: Vec<String>,
        due: impl Fn(Option<SystemTime>) -> bool,
    ) -> Result<GateOutcome, MemoryError> {
        Ok(match ConsolidationLock::try_acquire(self.dir, due)? {
            Acquire::Acquired(lock) => GateOutcome::Ready(Box::new(Ready { lock, sessions })),
            Acquire::Held => GateOutcome::Locked,
            Acquire::Recent { .. } => GateOutcome::Recent,
        })
    }

    /// This project's sessions whose transcripts changed after `last`, the current one
    /// excluded, newest first: one listing of the transcripts directory.
    pub fn sessions_since(&self, last: Option<SystemTime>) -> Result<Vec<String>, MemoryError> {
        let entries = match self.io.scan_dir(self.transcripts) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(MemoryError::io(
                    "cannot list the transcripts in",
                    self.transcripts,
                    e,
                ));
            }
        };
        let mut sessions: Vec<(SystemTime, String)> = entries
            .into_iter()
            .filter(|(_, stamp)| last.is_none_or(|last| stamp.modified > last))
            .filter_map(|(name, stamp)| {
                let id = name.strip_suffix(".jsonl")?;
                (SessionId::parse(id).is_ok() && id != self.current_session)
                    .then(|| (stamp.modified, id.to_owned()))
            })
            .collect();
        sessions.sort_by(|a, b| b.cmp(a));
        Ok(sessions.into_iter().map(|(_, id)| id).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch project and home: `user` is the home's `settings.json`, `project` a file of
    /// the project's `.tine/` (its name, its text).
    fn project_and_home(
        user: &str,
        project: (&str, &str),
    ) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("project");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(cwd.join(".tine")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("settings.json"), user).unwrap();
        std::fs::write(cwd.join(".tine").join(project.0), project.1).unwrap();
        (tmp, cwd, home)
    }

    #[test]
    fn settings_come_from_everywhere_but_the_project() {
        use tine_config::settings::{self, SettingsPaths};
        let user =
            r#"{"autoDreamMinHours": 2.5, "autoDreamEnabled": false, "autoDreamMinSessions": -1}"#;
        let project =
            r#"{"autoDreamMinHours": 0, "autoDreamMinSessions": 0, "autoDreamEnabled": true}"#;
        let (_tmp, cwd, home) = project_and_home(user, ("settings.json", project));
        let loaded = settings::load(&SettingsPaths::new(&cwd, &home));
        let (options, warnings) = DreamOptions::from_settings(&loaded);
        assert!(!options.enabled);
        assert_eq!(options.min_hours, 2.5);
        assert_eq!(options.min_sessions, DEFAULT_DREAM_MIN_SESSIONS);
        assert_eq!(
            warnings
                .iter()
                .filter(|w| w.contains("projectSettings is ignored"))
                .count(),
            3,
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("autoDreamMinSessions") && w.contains("userSettings")),
            "{warnings:?}"
        );
    }

    #[test]
    fn local_flag_and_managed_settings_tune_the_gates_in_their_precedence() {
        use tine_config::settings::{self, FlagSettings, SettingsPaths};
        let (tmp, cwd, home) = project_and_home(
            r#"{"autoDreamMinHours": 1, "autoDreamMinSessions": 1, "autoDreamEnabled": true}"#,
            (
                "settings.local.json",
                r#"{"autoDreamMinHours": 2, "autoDreamMinSessions": 7}"#,
            ),
        );
        let managed = tmp.path().join("managed.json");
        std::fs::write(&managed, r#"{"autoDreamEnabled": false}"#).unwrap();
        let paths = SettingsPaths::new(&cwd, &home)
            .with_flag(FlagSettings::Inline(r#"{"autoDreamMinHours": 3}"#.into()))
            .with_managed(&managed);
        let (options, warnings) = DreamOptions::from_settings(&settings::load(&paths));
        assert!(warnings.is_empty(), "{warnings:?}");
        // managed > flag > local > user, key by key.
        assert!(!options.enabled, "managed");
        assert_eq!(options.min_hours, 3.0, "flag");
        assert_eq!(options.min_sessions, 7, "local");
    }

    #[test]
    fn the_throttle_opens_every_ten_minutes() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let throttle = ScanThrottle::new();
        assert!(throttle.try_start(t0));
        assert!(!throttle.try_start(t0 + Duration::from_secs(599)));
        assert!(throttle.try_start(t0 + Duration::from_secs(600)));
        assert!(!throttle.try_start(t0 + Duration::from_secs(601)));
        // backwards
        assert!(throttle.try_start(t0));
    }

    #[test]
    fn due_after_min_hours_or_never_consolidated() {
        let options = DreamOptions::default();
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(10_000_000);
        assert!(options.is_due(None, now));
        assert!(!options.is_due(Some(now - Duration::from_secs(23 * 3600)), now));
        assert!(options.is_due(Some(now - Duration::from_secs(24 * 3600)), now));
    }
}
