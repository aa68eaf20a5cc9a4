//! One server's configuration in Claude Code's shape, parsed from an `mcpServers` object:
//! `{"command", "args", "env"}` (stdio, `"type": "stdio"` optional) or
//! `{"type": "http", "url", "headers"}` (streamable HTTP), or `{"type": "sdk", "name"}` (a
//! server inside the Agent SDK app driving tine, reached through it). `"sse"` is refused with a
//! pointer to `http`. Values keep their `${VAR}` references; [`McpServerConfig::expanded`] resolves them
//! when the server is started.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value, json};

use crate::expand::expand_vars;

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServerConfig {
    /// A child process speaking JSON-RPC on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables set for it.
        env: BTreeMap<String, String>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// A server running inside the Agent SDK app that drives tine (`create_sdk_mcp_server`),
    /// reached through the app's control protocol (an [`SdkMcpRelay`](crate::SdkMcpRelay)).
    Sdk {
        /// The name the app gave the server (the app routes on its `mcpServers` key).
        name: String,
    },
}

/// Why one server's entry is unusable. The message says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerConfigError {
    /// The config is not a JSON object.
    #[error("must be an object such as {{\"command\": \"npx\", \"args\": [...]}}, found {found}")]
    NotAnObject {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// An SSE server (deprecated by MCP; not supported).
    #[error(
        "`type` \"sse\" is not supported; most servers also speak streamable HTTP: use \"type\": \"http\" with the server's HTTP endpoint"
    )]
    SseUnsupported,
    /// A `type` tine does not know.
    #[error(
        "unknown `type` \"{0}\": use \"stdio\" (with `command`) or \"http\" (with `url`); \"sdk\" is for servers of an Agent SDK app"
    )]
    UnknownType(String),
    /// A field of the wrong type.
    #[error("`{field}` must be {expected}")]
    Field {
        /// The field.
        field: &'static str,
        /// The type it should have.
        expected: &'static str,
    },
    /// Neither `command` nor `url`.
    #[error("needs `command` (a stdio server) or `url` with \"type\": \"http\"")]
    Incomplete,
    /// `${VAR}` names environment variables that are not set.
    #[error("environment variable {} is not set (set it, or write ${{VAR:-default}})", .0.join(", "))]
    MissingEnv(Vec<String>),
    /// The server name is not valid.
    #[error("name {0}")]
    BadName(&'static str),
}

impl McpServerConfig {
    /// Parses one entry of `mcpServers`.
    pub fn from_json(value: &Value) -> Result<Self, ServerConfigError> {
        let Value::Object(map) = value else {
            return Err(ServerConfigError::NotAnObject {
                found: json_kind(value),
            });
        };
        let kind = match map.get("type") {
            None | Some(Value::Null) => None,
            Some(Value::String(kind)) => Some(kind.as_str()),
            Some(_) => {
                return Err(ServerConfigError::Field {
                    field: "type",
                    expected: "a string (\"stdio\", \"http\" or \"sdk\")",
                });
            }
        };
        let stdio = || -> Result<Self, ServerConfigError> {
            let command = string(map, "command")?.ok_or(ServerConfigError::Incomplete)?;
            Ok(McpServerConfig::Stdio {
                command,
                args: strings(map, "args")?,
                env: string_map(map, "env")?,
            })
        };
        let http = || -> Result<Self, ServerConfigError> {
            let url = string(map, "url")?.ok_or(ServerConfigError::Field {
                field: "url",
                expected: "the server's URL (an http server needs `url`)",
            })?;
            Ok(McpServerConfig::Http {
                url,
                headers: string_map(map, "headers")?,
            })
        };
        match kind {
            Some("stdio") => stdio(),
            Some("sdk") => Ok(McpServerConfig::Sdk {
                name: string(map, "name")?.ok_or(ServerConfigError::Field {
                    field: "name",
                    expected: "the server's name in the SDK app (an sdk server needs `name`)",
                })?,
            }),
            Some("http" | "streamable-http" | "streamableHttp") => http(),
            Some("sse") => Err(ServerConfigError::SseUnsupported),
            Some(other) => Err(ServerConfigError::UnknownType(other.to_owned())),
            // No type: a command means stdio; a bare url is taken as streamable HTTP.
            None if map.contains_key("command") => stdio(),
            None if map.contains_key("url") => http(),
            None => Err(ServerConfigError::Incomplete),
        }
    }

