//! Pre-started spares: in a server (`Pool::set_enabled`, turned on by `serve`), per tool (its
//! recipe key: interpreter, environment, sandbox profile, limits), `TOOLSMITH_SPARES` (default 1)
//! processes already started inside their sandbox,
//! waiting in a stub (`stubs.rs`) for the entry path of their one call. A call takes one, hands
//! it the entry, then its input, and a replacement is started in the background once the call
//! is over. Every call is still a fresh process — a spare serves exactly one call — and every
//! spare was started exactly like a cold process (its own scratch directory, pids cgroup,
//! pid namespace, limits), so only the start-up latency is hidden.
//!
//! A spare is dropped (killed) when its tool's recipe key changes (the environment, the
//! sandbox profile or the interpreter differ), and a dead one (killed from outside) is
//! skipped and replaced. At most `TOOLSMITH_MAX_SPARES` (default 8) idle spares live at once;
//! the least recently used tool's are stopped to make room. Without a spare, a call starts its
//! process through the same stub at once, so both paths run a tool identically. The spares
//! live in a `Pool` an `App` owns (through `runner::Scripts`); dropping it stops them.

use super::RunError;
use super::launch::{self, Launched, Recipe};
use crate::platform::ProcessTree;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long after a call its replacement spare is started.
const REFILL_AFTER: std::time::Duration = std::time::Duration::from_millis(10);

struct Spare {
    launched: Launched,
    /// Its stub said "r" (the interpreter is up and waiting).
    ready: bool,
}

impl Spare {
    fn alive(&mut self) -> bool {
        matches!(self.launched.child.try_wait(), Ok(None))
    }

    /// Read the stub's "r" if it has arrived, without waiting.
    fn poll_ready(&mut self) -> bool {
        use futures::FutureExt;
        if !self.ready
            && let Some(out) = self.launched.child.stdout().as_mut()
        {
            let mut b = [0u8; 1];
            match out.read(&mut b).now_or_never() {
                Some(Ok(1)) if b[0] == b'r' => self.ready = true,
                Some(_) => {
                    // EOF, an error or a stray byte: this spare cannot be used.
                    self.launched.child.kill();
                }
                None => {}
            }
        }
        self.ready
    }
}

/// Stop spares off the async threads (killing a process's cgroup waits for it to empty).
fn discard(spares: Vec<Spare>) {
    if spares.is_empty() {
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(h) => drop(h.spawn_blocking(move || drop(spares))),
        Err(_) => drop(spares),
    }
}

struct Slot {
    key: u64,
    idle: Vec<Spare>,
    starting: usize,
    last_used: u64,
}

/// The spares of one `App`: idle processes per tool directory.
pub struct Pool {
    /// Shared with the tasks that start replacements in the background.
    inner: Arc<Inner>,
}

struct Inner {
    slots: Mutex<HashMap<PathBuf, Slot>>,
    clock: AtomicU64,
    /// Spares are kept only when enabled (a long-running server: `serve` turns this on; a
    /// one-shot command does not start processes it would leave behind).
    enabled: AtomicBool,
    /// Idle spares per tool (`Config::spares`).
    per_tool: usize,
    /// Idle spares overall (`Config::max_spares`).
    max_total: usize,
}

