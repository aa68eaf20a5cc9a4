//! `QueryEngine`: the session. It holds what lives across turns (seed 003 §三): the messages,
//! total usage and cost, permission denials, the file-state cache (inside the tool context),
//! the cancellation token, the session id and the transcript. Each [`QueryEngine::submit`] runs
//! one turn of [`crate::query()`] and persists every message as it completes (`turn`).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tine_api_client::{
    ContentBlock, Message, MessageContent, ModelClient, ThinkingConfig, ToolArray, Usage,
};
use tine_tools::{Tool, ToolContext};
use tokio_util::sync::CancellationToken;

use crate::hooks::Hooks;
use crate::params::{PostSampling, RequestObserver};
use crate::plug::{CanUseTool, Compactor, PermissionPrompter, RequestMonitor, StopHooks};
use crate::request::{RequestTemplate, system_prompt_blocks};
use crate::stuck::RepeatedFailureHandler;
use crate::transcript::{
    TranscriptAnnotator, TranscriptError, TranscriptRecord, TranscriptWarning, TranscriptWriter,
    WriterOptions, load_session_at,
};
use crate::transition::Terminal;
use tine_config::{SessionId, transcript_path};

mod turn;

/// Everything a session is made from.
#[derive(Clone)]
pub struct EngineConfig {
    /// The model client every request goes through.
    pub client: Arc<dyn ModelClient>,
    /// The model asked.
    pub model: String,
    /// The working directory (tools resolve paths against it).
    pub cwd: PathBuf,
    /// `TINE_HOME` (transcripts live under it).
    pub home: PathBuf,
    /// The system prompt, rendered once for the session (its bytes never change).
    pub system_prompt: Arc<str>,
    /// Instruction files etc., put before the first prompt of a new session.
    pub user_context: Option<Arc<str>>,
    /// The tools behind the definitions.
    pub tools: Arc<[Arc<dyn Tool>]>,
    /// The tool array as serialized once for the session.
    pub tool_definitions: ToolArray,
    /// Extended thinking, when on.
    pub thinking: Option<ThinkingConfig>,
    /// Requests per turn at most (`None`: no cap).
    pub max_turns: Option<u32>,
    /// Judges every tool call.
    pub can_use_tool: Arc<dyn CanUseTool>,
    /// Asks a person (TUI); None turns asks into denials (headless).
    pub prompter: Option<Arc<dyn PermissionPrompter>>,
    /// The session's tool context, when the host made it first (to hand it to forks); else a
    /// fresh one rooted at `cwd`.
    pub tool_context: Option<ToolContext>,
    /// Run when a turn ends without tool calls (background jobs, Stop hooks).
    pub stop_hooks: Option<Arc<dyn StopHooks>>,
    /// The user's command hooks; the loop runs PreToolUse and PostToolUse (the host runs
    /// UserPromptSubmit, SessionStart and SessionEnd through the same value).
    pub hooks: Option<Hooks>,
    /// Compacts the history when it grows too long (and on `compact_now`).
    pub compactor: Option<Arc<dyn Compactor>>,
    /// Hooks run after each reply is sampled.
    pub post_sampling: Option<PostSampling>,
    /// Sees every request just before it is sent.
    pub on_request: Option<RequestObserver>,
    /// Sees every request and its usage; may annotate the transcript.
    pub monitor: Option<Arc<dyn RequestMonitor>>,
    /// Write the transcript (off for `--no-session-persistence`-like uses and some tests).
    pub persist: bool,
}

/// A refused tool call, kept for the session (and reported by `-p --output-format json`).
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionDenial {
    /// The tool refused.
    pub tool_name: String,
    /// The call's id.
    pub tool_use_id: String,
    /// The call's input.
    pub tool_input: Value,
    /// Why it was refused.
    pub reason: String,
    /// When.
    pub at: SystemTime,
}

/// What one turn produced.
#[derive(Debug, Clone)]
pub struct TurnResult {
    /// Why the turn's loop stopped.
    pub terminal: Terminal,
    /// The text of the last assistant message of the turn.
    pub result: String,
    /// Requests made in this turn.
    pub num_turns: u32,
    /// Usage summed over the turn's requests.
    pub usage: Usage,
    /// What the turn cost, in US dollars.
    pub cost_usd: f64,
    /// The turn's wall time.
    pub duration: Duration,
    /// Time spent waiting for the API.
    pub api_duration: Duration,
}

