//! What waits for one tool's calls: its slot in the pool — idle spares, the fork server, the
//! call forked ahead — and how a waiting process set is checked and stopped.

use super::keep;
use crate::launch::{Launched, Recipe};
#[cfg(target_os = "linux")]
use std::sync::Arc;
use std::time::Instant;
use tokio::io::AsyncReadExt;

pub(super) struct Spare {
    pub(super) launched: Launched,
    /// Its stub said "r" (the interpreter is up and waiting).
    pub(super) ready: bool,
}

impl Spare {
    pub(super) fn alive(&mut self) -> bool {
        matches!(self.launched.child.try_wait(), Ok(None))
    }

    /// Read the stub's "r" if it has arrived, without waiting.
    pub(super) fn poll_ready(&mut self) -> bool {
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

/// Stop what waited off the async threads (killing a process's cgroup waits for it to empty).
pub(super) fn discard<T: Send + 'static>(waiting: Vec<T>) {
    if waiting.is_empty() {
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(h) => drop(h.spawn_blocking(move || drop(waiting))),
        Err(_) => drop(waiting),
    }
}

/// A tool's fork server, as far as the pool knows.
#[cfg(target_os = "linux")]
pub(super) enum Server {
    None,
    /// Being started (by a pre-start, or beside a call that started its own process); calls
    /// meanwhile start their own.
    Starting,
    Ready(Arc<crate::fork::Server>),
    /// This recipe cannot have one here (the reason was logged): spares instead.
    Unusable,
}

pub(super) struct Slot {
    pub(super) key: u64,
    pub(super) idle: Vec<Spare>,
    pub(super) starting: usize,
    /// The pool's clock at the last use (least recently used first out).
    pub(super) last_used: u64,
    /// When the tool was last called (or its slot made).
    pub(super) last_call: Instant,
    /// How many spares it keeps now: the base count, more while calls find theirs starting.
    pub(super) want: usize,
    #[cfg(target_os = "linux")]
    pub(super) server: Server,
    /// Calls' processes the fork server forked before their calls (their namespaces set up,
    /// in their pids cgroups: moving a process into a cgroup waits for an RCU grace period,
    /// about 10 ms on an idle machine), waiting for their entry line, oldest first.
    #[cfg(target_os = "linux")]
    pub(super) preforked: Vec<crate::fork::Forked>,
    /// How many processes are being forked for `preforked`.
    #[cfg(target_os = "linux")]
    pub(super) preforking: usize,
    /// How many calls wait for a process being forked ahead (at most `preforking`; later
    /// calls fork their own).
    #[cfg(target_os = "linux")]
    pub(super) claimed: usize,
    /// How many processes the fork server keeps forked ahead: one, more while calls come back
    /// to back (`forked::AHEAD_BACK_TO_BACK`).
    #[cfg(target_os = "linux")]
    pub(super) ahead: usize,
    /// When a call last asked the fork server for its process.
    #[cfg(target_os = "linux")]
    pub(super) last_fork: Option<Instant>,
    /// Resident memory of one waiting process set (KiB): measured, an estimate until then.
    pub(super) kib: u64,
    pub(super) measured: bool,
}

impl Slot {
    pub(super) fn new(key: u64, now: u64, r: &Recipe, want: usize) -> Slot {
        Slot {
            key,
            idle: Vec::new(),
            starting: 0,
            last_used: now,
            last_call: Instant::now(),
            want,
            #[cfg(target_os = "linux")]
            server: Server::None,
            #[cfg(target_os = "linux")]
            preforked: Vec::new(),
            #[cfg(target_os = "linux")]
            preforking: 0,
            #[cfg(target_os = "linux")]
            claimed: 0,
            #[cfg(target_os = "linux")]
            ahead: 1,
            #[cfg(target_os = "linux")]
            last_fork: None,
            kib: keep::estimate_kib(r.stub),
            measured: false,
        }
    }

    /// Drop what waits with another key (the tool's process set-up changed).
    pub(super) fn rekey(&mut self, key: u64) {
        if self.key == key {
            return;
        }
        discard(std::mem::take(&mut self.idle));
        #[cfg(target_os = "linux")]
        self.stop_server();
        self.key = key;
        self.measured = false;
    }

    #[cfg(target_os = "linux")]
    pub(super) fn stop_server(&mut self) {
        // Its pre-forked calls first (they hold the server).
        discard(std::mem::take(&mut self.preforked));
        if let Server::Ready(s) = std::mem::replace(&mut self.server, Server::None) {
            discard(vec![s]);
        }
    }

    /// Whether its fork server is being started.
    pub(super) fn server_starting(&self) -> bool {
        #[cfg(target_os = "linux")]
        return matches!(self.server, Server::Starting);
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Whether nothing is being started here any more (dead spares dropped on the way): no
    /// spare starting or still coming up, no fork server starting, no call being forked ahead.
    pub(super) fn settled(&mut self) -> bool {
        let (mut live, mut dead) = (Vec::new(), Vec::new());
        for mut sp in std::mem::take(&mut self.idle) {
            if sp.alive() {
                live.push(sp);
            } else {
                dead.push(sp);
            }
        }
        discard(dead);
        let ready = live.iter_mut().all(Spare::poll_ready);
        self.idle = live;
        #[cfg(target_os = "linux")]
        let server = !matches!(self.server, Server::Starting) && self.preforking == 0;
        #[cfg(not(target_os = "linux"))]
        let server = true;
        self.starting == 0 && ready && server
    }

    /// A waiting process set's outer process, once up (to measure what it costs).
    pub(super) fn waiting_pid(&mut self) -> Option<u32> {
        #[cfg(target_os = "linux")]
        if let Server::Ready(s) = &self.server {
            return s.pid();
        }
        self.idle
            .iter_mut()
            .find_map(|sp| sp.poll_ready().then_some(sp.launched.pid).flatten())
    }

    /// How many process sets wait here (idle spares and a ready fork server).
    pub(super) fn waiting(&self) -> usize {
        #[cfg(target_os = "linux")]
        let server = usize::from(matches!(self.server, Server::Ready(_)));
        #[cfg(not(target_os = "linux"))]
        let server = 0;
        self.idle.len() + server
    }
}
