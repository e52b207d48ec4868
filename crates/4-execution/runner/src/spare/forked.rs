//! The fork-server side of the pool (Linux): a call's process forked by its tool's fork
//! server when it is up, the server started in the background (one per recipe key; a call
//! meanwhile starts its own process), and the next call's process forked ahead.

use super::{Inner, PREFORK_WAIT, Pool, Server, discard, keep, replaced, send_entry};
use crate::RunError;
use crate::launch::Recipe;
use crate::process::CallProcess;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Calls of a tool less than this apart come back to back.
const BACK_TO_BACK: Duration = Duration::from_millis(50);
/// How many calls' processes a fork server keeps forked ahead while its calls come back to
/// back: a call takes one while the next ones are being set up (fork, namespaces, mounts,
/// Landlock, seccomp, the move into a cgroup: 7 ms at p50 and 10 at p90 here under
/// bubblewrap, two calls' time). With two, half the calls waited for theirs (p90 2.8 ms).
const AHEAD_BACK_TO_BACK: usize = 3;
/// How many a fork server keeps forked ahead until its first call: a tool just registered or
/// pre-started is often called twice in a row (an AI tries it, then uses it), and with one
/// ahead the second call waited for its process's set-up (9–11 ms at p50 instead of 4–6).
const AHEAD_FIRST: usize = 2;

impl Pool {
    /// A call of `r` forked by the tool's fork server, ready for its input; None when the tool
    /// has no fork server up here (none started yet, one starting, or none can run): the call
    /// starts its own process (nothing of the tool's ran), and `Pool::acquire` has the server
    /// started beside it.
    pub(super) async fn forked(
        &self,
        dir: &Path,
        r: &Recipe,
        key: u64,
    ) -> Option<Result<(CallProcess, Option<bool>), RunError>> {
        let server = self.server_up(dir, r, key)?;
        // Its sandbox holds the directory it was started with, which its key names.
        if !r.still_admitted() {
            return Some(Err(replaced(r)));
        }
        let t0 = Instant::now();
        let ready = self.take_preforked(dir, &server).await;
        tracing::debug!(tool = %r.name, ahead = ready.is_some(), waited = ?t0.elapsed(), "a forked call's process");
        let got = match ready {
            Some(f) => Ok(f),
            None => server.call(r, crate::fork::Ahead::Plain).await,
        };
        prefork(&self.inner, dir, r, key, &server);
        match got {
            Ok(forked) => {
                // The call's process is set up: still the approved directory?
                if !r.still_admitted() {
                    discard(vec![forked]);
                    return Some(Err(replaced(r)));
                }
                let mut p = CallProcess::Forked(forked);
                // A failed write means the process died: its status says why.
                let _ = send_entry(&mut p, &r.entry).await;
                Some(Ok((p, Some(true))))
            }
            Err(crate::fork::Unusable(why)) => {
                let alive = server.alive();
                tracing::info!(tool = %r.name, why, alive, "a fork server could not start a call; the call starts its own process");
                let mut slots = self.inner.slots();
                if let Some(slot) = slots.get_mut(dir)
                    && let Server::Ready(s) = &slot.server
                    && Arc::ptr_eq(s, &server)
                {
                    slot.stop_server();
                    // A live server whose calls cannot be set up here: spares instead. A dead
                    // one is started again beside this call.
                    if alive {
                        slot.server = Server::Unusable;
                    }
                }
                None
            }
        }
    }

