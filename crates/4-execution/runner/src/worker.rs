//! Warm workers: a script tool with `run.worker = true` keeps one process that serves call after
//! call over the jsonrpc protocol (requests with ids 1, 2, 3, ... on the same stdin), so a call
//! costs a message round trip instead of an interpreter start.
//!
//! One worker per tool directory, one call at a time per worker (others wait their turn). A
//! worker is restarted when it crashed, timed out, broke the protocol or was interrupted, and
//! replaced when the tool's files change (size and mtime of tool.toml, the entry and the
//! lockfiles). At most `TOOLSMITH_MAX_WORKERS` (default 8) live at once; the least recently
//! used idle one is stopped to make room. The workers live in a `Pool` an `App` owns (through
//! `runner::Scripts`); dropping it stops them.

use super::host::Host;
use super::launch::{Launched, toolbox_root};
use super::outcome::{Ending, exit_code, finish};
use super::session::{Conversation, request_line};
use super::{CallOutput, RunError};
use crate::config::Config;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Stderr lines kept between calls.
const STDERR_LINES: usize = 10_000;

/// What identifies a version of a tool's files.
pub(crate) type Stamp = Vec<(u64, Option<SystemTime>)>;

pub(crate) fn stamp(dir: &Path, tool: &super::Granted) -> Stamp {
    let m = &tool.manifest;
    let mut files = vec![
        crate::manifest::FILE_NAME.to_string(),
        m.run.entry.clone().unwrap_or_default(),
    ];
    files.extend(
        [crate::manifest::PIP_LOCK, crate::manifest::NPM_LOCK]
            .iter()
            .map(|s| s.to_string()),
    );
    let mut s: Stamp = files
        .iter()
        .map(|f| match std::fs::metadata(dir.join(f)) {
            Ok(md) => (md.len(), md.modified().ok()),
            Err(_) => (u64::MAX, None),
        })
        .collect();
    // The grants a call runs with (decided per call by the approval gate): a worker started
    // with other grants or secret values is replaced.
    s.push((grants_fingerprint(tool), None));
    s
}

fn grants_fingerprint(tool: &super::Granted) -> u64 {
    use std::hash::{Hash, Hasher};
    let m = &tool.manifest;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(&(&m.capabilities, &m.limits, &m.run.sandbox))
        .unwrap_or_default()
        .hash(&mut h);
    tool.secrets.fingerprint().hash(&mut h);
    h.finish()
}

struct Worker {
    launched: Launched,
    stdin: tokio::process::ChildStdin,
    stdout: BufReader<tokio::process::ChildStdout>,
    stderr: mpsc::Receiver<String>,
    stamp: Stamp,
    next_id: u64,
    /// Set while a call is in flight; still set afterwards means the call was interrupted and
    /// the worker's stream is in an unknown state.
    busy: bool,
}

impl Worker {
    fn alive(&mut self) -> bool {
        matches!(self.launched.child.try_wait(), Ok(None))
    }

    fn drain_stderr(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(l) = self.stderr.try_recv() {
            out.push(l);
        }
        out
    }
}

struct Slot {
    worker: tokio::sync::Mutex<Option<Worker>>,
    last_used: AtomicU64,
}

/// The warm workers of one `App`, one per tool directory, at most `max` at once.
pub struct Pool {
    slots: Mutex<HashMap<PathBuf, Arc<Slot>>>,
    clock: AtomicU64,
    max: usize,
}

impl Pool {
    /// An empty pool keeping at most `max` workers (`Config::max_workers`).
    pub fn new(max: usize) -> Pool {
        Pool {
            slots: Mutex::default(),
            clock: AtomicU64::new(0),
            max: max.max(1),
        }
    }

    /// The slot of a tool directory, making room (stopping the least recently used idle
    /// worker) when the pool is full.
    fn slot(&self, dir: &Path) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        if let Some(s) = slots.get(dir) {
            s.last_used.store(now, Ordering::Relaxed);
            return Arc::clone(s);
        }
        while slots.len() >= self.max {
            let victim = slots
                .iter()
                .filter(|(_, s)| s.worker.try_lock().is_ok())
                .min_by_key(|(_, s)| s.last_used.load(Ordering::Relaxed))
                .map(|(k, _)| k.clone());
            match victim {
                Some(k) => {
                    if let Some(s) = slots.remove(&k)
                        && let Ok(mut w) = s.worker.try_lock()
                    {
                        *w = None; // dropping the worker kills it
                    }
                }
                None => break, // every worker is busy: allow one more for now
            }
        }
        let s = Arc::new(Slot {
            worker: tokio::sync::Mutex::new(None),
            last_used: AtomicU64::new(now),
        });
        slots.insert(dir.to_path_buf(), Arc::clone(&s));
        s
    }

    /// How many workers are alive (for tests and stats).
    pub fn live(&self) -> usize {
        let slots: Vec<Arc<Slot>> = self
            .slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        slots
            .iter()
            .filter(|s| s.worker.try_lock().map(|w| w.is_some()).unwrap_or(true))
            .count()
    }

    /// Stop every worker (tests; shutdown).
    pub fn stop_all(&self) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.clear();
    }
}

