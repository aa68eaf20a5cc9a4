//! The tool pool (seed 003 §四): built-ins filtered by deny rules and sorted by name, then MCP
//! tools sorted by name after them, deduplicated with built-ins winning, and serialized once.
//!
//! Sorting the two groups separately keeps the built-in prefix of the tool array stable when an
//! MCP server comes or goes, so the prompt cache keeps hitting; serializing once makes the bytes
//! sent identical on every request (and in every fork) while the set is the same.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use tine_api_client::{ToolArray, ToolDefinition};

use crate::tool::Tool;

/// The definition of `tool` as the Messages API's `tools` array lists it.
pub fn definition_of(tool: &dyn Tool) -> ToolDefinition {
    ToolDefinition {
        name: tool.name().to_owned(),
        description: tool.description(),
        input_schema: tool.input_schema(),
        defer_loading: false,
        cache_control: None,
    }
}

/// The tools of a session, in the order the model sees them.
#[derive(Clone)]
pub struct ToolPool {
    tools: Vec<Arc<dyn Tool>>,
    definitions: ToolArray,
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
        let definitions = tools
            .iter()
            .map(|tool| definition_of(tool.as_ref()))
            .collect();
        Self { tools, definitions }
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

    /// The `tools` array of every request of the session, serialized at assembly: requests
    /// send these bytes, byte-identical whenever the set of tools is.
    pub fn definitions(&self) -> &ToolArray {
        &self.definitions
    }

    /// The JSON the requests send (for inspection).
    pub fn serialized_definitions(&self) -> String {
        self.definitions.json()
    }

    /// How many tools the pool holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the pool holds no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
