//! Fork servers: for a Python tool a server keeps one process per recipe (`Server`) that set
//! the tool's sandbox up once and forks a fresh process for each call (`Forked`). A spare
//! costs an interpreter start (tens of milliseconds of CPU) per call; a fork costs about
//! one millisecond, so calls stay fast at any rate, back to back and in bursts.
//!
//! The server never runs the tool's code: it runs toolsmith's stub (`stubs/fork.py`), started
//! with `-S`, with CAP_SYS_ADMIN of the sandbox's own user namespace and a seccomp program
//! that allows mounting (`sandbox::prepare_fork_server`). Each call's process is the init of
//! a pid namespace of its own, with a fresh scratch directory, `/tmp` and `/proc` in a mount
//! namespace of its own and an IPC (and, without network, network) namespace of its own; it
//! drops every capability, enters its Landlock ruleset (the in-process sandbox; made here per
//! call) and loads the tool's full seccomp programs before the tool runs, then becomes a
//! spare of the tool (`stubs/python.py`). Nothing of an earlier call is there: its processes
//! died with its pid namespace, its files with its mounts.
//!
//! The call's stdin, stdout, stderr and channel (a unix socket) are handed to the server over
//! its control socket (SCM_RIGHTS). The call's process writes `r` on the channel; the kernel
//! attaches its process id as seen here (SCM_CREDENTIALS), from which this side takes a
//! pidfd (the call is killed by it, never by a number that could be reused) and moves the
//! process into a pids cgroup of its own before it reads its entry line, so the task limit
//! and the kill at the end of the call are per call, as for a spare. When the call's process
//! is gone, the server writes its exit status on the channel (`x<status>`), after the one the
//! stub writes itself.

use super::launch::{self, Launched, Recipe};
use crate::sandbox;
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};
use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::Mutex;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// How long a fork server may take to come up (an interpreter start, under load).
const START_WITHIN: Duration = Duration::from_secs(20);

/// Why a call could not be forked: the server is no use any more (it died, or its calls
/// cannot set their sandbox up here); nothing of the tool's ran.
#[derive(Debug)]
pub(crate) struct Unusable(pub String);

/// What a process forked for a call does before its entry line comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ahead {
    /// Nothing: the entry line follows at once (a call that found no process forked ahead),
    /// or calls come back to back, when a compile while waiting would take the processor
    /// from the call running beside it.
    Plain,
    /// Compile the tool's entry while waiting (a process forked ahead while calls are spaced:
    /// the call it serves then skips the compile, 1.3–1.7 ms in a freshly forked process).
    Compiled,
}

/// A fork server of one recipe.
pub(crate) struct Server {
    /// Its process tree (the sandbox and the stub): dropping it stops the server and, with
    /// its pid namespace, every call it forked.
    launched: Mutex<Launched>,
    /// This side of its control socket (non-blocking).
    ctl: OwnedFd,
    setup: sandbox::ForkSetup,
}

fn unusable(what: &str) -> impl Fn(std::io::Error) -> Unusable + '_ {
    move |e| Unusable(format!("{what}: {e}"))
}