    /// The tool's fork server for this key when it is up (a dead one is dropped).
    fn server_up(&self, dir: &Path, r: &Recipe, key: u64) -> Option<Arc<crate::fork::Server>> {
        let mut slots = self.inner.slots();
        let slot = self.inner.slot(&mut slots, dir, r, key);
        // Calls coming back to back keep more processes forked ahead (`AHEAD_BACK_TO_BACK`):
        // one's set-up takes longer than a call.
        let now = Instant::now();
        slot.ahead = match slot.last_fork {
            Some(t) if now.saturating_duration_since(t) < BACK_TO_BACK => AHEAD_BACK_TO_BACK,
            // The fork server's first call (`start_server`).
            None => AHEAD_FIRST,
            Some(_) => 1,
        };
        slot.last_fork = Some(now);
        slot.last_call = now;
        if let Server::Ready(s) = &slot.server
            && !s.alive()
        {
            tracing::info!(tool = %r.name, "a fork server had exited (killed from outside?); starting another");
            slot.stop_server();
        }
        match &slot.server {
            Server::Ready(s) => Some(Arc::clone(s)),
            _ => None,
        }
    }

    /// Start the tool's fork server in the background, unless it has one (up or starting) or
    /// none can run here; once up, it forks the next call's process ahead.
    pub(super) fn start_server(&self, dir: &Path, r: &Recipe, key: u64) {
        {
            let mut slots = self.inner.slots();
            let slot = self.inner.slot(&mut slots, dir, r, key);
            if !matches!(slot.server, Server::None) {
                return;
            }
            slot.server = Server::Starting;
            // Until its first call, it keeps `AHEAD_FIRST` forked ahead.
            slot.ahead = AHEAD_FIRST;
            slot.last_fork = None;
        }
        let (inner, dir, r) = (Arc::clone(&self.inner), dir.to_path_buf(), r.clone());
        tokio::spawn(async move {
            yield_to_cold(&inner).await;
            if let Some(s) = start_server(&inner, &dir, &r, key).await {
                prefork(&inner, &dir, &r, key, &s);
            }
        });
    }

    /// A call's process `server` forked before the call, when one waits (and still lives), or
    /// is being forked and fewer calls wait for those than are being forked (then it is waited
    /// for, briefly: a process forked now would wait for its own move into a cgroup).
    async fn take_preforked(
        &self,
        dir: &Path,
        server: &Arc<crate::fork::Server>,
    ) -> Option<crate::fork::Forked> {
        let notified = self.inner.preforked_ready.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let take = |claim: bool| {
            let mut slots = self.inner.slots();
            let slot = slots.get_mut(dir)?;
            while !slot.preforked.is_empty() {
                let f = slot.preforked.remove(0);
                if f.of(server) && f.alive() {
                    return Some(Ok(f));
                }
                discard(vec![f]);
            }
            if claim && slot.claimed < slot.preforking {
                slot.claimed += 1;
                return Some(Err(()));
            }
            None
        };
        match take(true)? {
            Ok(f) => Some(f),
            Err(()) => {
                let _ = tokio::time::timeout(PREFORK_WAIT, notified).await;
                take(false).and_then(Result::ok)
            }
        }
    }
}

/// Have `server` fork the next calls' processes now, in the background, up to what the tool
/// keeps forked ahead (`Slot::ahead`), counting those waiting and being forked.
fn prefork(
    inner: &Arc<Inner>,
    dir: &Path,
    r: &Recipe,
    key: u64,
    server: &Arc<crate::fork::Server>,
) {
    let (n, ahead) = {
        let mut slots = inner.slots();
        let Some(slot) = slots.get_mut(dir) else {
            return;
        };
        if slot.key != key {
            return;
        }
        let n = slot
            .ahead
            .saturating_sub(slot.preforked.len() + slot.preforking);
        slot.preforking += n;
        // Calls back to back: the compile would share the processor with the call running.
        let ahead = match slot.ahead {
            AHEAD_BACK_TO_BACK => crate::fork::Ahead::Plain,
            _ => crate::fork::Ahead::Compiled,
        };
        (n, ahead)
    };
    for _ in 0..n {
        let (inner, dir, r, server) = (
            Arc::clone(inner),
            dir.to_path_buf(),
            r.clone(),
            Arc::clone(server),
        );
        tokio::spawn(async move {
            let got = server.call(&r, ahead).await;
            let mut slots = inner.slots();
            let Some(slot) = slots.get_mut(&dir) else {
                if let Ok(f) = got {
                    discard(vec![f]);
                }
                return;
            };
            slot.preforking = slot.preforking.saturating_sub(1);
            slot.claimed = slot.claimed.saturating_sub(1);
            let current = slot.key == key
                && matches!(&slot.server, Server::Ready(s) if Arc::ptr_eq(s, &server));
            match got {
                Ok(f) if current && slot.preforked.len() < slot.ahead => slot.preforked.push(f),
                Ok(f) => discard(vec![f]),
                Err(crate::fork::Unusable(why)) => {
                    tracing::debug!(tool = %r.name, why, "could not fork a call's process ahead");
                }
            }
            drop(slots);
            inner.preforked_ready.notify_waiters();
        });
    }
}

