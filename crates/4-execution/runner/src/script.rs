//! The script runner: a tool is an interpreter subprocess. `plain` scripts read JSON arguments
//! on stdin and print the result; `jsonrpc` scripts get one JSON-RPC 2.0 request and may call
//! back the host (log, progress, memory, other tools, ...) before answering it.
//!
//! Each call runs in a fresh scratch directory with a cleared environment (only PATH, a few
//! locale variables and the declared `capabilities.env` pass), in its own process group that
//! is killed whole on timeout; stdout and stderr are drained concurrently and capped.

use super::{CallOutput, RunError};
use crate::manifest::Protocol;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};

pub use super::host::{Ask, Host, NoHost, ToolRequest, Wants};
use super::outcome::{Ending, finish, speaks_jsonrpc};
use super::session::{Conversation, request_line};

use super::launch::CallStdout;
pub use super::launch::toolbox_root;
use super::process::{CallProcess, CallStdin, StderrPipe};

/// Run a script tool once, in a fresh process.
pub(crate) async fn call_fresh(
    scripts: &super::Scripts,
    dir: &Path,
    tool: &super::Granted,
    args: &Value,
    host: &dyn Host,
) -> Result<CallOutput, RunError> {
    let m = &tool.manifest;
    let name = m.name.clone();
    let t0 = std::time::Instant::now();
    // The sandbox start: the recipe (interpreter, environment, grants) and a contained process.
    let start = crate::telemetry::stage("sandbox start");
    let recipe = super::launch::Recipe::new(dir, tool, false, scripts.config()).await?;
    let t_recipe = t0.elapsed();
    let timeout = Duration::from_millis(m.limits.timeout_ms());
    let started = std::time::Instant::now();
    // Only a stored tool keeps spares and a fork server (not a staged copy checking its
    // examples, nor execute_code's throwaway directory).
    let stored = tool.origin.is_stored();
    // The time limit counts from the call: waiting for a spare still starting is part of it.
    let (mut proc, go_pending, came) =
        match tokio::time::timeout(timeout, scripts.spares.acquire(dir, &recipe, stored)).await {
            Ok(l) => l?,
            Err(_) => {
                start.fail("timeout");
                return Err(RunError::Timeout {
                    tool: name,
                    ms: m.limits.timeout_ms(),
                });
            }
        };
    drop(start);
    let cap = m.limits.output_bytes() as usize;
    let timeout = timeout.saturating_sub(started.elapsed());
    let mut stderr = proc.stderr().expect("stderr is piped");
    let mut err = Capped::new(cap);
    let memory = toolbox_root(dir).map(|r| crate::memory::Memory::for_toolbox(&r));
    let session = Conversation {
        tool: &name,
        memory: memory.as_ref(),
        host,
        cap,
    };

    // Boxed: calls nest (a script's tool calls run through here again), and each level would
    // otherwise hold the whole call's state on the stack while it is built.
    let child = &mut proc;
    let work = Box::pin(async {
        match m.protocol() {
            Protocol::Plain => run_plain(child, args, cap, go_pending).await,
            Protocol::Jsonrpc => {
                let mut stdin = child.stdin().expect("stdin is piped");
                // A failed write means the script exited at once; its exit status tells why.
                let _ = stdin
                    .write_all(request_line(tool, 0, args, &recipe.roots).as_bytes())
                    .await;
                tool_started(child, go_pending).await?;
                let mut reader = BufReader::new(child.tool_stdout().expect("stdout is piped"));
                match session.exchange(&mut stdin, &mut reader, 0).await {
                    Err(Ending::Eof) => {
                        let code = exit_status(child).await?;
                        if code != 0 {
                            return Err(Ending::Exited(code));
                        }
                        if !speaks_jsonrpc(dir, m) {
                            return Err(Ending::Mismatch(
                                "it exited without answering the JSON-RPC request".into(),
                            ));
                        }
                        Err(Ending::Protocol(
                            "the script exited without answering the request (id 0)".into(),
                        ))
                    }
                    other => other,
                }
            }
        }
    });
    let t_acquire = t0.elapsed();
    let outcome = tokio::time::timeout(timeout, with_stderr(work, &mut stderr, &mut err)).await;
    let t_work = t0.elapsed();
    // Whatever happened, no process of this call outlives it.
    proc.kill();
    let t_reap = t0.elapsed();
    if stored {
        scripts.spares.refill(dir, &recipe);
    }
    // Everything the call's processes wrote on stderr before they were stopped is in the
    // pipe's buffer: read it without waiting for its end (which comes only once every process
    // holding the pipe is gone, the sandbox's included).
    #[cfg(unix)]
    drain_ready(&*stderr, &mut err);
    let (err_bytes, err_overflow) = err.finish();
    tracing::debug!(
        tool = %name,
        recipe = ?t_recipe,
        process = ?t_acquire,
        came = came.as_str(),
        answered = ?t_work,
        signalled = ?t_reap,
        stderr = ?t0.elapsed(),
        "script call phases (elapsed at the end of each)"
    );
    let network = proc.network();
    // Every process of the call has been signalled; processes it forked meanwhile, the reaping
    // and the removal of its cgroup and scratch directory finish off the call's path.
    tokio::spawn(proc.reap());
    let stderr_text = String::from_utf8_lossy(&err_bytes).trim().to_string();
    let outcome = match outcome {
        // A plain script waits for the end of stdin, which a jsonrpc call keeps open.
        Err(_) if m.protocol() == Protocol::Jsonrpc && !speaks_jsonrpc(dir, m) => {
            Err(Ending::Mismatch(format!(
                "it never answered the JSON-RPC request while its stdin stayed open (stopped after {} ms)",
                m.limits.timeout_ms()
            )))
        }
        Err(_) => Err(Ending::Timeout),
        Ok(r) => r,
    };
    let mut out = finish(m, outcome, &err_bytes, &stderr_text, err_overflow, host);
    if let Ok(o) = &mut out {
        o.process = Some(came);
    }
    if let (Ok(o), Some(seen)) = (&mut out, network) {
        if !seen.denied.is_empty() {
            o.warnings.push(refused_hosts(m, &seen));
        }
        o.network = Some(seen);
    }
    out
}

