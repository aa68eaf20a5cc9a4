//! The `tools` array of a request, serialized once, and the [`ToolDefinition`]s it holds. Its
//! bytes are part of the prompt-cache key (docs/ARCHITECTURE.md, "The one rule"), so the pool
//! serializes it when the session's tools are known and every request and fork sends those
//! bytes as they are, never re-serializing the definitions.
//!
//! Deferred tools (the Messages API's tool search): the array may carry a catalog of tools
//! sent with `defer_loading: true` only once the conversation loads them (a `tool_reference`
//! block in a tool result names each). [`ToolArray::loading`] gives the array of a request
//! whose history loaded some: the session's bytes as they are, then each loaded definition
//! (serialized once, when the catalog was made) appended, so nothing before it changes. The
//! API keeps deferred tools out of the cached prefix, and the set loaded is derived from the
//! messages alone, so a fork or a resumed session sends the same array as its parent.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::cache_control::CacheControl;
use crate::content::{ContentBlock, Message, MessageContent, ToolResultContent};

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
    /// Sent only once loaded by a `tool_reference` (tool search); outside the cached prefix.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
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
    /// The client tools, then the loaded deferred tools (the last `loaded` of them).
    definitions: Arc<[ToolDefinition]>,
    server_tools: Arc<[serde_json::Value]>,
    /// `None` only if serializing failed (it cannot for these types): then the definitions
    /// are serialized as they are sent.
    json: Option<Arc<RawValue>>,
    /// The deferred tools the conversation may load, each serialized once.
    deferred: Arc<[DeferredEntry]>,
    /// How many definitions at the end are loaded deferred tools (sent after the server tools).
    loaded: usize,
}

/// A deferred tool of the catalog: its definition (`defer_loading: true`) and its bytes.
#[derive(Debug, Clone, PartialEq)]
struct DeferredEntry {
    definition: ToolDefinition,
    json: Arc<str>,
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
        Self {
            deferred: Arc::clone(&self.deferred),
            ..Self::serialize(Arc::from(self.base()), Arc::from(all))
        }
    }

    fn serialize(
        definitions: Arc<[ToolDefinition]>,
        server_tools: Arc<[serde_json::Value]>,
    ) -> Self {
        let json = match serde_json::value::to_raw_value(&Entries(&definitions, &server_tools, 0)) {
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
            deferred: Arc::from(Vec::new()),
            loaded: 0,
        }
    }

    /// This array (its bytes unchanged) with `deferred` as its catalog of deferred tools, in
    /// that order; each is marked `defer_loading` and serialized once, here. A tool the array
    /// sends anyway is left out of the catalog.
    pub fn with_deferred(&self, deferred: Vec<ToolDefinition>) -> Self {
        let entries: Vec<DeferredEntry> = deferred
            .into_iter()
            .filter(|d| !self.base().iter().any(|b| b.name == d.name))
            .map(|mut definition| {
                definition.defer_loading = true;
                definition.cache_control = None;
                let json = serde_json::to_string(&definition).unwrap_or_default();
                DeferredEntry {
                    definition,
                    json: Arc::from(json),
                }
            })
            .collect();
        Self {
            deferred: Arc::from(entries),
            ..self.clone()
        }
    }

    /// The deferred tools the conversation may load (`defer_loading: true`), in order.
    pub fn deferred(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.deferred.iter().map(|entry| &entry.definition)
    }

    /// Whether `name` is a deferred tool of the catalog.
    pub fn is_deferred(&self, name: &str) -> bool {
        self.deferred.iter().any(|e| e.definition.name == name)
    }

    /// The array of a request whose history loaded `names` (see [`referenced_tools`]): these
    /// bytes, then each named deferred tool's, appended in the order given. Names the catalog
    /// does not hold, and repeats, are skipped. Without any, the array itself.
    pub fn loading<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Self {
        let base = self.base();
        let mut picked: Vec<&DeferredEntry> = Vec::new();
        for name in names {
            if let Some(entry) = self.deferred.iter().find(|e| e.definition.name == name)
                && !picked.iter().any(|p| p.definition.name == name)
            {
                picked.push(entry);
            }
        }
        if picked.is_empty() && self.loaded == 0 {
            return self.clone();
        }
        let definitions: Vec<ToolDefinition> = base
            .iter()
            .cloned()
            .chain(picked.iter().map(|e| e.definition.clone()))
            .collect();
        // The session's bytes as they are, then the loaded definitions' own.
        let base_json = self.base_json();
        let mut json = String::with_capacity(
            base_json.len() + picked.iter().map(|e| e.json.len() + 1).sum::<usize>(),
        );
        json.push_str(base_json.strip_suffix(']').unwrap_or("["));
        for entry in &picked {
            if json.len() > 1 {
                json.push(',');
            }
            json.push_str(&entry.json);
        }
        json.push(']');
        let raw = match RawValue::from_string(json) {
            Ok(raw) => Some(Arc::from(raw)),
            Err(error) => {
                tracing::error!(%error, "joining loaded tool definitions");
                None
            }
        };
        Self {
            definitions: Arc::from(definitions),
            server_tools: Arc::clone(&self.server_tools),
            json: raw,
            deferred: Arc::clone(&self.deferred),
            loaded: picked.len(),
        }
    }

    /// The client tools sent whatever is loaded.
    fn base(&self) -> &[ToolDefinition] {
        &self.definitions[..self.definitions.len() - self.loaded]
    }

    /// The bytes of the array without loaded tools.
    fn base_json(&self) -> String {
        match self.loaded {
            0 => self.json(),
            _ => serde_json::to_string(&Entries(self.base(), &self.server_tools, 0))
                .unwrap_or_default(),
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
            None => {
                serde_json::to_string(&Entries(&self.definitions, &self.server_tools, self.loaded))
                    .unwrap_or_default()
            }
        }
    }

    /// Whether the array holds no tool.
    pub fn is_empty(&self) -> bool {
        self.definitions.is_empty() && self.server_tools.is_empty()
    }
}

