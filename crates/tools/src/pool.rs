//! The tool pool (seed 003 §四): built-ins filtered by deny rules and sorted by name, then MCP
//! tools sorted by name after them, deduplicated with built-ins winning, and serialized once.
//!
//! Sorting the two groups separately keeps the built-in prefix of the tool array stable when an
//! MCP server comes or goes, so the prompt cache keeps hitting; serializing once makes the bytes
//! sent identical on every request (and in every fork) while the set is the same.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::tool::Tool;

/// One tool as the Messages API's `tools` array lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl ToolDefinition {
    /// The definition of `tool`.
    pub fn of(tool: &dyn Tool) -> Self {
        Self {
            name: tool.name().to_owned(),
            description: tool.description(),
            input_schema: tool.input_schema(),
        }
    }
}

/// The tools of a session, in the order the model sees them.
#[derive(Clone)]
pub struct ToolPool {
    tools: Vec<Arc<dyn Tool>>,
    definitions: Arc<str>,
}

impl fmt::Debug for ToolPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolPool")
            .field("tools", &self.names())
            .finish_non_exhaustive()
    }
}

impl ToolPool {
    /// Assembles the pool. `is_denied(name)` is true for a tool a deny rule removes entirely
    /// (a bare `Bash` rule, not `Bash(rm:*)`); the permission engine supplies it.
    pub fn assemble(
        builtins: impl IntoIterator<Item = Arc<dyn Tool>>,
        mcp: impl IntoIterator<Item = Arc<dyn Tool>>,
        is_denied: impl Fn(&str) -> bool,
    ) -> Self {
        let sorted = |tools: Vec<Arc<dyn Tool>>| {
            let mut tools: Vec<Arc<dyn Tool>> = tools
                .into_iter()
                .filter(|tool| !is_denied(tool.name()))
                .collect();
            tools.sort_by(|a, b| a.name().cmp(b.name()));
            tools
        };
        let builtins = sorted(builtins.into_iter().collect());
        let mcp = sorted(mcp.into_iter().collect());
        let mut seen = HashSet::new();
        let tools: Vec<Arc<dyn Tool>> = builtins
            .into_iter()
            .chain(mcp)
            .filter(|tool| seen.insert(tool.name().to_owned()))
            .collect();
        let definitions: Vec<ToolDefinition> = tools
            .iter()
            .map(|tool| ToolDefinition::of(tool.as_ref()))
            .collect();
        // Serializing plain strings and JSON values cannot fail; an empty array is the only
        // sane fallback if it ever did.
        let serialized = serde_json::to_string(&definitions).unwrap_or_else(|error| {
            tracing::error!(%error, "serializing tool definitions");
            "[]".to_owned()
        });
        Self {
            tools,
            definitions: Arc::from(serialized),
        }
    }

    /// The built-in tools, minus denied ones, and no MCP tools.
    pub fn builtin(is_denied: impl Fn(&str) -> bool) -> Self {
        Self::assemble(crate::builtin::builtin_tools(), Vec::new(), is_denied)
    }

    /// The tools in order.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// The tool names in order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|tool| tool.name()).collect()
    }

    /// The tool called `name`, or having it as an alias.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools
            .iter()
            .find(|tool| tool.name() == name)
            .or_else(|| {
                self.tools
                    .iter()
                    .find(|tool| tool.aliases().contains(&name))
            })
    }

    /// The definitions as values (for inspection; send [`ToolPool::serialized_definitions`]).
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|tool| ToolDefinition::of(tool.as_ref()))
            .collect()
    }

    /// The JSON array of `{name, description, input_schema}`, serialized once at assembly:
    /// byte-identical whenever the set of tools is.
    pub fn serialized_definitions(&self) -> &str {
        &self.definitions
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
