//! The script runner: a tool is an interpreter subprocess. `plain` scripts read JSON arguments
//! on stdin and print the result; `jsonrpc` scripts get one JSON-RPC 2.0 request and may call
//! back the host (log, progress, memory, other tools, ...) before answering it.
//!
//! Each call runs in a fresh scratch directory with a cleared environment (only PATH, a few
//! locale variables and the declared `capabilities.env` pass), in its own process group that
//! is killed whole on timeout; stdout and stderr are drained concurrently and capped.

use super::{CallOutput, RunError};
use crate::index::Tool;
use crate::manifest::Protocol;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// What a running script can ask of the host. The MCP layer implements it and routes each
/// request to the client; `NoHost` refuses everything but logging.
pub trait Host: Send + Sync {
    /// A log line from the tool.
    fn log(&self, level: &str, message: &str);
    /// A progress report from the tool.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>);
    /// A request from the tool (`memory/get`, `tools/call`, ...): its result, or a JSON-RPC
    /// error (code, message).
    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, (i64, String)>>;
}

/// A host that logs through tracing and answers no requests.
pub struct NoHost;

impl Host for NoHost {
    fn log(&self, level: &str, message: &str) {
        tracing::info!(level, "tool: {message}");
    }
    fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) {}
    fn request<'a>(
        &'a self,
        method: &'a str,
        _: Value,
    ) -> BoxFuture<'a, Result<Value, (i64, String)>> {
        Box::pin(async move { Err((-32601, format!("the host does not offer {method} here"))) })
    }
}

/// Environment variables every script gets (besides declared ones).
const BASE_ENV: &[&str] = &["PATH", "LANG", "LC_ALL", "TZ"];

/// Run a script tool once, in a fresh process.
pub async fn call(
    dir: &Path,
    tool: &Tool,
    args: &Value,
    host: &dyn Host,
) -> Result<CallOutput, RunError> {
    let m = &tool.manifest;
    let name = m.name.clone();
    let start_err = |message: String| RunError::Start {
        tool: name.clone(),
        message,
    };
    let interp = m
        .interpreter()
        .ok_or_else(|| start_err("no interpreter: set run.language or run.interpreter".into()))?;
    let entry = dir.join(m.run.entry.as_deref().unwrap_or("main"));
    let scratch = tempfile::Builder::new()
        .prefix("toolsmith-run-")
        .tempdir()
        .map_err(|e| start_err(format!("cannot create a scratch directory: {e}")))?;

    let mut cmd = Command::new(&interp[0]);
    cmd.args(&interp[1..])
        .arg(&entry)
        .current_dir(scratch.path())
        .env_clear();
    for var in BASE_ENV
        .iter()
        .copied()
        .chain(m.capabilities.env.iter().map(String::as_str))
    {
        if let Some(v) = std::env::var_os(var) {
            cmd.env(var, v);
        }
    }
    cmd.env("HOME", scratch.path())
        .env("TMPDIR", scratch.path())
        .env("TOOLSMITH_TOOL", &name)
        .env("TOOLSMITH_TOOL_DIR", dir);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|e| start_err(format!("cannot run {:?}: {e}", interp[0])))?;
    let pid = child.id();

    let cap = m.limits.output_bytes() as usize;
    let timeout = Duration::from_millis(m.limits.timeout_ms());
    let stderr = child.stderr.take().expect("stderr is piped");
    let stderr_task = tokio::spawn(read_capped(stderr, cap));

    let work = async {
        match m.protocol() {
            Protocol::Plain => run_plain(&mut child, args, cap).await,
            Protocol::Jsonrpc => run_jsonrpc(&mut child, tool, args, cap, host).await,
        }
    };
    let outcome = tokio::time::timeout(timeout, work).await;
    // Whatever happened, no process of this call outlives it.
    kill_group(pid);
    let _ = child.wait().await;
    let (err_bytes, err_overflow) = stderr_task.await.unwrap_or_default();
    let stderr_text = String::from_utf8_lossy(&err_bytes).trim().to_string();
    match outcome {
        Err(_) => Err(RunError::Timeout {
            tool: name,
            ms: m.limits.timeout_ms(),
        }),
        Ok(Err(Outcome::Overflow)) => Err(RunError::OutputTooLarge {
            tool: name,
            bytes: cap as u64,
        }),
        Ok(Err(Outcome::Exited(code))) => Err(RunError::Failed {
            tool: name,
            code,
            stderr: tail(&stderr_text),
        }),
        Ok(Err(Outcome::Protocol(message))) => Err(RunError::Protocol {
            tool: name,
            message: format!(
                "{message}{}",
                if stderr_text.is_empty() {
                    String::new()
                } else {
                    format!("\nstderr: {}", tail(&stderr_text))
                }
            ),
        }),
        Ok(Err(Outcome::ToolError(message, data))) => Err(RunError::ToolError {
            tool: name,
            message,
            data,
        }),
        Ok(Ok(mut out)) => {
            if err_overflow {
                return Err(RunError::OutputTooLarge {
                    tool: name,
                    bytes: cap as u64,
                });
            }
            out.logs.extend(super::lines(&err_bytes));
            for l in super::lines(&err_bytes) {
                host.log("info", &l);
            }
            Ok(out)
        }
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

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads
        // (created with process_group(0)); it has no memory-safety preconditions.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

enum Outcome {
    Overflow,
    Exited(i32),
    Protocol(String),
    ToolError(String, Option<Value>),
}

/// Read a stream to the end, keeping at most `cap` bytes; true when more came.
async fn read_capped(mut r: impl tokio::io::AsyncRead + Unpin, cap: usize) -> (Vec<u8>, bool) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut overflow = false;
    loop {
        match r.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if buf.len() + n > cap {
                    buf.extend_from_slice(&chunk[..cap - buf.len()]);
                    overflow = true;
                    // Keep draining so the child never blocks on a full pipe.
                } else if !overflow {
                    buf.extend_from_slice(&chunk[..n]);
                }
            }
        }
    }
    (buf, overflow)
}