/// What the AI is told when the proxy refused hosts the tool does not list.
fn refused_hosts(m: &crate::manifest::Manifest, seen: &crate::sandbox::proxy::Seen) -> String {
    let hosts: Vec<&str> = seen.denied.iter().map(String::as_str).collect();
    format!(
        "the network proxy refused {} ({} may reach only {}); a person can list more domains in capabilities.network, which then waits for their approval",
        hosts.join(", "),
        m.name,
        m.capabilities
            .network
            .domains()
            .unwrap_or_default()
            .join(", ")
    )
}

/// Read a stream to the end, keeping at most `cap` bytes; true when more came.
pub(crate) async fn read_capped(
    mut r: impl tokio::io::AsyncRead + Unpin,
    cap: usize,
) -> (Vec<u8>, bool) {
    let mut acc = Capped::new(cap);
    let mut chunk = [0u8; 8192];
    while let Ok(n @ 1..) = r.read(&mut chunk).await {
        acc.push(&chunk[..n]);
    }
    acc.finish()
}

/// Run `work`, reading the call's stderr meanwhile (in the same task: nothing to hand over
/// when the call ends) until its end or the work's.
async fn with_stderr<T>(
    work: impl std::future::Future<Output = T>,
    stderr: &mut Box<dyn StderrPipe>,
    acc: &mut Capped,
) -> T {
    tokio::pin!(work);
    let mut chunk = [0u8; 8192];
    let mut open = true;
    loop {
        tokio::select! {
            biased;
            out = &mut work => return out,
            read = stderr.read(&mut chunk), if open => match read {
                Ok(n @ 1..) => acc.push(&chunk[..n]),
                _ => open = false,
            },
        }
    }
}

