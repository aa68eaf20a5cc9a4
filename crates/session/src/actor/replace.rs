//! The session's turns that put another conversation in place of the one running:
//! `/clear`, `/resume ID`, `/reload-plugins` and `/rewind` as commands, and `Op::Clear`,
//! `Op::Resume` and `Op::Rewind` (see the parent module for the order of ops).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Actor, open};
use crate::assemble::assemble;
use crate::options::Resume;
use crate::protocol::{CommandOutput, OpId, SessionEndReason, SessionEvent, TurnOutcome};
use crate::shared::Live;

impl Actor {
    /// A command's turn begins: the op leaves the queue and `TurnStarted` goes out. `true`
    /// when it was interrupted before it began (then it has ended too).
    fn command_turn_started(&mut self, id: OpId, token: &CancellationToken) -> bool {
        {
            let mut turns = self.shared.turns();
            turns.queued.retain(|(queued, _)| *queued != id);
        }
        self.events.emit_for(id, SessionEvent::TurnStarted);
        if token.is_cancelled() {
            let end = self.conversation.end(TurnOutcome::Interrupted, None);
            self.events.emit_for(id, SessionEvent::TurnEnded(end));
            return true;
        }
        false
    }

    /// `/clear`, `/resume ID` and `/reload-plugins` (the same conversation again) as commands:
    /// the replacement inside a turn of the command's op.
    /// Returns `false` when the session cannot go on.
    pub(super) async fn replacing_turn(
        &mut self,
        id: OpId,
        token: CancellationToken,
        command: &str,
        resume: Resume,
        reason: SessionEndReason,
    ) -> bool {
        if self.command_turn_started(id, &token) {
            return true;
        }
        let before = self.conversation.info.session_id.clone();
        let before_parts = crate::plugins::Reloaded::before(&self.conversation);
        if !self.replace(id, resume, reason).await {
            return false;
        }
        let replaced = self.conversation.info.session_id != before;
        let (text, outcome) = match (replaced, command) {
            (_, "reload-plugins") => (
                before_parts.after(&mut self.conversation),
                TurnOutcome::Completed,
            ),
            (true, "clear") => (
                "Started a new conversation.".to_owned(),
                TurnOutcome::Completed,
            ),
            (true, _) => (
                format!("Resumed session {}.", self.conversation.info.session_id),
                TurnOutcome::Completed,
            ),
            (false, _) => {
                let message = format!("/{command} failed; the conversation goes on as it was");
                (message.clone(), TurnOutcome::Failed { message })
            }
        };
        self.events.emit_for(
            id,
            SessionEvent::CommandOutput(CommandOutput {
                command: command.to_owned(),
                text,
                is_error: !replaced,
                data: serde_json::json!({"session_id": self.conversation.info.session_id.to_string()}),
            }),
        );
        let end = self.conversation.end(outcome, None);
        self.events.emit_for(id, SessionEvent::TurnEnded(end));
        self.events
            .emit_for(id, SessionEvent::Usage(self.conversation.usage_report()));
        true
    }

    /// `/rewind` (the prompts a rewind can go back to, and what each changed since) and
    /// `/rewind N [both|code|conversation] [--force]`, as a command's turn.
    pub(super) async fn rewind_turn(
        &mut self,
        id: OpId,
        token: CancellationToken,
        args: &str,
    ) -> bool {
        if self.command_turn_started(id, &token) {
            return true;
        }
        let mut going = true;
        let (text, failed) = match crate::rewind::parse_command(args) {
            Err(message) => (message, true),
            Ok(None) => {
                let points = self.conversation.rewinds.points();
                let mut text = crate::rewind::describe(&points);
                let skipped = self.conversation.rewinds.skipped();
                if !skipped.is_empty() {
                    let names: Vec<String> =
                        skipped.iter().map(|p| p.display().to_string()).collect();
                    text.push_str(&format!(
                        "\nNot in the checkpoints (over the size cap, or their own repositories), so never put back: {}",
                        names.join(", ")
                    ));
                }
                self.events.emit_for(id, SessionEvent::RewindPoints(points));
                (text, false)
            }
            Ok(Some((prompt, scope, force))) => {
                let target = crate::protocol::RewindTarget::Prompt(prompt);
                let (on, summary, failed) = self.rewind_with(id, &target, scope, force).await;
                going = on;
                (summary, failed)
            }
        };
        self.events.emit_for(
            id,
            SessionEvent::CommandOutput(CommandOutput {
                command: "rewind".to_owned(),
                text: text.clone(),
                is_error: failed,
                data: serde_json::Value::Null,
            }),
        );
        let outcome = match failed {
            true => TurnOutcome::Failed {
                message: text.clone(),
            },
            false => TurnOutcome::Completed,
        };
        let end = self.conversation.end(outcome, None);
        self.events.emit_for(id, SessionEvent::TurnEnded(end));
        going
    }

