//! What a server keeps ready for its script tools' calls (`Pool::set_enabled`, turned on by
//! `serve`), per tool (its recipe key: interpreter, environment, sandbox profile, limits):
//!
//! - **fork servers** (`runner::fork`) for Python tools: one process per recipe that set the
//!   sandbox up once and forks a fresh process per call, so calls stay fast back to back and in
//!   bursts (`TOOLSMITH_FORK_SERVERS=0` turns them off);
//! - **spares** for the others (and where no fork server can run): `TOOLSMITH_SPARES`
//!   (default 1) processes already started inside their sandbox, waiting in a stub
//!   (`stubs.rs`) for the entry path of their one call. A call takes one, hands it the entry,
//!   then its input, and a replacement is started in the background once the call is over.
//!   While calls find their spare still starting, the tool keeps more (up to `HOT_MAX`), until
//!   its calls slow down (`keep.rs`).
//!
//! A call never waits for any of these to start: when its tool has no fork server up (the
//! first call after a restart or of a new version, before its pre-start is over) it starts its
//! own process at once, through the same stub, and the fork server starts beside it for the
//! calls that follow; a registration leaves its tool's ready (`Scripts::ready_at`). A staged
//! copy checking its examples keeps nothing: its calls start their own processes.
//!
//! Every call is still a fresh process — a spare serves exactly one call, a fork server's call
//! is a new process in new namespaces — and every spare and fork server was started exactly
//! like a cold process (its own scratch directory, pids cgroup, pid namespace, limits), so only
//! the start-up latency is hidden. What waits is dropped (killed) when its tool's recipe key
//! changes, and a dead one (killed from outside) is skipped and replaced. At most
//! `TOOLSMITH_MAX_SPARES` (default 8) wait at once, within `TOOLSMITH_SPARE_MEMORY` (MiB,
//! default 512); the least recently used tool's are stopped to make room, and a tool's are
//! stopped after it goes unused for a while (`keep.rs`). Without a spare, a call starts its
//! process through the same stub at once, so every path runs a tool identically. The pool
//! belongs to an `App` (through `runner::Scripts`); dropping it stops everything it keeps.

#[cfg(target_os = "linux")]
mod forked;
mod keep;
mod slot;

#[cfg(target_os = "linux")]
use slot::Server;
use slot::{Slot, Spare, discard};

use super::launch::{self, Launched, Recipe};
use super::process::CallProcess;
use super::{Came, RunError};
use crate::config::Config;
use crate::platform::ProcessTree;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// How long after a call its replacement spare is started.
const REFILL_AFTER: std::time::Duration = std::time::Duration::from_millis(10);
/// The most spares one tool keeps while its calls come faster than a spare starts.
const HOT_MAX: usize = 4;
/// How long a call waits for the process its fork server is forking ahead.
#[cfg(target_os = "linux")]
const PREFORK_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// What one `App` keeps for its script tools' calls: spares and fork servers per tool directory.
pub struct Pool {
    /// Shared with the tasks that start replacements and look after the pool in the background.
    inner: Arc<Inner>,
}

struct Inner {
    slots: Mutex<HashMap<PathBuf, Slot>>,
    clock: AtomicU64,
    /// Processes are kept only when enabled (a long-running server: `serve` turns this on; a
    /// one-shot command does not start processes it would leave behind).
    enabled: AtomicBool,
    /// Idle spares per tool (`Config::spares`).
    per_tool: usize,
    /// Waiting process sets overall (`Config::max_spares`).
    max_total: usize,
    /// Their resident memory overall, in KiB (`Config::spare_memory_mb`).
    max_kib: u64,
    /// Fork servers for Python tools (`Config::fork_servers`).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fork_servers: bool,
    /// The background look-after (`keep::sweep`) runs.
    sweeping: AtomicBool,
    /// Woken when a process forked ahead is ready (`prefork`).
    #[cfg(target_os = "linux")]
    preforked_ready: tokio::sync::Notify,
    /// Calls running in a process started for them (no fork server was up): fork servers
    /// wait to start until these are over (`forked::yield_to_cold`), so a cold call has the
    /// processor to itself.
    #[cfg(target_os = "linux")]
    cold: std::sync::atomic::AtomicUsize,
    /// Woken when one of those ends.
    #[cfg(target_os = "linux")]
    cold_done: tokio::sync::Notify,
}