impl Server {
    /// Start a fork server for the recipe and wait until it is up; Err (why) when the recipe
    /// cannot have one here or it did not come up.
    pub async fn start(r: &Recipe) -> Result<Server, Unusable> {
        let (here, there) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| Unusable(format!("socketpair: {e}")))?;
        let r2 = r.clone();
        let (mut launched, setup) =
            crate::platform::blocking(move || launch::spawn_fork_server(&r2, there))
                .await
                .map_err(|e| Unusable(e.to_string()))?
                .map_err(|e| Unusable(e.to_string()))?;
        let ready = tokio::time::timeout(START_WITHIN, read_byte(&mut launched)).await;
        match ready {
            Ok(Ok(b'r')) => {}
            Ok(Ok(other)) => {
                return Err(Unusable(format!(
                    "it printed {:?} instead of starting",
                    other as char
                )));
            }
            Ok(Err(e)) => return Err(Unusable(server_failed(&mut launched, e).await)),
            Err(_) => return Err(Unusable("it did not come up in time".into())),
        }
        set_nonblocking(&here).map_err(unusable("control socket"))?;
        Ok(Server {
            launched: Mutex::new(launched),
            ctl: here,
            setup,
        })
    }

    /// Whether its process still runs.
    pub fn alive(&self) -> bool {
        let mut l = self.launched.lock().unwrap_or_else(|p| p.into_inner());
        matches!(l.child.try_wait(), Ok(None))
    }

    /// The process id of its sandbox's outer process (memory accounting, tests).
    pub fn pid(&self) -> Option<u32> {
        self.launched.lock().unwrap_or_else(|p| p.into_inner()).pid
    }

    /// Fork a process for one call of `r` and wait until it is ready for its entry line (its
    /// sandbox set up, inside its own pids cgroup). Err: this server cannot serve calls (it
    /// is gone, or a call's set-up fails here); nothing of the tool's ran. `Ahead::Compiled`:
    /// a process forked ahead of its call compiles the tool's entry while it waits
    /// (`stubs/python.py`).
    pub async fn call(
        self: &std::sync::Arc<Self>,
        r: &Recipe,
        ahead: Ahead,
    ) -> Result<Forked, Unusable> {
        let t0 = std::time::Instant::now();
        let (stdin_r, stdin_w) = std::io::pipe().map_err(unusable("pipe"))?;
        let (stdout_r, stdout_w) = std::io::pipe().map_err(unusable("pipe"))?;
        let (stderr_r, stderr_w) = std::io::pipe().map_err(unusable("pipe"))?;
        let (chan, chan_there) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::STREAM,
            SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| Unusable(format!("socketpair: {e}")))?;
        rustix::net::sockopt::set_socket_passcred(&chan, true)
            .map_err(|e| Unusable(format!("SO_PASSCRED: {e}")))?;
        let ruleset = self
            .setup
            .call_ruleset()
            .map_err(|e| Unusable(e.to_string()))?;
        {
            let mut fds = vec![
                stdin_r.as_fd(),
                stdout_w.as_fd(),
                stderr_w.as_fd(),
                chan_there.as_fd(),
            ];
            fds.extend(ruleset.as_ref().map(|f| f.as_fd()));
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(5))];
            let mut control = SendAncillaryBuffer::new(&mut space);
            control.push(SendAncillaryMessage::ScmRights(&fds));
            rustix::net::sendmsg(
                &self.ctl,
                &[IoSlice::new(match ahead {
                    Ahead::Compiled => b"p",
                    Ahead::Plain => b"c",
                })],
                &mut control,
                SendFlags::NOSIGNAL,
            )
            .map_err(|e| Unusable(format!("handing the call to the server: {e}")))?;
        }
        drop((stdin_r, stdout_w, stderr_w, chan_there, ruleset));
        let cgroup = sandbox::PidsCgroup::new(sandbox::MAX_TASKS, &r.sandbox);
        let chan = std::os::unix::net::UnixStream::from(chan);
        chan.set_nonblocking(true).map_err(unusable("channel"))?;
        let chan = tokio::net::UnixStream::from_std(chan).map_err(unusable("channel"))?;
        let t_handed = t0.elapsed();
        let (first, pid) = chan
            .async_io(tokio::io::Interest::READABLE, || first_byte(&chan))
            .await
            .map_err(unusable("reading the call's channel"))?;
        let t_up = t0.elapsed();
        let mut chan = chan;
        match (first, pid) {
            (Some(b'r'), Some(pid)) => {
                let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty())
                    .map_err(|e| Unusable(format!("pidfd_open: {e}")))?;
                let mut forked = Forked {
                    stdin: Some(sender(stdin_w)?),
                    stdout: Some(receiver(stdout_r)?),
                    stderr: Some(receiver(stderr_r)?),
                    channel: chan,
                    pidfd,
                    cgroup: None,
                    _server: std::sync::Arc::clone(self),
                };
                if let Some(cg) = cgroup {
                    // A move into a cgroup waits for an RCU grace period (milliseconds): off
                    // the async threads, which serve the calls running meanwhile.
                    let raw = rustix::process::Pid::as_raw(Some(pid)).unsigned_abs();
                    let moved = crate::platform::blocking(move || cg.adopt(raw).map(|()| cg))
                        .await
                        .map_err(|e| Unusable(format!("moving the call into its cgroup: {e}")))?
                        .map_err(unusable("moving the call into its cgroup"))?;
                    forked.cgroup = Some(moved);
                }
                tracing::debug!(
                    tool = %r.name,
                    handed = ?t_handed,
                    up = ?t_up,
                    moved = ?t0.elapsed(),
                    "forked a call's process (elapsed at the end of each)"
                );
                Ok(forked)
            }
            (Some(b'e'), _) => {
                let mut why = Vec::new();
                let _ = (&mut chan).take(400).read_to_end(&mut why).await;
                Err(Unusable(format!(
                    "a call's process could not set its sandbox up: {}",
                    String::from_utf8_lossy(&why).trim()
                )))
            }
            (Some(b), _) => Err(Unusable(format!(
                "a call's process printed {:?} before starting",
                b as char
            ))),
            (None, _) => Err(Unusable("the server ended".into())),
        }
    }
}