async fn run_plain(
    child: &mut tokio::process::Child,
    args: &Value,
    cap: usize,
) -> Result<CallOutput, Outcome> {
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = args.to_string();
    let writer = tokio::spawn(async move {
        let _ = stdin.write_all(input.as_bytes()).await;
        let _ = stdin.shutdown().await;
    });
    let stdout = child.stdout.take().expect("stdout is piped");
    let (out, overflow) = read_capped(stdout, cap).await;
    let _ = writer.await;
    if overflow {
        return Err(Outcome::Overflow);
    }
    let status = child
        .wait()
        .await
        .map_err(|e| Outcome::Protocol(e.to_string()))?;
    if !status.success() {
        return Err(Outcome::Exited(status.code().unwrap_or(-1)));
    }
    Ok(CallOutput::from_stdout(&out, b""))
}

async fn run_jsonrpc(
    child: &mut tokio::process::Child,
    tool: &Tool,
    args: &Value,
    cap: usize,
    host: &dyn Host,
) -> Result<CallOutput, Outcome> {
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let m = &tool.manifest;
    let request = json!({
        "jsonrpc": "2.0", "id": 0, "method": "tools/call",
        "params": {"arguments": args, "context": {"tool": m.name, "roots": super::allowed_roots(), "capabilities": m.capabilities}},
    });
    let mut line = request.to_string();
    line.push('\n');
    if stdin.write_all(line.as_bytes()).await.is_err() {
        // The script may have exited at once; its exit status tells why.
    }
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut reader = BufReader::new(stdout);
    let mut total = 0usize;
    let mut buf = String::new();
    let mut logs = Vec::new();
    loop {
        buf.clear();
        let n = reader
            .read_line(&mut buf)
            .await
            .map_err(|e| Outcome::Protocol(format!("reading stdout: {e}")))?;
        if n == 0 {
            let status = child
                .wait()
                .await
                .map_err(|e| Outcome::Protocol(e.to_string()))?;
            if !status.success() {
                return Err(Outcome::Exited(status.code().unwrap_or(-1)));
            }
            return Err(Outcome::Protocol(
                "the script exited without answering the request (id 0)".into(),
            ));
        }
        total += n;
        if total > cap {
            return Err(Outcome::Overflow);
        }
        let text = buf.trim();
        if text.is_empty() {
            continue;
        }
        let msg: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(_) => {
                // A stray print: keep it as a log line rather than failing the call.
                host.log("info", text);
                logs.push(text.to_string());
                continue;
            }
        };
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id").cloned();
        match (method, id) {
            (None, Some(id)) if id == json!(0) => {
                if let Some(err) = msg.get("error") {
                    let message = err
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown error")
                        .to_string();
                    return Err(Outcome::ToolError(message, err.get("data").cloned()));
                }
                let result = msg.get("result").cloned().ok_or_else(|| {
                    Outcome::Protocol("the response to id 0 has neither result nor error".into())
                })?;
                return Ok(CallOutput::from_value(result, logs));
            }
            (None, _) => {
                return Err(Outcome::Protocol(format!("unexpected response {text}")));
            }
            (Some("log"), None) | (Some("notifications/message"), None) => {
                let p = msg.get("params").cloned().unwrap_or(Value::Null);
                let level = p.get("level").and_then(Value::as_str).unwrap_or("info");
                let message = p
                    .get("message")
                    .or_else(|| p.get("data"))
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .unwrap_or_default();
                host.log(level, &message);
                logs.push(message);
            }
            (Some("progress"), None) | (Some("notifications/progress"), None) => {
                let p = msg.get("params").cloned().unwrap_or(Value::Null);
                let progress = p.get("progress").and_then(Value::as_f64).unwrap_or(0.0);
                host.progress(
                    progress,
                    p.get("total").and_then(Value::as_f64),
                    p.get("message").and_then(Value::as_str).map(str::to_string),
                );
            }
            (Some(_), None) => {} // unknown notification: ignored, as JSON-RPC allows
            (Some(method), Some(id)) => {
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                let reply = match host.request(method, params).await {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err((code, message)) => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                    }
                };
                let mut line = reply.to_string();
                line.push('\n');
                stdin.write_all(line.as_bytes()).await.map_err(|e| {
                    Outcome::Protocol(format!(
                        "the script closed stdin before the host answered {method}: {e}"
                    ))
                })?;
            }
        }
    }
}
