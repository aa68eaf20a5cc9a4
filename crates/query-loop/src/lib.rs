//! tine-query-loop: the agent loop and everything a session needs around it.
//!
//! Modules, in reading order:
//! - [`transcript`]: the session's JSONL transcript: writer, tolerant reader, resume,
//!   `--continue`.
//! - [`context`]: AGENTS.md / CLAUDE.md discovery, environment facts, git snapshot, and the
//!   rendering of the system prompt and user context, once per session.
//! - [`hooks`]: user stop hooks (shell commands from settings) and the post-sampling registry.
//! - [`timestamp`]: RFC 3339 / day formatting used by the above.
//!
//! `query()` (the agent loop as a stream of events ending in a terminal reason; [`stuck`]
//! stops it when the model repeats a failing call) and the `QueryEngine` session build on
//! these.

pub mod context;
pub mod engine;
pub mod events;
pub mod hooks;
pub mod plug;
pub mod query;
pub mod repair;
pub mod replacement;
pub mod request;
pub mod stuck;
pub mod timestamp;
pub mod transcript;
pub mod transition;

pub use context::{
    BASE_SYSTEM_PROMPT, EnvironmentFacts, GatherOptions, GitSnapshot, InstructionFile,
    InstructionSource, RenderedContext, SessionContext, render_system_prompt,
};
pub use engine::{
    EngineConfig, EngineError, PermissionDenial, QueryEngine, TurnResult, prompt_text,
};
pub use events::QueryEvent;
pub use hooks::{
    HookError, HookFailure, HooksSettings, PostSamplingContext, PostSamplingHooks,
    PostSamplingSummary, StopHookCommand, StopHookInput, StopHookOutcome, StopHookReport,
    run_stop_hooks,
};
pub use plug::{
    AllowAll, Annotation, CanUseTool, CommandStopHooks, Compacted, Compactor, PermissionOutcome,
    PermissionPrompter, RequestMonitor, StopContext, StopHooks,
};
pub use query::{
    EndAfterTools, LoopState, PostSampling, QueryParams, QuerySource, RequestObserver,
    message_text, query,
};
pub use repair::{INTERRUPTED_TOOL_RESULT, is_well_paired, repair_tool_pairing};
pub use replacement::{ContentReplacementState, MAX_TOOL_RESULT_CHARS, SharedReplacements};
pub use request::{RequestTemplate, prepare_messages, system_prompt_blocks, tool_definitions};
pub use stuck::{
    DEFAULT_MAX_REPEATED_FAILURES, FailureStreak, RepeatedFailure, RepeatedFailureHandler,
    StuckDecision,
};
pub use transcript::{
    RecordType, ResumedSession, TranscriptAnnotator, TranscriptError, TranscriptRead,
    TranscriptRecord, TranscriptWarning, TranscriptWriter, WriterOptions, latest_session,
    load_session, load_session_with, read_transcript,
};
pub use transition::{Terminal, Transition};
