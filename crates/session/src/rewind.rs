//! Checkpoints and rewind for one conversation: the prompts it has sent (their transcript
//! uuids, for a conversation rewind and the Agent SDK's `rewind_files`), and, with
//! checkpoints on, a snapshot of the project (tine-checkpoints' shadow git store) taken before
//! each prompt's first call that can change files and again when its turn ends, recorded in
//! the session's checkpoint file so a later process can rewind too. Turns that only read take
//! none.
//!
//! The store is opened the first time it is needed (a conversation that calls no tool, such
//! as `tine -p hello`, runs no git at all). A first snapshot of the project (seconds on a
//! large one; the prompt's own is then quick) runs in the background from the session's
//! first tool call, or from the start of an interactive session, while a person types.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tine_checkpoints::{CheckpointConfig, CheckpointError, Checkpoints, SessionCheckpoints};
use tine_tools::Tool;

use crate::emit::Emitter;
use crate::protocol::{Notice, OpId, RewindPoint, RewindTarget, SessionEvent};

/// The tools whose calls never change the project's files (no checkpoint before them).
const NEVER_WRITE: [&str; 11] = [
    "TodoWrite",
    "ExitPlanMode",
    "WebFetch",
    "WebSearch",
    "BashOutput",
    "KillShell",
    "TaskOutput",
    "TaskStop",
    "Skill",
    "StructuredOutput",
    "ToolSearch",
];

/// One prompt of the conversation.
#[derive(Debug, Clone)]
struct Prompt {
    number: usize,
    op: Option<OpId>,
    /// Its user message's transcript uuid, and the record before it.
    uuid: Option<String>,
    parent: Option<String>,
    text: String,
}

/// The turn running now.
#[derive(Debug)]
struct Running {
    number: usize,
    /// Whether its checkpoint was taken.
    taken: bool,
}

struct State {
    prompts: Vec<Prompt>,
    running: Option<Running>,
    records: SessionCheckpoints,
    /// What the last snapshot left out (over the size cap, nested repositories).
    skipped: Vec<PathBuf>,
}

/// What a code rewind found.
#[derive(Debug)]
pub(crate) enum RewindRefusal {
    /// Files both the session and someone else changed: nothing was written.
    Conflicts(Vec<PathBuf>),
    /// Why it cannot be done, for the person.
    Failed(String),
}

/// A conversation's prompts and checkpoints.
pub(crate) struct Rewinds {
    /// `None`: checkpoints are off (`--bare`, `"enabled": false`).
    config: Option<CheckpointConfig>,
    project: PathBuf,
    store_dir: PathBuf,
    /// The store, once opened (`None` inside: it could not be, said once as a notice).
    store: OnceLock<Option<Checkpoints>>,
    /// Whether the background first snapshot was started.
    prewarmed: AtomicBool,
    /// Where a store that cannot be opened is reported.
    events: Option<Emitter>,
    state: Mutex<State>,
    /// Held while a snapshot is taken: the background one and a prompt's never run at once
    /// (they share the shadow index).
    snapshotting: Arc<Mutex<()>>,
}

impl Rewinds {
    /// The rewinds of session `session` in `project`, its checkpoints kept in `store_dir`
    /// (`None` config: checkpoints off), and a warning when the session's records cannot be
    /// read. Nothing runs git here; `prewarm` starts the first snapshot in the background at
    /// once (an interactive session, where a person types meanwhile).
    pub(crate) fn open(
        store_dir: &Path,
        project: &Path,
        session: &str,
        config: Option<CheckpointConfig>,
        events: Option<Emitter>,
        prewarm: bool,
    ) -> (Arc<Self>, Option<String>) {
        let mut warning = None;
        let records = match SessionCheckpoints::load(store_dir, session) {
            Ok(Some(records)) => records,
            Ok(None) => SessionCheckpoints::new(session),
            Err(error) => {
                warning = Some(format!(
                    "the session's checkpoints could not be read: {error}"
                ));
                SessionCheckpoints::new(session)
            }
        };
        let rewinds = Arc::new(Self {
            config,
            project: project.to_path_buf(),
            store_dir: store_dir.to_path_buf(),
            store: OnceLock::new(),
            prewarmed: AtomicBool::new(false),
            events,
            state: Mutex::new(State {
                prompts: Vec::new(),
                running: None,
                records,
                skipped: Vec::new(),
            }),
            snapshotting: Arc::new(Mutex::new(())),
        });
        if prewarm {
            rewinds.prewarm();
        }
        (rewinds, warning)
    }

