//! What a front end asks of the session: [`Op`]s, each queued with [`SessionHandle::submit`],
//! which names it with an [`OpId`]; the events that answer an op carry its id
//! ([`Event::id`](crate::Event)). A question the session asks (a permission request, a stuck
//! model, an MCP server's elicitation) carries a [`QuestionId`], and [`Op::Answer`] names it.
//!
//! [`SessionHandle::submit`]: crate::SessionHandle::submit

use std::fmt;

use tine_config::SessionId;
use tine_mcp::ElicitationAnswer;
use tine_permissions::{PermissionMode, PermissionRule, PersistDestination, RuleBehavior};
use tine_query_loop::StuckDecision;

/// One thing a front end asks of the session.
///
/// Three kinds, by when they happen and what answers them (every event an op causes names
/// its id):
/// - **Turns**, run one at a time in the order submitted, each answered by
///   [`SessionEvent::TurnStarted`](crate::SessionEvent::TurnStarted) and exactly one
///   [`SessionEvent::TurnEnded`](crate::SessionEvent::TurnEnded): `Prompt`, `PromptContent`,
///   `Command`, `Compact`.
/// - **Changes between turns**, queued with the turns (so they apply after the running one):
///   `Clear` and `Resume` (answered by a new [`SessionEvent::Configured`](crate::SessionEvent::Configured)),
///   `SetModel` ([`SessionEvent::ModelChanged`](crate::SessionEvent::ModelChanged)),
///   `SetThinking` ([`SessionEvent::ThinkingChanged`](crate::SessionEvent::ThinkingChanged)),
///   `McpRestart`, `McpToggle` ([`SessionEvent::CommandOutput`](crate::SessionEvent::CommandOutput)),
///   `Rewind`, `RewindPoints`.
/// - **At once**, also while a turn runs: `Interrupt`, `Answer`, `SetPermissionMode`
///   ([`SessionEvent::PermissionModeChanged`](crate::SessionEvent::PermissionModeChanged)),
///   `StopTask` ([`SessionEvent::TaskStopped`](crate::SessionEvent::TaskStopped)),
///   `BackgroundAgents`, `Abort`; and the idle hints `FlushBackground`, `AwaySummary`,
///   `Speculate`, `NotifyIdle`, which act once the running turn, if any, is over.
///
/// Any op the session cannot carry out is answered by
/// [`SessionEvent::OpFailed`](crate::SessionEvent::OpFailed) saying why. `Finish` and
/// `Shutdown` end the session: [`SessionEvent::ShutdownComplete`](crate::SessionEvent::ShutdownComplete)
/// is the last event, and the channel closes.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A user prompt: one turn of the model (recall first, background jobs after).
    Prompt(String),
    /// A user prompt of several content blocks: text with images or documents (an editor's
    /// pasted screenshot, a stream-json message with an image). The blocks go to the model in
    /// order; their text, joined, is what UserPromptSubmit hooks, recall and speculation read.
    /// A prompt of text alone is [`Op::Prompt`].
    PromptContent(Vec<tine_api_client::ContentBlock>),
    /// A slash command, without its slash: `Command { name: "compact", args: "keep the API" }`
    /// for `/compact keep the API`. The session's table ([`SessionInfo::commands`](crate::SessionInfo))
    /// lists what it knows: built-ins, skills, custom commands; any other `/word` is sent to
    /// the model as text, as Claude Code does.
    Command {
        /// The command's name, without the slash.
        name: String,
        /// The rest of the line.
        args: String,
    },
    /// Stops the running turn (its request, its tools, its open questions), or, when none
    /// runs yet, the next one about to start. Never background work.
    Interrupt,
    /// Answers the question of the event that asked it.
    Answer {
        /// The question's id, as its event gave it.
        question: QuestionId,
        /// The answer, of the question's kind.
        answer: Answer,
    },
    /// The permission mode from the next call on
    /// ([`SessionEvent::PermissionModeChanged`](crate::SessionEvent::PermissionModeChanged)
    /// confirms it). Refused for bypassPermissions when settings disable it.
    SetPermissionMode(PermissionMode),
    /// Another model from the next request on (an alias is resolved; `default` is the model the
    /// session started with:
    /// [`SessionEvent::ModelChanged`](crate::SessionEvent::ModelChanged)); kept across `Clear` and
    /// `Resume`.
    SetModel(String),
    /// Extended thinking from the next request on: `Some(budget)` on with that many tokens
    /// (at least the API's minimum), `None` off.
    SetThinking(Option<u32>),
    /// Replaces the conversation by a summary now; `focus` says what to keep (empty: none).
    Compact {
        /// What the summary should keep.
        focus: String,
    },
    /// Starts over: the conversation so far ends (its SessionEnd hooks run, its deferred
    /// memory extraction is saved) and a new one starts in its place, announced by a new
    /// [`SessionEvent::Configured`](crate::SessionEvent::Configured).
    Clear,
    /// Opens an earlier conversation of this directory in place of this one: a new
    /// `Configured`, then its [`SessionEvent::History`](crate::SessionEvent::History).
    Resume(SessionId),
    /// Goes back to before a prompt of this conversation: its files (what the session changed
    /// since, Bash's changes included), the conversation (it goes on from just before the
    /// prompt; the old branch stays in the transcript), or both. Answered by
    /// [`SessionEvent::Rewound`](crate::SessionEvent::Rewound); when a file the session changed
    /// was changed by someone else too, by
    /// [`SessionEvent::RewindConflicts`](crate::SessionEvent::RewindConflicts) and nothing is
    /// changed (`force` restores them anyway).
    Rewind {
        /// Which prompt.
        to: RewindTarget,
        /// What goes back.
        scope: RewindScope,
        /// Restore files both changed too.
        force: bool,
    },
    /// The prompts a rewind can go back to:
    /// [`SessionEvent::RewindPoints`](crate::SessionEvent::RewindPoints).
    RewindPoints,
    /// Stops background task `id`: a sub-agent (`a_…`), a background shell, or the dream
    /// (`auto_dream` or its task id). A [`SessionEvent::TaskStopped`](crate::SessionEvent::TaskStopped)
    /// confirms it.
    StopTask(String),
    /// Sends the sub-agents running in the foreground to the background (Ctrl+B): their Agent
    /// calls return at once and each reports when it ends.
    BackgroundAgents,
    /// Reconnects MCP server `name` (its tools change the array once if they differ).
    McpRestart(String),
    /// Turns MCP server `server` off (its tools answer with an error) or on again.
    McpToggle {
        /// The server's name.
        server: String,
        /// On or off.
        enabled: bool,
    },
    /// The person went idle: start what background jobs put off (a batched memory
    /// extraction) now.
    FlushBackground,
    /// The person is back after an idle gap: a
    /// [`SessionEvent::AwaySummary`](crate::SessionEvent::AwaySummary) follows unless it is off
    /// or there is nothing to summarize.
    AwaySummary,
    /// The person paused typing this draft: with speculation on, the read-only tools it
    /// needs run now.
    Speculate(String),
    /// The prompt has waited about a minute since a turn ended: Notification hooks hear
    /// `idle_prompt`.
    NotifyIdle,
    /// Cancels everything at once (a signal): the running turn, queued work, forks and
    /// background jobs. A `Shutdown` or `Finish` then waits for nothing.
    Abort,
    /// No more input (headless `-p` after its prompt, stream-json at the input's end): the
    /// work queued before it runs, background agents still running report as further turns
    /// (within the drain grace; past it they are stopped and their stops reported), then the
    /// session shuts down as `Shutdown(SessionEndReason::Other)` does.
    Finish,
    /// Ends the session now: the running turn is interrupted, queued work ends as
    /// interrupted, background agents stop, SessionEnd hooks run (not after `Abort`), what
    /// background jobs deferred runs and every job is drained within the drain grace.
    Shutdown(SessionEndReason),
}

