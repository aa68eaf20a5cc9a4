//! Deferred tools for the session (issue 36): which tools wait behind ToolSearch, decided once
//! at assembly, since the tool array is serialized once and every byte of it is paid on every
//! request.
//!
//! `toolSearch` (settings) or Claude Code's `ENABLE_TOOL_SEARCH` (which wins): `auto` (the
//! default), `auto:N`, `always` (`true`), `never` (`false`). What may be deferred: MCP tools,
//! and the built-ins people rarely call ([`RARELY_USED_BUILTINS`]; ExitPlanMode only in a
//! session that starts outside plan mode). In `auto`, MCP tools are deferred when the
//! deferrable tools would take more than N% of the window (10 by default; of 200k tokens at
//! most, [`AUTO_WINDOW_CAP`]); the rare built-ins
//! are deferred then, and also alone whenever their definitions cost more than what deferring
//! adds (ToolSearch, the placeholder and the reminder naming them), which they do.
//!
//! Deferred tools stay in the session's tools (callable once loaded, or with an input that
//! fits, as in Claude Code); the array holds the rest, ToolSearch and Claude Code's placeholder
//! and carries the deferred ones as its catalog; the reminder naming them joins the first user
//! message, frozen with the user context. MCP tools that appear mid-session (`/mcp restart`)
//! join the catalog ([`offer`]) and a reminder naming them goes with the next prompt, so the
//! array's bytes never change.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use tine_api_client::{ToolArray, ToolDefinition};
use tine_config::settings::LoadedSettings;
use tine_tools::{
    RARELY_USED_BUILTINS, TOOL_SEARCH, Tool, ToolSearchTool, defer_tools, deferred_tools_reminder,
    definition_of, placeholder_definition,
};

use crate::protocol::Notice;

/// The setting.
pub(crate) const TOOL_SEARCH_SETTING: &str = "toolSearch";
/// Claude Code's environment variable for the same choice; it wins over the setting.
pub(crate) const TOOL_SEARCH_ENV: &str = "ENABLE_TOOL_SEARCH";
/// `auto`'s share of the window, in percent.
pub(crate) const DEFAULT_AUTO_PERCENT: u64 = 10;
/// The window `auto`'s share is taken of, at most: a 1M window does not make each request's
/// tools any cheaper, and 10% of it would let 100k tokens of schemas ride on every request.
pub(crate) const AUTO_WINDOW_CAP: u64 = 200_000;

/// When tools are deferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolSearchMode {
    /// MCP tools once the deferrable tools pass this share of the window (percent); the rare
    /// built-ins whenever deferring them pays.
    Auto(u64),
    /// Every deferrable tool.
    Always,
    /// None: every tool in the array, no ToolSearch.
    Never,
}

impl ToolSearchMode {
    /// `auto`, `auto:N`, `always`/`true`, `never`/`false`.
    fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(Self::Auto(DEFAULT_AUTO_PERCENT)),
            "always" | "true" | "on" => Some(Self::Always),
            "never" | "false" | "off" => Some(Self::Never),
            other => other
                .strip_prefix("auto:")
                .and_then(|n| n.trim().trim_end_matches('%').parse::<u64>().ok())
                .filter(|n| *n <= 100)
                .map(Self::Auto),
        }
    }

    /// The mode asked by `ENABLE_TOOL_SEARCH`, else `toolSearch`, else `auto`; a value that
    /// means nothing is a warning and `auto`.
    pub(crate) fn from_settings(
        settings: &LoadedSettings,
        env: Option<&str>,
        notices: &mut Vec<Notice>,
    ) -> Self {
        if let Some(value) = env.filter(|v| !v.trim().is_empty()) {
            return Self::parse(value).unwrap_or_else(|| {
                notices.push(Notice::warning(format!(
                    "{TOOL_SEARCH_ENV}={value}: expected auto, auto:N, true or false; using auto"
                )));
                Self::Auto(DEFAULT_AUTO_PERCENT)
            });
        }
        let Some((value, source)) = settings.get(TOOL_SEARCH_SETTING) else {
            return Self::Auto(DEFAULT_AUTO_PERCENT);
        };
        let parsed = match value {
            serde_json::Value::Bool(true) => Some(Self::Always),
            serde_json::Value::Bool(false) => Some(Self::Never),
            serde_json::Value::String(text) => Self::parse(text),
            _ => None,
        };
        parsed.unwrap_or_else(|| {
            notices.push(Notice::warning(format!(
                "{TOOL_SEARCH_SETTING} in the {source:?} settings: expected \"auto\", \"auto:N\", \
                 \"always\" or \"never\" (got {value}); using auto"
            )));
            Self::Auto(DEFAULT_AUTO_PERCENT)
        })
    }
}

