//! Prompt-cache breakpoints: `cache_control` on a block, a tool definition or a system text
//! block marks where a cached prefix ends.

use serde::{Deserialize, Serialize};

/// How long a prompt-cache entry lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CacheTtl {
    /// Five minutes (the default).
    #[serde(rename = "5m")]
    FiveMinutes,
    /// One hour.
    #[serde(rename = "1h")]
    OneHour,
}

/// The kind of a cache breakpoint; the API knows only `ephemeral`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CacheControlType {
    /// The only kind the API has.
    #[default]
    Ephemeral,
}

/// `cache_control: {type: "ephemeral", ttl?: "5m" | "1h"}`: marks a prompt-cache breakpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct CacheControl {
    /// The kind of breakpoint (`ephemeral`).
    #[serde(rename = "type")]
    pub kind: CacheControlType,
    /// How long the entry lives; `None`: five minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<CacheTtl>,
}

impl CacheControl {
    /// A breakpoint with the default (5 minute) lifetime; `ttl` is omitted on the wire.
    pub fn ephemeral() -> Self {
        Self {
            kind: CacheControlType::Ephemeral,
            ttl: None,
        }
    }

    /// A breakpoint with an explicit lifetime.
    pub fn with_ttl(ttl: CacheTtl) -> Self {
        Self {
            kind: CacheControlType::Ephemeral,
            ttl: Some(ttl),
        }
    }
}