impl Op {
    /// A prompt, or the command it spells when it starts with `/name` (a slash alone, or one
    /// followed by something that is not a name, stays a prompt).
    pub fn parse(text: &str) -> Self {
        let trimmed = text.trim();
        if let Some(rest) = trimmed.strip_prefix('/') {
            let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let is_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'));
            if is_name {
                return Self::Command {
                    name: name.to_owned(),
                    args: args.trim().to_owned(),
                };
            }
        }
        Self::Prompt(text.to_owned())
    }

    /// Whether it waits for the turns before it (a turn, or a change between turns; see
    /// [`Op`]).
    pub fn is_queued(&self) -> bool {
        match self {
            Op::Prompt(_)
            | Op::PromptContent(_)
            | Op::Command { .. }
            | Op::Compact { .. }
            | Op::Clear
            | Op::Resume(_)
            | Op::Rewind { .. }
            | Op::RewindPoints
            | Op::SetModel(_)
            | Op::SetThinking(_)
            | Op::McpRestart(_)
            | Op::McpToggle { .. }
            | Op::FlushBackground
            | Op::AwaySummary
            | Op::Speculate(_)
            | Op::NotifyIdle
            | Op::Finish
            | Op::Shutdown(_) => true,
            Op::Interrupt
            | Op::Answer { .. }
            | Op::SetPermissionMode(_)
            | Op::StopTask(_)
            | Op::BackgroundAgents
            | Op::Abort => false,
        }
    }

    /// Whether it runs a turn (answered by `TurnStarted` and exactly one `TurnEnded`).
    pub fn is_turn(&self) -> bool {
        matches!(
            self,
            Op::Prompt(_) | Op::PromptContent(_) | Op::Command { .. } | Op::Compact { .. }
        )
    }
}