    /// The entry as written to a settings file or `.mcp.json`.
    pub fn to_json(&self) -> Value {
        match self {
            McpServerConfig::Stdio { command, args, env } => {
                let mut map = Map::new();
                map.insert("type".into(), json!("stdio"));
                map.insert("command".into(), json!(command));
                map.insert("args".into(), json!(args));
                if !env.is_empty() {
                    map.insert("env".into(), json!(env));
                }
                Value::Object(map)
            }
            McpServerConfig::Http { url, headers } => {
                let mut map = Map::new();
                map.insert("type".into(), json!("http"));
                map.insert("url".into(), json!(url));
                if !headers.is_empty() {
                    map.insert("headers".into(), json!(headers));
                }
                Value::Object(map)
            }
            McpServerConfig::Sdk { name } => json!({"type": "sdk", "name": name}),
        }
    }

    /// The entry without what may hold secrets (`env` and `headers` values): the type and
    /// the command line, URL or name. What a status report shows of it.
    pub fn to_public_json(&self) -> Value {
        match self {
            McpServerConfig::Stdio { command, args, .. } => {
                json!({"type": "stdio", "command": command, "args": args})
            }
            McpServerConfig::Http { url, .. } => json!({"type": "http", "url": url}),
            McpServerConfig::Sdk { .. } => self.to_json(),
        }
    }

    /// `stdio`, `http` or `sdk`.
    pub fn transport_name(&self) -> &'static str {
        match self {
            McpServerConfig::Stdio { .. } => "stdio",
            McpServerConfig::Http { .. } => "http",
            McpServerConfig::Sdk { .. } => "sdk",
        }
    }

    /// The configuration with `${VAR}` and `${VAR:-default}` resolved through `lookup`.
    pub fn expanded(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ServerConfigError> {
        let mut missing = Vec::new();
        let mut one = |text: &str| match expand_vars(text, lookup) {
            Ok(text) => text,
            Err(names) => {
                for name in names {
                    if !missing.contains(&name) {
                        missing.push(name);
                    }
                }
                String::new()
            }
        };
        let expanded = match self {
            McpServerConfig::Stdio { command, args, env } => McpServerConfig::Stdio {
                command: one(command),
                args: args.iter().map(|a| one(a)).collect(),
                env: env.iter().map(|(k, v)| (k.clone(), one(v))).collect(),
            },
            McpServerConfig::Http { url, headers } => McpServerConfig::Http {
                url: one(url),
                headers: headers.iter().map(|(k, v)| (k.clone(), one(v))).collect(),
            },
            // The app names its server; nothing to expand.
            McpServerConfig::Sdk { name } => McpServerConfig::Sdk { name: name.clone() },
        };
        if missing.is_empty() {
            Ok(expanded)
        } else {
            Err(ServerConfigError::MissingEnv(missing))
        }
    }
}

impl fmt::Display for McpServerConfig {
    /// One line for `tine mcp list`: the command line or the URL (never header values, which
    /// often hold tokens).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpServerConfig::Stdio { command, args, .. } => {
                f.write_str(command)?;
                for arg in args {
                    write!(f, " {arg}")?;
                }
                Ok(())
            }
            McpServerConfig::Http { url, .. } => write!(f, "{url} (HTTP)"),
            McpServerConfig::Sdk { name } => write!(f, "{name} (in the Agent SDK app)"),
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn string(
    map: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<String>, ServerConfigError> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(Some(text.clone())),
        Some(_) => Err(ServerConfigError::Field {
            field,
            expected: "a non-empty string",
        }),
    }
}

fn strings(
    map: &Map<String, Value>,
    field: &'static str,
) -> Result<Vec<String>, ServerConfigError> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => Ok(text.clone()),
                _ => Err(ServerConfigError::Field {
                    field,
                    expected: "an array of strings",
                }),
            })
            .collect(),
        Some(_) => Err(ServerConfigError::Field {
            field,
            expected: "an array of strings",
        }),
    }
}