impl Inner {
    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed)
    }

    /// The slot of `dir` for this key, made when missing, marked used now.
    fn slot<'a>(
        &self,
        slots: &'a mut HashMap<PathBuf, Slot>,
        dir: &Path,
        r: &Recipe,
        key: u64,
    ) -> &'a mut Slot {
        let now = self.tick();
        let slot = slots
            .entry(dir.to_path_buf())
            .or_insert_with(|| Slot::new(key, now, r, self.per_tool));
        slot.rekey(key);
        slot.last_used = now;
        slot
    }

    /// A call arrives: take an idle spare of `dir` with this key. A call that finds none while one is
    /// starting, or finds it still starting, makes the tool keep one more (up to `HOT_MAX`).
    fn take(&self, dir: &Path, r: &Recipe, key: u64) -> Option<Spare> {
        let mut slots = self.slots();
        let slot = self.slot(&mut slots, dir, r, key);
        slot.last_call = Instant::now();
        // Oldest first: the most likely to be up already.
        let mut s = (!slot.idle.is_empty()).then(|| slot.idle.remove(0));
        let late = match s.as_mut() {
            // No spare: late only when one was being started (a first call is not).
            None => slot.starting > 0,
            Some(sp) => !sp.poll_ready(),
        };
        if late && self.per_tool > 0 {
            slot.want = (slot.want + 1).min(HOT_MAX.max(self.per_tool));
        }
        s
    }
}

/// Send the entry path to a started stub.
async fn send_entry(p: &mut CallProcess, entry: &Path) -> Result<(), String> {
    let mut line = entry.as_os_str().as_encoded_bytes().to_vec();
    line.push(b'\n');
    let stdin = p.stdin_mut().ok_or("no stdin")?;
    stdin
        .write_all(&line)
        .await
        .map_err(|e| format!("writing the entry: {e}"))
}

/// The call of an approved tool whose directory was replaced after the approval was checked.
fn replaced(r: &Recipe) -> RunError {
    RunError::Replaced {
        tool: r.name.clone(),
    }
}

/// Read a stub's "r" (its interpreter is up, inside its sandbox).
async fn read_ready(child: &mut ProcessTree) -> Result<(), String> {
    let stdout = child.stdout().as_mut().ok_or("no stdout")?;
    let mut b = [0u8; 1];
    match stdout.read(&mut b).await {
        Ok(1) if b[0] == b'r' => Ok(()),
        Ok(1) => Err(format!(
            "it printed {:?} before the tool started",
            b[0] as char
        )),
        Ok(_) => Err("it exited before the tool started".into()),
        Err(e) => Err(format!("reading its stdout: {e}")),
    }
}

/// Read a stub's "g" (after its "r" unless `ready`) on its channel: Ok when the process now
/// runs the tool's entry; Err when it ended first (killed, or it failed to start) or printed
/// something else.
pub(crate) async fn read_go(
    channel: &mut (dyn AsyncRead + Send + Unpin),
    mut ready: bool,
) -> Result<(), String> {
    loop {
        let mut b = [0u8; 1];
        match channel.read(&mut b).await {
            Ok(1) if b[0] == b'r' && !ready => ready = true,
            Ok(1) if b[0] == b'g' && ready => return Ok(()),
            Ok(1) => {
                return Err(format!(
                    "it printed {:?} before the tool started",
                    b[0] as char
                ));
            }
            Ok(_) => return Err("it exited before the tool started".into()),
            Err(e) => return Err(format!("reading its stdout: {e}")),
        }
    }
}

impl Pool {
    /// An empty pool, disabled until `set_enabled`, with the configuration's bounds: spares
    /// per tool, process sets and memory overall, whether Python tools get fork servers.
    pub fn new(config: &Config) -> Pool {
        Pool {
            inner: Arc::new(Inner {
                slots: Mutex::default(),
                clock: AtomicU64::new(0),
                enabled: AtomicBool::new(false),
                per_tool: config.spares,
                max_total: config.max_spares,
                max_kib: config.spare_memory_mb.saturating_mul(1024),
                fork_servers: config.fork_servers && config.spares > 0,
                sweeping: AtomicBool::new(false),
                #[cfg(target_os = "linux")]
                preforked_ready: tokio::sync::Notify::new(),
                #[cfg(target_os = "linux")]
                cold: std::sync::atomic::AtomicUsize::new(0),
                #[cfg(target_os = "linux")]
                cold_done: tokio::sync::Notify::new(),
            }),
        }
    }

    /// Keep processes for calls (a long-running server: `serve` turns this on; a one-shot
    /// command does not start processes it would leave behind). Inside a tokio runtime this
    /// also starts the pool's look-after: tools unused for a while give their processes back.
    pub fn set_enabled(&self, on: bool) {
        self.inner.enabled.store(on, Ordering::SeqCst);
        if on {
            keep::start_sweeping(&self.inner);
        }
    }