/// The wire array: client tools, then server tools, then the last `.2` client tools (loaded
/// deferred ones).
struct Entries<'a>(&'a [ToolDefinition], &'a [serde_json::Value], usize);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let (base, loaded) = self.0.split_at(self.0.len() - self.2.min(self.0.len()));
        let mut seq = serializer.serialize_seq(Some(self.0.len() + self.1.len()))?;
        for definition in base {
            seq.serialize_element(definition)?;
        }
        for tool in self.1 {
            seq.serialize_element(tool)?;
        }
        for definition in loaded {
            seq.serialize_element(definition)?;
        }
        seq.end()
    }
}

/// The tools the conversation loaded: every `tool_reference` in its tool results, in the
/// order they first appear. What a request's array appends ([`ToolArray::loading`]).
pub fn referenced_tools(messages: &[Message]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for message in messages {
        let MessageContent::Blocks(blocks) = &message.content else {
            continue;
        };
        for block in blocks {
            let ContentBlock::ToolResult(result) = block else {
                continue;
            };
            let Some(ToolResultContent::Blocks(inner)) = &result.content else {
                continue;
            };
            for reference in inner {
                if let ContentBlock::ToolReference(r) = reference
                    && !names.contains(&r.tool_name.as_str())
                {
                    names.push(&r.tool_name);
                }
            }
        }
    }
    names
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
            .entries(self.deferred.iter().map(|e| &e.definition.name))
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
            None => {
                Entries(&self.definitions, &self.server_tools, self.loaded).serialize(serializer)
            }
        }
    }
}

