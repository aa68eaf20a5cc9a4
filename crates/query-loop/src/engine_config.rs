//! [`EngineConfig::new`]: a session's config from what it cannot do without, every optional
//! part off, so a library user (and an example) names only what it changes.

use std::path::PathBuf;
use std::sync::Arc;

use tine_api_client::ModelClient;
use tine_tools::Tool;

use crate::engine::EngineConfig;
use crate::plug::CanUseTool;
use crate::request::tool_definitions;

impl EngineConfig {
    /// A session with `client` and `model` in `cwd`, its transcript under `home`
    /// (`TINE_HOME`), `tools` in the order given (their array serialized once here), and
    /// `can_use_tool` judging every call. No user context, thinking, turn limit, prompter
    /// (asks become denials), hooks, compactor or monitor; the transcript is written. Set the
    /// public fields for the rest.
    pub fn new(
        client: Arc<dyn ModelClient>,
        model: impl Into<String>,
        cwd: impl Into<PathBuf>,
        home: impl Into<PathBuf>,
        system_prompt: impl Into<Arc<str>>,
        tools: Arc<[Arc<dyn Tool>]>,
        can_use_tool: Arc<dyn CanUseTool>,
    ) -> Self {
        let tool_definitions = tool_definitions(&tools);
        EngineConfig {
            client,
            model: model.into(),
            cwd: cwd.into(),
            home: home.into(),
            system_prompt: system_prompt.into(),
            user_context: None,
            tools,
            tool_definitions,
            thinking: None,
            max_turns: None,
            can_use_tool,
            prompter: None,
            tool_context: None,
            stop_hooks: None,
            hooks: None,
            compactor: None,
            post_sampling: None,
            on_request: None,
            monitor: None,
            persist: true,
        }
    }
}
