//! A `kind = "mcp"` entry's `[mcp]` table: how its server is started or reached.

use super::domain;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The MCP server of a `kind = "mcp"` entry: a program started over stdio (`command`, from
/// the entry's `[dependencies]` or the system) or a streamable HTTP `url`. Its tools become
/// `<entry>__<tool>` tools; what it needs beyond the default grants (network, a root,
/// secrets) is asked under `[capabilities]` and `[secrets]` and approved by a person.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpServer {
    /// stdio: the program, a command of the entry's packages (`node_modules/.bin`, the venv's
    /// `bin`) or one on PATH (`node`, `python3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// stdio: its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// stdio: environment values it starts with (settings, never secrets: those are
    /// `[secrets]`, set by a person and given only once the entry is approved).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Streamable HTTP: the server's URL; reaching its host is network access to that domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP: request headers; `${NAME}` stands for the value of the declared secret NAME.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Only these of its tools become toolsmith tools (default: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Seconds without a call after which the server is stopped (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_secs: Option<u64>,
}

impl McpServer {
    /// Seconds without a call after which a started server is stopped.
    pub const DEFAULT_IDLE_SECS: u64 = 300;

    /// The idle time in force (`idle_secs`, else the default), in seconds.
    pub fn idle_secs(&self) -> u64 {
        self.idle_secs.unwrap_or(Self::DEFAULT_IDLE_SECS)
    }

    /// The host an HTTP entry reaches (None for a stdio entry or an unparsable URL).
    pub fn url_host(&self) -> Option<String> {
        self.url.as_deref().and_then(domain::url_host)
    }
}