/// Why a session could not start or resume.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The transcript could not be written or read.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
}

/// One session.
pub struct QueryEngine {
    config: EngineConfig,
    session_id: SessionId,
    messages: Vec<Message>,
    total_usage: Usage,
    total_cost_usd: f64,
    total_api_duration: Duration,
    denials: Vec<PermissionDenial>,
    tool_context: ToolContext,
    transcript: Option<TranscriptWriter>,
    transcript_path: PathBuf,
    /// The transcript uuid of the last prompt sent (a rewind's target), and of the record
    /// before it (where a conversation rewound to that prompt goes on from).
    last_prompt: Option<(String, Option<String>)>,
    resume_warnings: Vec<TranscriptWarning>,
    /// Frozen decisions on oversized tool results; every request template carries it, so a fork
    /// built from the template clones the same decisions.
    replacements: crate::replacement::SharedReplacements,
    /// The replaced results already written to the transcript (or read back from it).
    recorded_replacements: BTreeSet<String>,
    /// Asked when the model is stuck (the TUI asks the person); `None`: the turn stops.
    on_repeated_failure: Option<Arc<dyn RepeatedFailureHandler>>,
    /// `output_config.effort` of every request (`--effort`).
    effort: Option<tine_api_client::Effort>,
    /// `--max-budget-usd`.
    spending_limit: Option<crate::budget::SpendingLimit>,
}

impl QueryEngine {
    /// A new session with a fresh id.
    pub async fn new(config: EngineConfig) -> Result<Self, EngineError> {
        Self::open(
            config,
            SessionId::new_random(),
            Vec::new(),
            None,
            Vec::new(),
        )
        .await
    }

    /// A new session with an id the host chose (so forks can name it before the engine exists).
    pub async fn with_session_id(
        config: EngineConfig,
        session_id: SessionId,
    ) -> Result<Self, EngineError> {
        Self::open(config, session_id, Vec::new(), None, Vec::new()).await
    }

    /// Resumes `session_id` of this directory: its conversation is restored (from the last
    /// compaction boundary on), and new messages continue its chain. The messages are replayed
    /// as the transcript holds them, the first one with its frozen context included, so the
    /// first request repeats the previous run's prefix byte for byte. The transcript is read
    /// once, as a stream; the monitor sees each annotation as it is read. An interrupted turn
    /// is repaired before the next request.
    pub async fn resume(config: EngineConfig, session_id: SessionId) -> Result<Self, EngineError> {
        Self::resume_with(config, session_id, |_| {}).await
    }

    /// [`QueryEngine::resume`], also handing every annotation to `on_annotation` (after the
    /// monitor), for state upper layers keep in the transcript (memory extraction's cursor).
    pub async fn resume_with(
        config: EngineConfig,
        session_id: SessionId,
        on_annotation: impl FnMut(&TranscriptRecord) + Send + 'static,
    ) -> Result<Self, EngineError> {
        Self::resume_at(config, session_id, None, on_annotation, |_| {}).await
    }

