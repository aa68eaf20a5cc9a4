//! Deferred tools and ToolSearch (issue 36), Claude Code's mechanism on the Messages API's tool
//! search: a deferred tool is named in the first user message but not sent in the tool array;
//! ToolSearch finds it by `select:NAME`, keywords or `+word`, and answers with one
//! `tool_reference` per match ([`ToolOutput::references`]), which loads it: the API expands
//! its definition where the reference stands, outside the cached prefix, and the next requests
//! append it to the array with `defer_loading: true`
//! ([`ToolArray::loading`](tine_api_client::ToolArray::loading)).
//!
//! This module holds the mechanism's pieces a session puts together: which built-ins are
//! deferred by default ([`RARELY_USED_BUILTINS`]), the array split into what is sent and the
//! catalog ([`defer_tools`], with the [`placeholder_definition`]), the ToolSearch tool, the
//! reminder that names the deferred tools ([`deferred_tools_reminder`]), and the error of a
//! call to a tool not loaded yet ([`unloaded_call_error`]). Which tools a session defers is
//! the session's decision.

use std::sync::Arc;

use serde_json::{Value, json};
use tine_api_client::{ToolArray, ToolDefinition};
use tine_permissions::PermissionTarget;

use crate::context::ToolContext;
use crate::tool::{Tool, ToolFuture, ToolOutput};

/// The tool that loads deferred tools.
pub const TOOL_SEARCH: &str = "ToolSearch";

/// The deferred tool every array with deferred tools carries from the first request on, as
/// Claude Code's does: tool search is then on from the start, so loading the first tool does
/// not change the prompt before it.
pub const DEFERRED_PLACEHOLDER: &str = "DeferredToolPlaceholder";

/// The text beside a ToolSearch result that loaded tools (Claude Code's).
pub const TOOL_LOADED: &str = "Tool loaded.";

/// ToolSearch's answer when nothing matched (Claude Code's).
pub const NO_MATCHING_TOOLS: &str = "No matching deferred tools found";

/// How many tools a keyword search returns unless asked otherwise.
pub const DEFAULT_MAX_RESULTS: usize = 5;

/// Built-ins a session defers by default: rarely called, yet every request would pay for
/// their definitions (Claude Code defers NotebookEdit, WebFetch and its task tools likewise).
/// ExitPlanMode is deferred only in a session that starts outside plan mode (the session
/// decides). WebSearch is the API's server tool, a few bytes in the array: not deferred.
pub const RARELY_USED_BUILTINS: &[&str] = &[
    "BashOutput",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "TaskOutput",
    "TaskStop",
    "WebFetch",
];

const PLACEHOLDER_DESCRIPTION: &str =
    "Reserved placeholder that keeps deferred tool loading active; never call this tool.";

const TOOL_SEARCH_DESCRIPTION: &str = "Fetches full schema definitions for deferred tools so they can be called.

Deferred tools appear by name in a message from the system. Until fetched, only the name is known \u{2014} there is no parameter schema, so the tool cannot be invoked. This tool takes a query, matches it against the deferred tool list, and returns the matched tools' complete JSONSchema definitions inside a <functions> block. Once a tool's schema appears in that result, it is callable exactly like any tool defined at the top of the prompt.

