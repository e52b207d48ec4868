//! toolsmith: a self-extending MCP server whose tools live in a git toolbox.
//!
//! See ARCHITECTURE.md for the map of modules and the invariants each keeps.

pub mod app;
pub mod approval;
pub mod audit;
pub mod build;
pub mod cli;
pub mod compose;
pub mod config;
pub mod console;
pub mod error;
pub mod examples;
pub mod git;
pub mod guide;
pub mod hashing;
pub mod history;
pub mod index;
pub mod manifest;
pub mod mcp;
pub mod memory;
pub mod names;
pub mod personal;
pub mod platform;
pub mod register;
pub mod runner;
pub mod scaffold;
pub mod scan;
pub mod search;
pub mod secrets;
pub mod servers;
pub mod share;
pub mod sync;
pub mod toolbox;
pub mod trust;
