//! toolsmith: a self-extending MCP server whose tools live in a git toolbox.
//!
//! See ARCHITECTURE.md for the map of modules and the invariants each keeps.

#![forbid(unsafe_code)]

pub use toolsmith_app as app;
pub use toolsmith_approval as approval;
pub use toolsmith_audit as audit;
pub use toolsmith_build as build;
pub use toolsmith_call as call;
pub mod cli;
pub use toolsmith_compose as compose;
pub use toolsmith_config as config;
pub use toolsmith_deps as deps;
pub mod console;
pub use toolsmith_app::examples;
pub use toolsmith_error as error;
pub use toolsmith_git as git;
pub use toolsmith_guide as guide;
pub use toolsmith_hashing as hashing;
pub use toolsmith_health as health;
pub use toolsmith_history as history;
pub use toolsmith_index as index;
pub use toolsmith_manifest as manifest;
pub use toolsmith_mcp as mcp;
pub use toolsmith_memory as memory;
pub use toolsmith_names as names;
pub use toolsmith_personal as personal;
pub use toolsmith_platform as platform;
pub use toolsmith_register as register;
pub use toolsmith_runner as runner;
pub use toolsmith_sandbox as sandbox;
pub use toolsmith_scaffold as scaffold;
pub use toolsmith_search as search;
pub use toolsmith_secrets as secrets;
pub use toolsmith_servers as servers;
pub use toolsmith_share as share;
pub use toolsmith_sync as sync;
pub use toolsmith_telemetry as telemetry;
pub use toolsmith_toolbox as toolbox;
pub use toolsmith_trust as trust;
pub use toolsmith_versions as versions;
pub use toolsmith_wasm as wasm;