Result format: each matched tool appears as one <function>{\"description\": \"...\", \"name\": \"...\", \"parameters\": {...}}</function> line inside the <functions> block \u{2014} the same encoding as the tool list at the top of this prompt.

Query forms:
- \"select:Read,Edit,Grep\" \u{2014} fetch these exact tools by name
- \"notebook jupyter\" \u{2014} keyword search, up to max_results best matches
- \"+slack send\" \u{2014} require \"slack\" in the name, rank by remaining terms";

/// `DeferredToolPlaceholder`: `defer_loading: true`, never called.
pub fn placeholder_definition() -> ToolDefinition {
    ToolDefinition {
        name: DEFERRED_PLACEHOLDER.to_owned(),
        description: PLACEHOLDER_DESCRIPTION.to_owned(),
        input_schema: json!({"type": "object", "properties": {}}),
        defer_loading: true,
        cache_control: None,
    }
}

/// `array` with the tools `is_deferred` names moved into its catalog of deferred tools (in
/// their order) and the placeholder where its name sorts among the tools before the MCP ones
/// (`mcp__`), so the built-ins stay sorted; the rest keep their order. The array is serialized
/// once more, here, at assembly. Unchanged when nothing is deferred.
pub fn defer_tools(array: &ToolArray, is_deferred: impl Fn(&str) -> bool) -> ToolArray {
    let (deferred, sent): (Vec<ToolDefinition>, Vec<ToolDefinition>) = array
        .definitions()
        .iter()
        .cloned()
        .partition(|definition| is_deferred(&definition.name));
    if deferred.is_empty() {
        return array.clone();
    }
    let mut sent = sent;
    let at = sent
        .iter()
        .position(|d| d.name.starts_with("mcp__") || d.name.as_str() > DEFERRED_PLACEHOLDER)
        .unwrap_or(sent.len());
    sent.insert(at, placeholder_definition());
    ToolArray::new(sent)
        .with_server_tools(array.server_tools().to_vec())
        .with_deferred(deferred)
}

/// The `<system-reminder>` naming the deferred tools, one per line (sorted, as Claude Code
/// lists them): it joins the first user message, so it is frozen with the rest of the user
/// context (and said again in a later prompt for tools that appear mid-session).
pub fn deferred_tools_reminder<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    names.dedup();
    let mut text = String::from(
        "<system-reminder>\nThe following deferred tools are now available via ToolSearch. \
         Their schemas are NOT loaded \u{2014} calling them directly will fail with \
         InputValidationError. Use ToolSearch with query \"select:<name>[,<name>...]\" to load \
         tool schemas before calling them:\n",
    );
    for name in names {
        text.push_str(name);
        text.push('\n');
    }
    text.push_str("</system-reminder>");
    text
}

/// The result of a call, before its tool was loaded, whose input does not fit its schema:
/// the violation, then Claude Code's advice (load it, retry) with the schema for reference.
/// A call whose input fits runs, as in Claude Code.
pub fn unloaded_call_error(tool: &dyn Tool, violation: &str) -> String {
    let name = tool.name();
    format!(
        "InputValidationError: {name} was called with {violation}\n\n\
         This tool's schema was not sent to the API \u{2014} it was not in the discovered-tool set \
         derived from message history. Without the schema in your prompt, typed parameters \
         (arrays, numbers, booleans) get emitted as strings and the client-side parser rejects \
         them. Load the tool first: call ToolSearch with query \"select:{name}\", then retry \
         this call. For reference, this tool's input schema is: {}",
        tool.input_schema()
    )
}

/// ToolSearch: finds deferred tools in its catalog and loads them.
#[derive(Debug, Clone)]
pub struct ToolSearchTool {
    catalog: Arc<[ToolDefinition]>,
}

impl ToolSearchTool {
    /// A ToolSearch over `catalog`, the session's deferred tools.
    pub fn new(catalog: impl Into<Arc<[ToolDefinition]>>) -> Self {
        Self {
            catalog: catalog.into(),
        }
    }

    /// The deferred tools it searches.
    pub fn catalog(&self) -> &[ToolDefinition] {
        &self.catalog
    }
}

impl Tool for ToolSearchTool {
    fn name(&self) -> &str {
        TOOL_SEARCH
    }

