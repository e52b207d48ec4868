//! What one call is, below every runner and gate: the tool as the call was granted it
//! ([`Granted`]), the host its tool talks to ([`host::Host`], its requests as
//! [`host::ToolRequest`]), and what it produced ([`CallOutput`]). The runner runs it; the
//! approval gate makes a `Granted` and wraps the host; neither needs the other to say what a
//! call is. [`RunError`] says why a run failed, whichever runner ran it.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_error as error;
use toolsmith_index as index;
use toolsmith_memory as memory;
use toolsmith_platform as platform;
use toolsmith_sandbox as sandbox;
use toolsmith_secrets as secrets;

pub mod host;

use crate::index::{Origin, Tool};
use crate::secrets::SecretEnv;
use serde_json::Value;
use std::path::PathBuf;
use thiserror::Error;

/// A tool as one call runs it: the index's [`Tool`] (its manifest holding only the
/// capabilities the call was granted) and what the call was granted beyond the manifest. Made
/// by `approval::admit` for a call, by `approval::admitted_now` for what a server starts ahead
/// of calls, or by [`Granted::defaults`] (nothing beyond the default grants). The index's
/// `Tool` never carries a call's grant.
#[derive(Debug, Clone)]
pub struct Granted {
    /// The tool as the call runs it.
    pub tool: Tool,
    /// What the call is for, as its entry point said: only a stored tool keeps warm
    /// processes (a worker, spares, a fork server).
    pub origin: Origin,
    /// Secret values for the call's environment: set only for a tool a person approved.
    pub secrets: SecretEnv,
    /// The identity of the tool's directory whose content a person approved: set only when
    /// the call gets grants beyond the defaults; a process whose directory was replaced since
    /// is stopped before its code runs.
    pub admitted: Option<crate::platform::DirId>,
}

impl Granted {
    /// `tool` (of `origin`) with the default grants only: no secrets, no approved directory.
    pub fn defaults(tool: Tool, origin: Origin) -> Granted {
        Granted {
            tool,
            origin,
            secrets: SecretEnv::default(),
            admitted: None,
        }
    }
}

impl std::ops::Deref for Granted {
    type Target = Tool;

    fn deref(&self) -> &Tool {
        &self.tool
    }
}

/// Where a script call's process came from (the audit log's `process`): every one is a fresh
/// process set up the same way; this says only what was ready when the call came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Came {
    /// Forked by its tool's fork server (Python).
    Forked,
    /// A spare, started before the call and waiting in its stub.
    Spare,
    /// Started for the call: nothing was ready (the first call after a restart or of a new
    /// version, a burst past what waits), or the tool keeps nothing (a staged copy).
    Started,
    /// The tool's warm worker (`worker = true`), which serves call after call.
    Worker,
}

impl Came {
    /// Its name in the audit log.
    pub fn as_str(self) -> &'static str {
        match self {
            Came::Forked => "forked",
            Came::Spare => "spare",
            Came::Started => "started",
            Came::Worker => "worker",
        }
    }
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    /// The text of the result (stdout, or the JSON rendered as text).
    pub text: String,
    /// The result as JSON, when the tool printed valid JSON.
    pub structured: Option<Value>,
    /// Lines the tool wrote to stderr (delivered as log messages).
    pub logs: Vec<String>,
    /// Things the caller must be told along with the result (e.g. the tool ran uncommitted
    /// changes); shown in the result, not only logged.
    pub warnings: Vec<String>,
    /// The hosts a tool limited to listed domains reached or was refused through its proxy.
    pub network: Option<crate::sandbox::proxy::Seen>,
    /// MCP content blocks beyond the text (images, audio, resources), as JSON: what an MCP
    /// server's tool returned besides text. Empty for toolsmith's own tools.
    pub content: Vec<Value>,
    /// Where a script call's process came from (None: not a script's process).
    pub process: Option<Came>,
}

impl CallOutput {
    /// Interpret a tool's stdout: valid JSON becomes structured output plus text.
    pub fn from_stdout(stdout: &[u8], stderr: &[u8]) -> CallOutput {
        let text = String::from_utf8_lossy(stdout).trim_end().to_string();
        let structured = serde_json::from_str::<Value>(&text)
            .ok()
            .filter(|_| !text.is_empty());
        CallOutput {
            text,
            structured,
            logs: lines(stderr),
            warnings: Vec::new(),
            network: None,
            content: Vec::new(),
            process: None,
        }
    }

    /// A result given as JSON (by a JSON-RPC script or a pipeline).
    pub fn from_value(v: Value, logs: Vec<String>) -> CallOutput {
        match v {
            Value::String(s) => CallOutput {
                text: s,
                structured: None,
                logs,
                warnings: Vec::new(),
                network: None,
                content: Vec::new(),
                process: None,
            },
            other => CallOutput {
                text: other.to_string(),
                structured: Some(other),
                logs,
                warnings: Vec::new(),
                network: None,
                content: Vec::new(),
                process: None,
            },
        }
    }
}

/// The non-blank lines of what a tool wrote (its stderr: log lines).
pub fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
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
