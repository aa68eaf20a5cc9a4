//! The `tools` array of a request, serialized once. Its bytes are part of the prompt-cache key
//! (design.md "The one rule"), so the pool serializes it when the session's tools are known and
//! every request and fork sends those bytes as they are, never re-serializing the definitions.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::types::ToolDefinition;

/// Tool definitions and their JSON array. Equal when the bytes are.
#[derive(Clone, Default)]
pub struct ToolArray {
    definitions: Arc<[ToolDefinition]>,
    /// `None` only if serializing failed (it cannot for these types): then the definitions
    /// are serialized as they are sent.
    json: Option<Arc<RawValue>>,
}

impl ToolArray {
    /// Serializes `definitions` once, exactly as a `Vec<ToolDefinition>` serializes.
    pub fn new(definitions: impl Into<Arc<[ToolDefinition]>>) -> Self {
        let definitions = definitions.into();
        let json = match serde_json::value::to_raw_value(&*definitions) {
            Ok(raw) => Some(Arc::from(raw)),
            Err(error) => {
                tracing::error!(%error, "serializing tool definitions");
                None
            }
        };
        Self { definitions, json }
    }

    /// The definitions, in order.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// The JSON array sent on the wire.
    pub fn json(&self) -> String {
        match &self.json {
            Some(raw) => raw.get().to_owned(),
            None => serde_json::to_string(&*self.definitions).unwrap_or_default(),
        }
    }

    /// Whether the array holds no tool.
    pub fn is_empty(&self) -> bool {
        self.definitions.is_empty()
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
            _ => self.definitions == other.definitions,
        }
    }
}

impl fmt::Debug for ToolArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.definitions.iter()).finish()
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
            None => self.definitions.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ToolArray {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<ToolDefinition>::deserialize(deserializer).map(Self::new)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::CacheControl;

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
    fn decoding_gives_the_same_bytes_back() {
        let array = ToolArray::new(definitions());
        let decoded: ToolArray = serde_json::from_str(&array.json()).unwrap();
        assert_eq!(decoded, array);
        assert_eq!(decoded.definitions(), array.definitions());
    }
}