/// Read one byte on a call's channel with the credentials the kernel attached to it: the
/// byte (None at the end) and the sender's process id as seen here.
fn first_byte(
    chan: &tokio::net::UnixStream,
) -> std::io::Result<(Option<u8>, Option<rustix::process::Pid>)> {
    let mut b = [0u8; 1];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmCredentials(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = rustix::net::recvmsg(
        chan,
        &mut [IoSliceMut::new(&mut b)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    if got.bytes == 0 {
        return Ok((None, None));
    }
    let pid = control.drain().find_map(|m| match m {
        RecvAncillaryMessage::ScmCredentials(c) => Some(c.pid),
        _ => None,
    });
    Ok((Some(b[0]), pid))
}

fn sender(fd: std::io::PipeWriter) -> Result<tokio::net::unix::pipe::Sender, Unusable> {
    tokio::net::unix::pipe::Sender::from_owned_fd(OwnedFd::from(fd)).map_err(unusable("pipe"))
}

fn receiver(fd: std::io::PipeReader) -> Result<tokio::net::unix::pipe::Receiver, Unusable> {
    tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(fd)).map_err(unusable("pipe"))
}

fn set_nonblocking(fd: &OwnedFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor owned here.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Read the server's first byte on its stdout.
async fn read_byte(l: &mut Launched) -> std::io::Result<u8> {
    let out = l
        .child
        .stdout()
        .as_mut()
        .ok_or_else(|| std::io::Error::other("no stdout"))?;
    let mut b = [0u8; 1];
    match out.read(&mut b).await? {
        1 => Ok(b[0]),
        _ => Err(std::io::Error::other("it exited")),
    }
}

/// Why a server did not come up: its error, and the last of what it wrote on stderr.
async fn server_failed(l: &mut Launched, e: std::io::Error) -> String {
    let mut err = Vec::new();
    if let Some(s) = l.child.stderr().as_mut() {
        let _ = tokio::time::timeout(
            Duration::from_millis(500),
            s.take(4000).read_to_end(&mut err),
        )
        .await;
    }
    let text = String::from_utf8_lossy(&err);
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    format!("{e} ({})", last.trim())
}

/// One call's process, forked by a fork server: its stdio and channel, the pidfd it is
/// killed by, its pids cgroup. Dropping it kills the call (its pid namespace's init: every
/// process of the call dies with it).
pub(crate) struct Forked {
    pub stdin: Option<tokio::net::unix::pipe::Sender>,
    pub stdout: Option<tokio::net::unix::pipe::Receiver>,
    pub stderr: Option<tokio::net::unix::pipe::Receiver>,
    /// The stub's channel ("g", "x<status>"; then the server's "x<status>").
    pub channel: tokio::net::UnixStream,
    pidfd: OwnedFd,
    pub cgroup: Option<sandbox::PidsCgroup>,
    /// The server lives as long as its calls do (stopping it would end them).
    _server: std::sync::Arc<Server>,
}

impl Forked {
    /// Whether `server` forked it.
    pub fn of(&self, server: &std::sync::Arc<Server>) -> bool {
        std::sync::Arc::ptr_eq(&self._server, server)
    }

    /// Whether its process still runs (its pidfd is not readable yet).
    pub fn alive(&self) -> bool {
        let mut fds = [rustix::event::PollFd::new(
            &self.pidfd,
            rustix::event::PollFlags::IN,
        )];
        matches!(
            rustix::event::poll(&mut fds, Some(&rustix::event::Timespec::default())),
            Ok(0)
        )
    }

    /// Kill the call: its init (and with it its pid namespace) and its cgroup's processes.
    pub fn kill(&self) {
        let _ = rustix::process::pidfd_send_signal(&self.pidfd, rustix::process::Signal::KILL);
        if let Some(cg) = &self.cgroup {
            cg.signal_all();
        }
    }
}

impl Drop for Forked {
    fn drop(&mut self) {
        self.kill();
    }
}
