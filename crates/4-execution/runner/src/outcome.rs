//! How a script call ends: its outcome (exit, timeout, overflow, protocol mismatch, …) and its
//! stderr turned into the call's result or a `RunError` that carries the script's own words.

use super::host::Host;
use super::{CallOutput, RunError, sandbox};
use crate::manifest::Protocol;
use serde_json::Value;
use std::path::Path;

/// Whether a script's entry file speaks JSON-RPC (see `Protocol::detect`).
pub(crate) fn speaks_jsonrpc(dir: &Path, m: &crate::manifest::Manifest) -> bool {
    let entry = dir.join(m.run.entry.as_deref().unwrap_or("main"));
    std::fs::read_to_string(entry).map_or(true, |src| {
        Protocol::detect(&src, m.run.worker) == Protocol::Jsonrpc
    })
}

/// Turn a call's outcome and its stderr into the result.
pub(crate) fn finish(
    m: &crate::manifest::Manifest,
    outcome: Result<CallOutput, Ending>,
    err_bytes: &[u8],
    stderr_text: &str,
    err_overflow: bool,
    host: &dyn Host,
) -> Result<CallOutput, RunError> {
    let name = m.name.clone();
    let cap = m.limits.output_bytes();
    match outcome {
        Err(Ending::Timeout) => Err(RunError::Timeout {
            tool: name,
            ms: m.limits.timeout_ms(),
        }),
        Err(Ending::Overflow) => Err(RunError::OutputTooLarge {
            tool: name,
            bytes: cap,
        }),
        Err(Ending::Exited(code)) => Err(RunError::Failed {
            tool: name,
            code,
            stderr: format!(
                "{}{}",
                failure_output(stderr_text, ""),
                sandbox::explain(stderr_text)
            ),
        }),
        Err(Ending::ExitedWith(code, stdout)) => Err(RunError::Failed {
            tool: name,
            code,
            stderr: format!(
                "{}{}",
                failure_output(stderr_text, &stdout),
                sandbox::explain(stderr_text)
            ),
        }),
        Err(Ending::Mismatch(what)) => Err(RunError::ProtocolMismatch {
            tool: name,
            message: format!(
                "{what}{}",
                if stderr_text.is_empty() {
                    String::new()
                } else {
                    format!("\nstderr: {}", tail(stderr_text))
                }
            ),
        }),
        Err(Ending::Eof) => Err(RunError::Protocol {
            tool: name,
            message: "the script closed its stdout without answering".into(),
        }),
        Err(Ending::Protocol(message)) => Err(RunError::Protocol {
            tool: name,
            message: format!(
                "{message}{}",
                if stderr_text.is_empty() {
                    String::new()
                } else {
                    format!("\nstderr: {}", tail(stderr_text))
                }
            ),
        }),
        Err(Ending::ToolError(message, data)) => Err(RunError::ToolError {
            tool: name,
            message,
            data,
        }),
        Ok(mut out) => {
            if err_overflow {
                return Err(RunError::OutputTooLarge {
                    tool: name,
                    bytes: cap,
                });
            }
            out.logs.extend(super::lines(err_bytes));
            for l in super::lines(err_bytes) {
                host.log("info", &l);
            }
            Ok(out)
        }
    }
}

/// The exit code, or 128 + the signal that killed the process.
pub(crate) fn exit_code(status: std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    let signal = {
        use std::os::unix::process::ExitStatusExt;
        status.signal()
    };
    #[cfg(not(unix))]
    let signal: Option<i32> = None;
    status
        .code()
        .or_else(|| signal.map(|s| 128 + s))
        .unwrap_or(-1)
}

/// What a failed script said: the end of its stderr, or of its stdout when stderr is empty.
fn failure_output(stderr: &str, stdout: &str) -> String {
    let stdout = stdout.trim();
    match (stderr.is_empty(), stdout.is_empty()) {
        (false, _) => tail(stderr),
        (true, false) => format!("(stdout) {}", tail(stdout)),
        (true, true) => "(it printed nothing on stderr or stdout)".into(),
    }
}

/// The last part of a long stderr.
fn tail(s: &str) -> String {
    const MAX: usize = 4000;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut start = s.len() - MAX;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &s[start..])
}

pub(crate) enum Ending {
    Timeout,
    Eof,
    Overflow,
    Exited(i32),
    /// Exited non-zero, with what it printed on stdout.
    ExitedWith(i32, String),
    /// A jsonrpc tool whose script does not speak JSON-RPC.
    Mismatch(String),
    Protocol(String),
    ToolError(String, Option<Value>),
}
