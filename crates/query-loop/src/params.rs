//! [`QueryParams`]: everything fixed for one run of the loop (the client, the request
//! template, the tools and their context, the plug points, the limits), and the template as the
//! loop sends it.

use std::sync::Arc;

use tine_api_client::{Message, ModelClient, ToolUseBlock, model_info};
use tine_config::SessionId;
use tine_tools::{Tool, ToolContext};

use crate::hooks::{Hooks, PostSamplingHooks};
use crate::plug::{CanUseTool, Compactor, PermissionPrompter, StopHooks};
use crate::request::RequestTemplate;
use crate::stuck::{DEFAULT_MAX_REPEATED_FAILURES, RepeatedFailureHandler};

/// Consecutive stop-hook continuations before the loop ends the turn anyway.
pub(crate) const DEFAULT_MAX_STOP_HOOK_CONTINUATIONS: u32 = 5;

/// Who is running the loop (logs, usage attribution, recursion guards).
pub type QuerySource = Arc<str>;

/// Sees each request just before it is sent.
pub type RequestObserver = Arc<dyn Fn(&tine_api_client::MessagesRequest) + Send + Sync>;

/// Decides, after a turn's tools ran, that the loop is done: given the turn's calls and the
/// message of their results.
pub type EndAfterTools = Arc<dyn Fn(&[ToolUseBlock], &Message) -> bool + Send + Sync>;

/// Post-sampling hooks with what their context needs.
#[derive(Clone)]
pub struct PostSampling {
    /// The hooks.
    pub hooks: Arc<PostSamplingHooks>,
    /// The session's id, for their context.
    pub session_id: SessionId,
}

/// Everything fixed for one run of the loop.
#[derive(Clone)]
pub struct QueryParams {
    /// The model client.
    pub client: Arc<dyn ModelClient>,
    /// Model, system prompt, tool definitions, thinking, cache-write policy.
    pub template: RequestTemplate,
    /// The tools behind the definitions (matched by name and alias).
    pub tools: Arc<[Arc<dyn Tool>]>,
    /// The context tool calls run in; its cancellation token cancels the loop.
    pub tool_context: ToolContext,
    /// Judges every tool call.
    pub can_use_tool: Arc<dyn CanUseTool>,
    /// Asks a person when the checker says `Ask`. None: asks become denials (headless, forks).
    pub prompter: Option<Arc<dyn PermissionPrompter>>,
    /// Requests the loop may make before it stops with `MaxTurns` (None: no cap).
    pub max_turns: Option<u32>,
    /// Forces the output limit (and disables escalation). Breaks a fork's cache sharing when
    /// thinking is on, because the thinking budget must shrink under it (seed 000 §5.1).
    pub max_output_tokens: Option<u32>,
    /// Run when the model ends a turn without tool calls.
    pub stop_hooks: Option<Arc<dyn StopHooks>>,
    /// How many times stop hooks may keep the loop going.
    pub max_stop_hook_continuations: u32,
    /// The user's command hooks: PreToolUse and PostToolUse run around every tool call
    /// (the main thread's; forks run none).
    pub hooks: Option<Hooks>,
    /// Compacts the history when it grows too long.
    pub compactor: Option<Arc<dyn Compactor>>,
    /// Hooks run after each reply is sampled.
    pub post_sampling: Option<PostSampling>,
    /// The source the requests are reported under (`repl_main_thread`, a fork's label).
    pub query_source: QuerySource,
    /// Sees every request just before it is sent (cache-break detection, tests).
    pub on_request: Option<RequestObserver>,
    /// The same call failing the same way this many times in a row means the model is stuck
    /// (0: never); see [`crate::RepeatedFailureHandler`].
    pub max_repeated_failures: u32,
    /// Decides about a stuck model (the TUI asks the person). None: the turn stops.
    pub on_repeated_failure: Option<Arc<dyn RepeatedFailureHandler>>,
    /// Ends the loop with `Completed` right after a turn's tool results when it says so,
    /// without asking the model again: a background fork whose last step was its writes
    /// need not pay a request for a reply nobody reads.
    pub end_after_tools: Option<EndAfterTools>,
    /// A fork that writes no cache (`template.skip_cache_write`) and whose history starts with
    /// the messages the parent's last request sent, this many: its breakpoint goes where the
    /// parent's was, so it reads that entry and writes nothing (see
    /// [`RequestTemplate::build_reading`]). None: on the message before the last.
    pub parent_cached_messages: Option<usize>,
    /// `--max-budget-usd`: no request once the session has spent more (None: no limit; forks
    /// have none).
    pub budget: Option<crate::budget::RunBudget>,
}

impl QueryParams {
    /// Parameters with the defaults: allow-all permissions, no hooks, no compactor, no cap.
    pub fn new(
        client: Arc<dyn ModelClient>,
        template: RequestTemplate,
        tools: Arc<[Arc<dyn Tool>]>,
        tool_context: ToolContext,
    ) -> Self {
        Self {
            client,
            template,
            tools,
            tool_context,
            can_use_tool: Arc::new(crate::plug::AllowAll),
            prompter: None,
            max_turns: None,
            max_output_tokens: None,
            stop_hooks: None,
            max_stop_hook_continuations: DEFAULT_MAX_STOP_HOOK_CONTINUATIONS,
            hooks: None,
            compactor: None,
            post_sampling: None,
            query_source: Arc::from("repl_main_thread"),
            on_request: None,
            max_repeated_failures: DEFAULT_MAX_REPEATED_FAILURES,
            on_repeated_failure: None,
            end_after_tools: None,
            parent_cached_messages: None,
            budget: None,
        }
    }

    /// The template as the loop sends it: a forced output limit shrinks the thinking budget
    /// under it (which changes the cache key: only forks that do not share the cache may do it).
    pub(crate) fn effective_template(&self) -> RequestTemplate {
        let mut template = self.template.clone();
        template.thinking = crate::thinking::fit_to_model(
            template.thinking,
            model_max_output(&template.model),
            model_info(&template.model).adaptive_thinking,
        );
        if let Some(limit) = self.max_output_tokens {
            template.thinking = crate::thinking::fit_to_limit(template.thinking, limit);
        }
        template
    }

    /// The tool called `name` (or one of its aliases).
    pub(crate) fn find_tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .or_else(|| self.tools.iter().find(|t| t.aliases().contains(&name)))
    }
}

/// The most output tokens `model` may reply with (at least 1).
pub(crate) fn model_max_output(model: &str) -> u32 {
    let info = model_info(model);
    u32::try_from(info.max_output_tokens)
        .unwrap_or(u32::MAX)
        .max(1)
}