    /// `Op::Clear`, `Op::Resume`: the conversation in place ends and `resume` takes its place;
    /// when that cannot start, the earlier conversation again. Returns `false` when neither
    /// could (the session then ends).
    pub(super) async fn replace(
        &mut self,
        id: OpId,
        resume: Resume,
        reason: SessionEndReason,
    ) -> bool {
        self.replace_at(id, resume, None, reason).await
    }

    /// [`Self::replace`], resumed at message `at` when given (a conversation rewind).
    async fn replace_at(
        &mut self,
        id: OpId,
        resume: Resume,
        at: Option<String>,
        reason: SessionEndReason,
    ) -> bool {
        let previous = self.conversation.info.session_id.clone();
        let mut options = self.template.clone();
        options.resume = resume;
        options.resume_session_at = at;
        options.cleared = reason == SessionEndReason::Clear;
        options.session_id = None;
        // The conversation in place ends first: its SessionEnd hooks, its deferred memory
        // extraction; what it still says reaches the front end.
        self.conversation.close(reason).await;
        let assembled = match assemble(options, &self.shared.token, &self.events).await {
            Ok(assembled) => assembled,
            Err(error) => {
                self.failed(id, error.to_string());
                let mut options = self.template.clone();
                options.resume = Resume::Id(previous);
                options.session_id = None;
                match assemble(options, &self.shared.token, &self.events).await {
                    Ok(assembled) => assembled,
                    Err(error) => {
                        self.failed(id, error.to_string());
                        return false;
                    }
                }
            }
        };
        self.shared.set_live(Live::of(&assembled));
        self.conversation = open(
            assembled,
            &self.shared,
            &self.events,
            self.drain_grace,
            Some(id),
        );
        self.watch();
        self.armed = false;
        self.conversation.start().await;
        true
    }

    /// `Op::Rewind`: the files (what the session changed since before the prompt), then the
    /// conversation (the same session resumed just before the prompt; the old branch stays
    /// in the transcript); `Rewound` says what was done.
    pub(super) async fn rewind_with(
        &mut self,
        id: OpId,
        to: &crate::protocol::RewindTarget,
        scope: crate::protocol::RewindScope,
        force: bool,
    ) -> (bool, String, bool) {
        let rewinds = Arc::clone(&self.conversation.rewinds);
        let prompt = match rewinds.resolve(to) {
            Ok(prompt) => prompt,
            Err(message) => {
                self.failed(id, message.clone());
                return (true, message, true);
            }
        };
        let (text, parent) = rewinds.prompt(prompt).unwrap_or_default();
        let (mut restored, mut removed) = (Vec::new(), Vec::new());
        if scope.code() {
            match rewinds.rewind_code(prompt, force).await {
                Ok((r, m)) => {
                    (restored, removed) = (r, m);
                    // The files are as the session last knew them then: a Write or an Edit
                    // of them goes on without a Read.
                    let ctx = self.conversation.engine.tool_context();
                    let cwd = &self.conversation.info.cwd;
                    for path in &restored {
                        let path = cwd.join(path);
                        match std::fs::read(&path) {
                            Ok(bytes) => {
                                let mtime =
                                    std::fs::metadata(&path).and_then(|m| m.modified()).ok();
                                ctx.file_state().record(&path, &bytes, mtime);
                            }
                            Err(_) => ctx.file_state().forget(&path),
                        }
                    }
                    for path in &removed {
                        ctx.file_state().forget(&cwd.join(path));
                    }
                }
                Err(crate::rewind::RewindRefusal::Conflicts(files)) => {
                    let summary = crate::rewind::conflicts_text(prompt, &files);
                    self.events
                        .emit_for(id, SessionEvent::RewindConflicts { prompt, files });
                    return (true, summary, true);
                }
                Err(crate::rewind::RewindRefusal::Failed(message)) => {
                    self.failed(id, message.clone());
                    return (true, message, true);
                }
            }
        }
        let mut old_branch = None;
        if scope.conversation() {
            rewinds.forget_from(prompt);
            let session = self.conversation.info.session_id.clone();
            // Where the branch left behind ends: `tine -r ID --resume-session-at` opens it.
            old_branch = self
                .conversation
                .engine
                .last_uuid()
                .map(|leaf| format!("tine -r {session} --resume-session-at {leaf}"));
            let resume = match parent {
                Some(_) => Resume::Id(session),
                // Before the first prompt: a conversation of its own.
                None => Resume::New,
            };
            if !self
                .replace_at(id, resume, parent, SessionEndReason::Other)
                .await
            {
                return (
                    false,
                    "the conversation could not be rewound".to_owned(),
                    true,
                );
            }
        }
        let report = crate::protocol::RewindReport {
            prompt,
            scope,
            text,
            restored,
            removed,
        };
        let mut summary = crate::rewind::report_text(&report);
        if let Some(command) = old_branch {
            summary.push_str(&format!("\nThe old branch is kept: `{command}` opens it."));
        }
        self.events.emit_for(id, SessionEvent::Rewound(report));
        (true, summary, false)
    }
}