async fn start(config: &Config, dir: &Path, tool: &super::Granted) -> Result<Worker, RunError> {
    let recipe = super::launch::Recipe::new(dir, tool, true, config).await?;
    let mut launched = super::launch::spawn(&recipe, false)?;
    let stdin = launched.child.stdin().take().expect("stdin is piped");
    let stdout = BufReader::new(launched.child.stdout().take().expect("stdout is piped"));
    let stderr = launched.child.stderr().take().expect("stderr is piped");
    let (tx, rx) = mpsc::channel(STDERR_LINES);
    let name = tool.manifest.name.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(l)) = lines.next_line().await {
            if tx.try_send(l).is_err() {
                tracing::debug!(tool = %name, "worker stderr backlog full; dropping a line");
            }
        }
    });
    tracing::info!(tool = %tool.manifest.name, pid = ?launched.pid, "started a warm worker");
    Ok(Worker {
        launched,
        stdin,
        stdout,
        stderr: rx,
        stamp: stamp(dir, tool),
        next_id: 1,
        busy: false,
    })
}

impl Pool {
    /// Call a tool through its warm worker, starting (or restarting) it as needed.
    pub async fn call(
        &self,
        config: &Config,
        dir: &Path,
        tool: &super::Granted,
        args: &Value,
        host: &dyn Host,
    ) -> Result<CallOutput, RunError> {
        let m = &tool.manifest;
        let slot = self.slot(dir);
        let mut guard = slot.worker.lock().await;
        // The directory a person's approval was checked against, still (a worker starts on
        // its entry directly: this is as late as it can be checked).
        if tool.admitted.is_some() && crate::platform::dir_id(dir) != tool.admitted {
            return Err(RunError::Replaced {
                tool: m.name.clone(),
            });
        }
        let current = stamp(dir, tool);
        if let Some(w) = guard.as_mut() {
            let reason = if w.busy {
                Some("a previous call was interrupted")
            } else if w.stamp != current {
                Some("the tool changed")
            } else if !w.alive() {
                Some("it exited")
            } else {
                None
            };
            if let Some(reason) = reason {
                tracing::info!(tool = %m.name, reason, "replacing the warm worker");
                *guard = None;
            }
        }
        if guard.is_none() {
            *guard = Some(start(config, dir, tool).await?);
        }
        let w = guard.as_mut().expect("a worker was just started");
        let id = w.next_id;
        w.next_id += 1;
        w.busy = true;
        let memory = toolbox_root(dir).map(|r| crate::memory::Memory::for_toolbox(&r));
        let session = Conversation {
            tool: &m.name,
            memory: memory.as_ref(),
            host,
            cap: m.limits.output_bytes() as usize,
        };
        let line = request_line(tool, id, args, &config.roots);
        let work = async {
            w.stdin
                .write_all(line.as_bytes())
                .await
                .map_err(|_| Ending::Eof)?;
            session.exchange(&mut w.stdin, &mut w.stdout, id).await
        };
        let outcome =
            match tokio::time::timeout(Duration::from_millis(m.limits.timeout_ms()), work).await {
                Err(_) => Err(Ending::Timeout),
                Ok(r) => r,
            };
        w.busy = false;
        // Stderr written during the call: give its lines a moment to arrive when the call failed.
        if outcome.is_err() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut lines = w.drain_stderr();
        let outcome = match outcome {
            Err(Ending::Eof) => {
                // The worker died during the call: report how, and start afresh next time.
                let status =
                    tokio::time::timeout(Duration::from_secs(2), w.launched.child.wait()).await;
                tokio::time::sleep(Duration::from_millis(20)).await;
                lines.extend(w.drain_stderr());
                match status {
                    Ok(Ok(s)) => Err(Ending::Exited(exit_code(s))),
                    _ => Err(Ending::Eof),
                }
            }
            other => other,
        };
        let keep = matches!(outcome, Ok(_) | Err(Ending::ToolError(..)));
        if !keep {
            *guard = None; // killed on drop; the next call starts a new worker
        }
        drop(guard);
        let text = lines.join("\n");
        let bytes = text.as_bytes().to_vec();
        finish(m, outcome, &bytes, text.trim(), false, host).map_err(|e| match e {
            RunError::Failed { tool, code, stderr } => RunError::Failed {
                tool,
                code,
                stderr: format!(
                    "the warm worker exited during the call (it restarts on the next call). {stderr}"
                ),
            },
            other => other,
        })
    }
}