    fn description(&self) -> String {
        TOOL_SEARCH_DESCRIPTION.to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "query": {
                    "description": "Query to find deferred tools. Use \"select:<tool_name>\" for direct selection, or keywords to search.",
                    "type": "string"
                },
                "max_results": {
                    "description": "Maximum number of results to return (default: 5)",
                    "default": 5,
                    "type": "number"
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let query = input.get("query").and_then(Value::as_str).unwrap_or("");
            let max_results = input
                .get("max_results")
                .and_then(Value::as_f64)
                .filter(|n| n.is_finite() && *n >= 1.0)
                .map_or(DEFAULT_MAX_RESULTS, |n| n.min(50.0) as usize);
            let found = search(&self.catalog, query, max_results);
            if found.is_empty() {
                return Ok(ToolOutput::text(NO_MATCHING_TOOLS));
            }
            let summary = format!("Loaded {}", found.join(", "));
            Ok(ToolOutput::text(TOOL_LOADED)
                .with_references(found.iter().map(|name| (*name).to_owned()))
                .with_summary(summary))
        })
    }

    fn permission_target(&self, _input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Other { content: None }
    }

    /// It reads the session's own catalog.
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn render_call(&self, input: &Value) -> String {
        let query = input.get("query").and_then(Value::as_str).unwrap_or("");
        format!("ToolSearch({query})")
    }
}

/// The deferred tools `query` finds, best first, at most `max_results` (a `select:` list is
/// not capped: it names what it wants).
///
/// - `select:A,B`: those names (exactly, else ignoring case), in the order given.
/// - keywords: each term scores in a tool's name (a whole word of it, split at `_`, `-` and
///   case changes, counts most) and its description; tools scoring nothing are left out.
/// - `+word`: the name must contain `word`; the other terms rank.
pub fn search<'a>(catalog: &'a [ToolDefinition], query: &str, max_results: usize) -> Vec<&'a str> {
    let query = query.trim();
    if let Some(list) = query
        .get(..7)
        .filter(|head| head.eq_ignore_ascii_case("select:"))
        .map(|_| &query[7..])
    {
        let mut found: Vec<&str> = Vec::new();
        for wanted in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let hit = catalog
                .iter()
                .find(|d| d.name == wanted)
                .or_else(|| catalog.iter().find(|d| d.name.eq_ignore_ascii_case(wanted)));
            if let Some(definition) = hit
                && !found.contains(&definition.name.as_str())
            {
                found.push(&definition.name);
            }
        }
        return found;
    }
    let mut required = Vec::new();
    let mut terms = Vec::new();
    for word in query.split_whitespace() {
        match word.strip_prefix('+') {
            Some(word) if !word.is_empty() => {
                required.push(word.to_lowercase());
                terms.push(word.to_lowercase());
            }
            Some(_) => {}
            None => terms.push(word.to_lowercase()),
        }
    }
    if terms.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(u32, &str)> = catalog
        .iter()
        .filter_map(|definition| {
            let name = definition.name.to_lowercase();
            if !required.iter().all(|r| name.contains(r.as_str())) {
                return None;
            }
            let words = name_words(&definition.name);
            let description = definition.description.to_lowercase();
            let score: u32 = terms
                .iter()
                .map(|term| term_score(term, &name, &words, &description))
                .sum();
            (score > 0).then_some((score, definition.name.as_str()))
        })
        .collect();
    // Best first; a tie keeps the catalog's order.
    scored.sort_by_key(|s| std::cmp::Reverse(s.0));
    scored
        .into_iter()
        .take(max_results.max(1))
        .map(|(_, name)| name)
        .collect()
}

fn term_score(term: &str, name: &str, words: &[String], description: &str) -> u32 {
    if name == term {
        return 20;
    }
    let mut score = 0;
    if words.iter().any(|w| w == term) {
        score += 10;
    } else if name.contains(term) {
        score += 5;
    }
    if description
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == term)
    {
        score += 2;
    } else if description.contains(term) {
        score += 1;
    }
    score
}

/// A tool name's words, lowercase: `mcp__github__create_issue` gives `mcp`, `github`,
/// `create`, `issue`; `NotebookEdit` gives `notebook`, `edit`.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_numeric();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
#[path = "tool_search_tests.rs"]
mod tests;
