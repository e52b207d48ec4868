//! Runners: call a stored script tool (or an MCP entry's server) with JSON arguments and turn
//! what it printed into a result. WASM tools run in `toolsmith-wasm`.
//!
//! Invariant: runners know nothing of git or MCP. They get a tool (its directory and parsed
//! manifest) and arguments, and return a `CallOutput` or a `RunError` that says what to do.

#![deny(missing_docs)]

// The crates below, under the names the code map gives them.
use toolsmith_config as config;
use toolsmith_deps as deps;
use toolsmith_error as error;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_memory as memory;
use toolsmith_names as names;
use toolsmith_platform as platform;
use toolsmith_sandbox as sandbox;
use toolsmith_secrets as secrets;
use toolsmith_telemetry as telemetry;

// What a call is (the granted tool, its host, its output): below the runner, so the gates
// need not compile it.
pub(crate) use toolsmith_call::lines;
pub use toolsmith_call::{CallOutput, Came, Granted, RunError, TRACEBACK, host};

#[cfg(target_os = "linux")]
mod fork;
pub(crate) mod launch;
pub use launch::toolbox_root;
mod outcome;
mod process;
pub mod script;
pub mod server;
mod session;
pub mod spare;
mod stubs;
pub mod worker;

use crate::config::Config;
use crate::index::Tool;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What runs script tools for an `App`: the configuration and the processes kept between
/// calls (warm workers, spares), stopped when it is dropped.
pub struct Scripts {
    config: Arc<Config>,
    /// Warm workers (`run.worker = true`).
    pub workers: worker::Pool,
    /// Pre-started processes of a server's script tools.
    pub spares: spare::Pool,
}

impl Scripts {
    /// No process yet: workers and spares start on demand.
    pub fn new(config: Arc<Config>) -> Scripts {
        Scripts {
            workers: worker::Pool::new(config.max_workers),
            spares: spare::Pool::new(&config),
            config,
        }
    }

    /// The configuration its processes are started with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Run a script tool: in its warm worker when it has one, else in a fresh process.
    pub async fn call(
        &self,
        dir: &Path,
        tool: &Granted,
        args: &Value,
        host: &dyn host::Host,
    ) -> Result<CallOutput, RunError> {
        let m = &tool.manifest;
        // Only a stored tool gets a worker (not a staged copy checking its examples).
        if m.run.worker
            && m.protocol() == crate::manifest::Protocol::Jsonrpc
            && tool.origin.is_stored()
        {
            let mut out = self
                .workers
                .call(&self.config, dir, tool, args, host)
                .await?;
            out.process = Some(Came::Worker);
            return Ok(out);
        }
        script::call_fresh(self, dir, tool, args, host).await
    }

    /// Before its first call: start what a call of the stored script tool in `dir` will find
    /// waiting (its fork server or spares), as its call would run it (`tool` as admitted).
    /// False when its process cannot be made (said in the debug log).
    pub async fn prestart(&self, dir: &Path, tool: &Granted) -> bool {
        match launch::Recipe::new(dir, tool, false, &self.config).await {
            Ok(r) => {
                self.spares.prestart(dir, &r);
                true
            }
            Err(e) => {
                tracing::debug!(tool = %tool.manifest.name, "not pre-started: {e}");
                false
            }
        }
    }

    /// Wait until what is being started for the tool in `dir` (its fork server, the call it
    /// forks ahead, its spares) is up, for at most `within`: a registration leaves its tool's
    /// first call a process that is ready. True when nothing is starting any more.
    pub async fn ready_at(&self, dir: &Path, within: std::time::Duration) -> bool {
        self.spares.settled_at(dir, within).await
    }

    /// Stop every warm worker and spare (shutdown; tests).
    pub fn stop_all(&self) {
        self.workers.stop_all();
        self.spares.stop_all();
    }
}

/// The tool directory of a tool inside a toolbox root.
pub fn tool_dir(root: &Path, tool: &Tool) -> PathBuf {
    root.join(crate::index::TOOLS_DIR).join(&tool.manifest.name)
}