    fn enabled(&self) -> bool {
        self.inner.enabled.load(Ordering::SeqCst)
    }

    /// Whether calls of this recipe go through a fork server here (when one can start).
    #[cfg(target_os = "linux")]
    fn forks(&self, r: &Recipe) -> bool {
        self.enabled()
            && self.inner.fork_servers
            && r.stub.is_some_and(|s| s.forks())
            && r.network.domains().is_none()
    }

    /// A process running (or about to run) the recipe's entry for one call, and where it came
    /// from: forked by the tool's fork server when that is up, an idle spare when one is there
    /// (a dead one is skipped), else one started now. A call never waits for a fork server to
    /// start: while its tool has none up, the call starts its own process at once and the
    /// server starts beside it, for the calls that follow. `keep`: the tool keeps processes
    /// for its calls (a stored tool; not a staged copy checking its examples, nor
    /// execute_code's throwaway directory), else the call only starts its own. Without a
    /// stub, a direct start. With `Some(ready)`, the stub's "g" is still to be read
    /// (`read_go`) before its stdout is the tool's: the call's input may be written at once,
    /// right behind the entry line.
    pub(crate) async fn acquire(
        &self,
        dir: &Path,
        r: &Recipe,
        keep: bool,
    ) -> Result<(CallProcess, Option<bool>, Came), RunError> {
        let Some(stub) = r.stub else {
            // No stub to wait in: checked as late as can be, just before the start.
            if !r.still_admitted() {
                return Err(replaced(r));
            }
            return start(r, false)
                .await
                .map(|l| (CallProcess::Tree(l), None, Came::Started));
        };
        let key = if keep { r.key() } else { 0 };
        #[cfg(target_os = "linux")]
        let forks = keep && self.forks(r);
        #[cfg(target_os = "linux")]
        if forks && let Some(out) = self.forked(dir, r, key).await {
            return out.map(|(p, go)| (p, go, Came::Forked));
        }
        while let Some(mut s) = keep.then(|| self.inner.take(dir, r, key)).flatten() {
            if !s.alive() {
                tracing::info!(tool = %r.name, "a spare had exited (killed from outside?); skipping it");
                discard(vec![s]);
                continue;
            }
            // Its sandbox holds the directory it was started with, which its key names.
            if !r.still_admitted() {
                discard(vec![s]);
                return Err(replaced(r));
            }
            let ready = s.ready;
            let mut p = CallProcess::Tree(s.launched);
            let sent = send_entry(&mut p, &r.entry).await;
            let went = match sent {
                Ok(()) if stub.pipelined() => return Ok((p, Some(ready), Came::Spare)),
                Ok(()) => match p.channel() {
                    Some(c) => read_go(c, ready).await,
                    None => Err("no channel".into()),
                },
                Err(e) => Err(e),
            };
            match went {
                Ok(()) => return Ok((p, None, Came::Spare)),
                Err(why) => {
                    tracing::info!(tool = %r.name, why, "a spare could not take the call; skipping it");
                    discard(vec![p]);
                }
            }
        }
        let mut l = start(r, true).await?;
        // The call's process is on its way: the fork server starts beside it, once this call
        // is over (they would share the processor while both start their interpreters).
        #[cfg(target_os = "linux")]
        if forks {
            if let Some(pid) = l.pid {
                forked::track_cold(&self.inner, pid);
            }
            self.start_server(dir, r, key);
        }
        let mut ready = false;
        if r.admitted.is_some() {
            // The stub's "r": its sandbox is set up, the directory bound. Still the one the
            // person's approval was checked against? Else nothing of the tool's runs.
            ready = read_ready(&mut l.child).await.is_ok();
            if !r.still_admitted() {
                return Err(replaced(r));
            }
        }
        let mut p = CallProcess::Tree(l);
        // A fresh process that fails here (a missing interpreter, a bad flag) reports it
        // through its exit status and stderr, read by the call as for any process.
        let _ = send_entry(&mut p, &r.entry).await;
        if stub.pipelined() {
            return Ok((p, Some(ready), Came::Started));
        }
        if let Some(c) = p.channel()
            && let Err(why) = read_go(c, ready).await
        {
            tracing::debug!(tool = %r.name, why, "the process ended before the tool started");
        }
        Ok((p, None, Came::Started))
    }