/// Whether a tool of the array came from MCP servers.
pub(crate) fn is_mcp_tool(name: &str) -> bool {
    name.starts_with("mcp__")
        || name == tine_mcp::LIST_RESOURCES_TOOL
        || name == tine_mcp::READ_RESOURCE_TOOL
}

/// What the API would read of a definition, in tokens (about 4 bytes each, as the window is
/// counted elsewhere).
fn tokens(definition: &ToolDefinition) -> u64 {
    let bytes = serde_json::to_vec(definition).map_or(0, |b| b.len());
    (bytes as u64).div_ceil(4)
}

/// The tools of `definitions` to defer, by name.
pub(crate) fn decide(
    mode: ToolSearchMode,
    definitions: &ToolArray,
    window: u64,
    starts_in_plan_mode: bool,
) -> BTreeSet<String> {
    let rare = |name: &str| {
        RARELY_USED_BUILTINS.contains(&name) && !(starts_in_plan_mode && name == "ExitPlanMode")
    };
    let builtins: Vec<&ToolDefinition> = definitions.iter().filter(|d| rare(&d.name)).collect();
    let mcp: Vec<&ToolDefinition> = definitions
        .iter()
        .filter(|d| is_mcp_tool(&d.name))
        .collect();
    let names = |tools: &[&ToolDefinition]| -> BTreeSet<String> {
        tools.iter().map(|d| d.name.clone()).collect()
    };
    match mode {
        ToolSearchMode::Never => BTreeSet::new(),
        ToolSearchMode::Always => names(&builtins).into_iter().chain(names(&mcp)).collect(),
        ToolSearchMode::Auto(percent) => {
            let builtin_tokens: u64 = builtins.iter().map(|d| tokens(d)).sum();
            let mcp_tokens: u64 = mcp.iter().map(|d| tokens(d)).sum();
            let window = window.min(AUTO_WINDOW_CAP);
            let defer_mcp =
                !mcp.is_empty() && (builtin_tokens + mcp_tokens) * 100 > percent * window;
            if defer_mcp {
                return names(&builtins).into_iter().chain(names(&mcp)).collect();
            }
            let added = tokens(&definition_of(&ToolSearchTool::new(Vec::new())))
                + tokens(&placeholder_definition())
                + (deferred_tools_reminder(builtins.iter().map(|d| d.name.as_str())).len() as u64)
                    .div_ceil(4);
            match builtin_tokens > added {
                true => names(&builtins),
                false => BTreeSet::new(),
            }
        }
    }
}

/// The session's tools and array with `deferred` behind ToolSearch: ToolSearch joins the
/// tools and the array (among the built-ins, by name), the deferred tools move to the array's
/// catalog. Unchanged when nothing is deferred.
pub(crate) fn apply(
    tools: &[Arc<dyn Tool>],
    definitions: &ToolArray,
    deferred: &BTreeSet<String>,
) -> (Arc<[Arc<dyn Tool>]>, ToolArray) {
    if deferred.is_empty() {
        return (tools.iter().cloned().collect(), definitions.clone());
    }
    let catalog: Vec<ToolDefinition> = definitions
        .iter()
        .filter(|d| deferred.contains(&d.name))
        .cloned()
        .collect();
    let search: Arc<dyn Tool> = Arc::new(ToolSearchTool::new(catalog));
    let mut all: Vec<ToolDefinition> = definitions.to_vec();
    // The built-ins come first, sorted; the MCP tools after them.
    let at = all
        .iter()
        .position(|d| is_mcp_tool(&d.name) || d.name.as_str() > TOOL_SEARCH)
        .unwrap_or(all.len());
    all.insert(at, definition_of(search.as_ref()));
    let with_search = ToolArray::new(all).with_server_tools(definitions.server_tools().to_vec());
    let array = defer_tools(&with_search, |name| deferred.contains(name));
    let mut tools: Vec<Arc<dyn Tool>> = tools.to_vec();
    let at = tools
        .iter()
        .position(|t| is_mcp_tool(t.name()) || t.name() > TOOL_SEARCH)
        .unwrap_or(tools.len());
    tools.insert(at, search);
    (tools.into(), array)
}