fn string_map(
    map: &Map<String, Value>,
    field: &'static str,
) -> Result<BTreeMap<String, String>, ServerConfigError> {
    let expected = "an object of string values";
    match map.get(field) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => Ok((key.clone(), text.clone())),
                // Numbers and booleans are what people mean as strings in env blocks.
                Value::Number(n) => Ok((key.clone(), n.to_string())),
                Value::Bool(b) => Ok((key.clone(), b.to_string())),
                _ => Err(ServerConfigError::Field { field, expected }),
            })
            .collect(),
        Some(_) => Err(ServerConfigError::Field { field, expected }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_claude_code_shapes() {
        let stdio = McpServerConfig::from_json(&json!({
            "command": "npx", "args": ["-y", "srv"], "env": {"TOKEN": "${T}", "N": 3}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            stdio,
            McpServerConfig::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "srv".into()],
                env: [
                    ("N".to_owned(), "3".to_owned()),
                    ("TOKEN".into(), "${T}".into())
                ]
                .into_iter()
                .collect(),
            }
        );
        let http = McpServerConfig::from_json(&json!({
            "type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer x"}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(http.transport_name(), "http");
        assert_eq!(http.to_string(), "http://127.0.0.1:1/mcp (HTTP)");
        assert_eq!(
            McpServerConfig::from_json(&http.to_json()).ok(),
            Some(http.clone())
        );
        assert_eq!(
            McpServerConfig::from_json(&stdio.to_json()).ok(),
            Some(stdio)
        );
    }

    #[test]
    fn bad_entries_say_what_to_fix() {
        let err = |v: Value| match McpServerConfig::from_json(&v) {
            Err(e) => e.to_string(),
            Ok(c) => panic!("accepted {c:?}"),
        };
        assert!(err(json!({"type": "sse", "url": "x"})).contains("use \"type\": \"http\""));
        assert!(err(json!({"args": []})).contains("needs `command`"));
        assert!(err(json!({"command": "x", "args": "a b"})).contains("`args` must be"));
        assert!(err(json!({"type": "http"})).contains("`url`"));
        assert!(err(json!("npx")).contains("must be an object"));
        assert!(err(json!({"type": "ws", "url": "x"})).contains("unknown `type`"));
        assert!(err(json!({"type": "sdk"})).contains("`name`"));
    }

    #[test]
    fn an_sdk_entry_is_the_type_and_the_name_the_sdk_sends() {
        // What the Python SDK passes in --mcp-config once it strips the instance.
        let sent = json!({"type": "sdk", "name": "calc"});
        let config = McpServerConfig::from_json(&sent).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            config,
            McpServerConfig::Sdk {
                name: "calc".into()
            }
        );
        assert_eq!(config.transport_name(), "sdk");
        assert_eq!(config.to_json(), sent);
        assert_eq!(config.to_public_json(), sent);
        assert_eq!(config.expanded(&|_| None), Ok(config.clone()));
        assert_eq!(config.to_string(), "calc (in the Agent SDK app)");
    }

    #[test]
    fn the_public_form_keeps_secrets_out() {
        let http = McpServerConfig::from_json(&json!({
            "type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer x"}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            http.to_public_json(),
            json!({"type": "http", "url": "http://127.0.0.1:1/mcp"})
        );
        let stdio = McpServerConfig::from_json(&json!({
            "command": "srv", "args": ["-v"], "env": {"TOKEN": "secret"}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!stdio.to_public_json().to_string().contains("secret"));
    }

    #[test]
    fn expansion_reports_every_missing_variable() {
        let config = McpServerConfig::from_json(&json!({
            "command": "${BIN:-srv}", "args": ["${A}"], "env": {"K": "${B}"}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let none = |_: &str| None;
        assert_eq!(
            config.expanded(&none),
            Err(ServerConfigError::MissingEnv(vec!["A".into(), "B".into()]))
        );
        let some = |name: &str| Some(format!("<{name}>"));
        let McpServerConfig::Stdio { command, args, env } =
            config.expanded(&some).unwrap_or_else(|e| panic!("{e}"))
        else {
            panic!("not stdio")
        };
        assert_eq!((command.as_str(), args[0].as_str()), ("<BIN>", "<A>"));
        assert_eq!(env["K"], "<B>");
    }
}