    /// After a call of a stored tool: keep what its next calls need — its fork server (kept
    /// anyway), else its spares up to the count it wants now (none when `TOOLSMITH_SPARES=0`
    /// or the pool is disabled) — making room under the overall bounds.
    pub(crate) fn refill(&self, dir: &Path, r: &Recipe) {
        let inner = &self.inner;
        if r.stub.is_none() || inner.per_tool == 0 || !self.enabled() {
            return;
        }
        let key = r.key();
        let missing = {
            let mut slots = inner.slots();
            let slot = inner.slot(&mut slots, dir, r, key);
            #[cfg(target_os = "linux")]
            if self.forks(r) && !matches!(slot.server, Server::Unusable) {
                return;
            }
            let want = slot.want.max(inner.per_tool);
            let missing = want.saturating_sub(slot.idle.len() + slot.starting);
            slot.starting += missing;
            missing
        };
        for _ in 0..missing {
            let (dir, r, inner) = (dir.to_path_buf(), r.clone(), Arc::clone(inner));
            tokio::spawn(async move {
                // After the call's result has gone out: starting a process forks this one,
                // which holds its memory map while it copies it, and the result's path needs
                // it too.
                tokio::time::sleep(REFILL_AFTER).await;
                let started = start(&r, true).await;
                let mut slots = inner.slots();
                let Some(slot) = slots.get_mut(&dir) else {
                    // Stopped meanwhile: the spare is stopped too.
                    if let Ok(launched) = started {
                        discard(vec![launched]);
                    }
                    return;
                };
                slot.starting = slot.starting.saturating_sub(1);
                match started {
                    Ok(launched) if slot.key == key => slot.idle.push(Spare {
                        launched,
                        ready: false,
                    }),
                    Ok(launched) => discard(vec![launched]),
                    Err(e) => tracing::debug!(tool = %r.name, "could not start a spare: {e}"),
                }
                keep::evict(&mut slots, &inner);
            });
        }
    }

    /// Before any call (a server starting on a toolbox, for the tools it used most; a tool
    /// just registered): start what a call of `r` will find waiting — its fork server, else
    /// its spares.
    pub(crate) fn prestart(&self, dir: &Path, r: &Recipe) {
        #[cfg(target_os = "linux")]
        if self.forks(r) {
            self.start_server(dir, r, r.key());
            return;
        }
        self.refill(dir, r);
    }

    /// Wait until everything being started is up and waiting (benchmarks and tests: a call
    /// then finds its spare or fork server ready, as a call spaced like an AI's requests does).
    pub async fn settled(&self) {
        for _ in 0..2000 {
            if self.inner.slots().values_mut().all(Slot::settled) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// Wait until what is being started for the tool in `dir` is up, for at most `within`;
    /// true when nothing is starting there any more.
    pub async fn settled_at(&self, dir: &Path, within: std::time::Duration) -> bool {
        let until = Instant::now() + within;
        loop {
            if self.inner.slots().get_mut(dir).is_none_or(Slot::settled) {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    }

    /// The process ids of the idle spares (the sandbox's outer process) of the tool in `dir`.
    pub fn idle_pids(&self, dir: &Path) -> Vec<u32> {
        self.inner
            .slots()
            .get(dir)
            .map(|s| s.idle.iter().filter_map(|sp| sp.launched.pid).collect())
            .unwrap_or_default()
    }

    /// The process id of the tool's fork server (its sandbox's outer process), when one runs.
    pub fn server_pid(&self, dir: &Path) -> Option<u32> {
        #[cfg(target_os = "linux")]
        if let Some(Slot {
            server: Server::Ready(s),
            ..
        }) = self.inner.slots().get(dir)
        {
            return s.pid();
        }
        let _ = dir;
        None
    }

    /// How many spares are idle, overall.
    pub fn idle_count(&self) -> usize {
        self.inner.slots().values().map(|s| s.idle.len()).sum()
    }

    /// Stop every spare and fork server (tests; shutdown), removing their scratch directories
    /// and cgroups.
    pub fn stop_all(&self) {
        let stopped: Vec<Slot> = self.inner.slots().drain().map(|(_, s)| s).collect();
        drop(stopped);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Replacements and fork servers still starting find no slot and stop their process.
        self.stop_all();
    }
}

/// Start a process off the async threads (the fork waits for the child's sandbox set-up).
async fn start(r: &Recipe, spare: bool) -> Result<Launched, RunError> {
    let r2 = r.clone();
    crate::platform::blocking(move || launch::spawn(&r2, spare))
        .await
        .unwrap_or_else(|e| {
            Err(RunError::Start {
                tool: r.name.clone(),
                message: format!("starting the process failed: {e}"),
            })
        })
}
