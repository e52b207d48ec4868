//! Runners: call a stored tool with JSON arguments and turn what it printed into a result.
//!
//! Invariant: runners know nothing of git or MCP. They get a tool (its directory and parsed
//! manifest) and arguments, and return a `CallOutput` or a `RunError` that says what to do.

#![deny(missing_docs)]

// The crates below, under the names the code map gives them.
use toolsmith_config as config;
use toolsmith_deps as deps;
use toolsmith_error as error;
use toolsmith_hashing as hashing;
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
pub use toolsmith_call::{CallOutput, Came, Granted, host};

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
pub mod wasm;
pub mod wit;
pub mod worker;

use crate::config::Config;
use crate::index::Tool;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

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

/// Why a call failed. Each message says what happened and, in `hint`, what to do.
#[derive(Debug, Error)]
pub enum RunError {
    /// A WASM tool's artifact is not there.
    #[error("tool {tool:?} is not built: {path} is missing")]
    NotBuilt {
        /// The tool.
        tool: String,
        /// The artifact's path.
        path: PathBuf,
    },
    /// A WASM tool's artifact is not the one its tool.toml records.
    #[error(
        "tool {tool:?}: the artifact's sha256 ({actual}) does not match tool.toml ({expected}); it was changed outside toolsmith"
    )]
    Tampered {
        /// The tool.
        tool: String,
        /// The sha256 tool.toml records.
        expected: String,
        /// The artifact's sha256.
        actual: String,
    },
    /// A WASM tool's tool.toml records no artifact hash.
    #[error("tool {tool:?} has no artifact hash in tool.toml, so its artifact cannot be verified")]
    Unverified {
        /// The tool.
        tool: String,
    },
    /// The call ran past the tool's time limit.
    #[error("tool {tool:?} ran past its time limit of {ms} ms and was stopped")]
    Timeout {
        /// The tool.
        tool: String,
        /// The limit.
        ms: u64,
    },
    /// The call went over the tool's memory limit.
    #[error("tool {tool:?} went over its memory limit of {mb} MiB")]
    Memory {
        /// The tool.
        tool: String,
        /// The limit.
        mb: u64,
    },
    /// The call wrote more than the tool's output limit.
    #[error("tool {tool:?} wrote more than its output limit of {bytes} bytes")]
    OutputTooLarge {
        /// The tool.
        tool: String,
        /// The limit.
        bytes: u64,
    },
    /// The tool's process exited with a failure.
    #[error("tool {tool:?} failed (exit code {code}): {stderr}")]
    Failed {
        /// The tool.
        tool: String,
        /// Its exit code.
        code: i32,
        /// The end of what it wrote to stderr.
        stderr: String,
    },
    /// A WASM tool trapped.
    #[error("tool {tool:?} crashed: {message}")]
    Trap {
        /// The tool.
        tool: String,
        /// The trap, with its WASM backtrace.
        message: String,
    },
    /// The tool answered with an error of its own (a JSON-RPC error, a component's `Err`).
    #[error("tool {tool:?} returned an error: {message}")]
    ToolError {
        /// The tool.
        tool: String,
        /// Its message.
        message: String,
        /// The data it gave with it.
        data: Option<Value>,
    },
    /// The arguments do not fit a component's WIT parameter types.
    #[error("tool {tool:?} was not run: its arguments do not fit its WIT types: {message}")]
    Arguments {
        /// The tool.
        tool: String,
        /// Which argument and why.
        message: String,
    },
    /// A script registered as JSON-RPC did not speak it.
    #[error(
        "tool {tool:?}: protocol mismatch: it is registered as a jsonrpc script, but {message}"
    )]
    ProtocolMismatch {
        /// The tool.
        tool: String,
        /// What it did instead.
        message: String,
    },
    /// The tool broke the script protocol.
    #[error("tool {tool:?} broke the protocol: {message}")]
    Protocol {
        /// The tool.
        tool: String,
        /// How.
        message: String,
    },
    /// The tool's process could not be started.
    #[error("cannot start tool {tool:?}: {message}")]
    Start {
        /// The tool.
        tool: String,
        /// Why.
        message: String,
    },
    /// The tool asked for something its grants do not allow.
    #[error("tool {tool:?} asked for {what}, which is not allowed: {why}")]
    Denied {
        /// The tool.
        tool: String,
        /// What it asked for.
        what: String,
        /// Why not.
        why: String,
    },
    /// The sandbox could not be applied, so the tool was not run (fail closed).
    #[error("tool {tool:?} was not run: {message}")]
    Sandbox {
        /// The tool.
        tool: String,
        /// What could not be applied.
        message: String,
        /// How a person can fix it or knowingly opt out.
        hint: String,
    },
    /// A runner was handed a tool of a kind it does not run.
    #[error("a tool of kind {kind} cannot be run by this runner")]
    WrongKind {
        /// The tool's kind.
        kind: String,
    },
    /// The caller cancelled the call.
    #[error("call of {tool:?} was cancelled")]
    Cancelled {
        /// The tool.
        tool: String,
    },
    /// The tool's directory was replaced after its approval was checked.
    #[error(
        "tool {tool:?} was not run: its directory was replaced (a new version was committed) while the call was starting, after its approval was checked; nothing of it ran"
    )]
    Replaced {
        /// The tool.
        tool: String,
    },
    /// An MCP entry's server exited during a call.
    #[error(
        "the MCP server of {entry:?} {how} during the call of {tool:?}{}",
        if stderr.is_empty() { " (it wrote nothing to stderr)".to_string() } else { format!("; its stderr (what it wrote in its sandbox) ends with:\n{stderr}") }
    )]
    ServerExited {
        /// The entry.
        entry: String,
        /// The server's tool called.
        tool: String,
        /// How it ended ("exited with code 1", "was killed by signal 9").
        how: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// An MCP entry's server could not be used.
    #[error("the MCP server of {entry:?} could not be used: {message}")]
    Server {
        /// The entry.
        entry: String,
        /// What went wrong.
        message: String,
        /// What to do.
        hint: String,
    },
}

