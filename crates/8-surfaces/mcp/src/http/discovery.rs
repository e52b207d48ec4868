//! Discovery documents served over HTTP without authentication: the MCP server card
//! (`/.well-known/mcp/server-card.json`: name, version, transports, capabilities, auth).
//! The registry's `server.json` at the repository root describes the same server for
//! publishing; a test keeps its version equal to the crate's.

use super::auth::{Auth, METADATA_PATH};
use crate::{Server, Shared};
use rmcp::ServerHandler;
use serde_json::{Value, json};
use std::sync::Arc;

/// What toolsmith is, in the server card (the `toolsmith` package's description).
const DESCRIPTION: &str = "A self-extending MCP server: an AI writes tools, toolsmith builds, stores, versions and runs them in a git toolbox";

/// Where the server card is served.
pub const CARD_PATH: &str = "/.well-known/mcp/server-card.json";

/// The server card of this listener. `base` is the public base URL (scheme and host).
pub fn server_card(shared: &Arc<Shared>, auth: &Auth, base: &str) -> Value {
    let info = Server::new(Arc::clone(shared)).get_info();
    let capabilities = serde_json::to_value(&info.capabilities).unwrap_or(Value::Null);
    let auth = match auth {
        Auth::Open => json!({"required": false, "schemes": []}),
        Auth::Token(_) => json!({"required": true, "schemes": ["bearer"]}),
        Auth::OAuth(o) => json!({
            "required": true,
            "schemes": ["oauth2"],
            "authorizationServers": [o.issuer],
            "protectedResourceMetadata": format!("{base}{METADATA_PATH}/mcp"),
        }),
    };
    json!({
        "name": "toolsmith",
        "title": "toolsmith",
        "version": env!("CARGO_PKG_VERSION"),
        "description": DESCRIPTION,
        "serverInfo": {"name": "toolsmith", "version": env!("CARGO_PKG_VERSION")},
        "protocolVersions": ["2025-11-25", "2026-07-28"],
        "transports": [{"type": "streamable-http", "url": format!("{base}/mcp")}],
        "capabilities": capabilities,
        "auth": auth,
        "tools": "dynamic",
    })
}
