//! What one call is, below every runner and gate: the tool as the call was granted it
//! ([`Granted`]), the host its tool talks to ([`host::Host`], its requests as
//! [`host::ToolRequest`]), and what it produced ([`CallOutput`]). The runner runs it; the
//! approval gate makes a `Granted` and wraps the host; neither needs the other to say what a
//! call is.

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