impl<'de> Deserialize<'de> for ToolArray {
    /// Entries without an `input_schema` are server tools; client tools after them are
    /// loaded deferred tools.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let entries = Vec::<serde_json::Value>::deserialize(deserializer)?;
        let mut definitions = Vec::new();
        let mut server_tools = Vec::new();
        let mut loaded = 0;
        for entry in entries {
            if entry.get("input_schema").is_some() {
                definitions.push(serde_json::from_value(entry).map_err(serde::de::Error::custom)?);
                if !server_tools.is_empty() {
                    loaded += 1;
                }
            } else {
                server_tools.push(entry);
            }
        }
        let mut array = Self::serialize(Arc::from(definitions), Arc::from(server_tools));
        if loaded > 0 {
            array.loaded = loaded;
            array.json = serde_json::value::to_raw_value(&Entries(
                &array.definitions,
                &array.server_tools,
                loaded,
            ))
            .ok()
            .map(Arc::from);
        }
        Ok(array)
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
                defer_loading: false,
                cache_control: None,
            },
            ToolDefinition {
                name: "Write".into(),
                description: String::new(),
                input_schema: json!({"type": "object"}),
                defer_loading: false,
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

    fn deferred_tool(name: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: format!("{name} does a thing"),
            input_schema: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
            defer_loading: false,
            cache_control: None,
        }
    }

    fn loaded_by(names: &[&str]) -> Vec<Message> {
        let references = names
            .iter()
            .map(|n| ContentBlock::tool_reference(*n))
            .collect();
        vec![
            Message::user("find tools"),
            Message::assistant(vec![ContentBlock::tool_use(
                "t1",
                "ToolSearch",
                json!({"query": "x"}),
            )]),
            Message::user(vec![
                ContentBlock::ToolResult(crate::ToolResultBlock {
                    tool_use_id: "t1".into(),
                    content: Some(ToolResultContent::Blocks(references)),
                    is_error: None,
                    cache_control: None,
                }),
                ContentBlock::text("Tool loaded."),
            ]),
        ]
    }

    #[test]
    fn a_loaded_deferred_tool_is_appended_after_the_sessions_bytes() {
        let web = json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 8});
        let array = ToolArray::new(definitions())
            .with_server_tools(vec![web.clone()])
            .with_deferred(vec![
                deferred_tool("mcp__a__one"),
                deferred_tool("mcp__a__two"),
                deferred_tool("Read"), // sent anyway: not deferred
            ]);
        let base = array.json();
        assert_eq!(
            array
                .deferred()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>(),
            ["mcp__a__one", "mcp__a__two"]
        );
        assert!(array.is_deferred("mcp__a__two") && !array.is_deferred("Read"));
        // Nothing loaded: the array itself.
        assert_eq!(array.loading(referenced_tools(&loaded_by(&[]))), array);

        let messages = loaded_by(&["mcp__a__two", "unknown", "mcp__a__two"]);
        assert_eq!(
            referenced_tools(&messages),
            ["mcp__a__two", "unknown"],
            "in order, once each"
        );
        let loaded = array.loading(referenced_tools(&messages));
        let sent = loaded.json();
        assert!(sent.starts_with(base.trim_end_matches(']')), "{sent}");
        let values: Vec<serde_json::Value> = serde_json::from_str(&sent).unwrap();
        assert_eq!(values.len(), 4);
        assert_eq!(values[2], web, "server tools stay where they were");
        assert_eq!(values[3]["name"], "mcp__a__two");
        assert_eq!(values[3]["defer_loading"], true);
        // The definitions hold it too, and the catalog stays for the next request.
        assert_eq!(loaded.definitions().len(), 3);
        assert!(loaded.definitions()[2].defer_loading);
        assert_eq!(loaded.deferred().count(), 2);
        // Loading more from the loaded array gives the same bytes as from the session's.
        let more = ["mcp__a__two", "mcp__a__one"];
        assert_eq!(loaded.loading(more).json(), array.loading(more).json());
        assert_eq!(loaded.loading([]).json(), base, "back to none loaded");
        // The bytes decode to an array that serializes the same.
        let decoded: ToolArray = serde_json::from_str(&sent).unwrap();
        assert_eq!(decoded.json(), sent);
        // Serializing through serde gives the same bytes as `json`.
        assert_eq!(serde_json::to_string(&loaded).unwrap(), sent);
        // The catalog survives adding server tools.
        assert_eq!(array.with_server_tools(Vec::new()).deferred().count(), 2);
    }

    #[test]
    fn defer_loading_is_sent_only_when_set() {
        let mut tool = deferred_tool("Placeholder");
        let plain = serde_json::to_string(&tool).unwrap();
        assert!(!plain.contains("defer_loading"));
        tool.defer_loading = true;
        let sent = serde_json::to_string(&tool).unwrap();
        assert!(
            sent.ends_with(r#""defer_loading":true}"#),
            "after the schema, as Claude Code sends it: {sent}"
        );
        let back: ToolDefinition = serde_json::from_str(&sent).unwrap();
        assert!(back.defer_loading);
    }
}