/// Read what is already in a stderr pipe, without waiting (the descriptor is non-blocking);
/// stop at "would block" or its end.
#[cfg(unix)]
fn drain_ready(r: &dyn StderrPipe, acc: &mut Capped) {
    let fd = r.as_raw_fd();
    let mut chunk = [0u8; 8192];
    loop {
        // SAFETY: `fd` is the open pipe `r` owns, `chunk` is a valid buffer of that length.
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if n <= 0 {
            break;
        }
        acc.push(&chunk[..n as usize]);
    }
}

/// At most `cap` bytes of a stream, and whether more came (the rest is read and dropped, so the
/// writer never blocks on a full pipe).
struct Capped {
    buf: Vec<u8>,
    cap: usize,
    overflow: bool,
}

impl Capped {
    fn new(cap: usize) -> Capped {
        Capped {
            buf: Vec::new(),
            cap,
            overflow: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.buf.len());
        if bytes.len() > room {
            self.buf.extend_from_slice(&bytes[..room]);
            self.overflow = true;
        } else if !self.overflow {
            self.buf.extend_from_slice(bytes);
        }
    }

    fn finish(self) -> (Vec<u8>, bool) {
        (self.buf, self.overflow)
    }
}

/// With a spare's "g" still to come (its input was written right behind the entry line):
/// read it; when the process ended before starting the tool, its exit status.
async fn tool_started(child: &mut CallProcess, go_pending: Option<bool>) -> Result<(), Ending> {
    let Some(ready) = go_pending else {
        return Ok(());
    };
    let Some(channel) = child.channel() else {
        return Ok(());
    };
    let Err(why) = super::spare::read_go(channel, ready).await else {
        return Ok(());
    };
    match exit_status(child).await? {
        0 => Err(Ending::Protocol(format!(
            "the process did not start the tool: {why}"
        ))),
        code => Err(Ending::Exited(code)),
    }
}

/// The status the tool exited with: the `x<status>` line its stub (or a fork server) writes
/// on the channel as it ends, else — no such line, as when a signal ended it or it replaced
/// the stub's exit handler — the process's own, once it is gone.
async fn exit_status(child: &mut CallProcess) -> Result<i32, Ending> {
    while let Some(channel) = child.channel() {
        let mut line = Vec::with_capacity(8);
        let mut b = [0u8; 1];
        let mut ended = false;
        while line.len() < 16 {
            match channel.read(&mut b).await {
                Ok(1) if b[0] == b'\n' => break,
                Ok(1) => line.push(b[0]),
                _ => {
                    ended = true;
                    break;
                }
            }
        }
        if let Some(code) = line
            .strip_prefix(b"x")
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| d.parse::<i32>().ok())
        {
            return Ok(code);
        }
        if ended || line.is_empty() {
            break;
        }
        // Something else on the channel (a tool may write on it): the next line.
    }
    match child
        .wait()
        .await
        .map_err(|e| Ending::Protocol(e.to_string()))?
    {
        Some(code) => Ok(code),
        None => Err(Ending::Protocol(
            "the call's process ended without an exit status (its fork server stopped)".into(),
        )),
    }
}

async fn run_plain(
    child: &mut CallProcess,
    args: &Value,
    cap: usize,
    go_pending: Option<bool>,
) -> Result<CallOutput, Ending> {
    let mut stdin: CallStdin = child.stdin().expect("stdin is piped");
    let input = args.to_string();
    let writer = tokio::spawn(async move {
        let _ = stdin.write_all(input.as_bytes()).await;
        let _ = stdin.shutdown().await;
    });
    tool_started(child, go_pending).await?;
    let (out, overflow) = read_capped(
        child.tool_stdout().expect("stdout is piped") as CallStdout,
        cap,
    )
    .await;
    let _ = writer.await;
    if overflow {
        return Err(Ending::Overflow);
    }
    let code = exit_status(child).await?;
    if code != 0 {
        let stdout = String::from_utf8_lossy(&out).into_owned();
        return Err(Ending::ExitedWith(code, stdout));
    }
    Ok(CallOutput::from_stdout(&out, b""))
}