    /// The store, opened (created) on first use; `None` when checkpoints are off or it cannot
    /// be opened (said once). Runs git: call it off the async runtime.
    fn store(&self) -> Option<&Checkpoints> {
        let config = self.config?;
        self.store
            .get_or_init(
                || match Checkpoints::open(&self.store_dir, &self.project, config) {
                    Ok(store) => Some(store),
                    Err(error) => {
                        let text = format!("checkpoints are off for this session: {error}");
                        tracing::warn!("{text}");
                        if let Some(events) = &self.events {
                            events.emit_free(SessionEvent::Notice(Notice::warning(text)));
                        }
                        None
                    }
                },
            )
            .as_ref()
    }

    /// Whether checkpoints are on (and the store, if tried, opened).
    fn enabled(&self) -> bool {
        self.config.is_some() && self.store.get().is_none_or(Option::is_some)
    }

    /// Starts, once, the first snapshot of the project and the pruning of old sessions'
    /// checkpoints in the background, off the start's path.
    fn prewarm(self: &Arc<Self>) {
        if !self.enabled() || self.prewarmed.swap(true, Ordering::SeqCst) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let this = Arc::clone(self);
        runtime.spawn_blocking(move || {
            let _held = this
                .snapshotting
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let Some(store) = this.store() else { return };
            if let Err(error) = store.snapshot() {
                tracing::warn!(%error, "the project could not be snapshotted");
            }
            if let Some(config) = this.config
                && let Err(error) = store.prune(config.keep_days, config.max_bytes)
            {
                tracing::warn!(%error, "old checkpoints could not be pruned");
            }
        });
    }

    /// A resumed conversation's prompts, oldest first: they are prompts 1, 2, ... of it.
    pub(crate) fn seed(&self, prompts: Vec<crate::history::ChainPrompt>) {
        let mut state = self.state();
        state.prompts = prompts
            .into_iter()
            .enumerate()
            .map(|(index, prompt)| Prompt {
                number: index + 1,
                op: None,
                uuid: Some(prompt.uuid),
                parent: prompt.parent,
                text: prompt.text.chars().take(200).collect(),
            })
            .collect();
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A prompt's turn starts (`op`: the op that sent it, when a front end did).
    pub(crate) fn begin(&self, op: Option<OpId>, text: &str) {
        let mut state = self.state();
        let number = state.prompts.last().map_or(1, |p| p.number + 1);
        state.prompts.push(Prompt {
            number,
            op,
            uuid: None,
            parent: None,
            text: text.chars().take(200).collect(),
        });
        state.running = Some(Running {
            number,
            taken: false,
        });
    }

    /// A call the permission engine let through: before the turn's first one that can change
    /// files, the project's state is snapshotted.
    pub(crate) async fn before(self: &Arc<Self>, tool: &dyn Tool, input: &serde_json::Value) {
        // A conversation that calls tools may soon change files: the first snapshot starts
        // now, so the one before that change finds the project recorded.
        self.prewarm();
        if !self.enabled() || NEVER_WRITE.contains(&tool.name()) || tool.is_read_only(input) {
            return;
        }
        let number = {
            let mut state = self.state();
            match &mut state.running {
                Some(running) if !running.taken => {
                    running.taken = true;
                    running.number
                }
                _ => return,
            }
        };
        let this = Arc::clone(self);
        match tokio::task::spawn_blocking(move || this.snapshot_before(number)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, "no checkpoint before prompt {number}"),
            Err(error) => tracing::warn!(%error, "no checkpoint before prompt {number}"),
        }
    }