    /// [`QueryEngine::resume_with`] with the conversation only up to and including the message
    /// whose uuid is `at` (`--resume-session-at`); the next message is its child, a branch in
    /// the same transcript, which later resumes follow. `on_chain` sees the restored chain's
    /// records once, before they become the messages, for what an upper layer keeps of them (a
    /// front end's history, the prompts a rewind can go back to) without reading the file
    /// again.
    pub async fn resume_at(
        config: EngineConfig,
        session_id: SessionId,
        at: Option<&str>,
        mut on_annotation: impl FnMut(&TranscriptRecord) + Send + 'static,
        on_chain: impl FnOnce(&[TranscriptRecord]),
    ) -> Result<Self, EngineError> {
        let monitor = config.monitor.clone();
        // Replacement decisions the live session recorded (micro-compaction's clearing), so
        // the first request sends the results as the last one did.
        let restored = Arc::new(Mutex::new((
            crate::replacement::ContentReplacementState::default(),
            BTreeSet::new(),
        )));
        let sink = Arc::clone(&restored);
        let resumed = load_session_at(&config.home, &config.cwd, &session_id, at, move |record| {
            if let Some(monitor) = &monitor {
                monitor.on_resume(&record);
            }
            let mut sink = sink
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let ids = sink.0.restore(&record);
            sink.1.extend(ids);
            drop(sink);
            on_annotation(&record);
        })
        .await?;
        let parent = resumed.last_uuid().map(str::to_owned);
        let warnings = resumed.warnings.clone();
        on_chain(&resumed.chain);
        let messages = resumed.into_messages();
        let mut engine = Self::open(config, session_id, messages, parent, warnings).await?;
        let (state, recorded) = std::mem::take(
            &mut *restored
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        engine.replacements = Arc::new(Mutex::new(state));
        engine.recorded_replacements = recorded;
        Ok(engine)
    }

    async fn open(
        config: EngineConfig,
        session_id: SessionId,
        messages: Vec<Message>,
        parent_uuid: Option<String>,
        resume_warnings: Vec<TranscriptWarning>,
    ) -> Result<Self, EngineError> {
        let path = transcript_path(&config.home, &config.cwd, &session_id);
        let transcript = if config.persist {
            Some(
                TranscriptWriter::open(
                    path.clone(),
                    WriterOptions {
                        session_id: session_id.clone(),
                        cwd: config.cwd.clone(),
                        agent_id: None,
                        parent_uuid,
                    },
                )
                .await?,
            )
        } else {
            None
        };
        let tool_context = config
            .tool_context
            .clone()
            .unwrap_or_else(|| ToolContext::new(config.cwd.clone()));
        Ok(Self {
            config,
            session_id,
            messages,
            total_usage: Usage::default(),
            total_cost_usd: 0.0,
            total_api_duration: Duration::ZERO,
            denials: Vec::new(),
            tool_context,
            transcript,
            transcript_path: path,
            last_prompt: None,
            resume_warnings,
            replacements: Arc::default(),
            recorded_replacements: BTreeSet::new(),
            on_repeated_failure: None,
            effort: None,
            spending_limit: None,
        })
    }

    /// The session's id.
    pub fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Usage summed over every request of the session.
    pub fn total_usage(&self) -> Usage {
        self.total_usage
    }

    /// What the session cost so far, in US dollars.
    pub fn total_cost_usd(&self) -> f64 {
        self.total_cost_usd
    }

    /// Time spent waiting for the API so far.
    pub fn total_api_duration(&self) -> Duration {
        self.total_api_duration
    }

    /// Every call refused so far.
    pub fn permission_denials(&self) -> &[PermissionDenial] {
        &self.denials
    }

    /// Where the transcript is written.
    pub fn transcript_path(&self) -> &PathBuf {
        &self.transcript_path
    }

    /// The uuid of the last record written to the transcript (`None` when nothing was, or the
    /// session is not persisted).
    pub fn last_uuid(&self) -> Option<String> {
        self.transcript
            .as_ref()
            .and_then(TranscriptWriter::last_uuid)
    }

    /// The last prompt's transcript uuid and its parent's (the record the conversation
    /// went on from): `None` before any prompt, or when the session is not persisted.
    pub fn last_prompt(&self) -> Option<&(String, Option<String>)> {
        self.last_prompt.as_ref()
    }

    /// A handle for background work to annotate this session's transcript (none when the
    /// session is not persisted).
    pub fn transcript_annotator(&self) -> Option<TranscriptAnnotator> {
        self.transcript.as_ref().map(TranscriptWriter::annotator)
    }

    /// The session's content-replacement decisions.
    pub fn replacements(&self) -> &crate::replacement::SharedReplacements {
        &self.replacements
    }

    /// What was skipped when the transcript was read back (a torn last line, ...).
    pub fn resume_warnings(&self) -> &[TranscriptWarning] {
        &self.resume_warnings
    }

    /// The config the session was made from.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The session's tool context (cwd, file-state cache, cancellation).
    pub fn tool_context(&self) -> &ToolContext {
        &self.tool_context
    }

    /// Cancelling it stops the running turn and kills its tools; the session stays usable
    /// after [`QueryEngine::reset_cancellation`].
    pub fn cancellation(&self) -> CancellationToken {
        self.tool_context.cancellation().clone()
    }

    /// Uses `token` for the next turn: a host with a session token gives each turn a child of
    /// it, so interrupting the turn leaves the session (and the forks of earlier turns) running.
    pub fn set_cancellation(&mut self, token: CancellationToken) {
        self.tool_context = self.tool_context.clone().with_cancellation(token);
    }

    /// Who decides when the model is stuck (the same call failing the same way again and
    /// again; see [`crate::StuckDecision`]): an interactive host asks the person. Without one the turn
    /// stops with `Terminal::RepeatedToolFailure`.
    pub fn set_repeated_failure_handler(&mut self, handler: Arc<dyn RepeatedFailureHandler>) {
        self.on_repeated_failure = Some(handler);
    }

    /// The effort every request asks for from now on (`--effort`); part of the request bytes,
    /// so set it before the first turn.
    pub fn set_effort(&mut self, effort: Option<tine_api_client::Effort>) {
        self.effort = effort;
    }

    /// The session's spending limit (`--max-budget-usd`): a turn makes no request once the
    /// session has spent more, ending with `Terminal::MaxBudget`.
    pub fn set_spending_limit(&mut self, limit: Option<crate::budget::SpendingLimit>) {
        self.spending_limit = limit;
    }

    /// Uses `state` as the session's content-replacement decisions: the host gives the forks'
    /// parent context the same state, so what a fork derives from the parent decides as the
    /// main thread did. Call it before the first turn. The decisions a resumed session read
    /// back from its transcript are merged into `state`.
    pub fn share_replacements(&mut self, state: crate::replacement::SharedReplacements) {
        if !Arc::ptr_eq(&self.replacements, &state) {
            let restored = crate::replacement::lock(&self.replacements)
                .decisions
                .clone();
            crate::replacement::lock(&state).decisions.extend(restored);
        }
        self.replacements = state;
    }

    /// A fresh token after a cancelled turn.
    pub fn reset_cancellation(&mut self) {
        self.tool_context = self
            .tool_context
            .clone()
            .with_cancellation(CancellationToken::new());
    }

    /// The model of the requests from now on (`/model NAME`, a command's `model`).
    pub fn set_model(&mut self, model: impl Into<String>) {
        self.config.model = model.into();
    }

    /// The tools and the tool array of the requests from now on. The array is part of the
    /// prompt-cache key: only an explicit user action changes it (`/mcp restart` of a server
    /// whose tools were missing or changed), and the next request writes the cache again.
    pub fn set_tools(&mut self, tools: Arc<[Arc<dyn Tool>]>, definitions: ToolArray) {
        self.config.tools = tools;
        self.config.tool_definitions = definitions;
    }

    /// The thinking config of the requests from now on (the TUI's toggle, `/thinking`). A
    /// change is a cache break where the messages start, as with Claude Code's toggle.
    pub fn set_thinking(&mut self, thinking: Option<ThinkingConfig>) {
        self.config.thinking = thinking;
    }

    /// The thinking config the session asks for (before it is fitted to the model and `max_tokens`).
    pub fn thinking(&self) -> Option<ThinkingConfig> {
        self.config.thinking
    }

    /// The fixed part of every request of this session.
    pub fn request_template(&self) -> RequestTemplate {
        RequestTemplate {
            model: self.config.model.clone(),
            system: Arc::new(system_prompt_blocks(&self.config.system_prompt)),
            tools: self.config.tool_definitions.clone(),
            thinking: self.config.thinking,
            skip_cache_write: false,
            replacements: Some(Arc::clone(&self.replacements)),
            effort: self.effort,
        }
    }
}

/// The text of the user's part of a message (the last text block), for UIs.
pub fn prompt_text(message: &Message) -> &str {
    match &message.content {
        MessageContent::Text(t) => t,
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .rev()
            .find_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .unwrap_or(""),
    }
}