/// The answer to a question, of its kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// To a [`PermissionRequest`](crate::PermissionRequest): once, always (its suggested rules
    /// saved where the answer says), or no with feedback for the model.
    Permission(PermissionAnswer),
    /// To a [`StuckQuestion`](crate::StuckQuestion): keep going (the count starts again;
    /// `--max-turns` stays the cap) or stop the turn.
    Stuck(StuckDecision),
    /// To an [`ElicitationQuestion`](crate::ElicitationQuestion): the server reads it at once.
    Elicitation(ElicitationAnswer),
}

/// A person's answer to a [`PermissionRequest`](crate::PermissionRequest).
#[derive(Debug, Clone, PartialEq)]
pub enum PermissionAnswer {
    /// Run it this once.
    Once,
    /// Run it, and do what the request's `always` offers: its rules added to the session and
    /// saved where it says (`.tine/settings.local.json`), or the session switched to its mode
    /// (an edit: acceptEdits; a plan approval: leave plan mode for acceptEdits). Without
    /// anything to offer, the same as `Once`.
    Always,
    /// Do not run it; `feedback` (what to do instead) goes to the model with the refusal.
    Deny {
        /// What to tell the model instead, if anything.
        feedback: Option<String>,
    },
    /// An app's yes (the Agent SDK's `can_use_tool`): the call runs with `updated_input` when
    /// given, after `updates` change the permissions (rules added where they say, the mode).
    Allow {
        /// The input the tool runs with instead of the model's.
        updated_input: Option<serde_json::Value>,
        /// Permission changes to make first.
        updates: Vec<PermissionUpdate>,
    },
    /// An app's no: the model reads `message` as the refusal; `interrupt` also stops the turn.
    Refuse {
        /// What the model reads.
        message: String,
        /// Whether the turn stops too.
        interrupt: bool,
    },
}

/// A change to the permissions an answer makes (the Agent SDK's `PermissionUpdate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionUpdate {
    /// Rules added, for this session or saved in a settings file.
    AddRules {
        /// The rules (`Bash(npm test:*)`).
        rules: Vec<PermissionRule>,
        /// Allow, deny or ask.
        behavior: RuleBehavior,
        /// Where they are kept.
        destination: PersistDestination,
    },
    /// The permission mode from the next call on.
    SetMode(PermissionMode),
}

/// Which prompt a rewind goes back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RewindTarget {
    /// The prompt's number in the conversation, counted from 1.
    Prompt(usize),
    /// The prompt submitted by this op (a front end's own handle on it).
    Turn(OpId),
    /// The prompt whose user message has this transcript uuid.
    Message(String),
}

/// What a rewind puts back (Claude Code's three choices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewindScope {
    /// The code and the conversation.
    Both,
    /// The conversation only: the files stay as they are.
    Conversation,
    /// The code only: the conversation goes on.
    Code,
}

impl RewindScope {
    /// Whether the files go back.
    pub fn code(self) -> bool {
        matches!(self, RewindScope::Both | RewindScope::Code)
    }

    /// Whether the conversation goes back.
    pub fn conversation(self) -> bool {
        matches!(self, RewindScope::Both | RewindScope::Conversation)
    }
}

/// Names one op in the events that answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(pub u64);

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op-{}", self.0)
    }
}

/// Names one question the session asked (a permission request, a stuck model, an MCP
/// server's elicitation): [`Op::Answer`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QuestionId(pub u64);

impl fmt::Display for QuestionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "question-{}", self.0)
    }
}

/// Why a session ends, as SessionEnd's `reason` (and its matcher) says it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionEndReason {
    /// The user cleared the conversation (`/clear`); another session follows.
    Clear,
    /// The user logged out.
    Logout,
    /// The user left the prompt (`/exit`, Ctrl-D).
    PromptInputExit,
    /// Anything else: a `-p` run's end, a restart for `/model` or `/resume`.
    #[default]
    Other,
}

impl SessionEndReason {
    /// The reason as hooks get it (`clear`, `logout`, `prompt_input_exit`, `other`).
    pub fn as_str(self) -> &'static str {
        match self {
            SessionEndReason::Clear => "clear",
            SessionEndReason::Logout => "logout",
            SessionEndReason::PromptInputExit => "prompt_input_exit",
            SessionEndReason::Other => "other",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands_are_told_from_prompts() {
        assert_eq!(
            Op::parse("/compact keep the API "),
            Op::Command {
                name: "compact".into(),
                args: "keep the API".into()
            }
        );
        assert_eq!(
            Op::parse("  /cost"),
            Op::Command {
                name: "cost".into(),
                args: String::new()
            }
        );
        assert_eq!(
            Op::parse("/ not a command"),
            Op::Prompt("/ not a command".into())
        );
        assert_eq!(
            Op::parse("/usr/bin/env is where?"),
            Op::Prompt("/usr/bin/env is where?".into())
        );
        assert_eq!(Op::parse("hi"), Op::Prompt("hi".into()));
    }
}