    fn snapshot_before(&self, number: usize) -> Result<(), CheckpointError> {
        let snapshot = {
            let _held = self
                .snapshotting
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let Some(store) = self.store() else {
                return Ok(());
            };
            store.snapshot()?
        };
        let mut state = self.state();
        note_skipped(&mut state, &snapshot.skipped);
        let text = state
            .prompts
            .iter()
            .find(|p| p.number == number)
            .map(|p| p.text.clone())
            .unwrap_or_default();
        state.records.record_before(number, "", &text, snapshot);
        state.records.save(&self.store_dir)
    }

    /// The prompt's turn ended: its uuids (from the engine) are kept, and a turn that took a
    /// checkpoint snapshots the project again.
    pub(crate) async fn end(self: &Arc<Self>, prompt: Option<(String, Option<String>)>) {
        let running = {
            let mut state = self.state();
            let running = state.running.take();
            if let (Some(running), Some((uuid, parent))) = (&running, prompt) {
                if let Some(p) = state
                    .prompts
                    .iter_mut()
                    .find(|p| p.number == running.number)
                {
                    p.uuid = Some(uuid.clone());
                    p.parent = parent;
                }
                if let Some(record) = state
                    .records
                    .prompts
                    .iter_mut()
                    .find(|r| r.prompt == running.number)
                {
                    record.uuid = uuid;
                }
            }
            running
        };
        let Some(running) = running.filter(|r| r.taken) else {
            return;
        };
        let this = Arc::clone(self);
        let ended = tokio::task::spawn_blocking(move || -> Result<(), CheckpointError> {
            let snapshot = {
                let _held = this
                    .snapshotting
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let Some(store) = this.store() else {
                    return Ok(());
                };
                store.snapshot()?
            };
            let mut state = this.state();
            note_skipped(&mut state, &snapshot.skipped);
            state.records.record_after(running.number, snapshot);
            state.records.save(&this.store_dir)
        })
        .await;
        if let Ok(Err(error)) = ended {
            tracing::warn!(%error, "no checkpoint after prompt {}", running.number);
        }
    }

    /// What the last snapshot left out (files over the size cap, nested repositories): a
    /// rewind does not put them back.
    pub(crate) fn skipped(&self) -> Vec<PathBuf> {
        self.state().skipped.clone()
    }

    /// The prompt `target` names, or why there is none.
    pub(crate) fn resolve(&self, target: &RewindTarget) -> Result<usize, String> {
        let state = self.state();
        let found = match target {
            RewindTarget::Prompt(n) => state.prompts.iter().find(|p| p.number == *n),
            RewindTarget::Turn(op) => state.prompts.iter().find(|p| p.op == Some(*op)),
            RewindTarget::Message(uuid) => state
                .prompts
                .iter()
                .find(|p| p.uuid.as_deref() == Some(uuid.as_str())),
        };
        match (found, target) {
            (Some(prompt), _) => Ok(prompt.number),
            (None, RewindTarget::Prompt(n)) => Err(format!(
                "there is no prompt {n} to rewind to: this conversation has {} (see /rewind)",
                state.prompts.len()
            )),
            (None, RewindTarget::Turn(op)) => {
                Err(format!("{op} sent no prompt of this conversation"))
            }
            (None, RewindTarget::Message(uuid)) => Err(format!(
                "no prompt of this conversation has the message id {uuid}"
            )),
        }
    }

    /// The prompt's text and the transcript record the conversation goes on from when it is
    /// rewound to before it.
    pub(crate) fn prompt(&self, number: usize) -> Option<(String, Option<String>)> {
        let state = self.state();
        state
            .prompts
            .iter()
            .find(|p| p.number == number)
            .map(|p| (p.text.clone(), p.parent.clone()))
    }

