//! The fork-server side of the pool (Linux): a call's process forked by its tool's fork
//! server, the server found or started (one per recipe key, a call meanwhile waiting for it),
//! and the next call's process forked ahead, after this call's result is out.

use super::{Inner, PREFORK_WAIT, Pool, Server, discard, keep, replaced, send_entry};
use crate::RunError;
use crate::launch::Recipe;
use crate::process::CallProcess;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

impl Pool {
    /// A call of `r` forked by the tool's fork server (started now when it has none; a call
    /// meanwhile waits for it), ready for its input; None when this recipe has no usable fork
    /// server here (the call starts its process another way; nothing of the tool's ran).
    pub(super) async fn forked(
        &self,
        dir: &Path,
        r: &Recipe,
        key: u64,
    ) -> Option<Result<(CallProcess, Option<bool>), RunError>> {
        // A second try when the first server was found dead.
        for _ in 0..2 {
            let server = self.server_for(dir, r, key).await?;
            // Its sandbox holds the directory it was started with, which its key names.
            if !r.still_admitted() {
                return Some(Err(replaced(r)));
            }
            let ready = self.take_preforked(dir, &server).await;
            let got = match ready {
                Some(f) => Ok(f),
                None => server.call(r).await,
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
                    return Some(Ok((p, Some(true))));
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
                        if alive {
                            slot.server = Server::Unusable;
                        }
                    }
                    if alive {
                        return None;
                    }
                }
            }
        }
        None
    }

    /// The call's process `server` forked before the call, when one waits (and still lives),
    /// or is being forked and no other call waits for it (then it is waited for, briefly: a
    /// process forked now would wait for its own move into a cgroup).
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
            match slot.preforked.take() {
                Some(f) if f.of(server) && f.alive() => return Some(Ok(f)),
                Some(f) => discard(vec![f]),
                None => {}
            }
            if claim && slot.preforking && !slot.prefork_claimed {
                slot.prefork_claimed = true;
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

    /// The tool's running fork server for this key: the one there, the one being started
    /// (waited for), or one started now. None when it cannot have one.
    async fn server_for(
        &self,
        dir: &Path,
        r: &Recipe,
        key: u64,
    ) -> Option<Arc<crate::fork::Server>> {
        loop {
            let next = {
                let mut slots = self.inner.slots();
                let slot = self.inner.slot(&mut slots, dir, r, key);
                slot.last_call = Instant::now();
                if let Server::Ready(s) = &slot.server
                    && !s.alive()
                {
                    tracing::info!(tool = %r.name, "a fork server had exited (killed from outside?); starting another");
                    slot.stop_server();
                }
                match &slot.server {
                    Server::Ready(s) => return Some(Arc::clone(s)),
                    Server::Unusable => return None,
                    Server::Starting(rx) => Err(rx.clone()),
                    Server::None => {
                        let (tx, rx) = tokio::sync::watch::channel(false);
                        slot.server = Server::Starting(rx);
                        Ok(tx)
                    }
                }
            };
            let mut wait = match next {
                Ok(tx) => return start_server(&self.inner, dir, r, key, tx).await,
                Err(rx) => rx,
            };
            let _ = wait.wait_for(|done| *done).await;
        }
    }
}

/// Have `server` fork the next call's process now, in the background (after this call's
/// result is out), unless one waits or is being forked.
pub(super) fn prefork(
    inner: &Arc<Inner>,
    dir: &Path,
    r: &Recipe,
    key: u64,
    server: &Arc<crate::fork::Server>,
) {
    {
        let mut slots = inner.slots();
        let Some(slot) = slots.get_mut(dir) else {
            return;
        };
        if slot.key != key || slot.preforking || slot.preforked.is_some() {
            return;
        }
        slot.preforking = true;
    }
    let (inner, dir, r, server) = (
        Arc::clone(inner),
        dir.to_path_buf(),
        r.clone(),
        Arc::clone(server),
    );
    tokio::spawn(async move {
        let got = server.call(&r).await;
        let mut slots = inner.slots();
        let Some(slot) = slots.get_mut(&dir) else {
            if let Ok(f) = got {
                discard(vec![f]);
            }
            return;
        };
        slot.preforking = false;
        slot.prefork_claimed = false;
        let current =
            slot.key == key && matches!(&slot.server, Server::Ready(s) if Arc::ptr_eq(s, &server));
        match got {
            Ok(f) if current && slot.preforked.is_none() => slot.preforked = Some(f),
            Ok(f) => discard(vec![f]),
            Err(crate::fork::Unusable(why)) => {
                tracing::debug!(tool = %r.name, why, "could not fork a call's process ahead");
            }
        }
        drop(slots);
        inner.preforked_ready.notify_waiters();
    });
}

/// Start the fork server of `dir` (its slot says Starting, with `done`'s receiver).
pub(super) async fn start_server(
    inner: &Inner,
    dir: &Path,
    r: &Recipe,
    key: u64,
    done: tokio::sync::watch::Sender<bool>,
) -> Option<Arc<crate::fork::Server>> {
    let started = crate::fork::Server::start(r).await;
    // Its binds hold the directories of when it started: still the ones the key names?
    let current = r.key() == key;
    let mut slots = inner.slots();
    let out = match slots.get_mut(dir) {
        Some(slot) if slot.key == key && matches!(slot.server, Server::Starting(_)) => {
            match started {
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
            }
        }
        // Stopped or changed meanwhile.
        _ => {
            if let Ok(s) = started {
                discard(vec![s]);
            }
            None
        }
    };
    keep::evict(&mut slots, inner);
    drop(slots);
    let _ = done.send(true);
    out
}