impl Inner {
    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Take an idle spare of `dir` with this key (dropping the slot's spares when the key
    /// changed).
    fn take(&self, dir: &Path, key: u64) -> Option<Spare> {
        let mut slots = self.slots();
        let slot = slots.get_mut(dir)?;
        if slot.key != key {
            tracing::debug!(dir = %dir.display(), "the tool's process set-up changed; dropping its spares");
            discard(std::mem::take(&mut slot.idle));
            slot.key = key;
            return None;
        }
        slot.last_used = self.clock.fetch_add(1, Ordering::Relaxed);
        // Oldest first: the most likely to be up already.
        (!slot.idle.is_empty()).then(|| slot.idle.remove(0))
    }
}

/// Send the entry path to a started stub.
async fn send_entry(l: &mut Launched, entry: &Path) -> Result<(), String> {
    let mut line = entry.as_os_str().as_encoded_bytes().to_vec();
    line.push(b'\n');
    let stdin = l.child.stdin().as_mut().ok_or("no stdin")?;
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

/// Read a stub's "g" (after its "r" unless `ready`): Ok when the process now runs the tool's
/// entry; Err when it ended first (killed, or it failed to start) or printed something else.
pub(crate) async fn read_go(child: &mut ProcessTree, mut ready: bool) -> Result<(), String> {
    let stdout = child.stdout().as_mut().ok_or("no stdout")?;
    loop {
        let mut b = [0u8; 1];
        match stdout.read(&mut b).await {
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
    /// An empty pool, disabled until `set_enabled`, keeping `per_tool` idle spares per tool
    /// and at most `max_total` overall (`Config::spares`, `Config::max_spares`).
    pub fn new(per_tool: usize, max_total: usize) -> Pool {
        Pool {
            inner: Arc::new(Inner {
                slots: Mutex::default(),
                clock: AtomicU64::new(0),
                enabled: AtomicBool::new(false),
                per_tool,
                max_total,
            }),
        }
    }

    /// Keep spares (a long-running server: `serve` turns this on; a one-shot command does
    /// not start processes it would leave behind).
    pub fn set_enabled(&self, on: bool) {
        self.inner.enabled.store(on, Ordering::SeqCst);
    }

    /// A process running (or about to run) the recipe's entry for one call: an idle spare
    /// when one is there (a dead one is skipped), else one started now; without a stub, a
    /// direct start. With `Some(ready)`, the stub's "g" is still to be read (`read_go`) before
    /// its stdout is the tool's: the call's input may be written at once, right behind the
    /// entry line.
    pub(crate) async fn acquire(
        &self,
        dir: &Path,
        r: &Recipe,
    ) -> Result<(Launched, Option<bool>), RunError> {
        let Some(stub) = r.stub else {
            // No stub to wait in: checked as late as can be, just before the start.
            if !r.still_admitted() {
                return Err(replaced(r));
            }
            return start(r, false).await.map(|l| (l, None));
        };
        let key = r.key();
        while let Some(mut s) = self.inner.take(dir, key) {
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
            let sent = send_entry(&mut s.launched, &r.entry).await;
            let went = match sent {
                Ok(()) if stub.pipelined() => return Ok((s.launched, Some(ready))),
                Ok(()) => read_go(&mut s.launched.child, ready).await,
                Err(e) => Err(e),
            };
            match went {
                Ok(()) => return Ok((s.launched, None)),
                Err(why) => {
                    tracing::info!(tool = %r.name, why, "a spare could not take the call; skipping it");
                    discard(vec![s]);
                }
            }
        }
        let mut l = start(r, true).await?;
        let mut ready = false;
        if r.admitted.is_some() {
            // The stub's "r": its sandbox is set up, the directory bound. Still the one the
            // person's approval was checked against? Else nothing of the tool's runs.
            ready = read_ready(&mut l.child).await.is_ok();
            if !r.still_admitted() {
                return Err(replaced(r));
            }
        }
        // A fresh process that fails here (a missing interpreter, a bad flag) reports it
        // through its exit status and stderr, read by the call as for any process.
        let _ = send_entry(&mut l, &r.entry).await;
        if stub.pipelined() {
            return Ok((l, Some(ready)));
        }
        if let Err(why) = read_go(&mut l.child, ready).await {
            tracing::debug!(tool = %r.name, why, "the process ended before the tool started");
        }
        Ok((l, None))
    }

    /// After a call of a stored tool: start its spares in the background up to the per-tool
    /// count (none when `TOOLSMITH_SPARES=0` or the pool is disabled), making room under the
    /// overall bound.
    pub(crate) fn refill(&self, dir: &Path, r: &Recipe) {
        let inner = &self.inner;
        let want = if inner.enabled.load(Ordering::SeqCst) {
            inner.per_tool
        } else {
            0
        };
        if r.stub.is_none() || want == 0 {
            return;
        }
        let key = r.key();
        let missing = {
            let mut slots = inner.slots();
            let now = inner.clock.fetch_add(1, Ordering::Relaxed);
            let slot = slots.entry(dir.to_path_buf()).or_insert_with(|| Slot {
                key,
                idle: Vec::new(),
                starting: 0,
                last_used: now,
            });
            if slot.key != key {
                discard(std::mem::take(&mut slot.idle));
                slot.key = key;
            }
            slot.last_used = now;
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
                        discard(vec![Spare {
                            launched,
                            ready: false,
                        }]);
                    }
                    return;
                };
                slot.starting = slot.starting.saturating_sub(1);
                match started {
                    Ok(launched) if slot.key == key => slot.idle.push(Spare {
                        launched,
                        ready: false,
                    }),
                    Ok(launched) => discard(vec![Spare {
                        launched,
                        ready: false,
                    }]),
                    Err(e) => tracing::debug!(tool = %r.name, "could not start a spare: {e}"),
                }
                evict(&mut slots, inner.max_total);
            });
        }
    }

    /// Wait until every spare being started is up and waiting (benchmarks and tests: a call
    /// then finds its spare ready, as a call spaced like an AI's requests does).
    pub async fn settled(&self) {
        for _ in 0..2000 {
            let done = {
                let mut slots = self.inner.slots();
                slots.values_mut().all(|s| {
                    let (mut live, mut dead) = (Vec::new(), Vec::new());
                    for mut sp in std::mem::take(&mut s.idle) {
                        if sp.alive() {
                            live.push(sp);
                        } else {
                            dead.push(sp);
                        }
                    }
                    discard(dead);
                    let ready = live.iter_mut().all(Spare::poll_ready);
                    s.idle = live;
                    s.starting == 0 && ready
                })
            };
            if done {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
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

    /// How many spares are idle, overall.
    pub fn idle_count(&self) -> usize {
        self.inner.slots().values().map(|s| s.idle.len()).sum()
    }

    /// Stop every spare (tests; shutdown), removing their scratch directories and cgroups.
    pub fn stop_all(&self) {
        let stopped: Vec<Slot> = self.inner.slots().drain().map(|(_, s)| s).collect();
        drop(stopped);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Replacements still starting find no slot and stop their process.
        self.stop_all();
    }
}

/// Start a process off the async threads (the fork waits for the child's sandbox set-up).
async fn start(r: &Recipe, spare: bool) -> Result<Launched, RunError> {
    let r2 = r.clone();
    tokio::task::spawn_blocking(move || launch::spawn(&r2, spare))
        .await
        .unwrap_or_else(|e| {
            Err(RunError::Start {
                tool: r.name.clone(),
                message: format!("starting the process failed: {e}"),
            })
        })
}

/// Stop the least recently used tools' spares while more than `max` are idle.
fn evict(slots: &mut HashMap<PathBuf, Slot>, max: usize) {
    while slots.values().map(|s| s.idle.len()).sum::<usize>() > max {
        let Some(victim) = slots
            .iter()
            .filter(|(_, s)| !s.idle.is_empty())
            .min_by_key(|(_, s)| s.last_used)
            .map(|(k, _)| k.clone())
        else {
            return;
        };
        if let Some(s) = slots.get_mut(&victim) {
            discard(vec![s.idle.remove(0)]);
        }
    }
}