    /// The prompts, oldest first, with what each (and the ones after it) changed.
    pub(crate) fn points(&self) -> Vec<RewindPoint> {
        let state = self.state();
        state
            .prompts
            .iter()
            .map(|prompt| {
                let record = state
                    .records
                    .prompts
                    .iter()
                    .find(|r| r.prompt == prompt.number);
                // Only a prompt with a record needs the store (opened by then, or by the
                // process that took the record).
                let store = record.and_then(|_| self.store());
                let files = match store {
                    Some(store) => plan(store, &state.records, prompt.number)
                        .map(|plan| plan.map(|p| files_of(&p)).unwrap_or_default())
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                RewindPoint {
                    prompt: prompt.number,
                    text: prompt.text.clone(),
                    at: record.map_or(0, |r| r.at),
                    files,
                    code: store.is_some(),
                }
            })
            .collect()
    }

    /// Puts back the files the session changed since before prompt `number` (nothing when
    /// its turn and the later ones changed none): what was restored and removed.
    pub(crate) async fn rewind_code(
        self: &Arc<Self>,
        number: usize,
        force: bool,
    ) -> Result<(Vec<PathBuf>, Vec<PathBuf>), RewindRefusal> {
        if self.config.is_none() {
            return Err(RewindRefusal::Failed(
                "checkpoints are off for this session (--bare, or \"checkpoints\": {\"enabled\": false}): its files cannot go back".to_owned(),
            ));
        }
        let this = Arc::clone(self);
        let done = tokio::task::spawn_blocking(move || {
            let records = this.state().records.clone();
            let Some(store) = this.store() else {
                return Err(RewindRefusal::Failed(
                    "checkpoints are off for this session: the store cannot be opened (see the warning)".to_owned(),
                ));
            };
            let plan = match plan(store, &records, number) {
                Ok(Some(plan)) => plan,
                Ok(None) => return Ok((Vec::new(), Vec::new())),
                Err(error) => return Err(RewindRefusal::Failed(error.to_string())),
            };
            match store.apply(&plan, force) {
                Ok(report) => {
                    // The rewound turns are gone: a later plan must not take the rewind itself
                    // for someone else's change.
                    this.forget_records_from(number);
                    Ok((report.restored, report.removed))
                }
                Err(CheckpointError::Conflicts(files)) => Err(RewindRefusal::Conflicts(files)),
                Err(error) => Err(RewindRefusal::Failed(error.to_string())),
            }
        })
        .await;
        done.unwrap_or_else(|error| {
            Err(RewindRefusal::Failed(format!(
                "the rewind stopped: {error}"
            )))
        })
    }

    /// The checkpoint records from prompt `number` on are dropped (their turns were rewound).
    fn forget_records_from(&self, number: usize) {
        let mut state = self.state();
        state.records.prompts.retain(|r| r.prompt < number);
        if let Err(error) = state.records.save(&self.store_dir) {
            tracing::warn!(%error, "the session's checkpoints could not be saved");
        }
    }

    /// After a conversation rewind to before prompt `number`: it and the later ones are gone
    /// from this conversation (their records too; the transcript keeps the old branch).
    pub(crate) fn forget_from(&self, number: usize) {
        let mut state = self.state();
        state.prompts.retain(|p| p.number < number);
        state.records.prompts.retain(|r| r.prompt < number);
        if let Err(error) = state.records.save(&self.store_dir) {
            tracing::warn!(%error, "the session's checkpoints could not be saved");
        }
    }
}

/// The checkpoints' settings (`"checkpoints": {"enabled", "maxBytes", "keepDays",
/// "maxFileBytes"}`); `None`: off (`--bare`, `"enabled": false`).
pub(crate) fn config(
    settings: &tine_config::settings::LoadedSettings,
    bare: bool,
) -> Option<CheckpointConfig> {
    let section = settings.get("checkpoints").map(|(value, _)| value.clone());
    let field = |name: &str| section.as_ref().and_then(|s| s.get(name));
    if bare || field("enabled").and_then(serde_json::Value::as_bool) == Some(false) {
        return None;
    }
    let mut config = CheckpointConfig::default();
    if let Some(bytes) = field("maxBytes").and_then(serde_json::Value::as_u64) {
        config.max_bytes = bytes;
    }
    if let Some(days) = field("keepDays").and_then(serde_json::Value::as_u64) {
        config.keep_days = u32::try_from(days).unwrap_or(u32::MAX);
    }
    if let Some(bytes) = field("maxFileBytes").and_then(serde_json::Value::as_u64) {
        config.max_file_bytes = bytes;
    }
    Some(config)
}

/// What going back to before prompt `number` would do (`None`: nothing changed since).
pub(crate) fn plan(
    store: &Checkpoints,
    records: &SessionCheckpoints,
    number: usize,
) -> Result<Option<tine_checkpoints::RewindPlan>, CheckpointError> {
    let Some(from) = records.prompts.iter().position(|r| r.prompt >= number) else {
        return Ok(None);
    };
    let turns = store.turns(records)?;
    store.plan_rewind(&turns, from).map(Some)
}

/// The files a plan writes back or removes.
fn files_of(plan: &tine_checkpoints::RewindPlan) -> Vec<PathBuf> {
    plan.restore.iter().chain(&plan.remove).cloned().collect()
}

fn note_skipped(state: &mut State, skipped: &[PathBuf]) {
    if !skipped.is_empty() && state.skipped != skipped {
        tracing::warn!(
            ?skipped,
            "left out of the checkpoint (over the size cap, or nested repositories)"
        );
    }
    state.skipped = skipped.to_vec();
}

/// `/rewind`'s arguments: none (list), or `N [both|code|conversation] [--force]`.
pub(crate) fn parse_command(
    args: &str,
) -> Result<Option<(usize, crate::protocol::RewindScope, bool)>, String> {
    use crate::protocol::RewindScope;
    let words: Vec<&str> = args.split_whitespace().collect();
    let Some((first, rest)) = words.split_first() else {
        return Ok(None);
    };
    let usage = "use /rewind to list the prompts, or /rewind N [both|code|conversation] [--force]";
    let prompt: usize = first
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("`{first}` is not a prompt number: {usage}"))?;
    let mut scope = RewindScope::Both;
    let mut force = false;
    for word in rest {
        match *word {
            "both" => scope = RewindScope::Both,
            "code" => scope = RewindScope::Code,
            "conversation" | "chat" => scope = RewindScope::Conversation,
            "--force" => force = true,
            other => return Err(format!("`{other}`: {usage}")),
        }
    }
    Ok(Some((prompt, scope, force)))
}

