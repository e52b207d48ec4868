//! The process of one script call, however it was started: a process tree of its own (a
//! fresh start or a spare, `launch::Launched`) or a process forked by a fork server
//! (`fork::Forked`). The call (`script.rs`) takes its stdio, reads the stub's channel, waits
//! for its status and kills it through here, the same way for both.

use super::launch::{CallStdout, Launched};
use super::outcome::exit_code;
use tokio::io::{AsyncRead, AsyncWrite};

/// What the call writes its input to.
pub(crate) type CallStdin = Box<dyn AsyncWrite + Send + Unpin>;

/// The call's stderr: read as it comes, and what is left read at once at the end
/// (`script::drain_ready` needs the descriptor).
#[cfg(unix)]
pub(crate) trait StderrPipe: AsyncRead + std::os::fd::AsRawFd + Send + Unpin {}
#[cfg(unix)]
impl<T: AsyncRead + std::os::fd::AsRawFd + Send + Unpin> StderrPipe for T {}
#[cfg(not(unix))]
pub(crate) trait StderrPipe: AsyncRead + Send + Unpin {}
#[cfg(not(unix))]
impl<T: AsyncRead + Send + Unpin> StderrPipe for T {}

pub(crate) enum CallProcess {
    Tree(Launched),
    #[cfg(target_os = "linux")]
    Forked(super::fork::Forked),
}

impl CallProcess {
    pub fn stdin(&mut self) -> Option<CallStdin> {
        match self {
            CallProcess::Tree(l) => l.child.stdin().take().map(|s| Box::new(s) as CallStdin),
            #[cfg(target_os = "linux")]
            CallProcess::Forked(f) => f.stdin.take().map(|s| Box::new(s) as CallStdin),
        }
    }

    /// The call's stdin, still in place (the entry line goes first).
    pub fn stdin_mut(&mut self) -> Option<&mut (dyn AsyncWrite + Send + Unpin)> {
        match self {
            CallProcess::Tree(l) => l
                .child
                .stdin()
                .as_mut()
                .map(|s| s as &mut (dyn AsyncWrite + Send + Unpin)),
            #[cfg(target_os = "linux")]
            CallProcess::Forked(f) => f
                .stdin
                .as_mut()
                .map(|s| s as &mut (dyn AsyncWrite + Send + Unpin)),
        }
    }

    pub fn stderr(&mut self) -> Option<Box<dyn StderrPipe>> {
        match self {
            CallProcess::Tree(l) => l
                .child
                .stderr()
                .take()
                .map(|s| Box::new(s) as Box<dyn StderrPipe>),
            #[cfg(target_os = "linux")]
            CallProcess::Forked(f) => f.stderr.take().map(|s| Box::new(s) as Box<dyn StderrPipe>),
        }
    }

    /// Whether a stub's channel carries "g" and the status (else stdout is the tool's and the
    /// status is the process's own).
    pub fn has_channel(&self) -> bool {
        match self {
            CallProcess::Tree(l) => l.out.is_some(),
            #[cfg(target_os = "linux")]
            CallProcess::Forked(_) => true,
        }
    }

    /// The stub's channel (a spare's process stdout; a forked call's socket).
    pub fn channel(&mut self) -> Option<&mut (dyn AsyncRead + Send + Unpin)> {
        if !self.has_channel() {
            return None;
        }
        match self {
            CallProcess::Tree(l) => l
                .child
                .stdout()
                .as_mut()
                .map(|s| s as &mut (dyn AsyncRead + Send + Unpin)),
            #[cfg(target_os = "linux")]
            CallProcess::Forked(f) => Some(&mut f.channel),
        }
    }

    /// The tool's stdout: a spare's own pipe for the call, a forked call's pipe, else the
    /// process's stdout.
    pub fn tool_stdout(&mut self) -> Option<CallStdout> {
        match self {
            CallProcess::Tree(l) => l
                .out
                .take()
                .or_else(|| l.child.stdout().take().map(|s| Box::new(s) as CallStdout)),
            #[cfg(target_os = "linux")]
            CallProcess::Forked(f) => f.stdout.take().map(|s| Box::new(s) as CallStdout),
        }
    }

    /// The process's own exit status, once it is gone (None for a forked call: its server
    /// reports it on the channel, which the caller has read to its end).
    pub async fn wait(&mut self) -> std::io::Result<Option<i32>> {
        match self {
            CallProcess::Tree(l) => l.child.wait().await.map(|s| Some(exit_code(s))),
            #[cfg(target_os = "linux")]
            CallProcess::Forked(_) => Ok(None),
        }
    }

    /// Signal every process of the call now (the tree or the forked call's pid namespace, and
    /// its pids cgroup).
    pub fn kill(&mut self) {
        match self {
            CallProcess::Tree(l) => {
                l.child.kill();
                if let Some(cg) = &l.cgroup {
                    cg.signal_all();
                }
            }
            #[cfg(target_os = "linux")]
            CallProcess::Forked(f) => f.kill(),
        }
    }

    /// The hosts a tool limited to listed domains reached or was refused.
    pub fn network(&self) -> Option<crate::sandbox::proxy::Seen> {
        match self {
            CallProcess::Tree(l) => l.proxy.as_ref().map(|p| p.seen()),
            #[cfg(target_os = "linux")]
            CallProcess::Forked(_) => None,
        }
    }

    /// After the call (off its path): reap what is left, remove the cgroup and scratch.
    pub async fn reap(self) {
        match self {
            CallProcess::Tree(mut l) => {
                let _ = l.child.wait().await;
                let _ = crate::platform::blocking(move || drop(l)).await;
            }
            #[cfg(target_os = "linux")]
            CallProcess::Forked(f) => {
                let _ = crate::platform::blocking(move || drop(f)).await;
            }
        }
    }
}
