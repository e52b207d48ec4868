//! The MCP server: the toolbox as live MCP tools, resources and prompts, over stdio or
//! streamable HTTP, for both protocol eras (2025-11-25 and older; 2026-07-28).
//!
//! Invariant: only this crate knows JSON-RPC and rmcp types. It reads the index through
//! `App`, writes through `Toolbox`, runs through the runners, and re-lists when the watcher
//! reports a settled change.

#![deny(missing_docs)]
#![allow(deprecated)] // MCP logging is deprecated for 2026 (SEP-2577) but 2025 peers use it.
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_app as app;
use toolsmith_approval as approval;
use toolsmith_build as build;
use toolsmith_compose as compose;
use toolsmith_config as config;
use toolsmith_error as error;
use toolsmith_guide as guide;
use toolsmith_hashing as hashing;
use toolsmith_health as health;
use toolsmith_history as history;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_memory as memory;
use toolsmith_names as names;
use toolsmith_personal as personal;
use toolsmith_platform as platform;
use toolsmith_register as register;
use toolsmith_runner as runner;
use toolsmith_sandbox as sandbox;
use toolsmith_servers as servers;
use toolsmith_share as share;
use toolsmith_sync as sync;
use toolsmith_telemetry as telemetry;
use toolsmith_toolbox as toolbox;
use toolsmith_trust as trust;

mod convert;
mod early;
// The conformance suite's fixtures: only in builds with the `conformance-fixtures` feature
// (the test and bench builds), never in the shipped binary.
#[cfg(feature = "conformance-fixtures")]
mod fixtures;
#[cfg(not(feature = "conformance-fixtures"))]
#[path = "fixtures_off.rs"]
mod fixtures;
mod handler;
mod host;
pub mod http;
pub(crate) mod hub;
mod report;
mod resources;
pub(crate) mod rounds;
mod skills;
mod tasks;
mod tool_asks;
mod tools;
mod traced;
pub mod upstream;
mod watch;

use crate::app::App;
use hub::Hub;
use rmcp::model::LoggingLevel;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

pub use convert::Exposure;

/// State shared by every session of one server process.
pub struct Shared {
    /// The toolbox, its index and the runners.
    pub app: App,
    /// The sessions of this process, for notifications to all of them.
    pub hub: Hub,
    /// Which stored tools are listed as MCP tools of their own.
    pub exposure: Exposure,
    /// The index generation last announced to clients.
    announced: std::sync::atomic::AtomicU64,
    /// Serve the conformance-suite fixtures too (test builds only: the `conformance-fixtures`
    /// feature, and `TOOLSMITH_CONFORMANCE_FIXTURES=1`).
    pub fixtures: bool,
    /// Wakes the watcher task to announce a change made through MCP.
    poke: tokio::sync::Notify,
    /// Calls running as MCP tasks (`tasks/get`, `tasks/cancel`).
    tasks: rmcp::task_manager::TaskManager,
    /// A `tools/list` was answered before the index was built (`early`).
    partial_list: std::sync::atomic::AtomicBool,
    /// Set once a `tools/list` has been answered: work a server starts in the background
    /// (`App::prestart`) waits for it, so the client's first list never waits for that.
    pub listed: tokio::sync::watch::Sender<bool>,
}

/// Per-session state (stdio run, or one 2025 HTTP session).
pub struct Session {
    /// A random id recorded in the `Session:` trailer of this session's commits.
    pub id: String,
    /// The level the client set with `logging/setLevel` (none: nothing is sent).
    pub log_level: Mutex<Option<LoggingLevel>>,
    /// The resource URIs the client subscribed to.
    pub subscribed: Mutex<HashSet<String>>,
}

/// One MCP session's handler.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

impl Default for Session {
    fn default() -> Session {
        Session {
            id: session_id(),
            log_level: Mutex::default(),
            subscribed: Mutex::default(),
        }
    }
}

/// A random session id (128 bits from the OS): it names the session's commits (`Session:`
/// trailer) that `undo_session` reverts, so it must not be guessable or repeat.
fn session_id() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // Practically unreachable; still unique per process and call.
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        b[..8].copy_from_slice(&h.finish().to_le_bytes());
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Server {
    fn new(shared: Arc<Shared>) -> Server {
        Server {
            shared,
            session: Arc::default(),
        }
    }
}

/// The guide (`toolsmith://guide`, `toolsmith guide`): the toolbox's as `view` shows it, with
/// the meta-tools.
pub fn guide(
    view: &crate::trust::View,
    toolbox: &crate::toolbox::Toolbox,
    sandbox: &crate::config::SandboxConfig,
) -> String {
    let mut g = crate::guide::render_for(view, toolbox, sandbox);
    g.push_str(&tools::guide_section());
    g
}

/// Build the shared state (`app` with its client of MCP entries' servers) and start the
/// watcher.
pub fn start(app: App, exposure: Exposure) -> anyhow::Result<Arc<Shared>> {
    let (app, pool) = upstream::with_client(app);
    let generation = app.generation();
    let fixtures = app.config().conformance_fixtures && cfg!(feature = "conformance-fixtures");
    if app.config().conformance_fixtures && !fixtures {
        tracing::warn!(
            "TOOLSMITH_CONFORMANCE_FIXTURES is set, but this build has no conformance fixtures (hint: they are in test builds: `cargo test` builds the binary with the `conformance-fixtures` feature)"
        );
    }
    let shared = Arc::new(Shared {
        app,
        hub: Hub::default(),
        exposure,
        announced: generation.into(),
        fixtures,
        poke: tokio::sync::Notify::new(),
        tasks: rmcp::task_manager::TaskManager::new(),
        partial_list: false.into(),
        listed: tokio::sync::watch::Sender::new(false),
    });
    // MCP entries' servers: a listing that changed is announced like any other change.
    let weak = Arc::downgrade(&shared);
    pool.set_on_listed(Arc::new(move |_entry: &str| {
        if let Some(s) = weak.upgrade() {
            s.poke.notify_one();
        }
    }));
    watch::spawn(Arc::clone(&shared))?;
    watch::spawn_approvals(Arc::clone(&shared));
    // MCP entries without a listing for their version (a fresh clone): listed now, in the
    // background; nothing waits for them.
    upstream::list_stale(Arc::clone(&shared), None);
    Ok(shared)
}

/// Serve MCP on stdin/stdout until the client disconnects. When both are pipes (as MCP
/// clients start servers) on Linux, they are driven by the IO reactor (rmcp's `stdio_pipes`):
/// no hand-off to a blocking thread per message; otherwise the blocking stdio handles.
pub async fn serve_stdio(shared: Arc<Shared>) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let running = traced::Traced::new(Server::new(shared), telemetry::Transport::Pipe)
        .serve(rmcp::transport::stdio_pipes())
        .await?;
    running.waiting().await?;
    Ok(())
}