/// The prompts a rewind can go back to, for people.
pub(crate) fn describe(points: &[RewindPoint]) -> String {
    if points.is_empty() {
        return "Nothing to rewind yet: this conversation has no prompts.".to_owned();
    }
    let mut out =
        String::from("Rewind to before a prompt with /rewind N [both|code|conversation]:\n");
    for point in points {
        let first = point.text.lines().next().unwrap_or_default();
        let files = match (point.code, point.files.len()) {
            (false, _) => "no file changes".to_owned(),
            (true, 0) => "no files changed since".to_owned(),
            (true, 1) => "1 file changed since".to_owned(),
            (true, n) => format!("{n} files changed since"),
        };
        out.push_str(&format!("  {}. {first}  ({files})\n", point.prompt));
    }
    out.trim_end().to_owned()
}

/// A code rewind refused for conflicts, for people.
pub(crate) fn conflicts_text(prompt: usize, files: &[PathBuf]) -> String {
    let list: Vec<String> = files.iter().map(|f| format!("  {}", f.display())).collect();
    format!(
        "Nothing was rewound: the session changed these files and so did someone else since; \
         /rewind {prompt} code --force puts them back anyway:\n{}",
        list.join("\n")
    )
}

/// What a rewind did, for people.
pub(crate) fn report_text(report: &crate::protocol::RewindReport) -> String {
    use crate::protocol::RewindScope;
    let what = match report.scope {
        RewindScope::Both => "the code and the conversation",
        RewindScope::Code => "the code",
        RewindScope::Conversation => "the conversation",
    };
    let mut out = format!("Rewound {what} to before prompt {}.", report.prompt);
    for path in &report.restored {
        out.push_str(&format!("\n  restored {}", path.display()));
    }
    for path in &report.removed {
        out.push_str(&format!("\n  removed {}", path.display()));
    }
    out
}
