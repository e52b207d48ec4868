//! The integration tests, one binary: wasmtime, gix and rmcp are linked once, not once per
//! file. A module per area; `common` and `support` are the helpers they share, `tests/py`
//! the Python MCP clients they drive and `tests/fixtures` their inputs.
//!
//! One test: `cargo test --test it -- approvals::` (a module) or a test's name.

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/http_server.rs"]
mod support;

mod approvals;
mod architecture;
mod auth;
mod bounds;
mod cli;
mod component_languages;
mod components;
mod compose;
mod conformance;
mod console;
mod contained_builds;
mod crash;
mod direct_references;
mod first_attempt;
mod first_calls;
mod forks;
mod fresh_calls;
mod health;
mod held;
mod history;
mod history_memo;
mod http;
mod index;
mod inspector;
mod launcher_env;
mod mcp_python;
mod mcp_scripts;
mod network;
mod oci;
mod origin;
mod python_components;
mod sandbox;
mod scripts;
mod search;
mod serve;
mod share;
mod shipped;
mod spares;
mod tasks;
mod team;
mod telemetry;
mod toolbox;
mod upstream;
mod verify;
mod wasm;
mod wasm_memory;