/// The user context with the reminder naming `definitions`' deferred tools after it
/// (unchanged without any).
pub(crate) fn with_reminder(user_context: Arc<str>, definitions: &ToolArray) -> Arc<str> {
    let mut names = definitions.deferred().map(|d| d.name.as_str()).peekable();
    if names.peek().is_none() {
        return user_context;
    }
    Arc::from(format!(
        "{user_context}\n\n{}",
        deferred_tools_reminder(names)
    ))
}

/// Deferred tools that appeared mid-session and that the model has not been told of yet: the
/// next prompt carries a reminder naming them.
#[derive(Debug, Clone, Default)]
pub(crate) struct NewDeferredTools(Arc<Mutex<BTreeSet<String>>>);

impl NewDeferredTools {
    /// Names to tell the model of with the next prompt.
    pub(crate) fn add(&self, names: impl IntoIterator<Item = String>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(names);
    }

    /// The reminder for the next prompt, once.
    pub(crate) fn take_reminder(&self) -> Option<String> {
        let names = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        (!names.is_empty()).then(|| deferred_tools_reminder(names.iter().map(String::as_str)))
    }
}

/// What a `/mcp restart` with tool search on gives the engine.
pub(crate) struct Offered {
    /// The session's tools (a new ToolSearch among them).
    pub tools: Arc<[Arc<dyn Tool>]>,
    /// The array: the same bytes, another catalog.
    pub array: ToolArray,
    /// The tools new to the catalog, to name to the model.
    pub new: Vec<String>,
}

/// `/mcp restart` with tool search on: the servers' tools now connected become the catalog's
/// MCP part (the built-ins deferred at start stay), a new ToolSearch searches it, and the
/// array's bytes stay as they were. `None` when the session defers nothing (the caller
/// changes the array instead).
pub(crate) fn offer(
    tools: &[Arc<dyn Tool>],
    definitions: &ToolArray,
    mcp_tools: &[Arc<dyn Tool>],
) -> Option<Offered> {
    definitions.deferred().next()?;
    let before: BTreeSet<&str> = definitions.deferred().map(|d| d.name.as_str()).collect();
    let sent: BTreeSet<&str> = definitions.iter().map(|d| d.name.as_str()).collect();
    let mut catalog: Vec<ToolDefinition> = definitions
        .deferred()
        .filter(|d| !is_mcp_tool(&d.name))
        .cloned()
        .collect();
    // An MCP tool the array sends anyway (not deferred at start) stays as it is.
    let mut offered: Vec<&Arc<dyn Tool>> = mcp_tools
        .iter()
        .filter(|t| !sent.contains(t.name()))
        .collect();
    offered.sort_by(|a, b| a.name().cmp(b.name()));
    catalog.extend(offered.iter().map(|t| definition_of(t.as_ref())));
    let new: Vec<String> = catalog
        .iter()
        .map(|d| d.name.clone())
        .filter(|n| !before.contains(n.as_str()))
        .collect();
    let array = definitions.with_deferred(catalog.clone());
    let search: Arc<dyn Tool> = Arc::new(ToolSearchTool::new(catalog));
    let tools: Vec<Arc<dyn Tool>> = tools
        .iter()
        .filter(|t| !is_mcp_tool(t.name()) || sent.contains(t.name()))
        .map(|t| match t.name() == TOOL_SEARCH {
            true => Arc::clone(&search),
            false => Arc::clone(t),
        })
        .chain(offered.into_iter().cloned())
        .collect();
    Some(Offered {
        tools: tools.into(),
        array,
        new,
    })
}

#[cfg(test)]
#[path = "tool_search_tests.rs"]
mod tests;
