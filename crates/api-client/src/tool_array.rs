//! The `tools` array of a request, serialized once, and the [`ToolDefinition`]s it holds. Its
//! bytes are part of the prompt-cache key (docs/ARCHITECTURE.md, "The one rule"), so the pool
//! serializes it when the session's tools are known and every request and fork sends those
//! bytes as they are, never re-serializing the definitions.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::cache_control::CacheControl;

/// A client tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The JSON Schema of its input.
    pub input_schema: serde_json::Value,
    /// A cache breakpoint after this definition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// Tool definitions and their JSON array. Equal when the bytes are.
///
/// Server tools (the API's own, such as `{"type": "web_search_20250305", "name": "web_search",
/// "max_uses": 8}`) follow the client tools in the array, as given; they have no input schema
/// and are not in [`ToolArray::definitions`].
#[derive(Clone, Default)]
pub struct ToolArray {
    definitions: Arc<[ToolDefinition]>,
    server_tools: Arc<[serde_json::Value]>,
    /// `None` only if serializing failed (it cannot for these types): then the definitions
    /// are serialized as they are sent.
    json: Option<Arc<RawValue>>,
}

impl ToolArray {
    /// Serializes `definitions` once, exactly as a `Vec<ToolDefinition>` serializes.
    pub fn new(definitions: impl Into<Arc<[ToolDefinition]>>) -> Self {
        Self::serialize(definitions.into(), Arc::from(Vec::new()))
    }

    /// This array with `server_tools` after the client tools (serialized once, again).
    pub fn with_server_tools(&self, server_tools: Vec<serde_json::Value>) -> Self {
        let mut all = self.server_tools.to_vec();
        all.extend(server_tools);
        Self::serialize(Arc::clone(&self.definitions), Arc::from(all))
    }

    fn serialize(
        definitions: Arc<[ToolDefinition]>,
        server_tools: Arc<[serde_json::Value]>,
    ) -> Self {
        let json = match serde_json::value::to_raw_value(&Entries(&definitions, &server_tools)) {
            Ok(raw) => Some(Arc::from(raw)),
            Err(error) => {
                tracing::error!(%error, "serializing tool definitions");
                None
            }
        };
        Self {
            definitions,
            server_tools,
            json,
        }
    }

    /// The server tools, in order.
    pub fn server_tools(&self) -> &[serde_json::Value] {
        &self.server_tools
    }

    /// Whether a server tool of this `name` is offered (`web_search`).
    pub fn has_server_tool(&self, name: &str) -> bool {
        self.server_tools
            .iter()
            .any(|t| t.get("name").and_then(serde_json::Value::as_str) == Some(name))
    }

    /// The definitions, in order.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// The JSON array sent on the wire.
    pub fn json(&self) -> String {
        match &self.json {
            Some(raw) => raw.get().to_owned(),
            None => serde_json::to_string(&Entries(&self.definitions, &self.server_tools))
                .unwrap_or_default(),
        }
    }

    /// Whether the array holds no tool.
    pub fn is_empty(&self) -> bool {
        self.definitions.is_empty() && self.server_tools.is_empty()
    }
}

/// The wire array: client tools, then server tools.
struct Entries<'a>(&'a [ToolDefinition], &'a [serde_json::Value]);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.0.len() + self.1.len()))?;
        for definition in self.0 {
            seq.serialize_element(definition)?;
        }
        for tool in self.1 {
            seq.serialize_element(tool)?;
        }
        seq.end()
    }
}

impl Deref for ToolArray {
    type Target = [ToolDefinition];

    fn deref(&self) -> &[ToolDefinition] {
        &self.definitions
    }
}

impl PartialEq for ToolArray {
    fn eq(&self, other: &Self) -> bool {
        match (&self.json, &other.json) {
            (Some(a), Some(b)) => a.get() == b.get(),
            _ => self.definitions == other.definitions && self.server_tools == other.server_tools,
        }
    }
}

impl fmt::Debug for ToolArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.definitions.iter())
            .entries(self.server_tools.iter())
            .finish()
    }
}

impl From<Vec<ToolDefinition>> for ToolArray {
    fn from(definitions: Vec<ToolDefinition>) -> Self {
        Self::new(definitions)
    }
}

impl From<Arc<[ToolDefinition]>> for ToolArray {
    fn from(definitions: Arc<[ToolDefinition]>) -> Self {
        Self::new(definitions)
    }
}

impl FromIterator<ToolDefinition> for ToolArray {
    fn from_iter<I: IntoIterator<Item = ToolDefinition>>(iter: I) -> Self {
        Self::new(iter.into_iter().collect::<Vec<_>>())
    }
}

impl Serialize for ToolArray {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.json {
            Some(raw) => raw.serialize(serializer),
            None => Entries(&self.definitions, &self.server_tools).serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ToolArray {
    /// Entries without an `input_schema` are server tools.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let entries = Vec::<serde_json::Value>::deserialize(deserializer)?;
        let mut definitions = Vec::new();
        let mut server_tools = Vec::new();
        for entry in entries {
            if entry.get("input_schema").is_some() {
                definitions.push(serde_json::from_value(entry).map_err(serde::de::Error::custom)?);
            } else {
                server_tools.push(entry);
            }
        }
        Ok(Self::serialize(
            Arc::from(definitions),
            Arc::from(server_tools),
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn definitions() -> Vec<ToolDefinition> {
        vec![
            ToolDefinition {
                name: "Read".into(),
                description: "Reads a file. Ünïcödé \"quoted\" \\ and\nnewline".into(),
                input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}),
                cache_control: None,
            },
            ToolDefinition {
                name: "Write".into(),
                description: String::new(),
                input_schema: json!({"type": "object"}),
                cache_control: Some(CacheControl::ephemeral()),
            },
        ]
    }

    #[test]
    fn the_bytes_are_those_of_the_definitions_serialized() {
        let array = ToolArray::new(definitions());
        let expected = serde_json::to_string(&definitions()).unwrap();
        assert_eq!(array.json(), expected);
        assert_eq!(serde_json::to_string(&array).unwrap(), expected);
    }

    #[test]
    fn server_tools_follow_the_client_tools_and_decode_back() {
        let array = ToolArray::new(definitions()).with_server_tools(vec![
            json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 8}),
        ]);
        let mut expected: Vec<serde_json::Value> =
            serde_json::from_str(&serde_json::to_string(&definitions()).unwrap()).unwrap();
        expected.push(json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 8}));
        let sent: Vec<serde_json::Value> = serde_json::from_str(&array.json()).unwrap();
        assert_eq!(sent, expected);
        // The client tools' bytes are those of the array without server tools.
        let plain = ToolArray::new(definitions()).json();
        assert!(array.json().starts_with(plain.trim_end_matches(']')));
        assert_eq!(array.definitions().len(), 2);
        assert!(array.has_server_tool("web_search"));
        let decoded: ToolArray = serde_json::from_str(&array.json()).unwrap();
        assert_eq!(decoded, array);
        assert_eq!(decoded.server_tools(), array.server_tools());
    }

    #[test]
    fn decoding_gives_the_same_bytes_back() {
        let array = ToolArray::new(definitions());
        let decoded: ToolArray = serde_json::from_str(&array.json()).unwrap();
        assert_eq!(decoded, array);
        assert_eq!(decoded.definitions(), array.definitions());
    }
}