/// How a Python traceback starts: an error carrying one is the tool's own exception.
pub const TRACEBACK: &str = "Traceback (most recent call last):";

impl crate::error::Hint for RunError {
    /// What the caller can do about it.
    fn hint(&self) -> Option<String> {
        Some(match self {
            RunError::NotBuilt { tool, .. } => format!("build it: `build_tool` over MCP or `toolsmith build {tool}`"),
            RunError::Tampered { tool, .. } | RunError::Unverified { tool } => {
                format!("rebuild it from its source with `build_tool` (or `toolsmith build {tool}`), or restore the committed artifact with `git checkout -- tools/{tool}`")
            }
            RunError::Timeout { .. } => "make the tool faster, or raise `limits.timeout_ms` in its tool.toml".into(),
            RunError::Memory { .. } => "use less memory, or raise `limits.memory_mb` in its tool.toml".into(),
            RunError::OutputTooLarge { .. } => "print less, or raise `limits.output_bytes` in its tool.toml".into(),
            RunError::Arguments { tool, .. } => format!("give the arguments as the input schema of {tool} says (`get_tool`): every field its WIT function declares, by its WIT name, nothing else"),
            // An error that carries its cause's own hint (dependencies; a nested call's refusal
            // the tool passed on) says it there.
            RunError::Start { message, .. } | RunError::ToolError { message, .. }
                if message.contains("\nhint: ") =>
            {
                return None;
            }
            RunError::ToolError { message, .. } | RunError::Trap { message, .. } if message.contains(TRACEBACK) => {
                "the tool's code raised an exception (the traceback shows where): fix the code and build it again (`build_tool` with the corrected source)".into()
            }
            RunError::Failed { .. } | RunError::Trap { .. } | RunError::ToolError { .. } => "check the arguments against the tool's input schema (`get_tool`), or fix the tool".into(),
            RunError::ProtocolMismatch { tool, .. } => format!("a script that reads its JSON arguments from stdin and prints the result is a plain script: register it again with protocol \"plain\" (or without `protocol`, to have it detected), or set `protocol = \"plain\"` under [run] in tools/{tool}/tool.toml; to keep jsonrpc, use the helper of the language's template (toolsmith://guide)"),
            RunError::Protocol { .. } => "a jsonrpc script must answer the request with id 0 (the protocol is in the toolsmith://guide resource), or set protocol = \"plain\"".into(),
            RunError::Start { .. } => "check that the interpreter is installed and on PATH".into(),
            RunError::Sandbox { hint, .. } => hint.clone(),
            RunError::Denied { .. } => "declare it under [capabilities] in tool.toml, inside the allowed roots (TOOLSMITH_ROOTS)".into(),
            RunError::Replaced { .. } => "call it again: the version now committed runs if a person approved it, else it waits for their approval".into(),
            RunError::ServerExited { entry, .. } => format!("call again: the server restarts on the next call; if it keeps exiting, check its [mcp] command and args in tools/{entry}/tool.toml (`toolsmith call {entry}` lists its tools)"),
            RunError::Server { hint, .. } => hint.clone(),
            RunError::WrongKind { .. } | RunError::Cancelled { .. } => return None,
        })
    }
}

/// The tool directory of a tool inside a toolbox root.
pub fn tool_dir(root: &Path, tool: &Tool) -> PathBuf {
    root.join(crate::index::TOOLS_DIR).join(&tool.manifest.name)
}