/// The longest a fork server's start waits for cold calls to end.
const YIELD_MAX: Duration = Duration::from_secs(2);

/// A call runs in process `pid`, started for it: counted until the process exits (its pidfd
/// turns readable; `pid` is the caller's unreaped child, so the number names that process).
pub(super) fn track_cold(inner: &Arc<Inner>, pid: u32) {
    use std::sync::atomic::Ordering;
    let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
        return;
    };
    let Ok(fd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::NONBLOCK) else {
        return;
    };
    // SAFETY: the AsyncFd takes the OwnedFd and owns it: the descriptor stays open and the
    // same description for the AsyncFd's whole life.
    let Ok(fd) = (unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
    }) else {
        return;
    };
    inner.cold.fetch_add(1, Ordering::AcqRel);
    let inner = Arc::clone(inner);
    tokio::spawn(async move {
        // A call that outlives the wait no longer holds its tool's fork server back.
        let _ = tokio::time::timeout(YIELD_MAX, fd.readable()).await;
        inner.cold.fetch_sub(1, Ordering::AcqRel);
        inner.cold_done.notify_waiters();
    });
}

/// Wait (at most [`YIELD_MAX`]) until no call runs in a process started for it: a fork server
/// starting beside a cold call would take half the processor from it on a 2-core machine
/// (measured: a first call after a restart 130–160 ms beside the start, against a bare
/// interpreter's 61 ms).
async fn yield_to_cold(inner: &Inner) {
    use std::sync::atomic::Ordering;
    let until = tokio::time::Instant::now() + YIELD_MAX;
    loop {
        let ended = inner.cold_done.notified();
        if inner.cold.load(Ordering::Acquire) == 0 {
            return;
        }
        if tokio::time::timeout_at(until, ended).await.is_err() {
            return;
        }
    }
}

/// Start the fork server of `dir` (its slot says Starting).
async fn start_server(
    inner: &Inner,
    dir: &Path,
    r: &Recipe,
    key: u64,
) -> Option<Arc<crate::fork::Server>> {
    let started = crate::fork::Server::start(r).await;
    // Its binds hold the directories of when it started: still the ones the key names?
    let current = r.key() == key;
    let mut slots = inner.slots();
    let out = match slots.get_mut(dir) {
        Some(slot) if slot.key == key && matches!(slot.server, Server::Starting) => match started {
            Ok(s) if current => {
                let s = Arc::new(s);
                slot.server = Server::Ready(Arc::clone(&s));
                Some(s)
            }
            Ok(s) => {
                discard(vec![s]);
                slot.server = Server::None;
                None
            }
            Err(crate::fork::Unusable(why)) => {
                tracing::info!(tool = %r.name, why, "no fork server for this tool: its calls start their own processes");
                slot.server = Server::Unusable;
                None
            }
        },
        // Stopped or changed meanwhile.
        _ => {
            if let Ok(s) = started {
                discard(vec![s]);
            }
            None
        }
    };
    keep::evict(&mut slots, inner);
    out
}
