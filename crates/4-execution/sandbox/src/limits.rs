//! What is done in the child between fork and exec: join the call's cgroup, set resource limits
//! (address space, processes, core dumps), then the mechanism's own set-up (the in-process
//! Linux sandbox; the descriptor bubblewrap reads its seccomp program from).

#[cfg(unix)]
use super::NPROC_LIMIT;
use super::PidsCgroup;
use std::ffi::CString;

/// Node reserves much address space up front; its RLIMIT_AS never goes below this (its heap
/// is capped with --max-old-space-size instead).
const NODE_MIN_AS_MB: u64 = 4096;

/// The mechanism's part of the child's set-up, prepared before the fork.
#[derive(Default)]
pub struct InChild {
    /// Descriptors the wrapped program must inherit, at their numbers here (bubblewrap's
    /// `--seccomp FD`; a spare's stdout for the call).
    #[cfg(unix)]
    pub inherit_fds: Vec<std::os::fd::OwnedFd>,
    #[cfg(target_os = "linux")]
    pub linux: Option<super::linux::InChild>,
    /// A spare's stdout for its call, placed at `CALL_STDOUT_FD` last (see `runner::stubs`).
    #[cfg(unix)]
    pub call_stdout: Option<std::os::fd::OwnedFd>,
}

/// Where a spare finds its call's stdout (a single digit: `sh` takes no other in a
/// redirection).
#[cfg(unix)]
pub const CALL_STDOUT_FD: i32 = 3;

/// `fd`, moved to a number of 10 or more: the child's low descriptors (`CALL_STDOUT_FD`, a
/// spare's channel 9) never land on it.
#[cfg(unix)]
pub fn above_nine(fd: std::os::fd::OwnedFd) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    if fd.as_raw_fd() >= 10 {
        return Ok(fd);
    }
    // SAFETY: fcntl on a descriptor owned here; on success it returns a new one.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
    if moved < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `moved` is a fresh descriptor nothing else owns (`fd` is closed on return).
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(moved) })
}

/// An in-memory file holding `bytes`, read from its start, close-on-exec (a child that must
/// read it inherits it through `InChild::inherit_fds`, which clears the flag): bubblewrap's
/// seccomp programs, a fork server's configuration. Placed at 10 or more (`above_nine`).
#[cfg(target_os = "linux")]
pub fn memfd(name: &str, bytes: &[u8]) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::io::{Seek, Write};
    use std::os::fd::FromRawFd;
    let name = CString::new(name).map_err(std::io::Error::other)?;
    // SAFETY: memfd_create with a NUL-terminated name; the returned fd is owned here.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(bytes)?;
    file.rewind()?;
    above_nine(std::os::fd::OwnedFd::from(file))
}

/// Limits applied in the child between fork and exec.
pub struct ChildLimits {
    /// RLIMIT_AS in bytes (None: unlimited).
    pub address_space: Option<u64>,
    /// The cgroup to join first.
    pub cgroup_procs: Option<CString>,
}

impl ChildLimits {
    /// Limits for a script: `memory_mb` of address space (at least NODE_MIN_AS_MB for node).
    pub fn new(memory_mb: u64, is_node: bool, cgroup: Option<&PidsCgroup>) -> ChildLimits {
        let mb = if is_node {
            memory_mb.max(NODE_MIN_AS_MB)
        } else {
            memory_mb
        };
        ChildLimits {
            address_space: Some(mb.saturating_mul(1 << 20)),
            cgroup_procs: cgroup.map(|c| c.procs.clone()),
        }
    }

    /// Without fork and exec (Windows) there is no child set-up: only unsandboxed scripts a
    /// person allowed run there, without these limits (see docs/sandbox.md).
    #[cfg(not(unix))]
    pub fn apply(self, cmd: &mut tokio::process::Command, sandbox: super::Prepared) {
        let _ = (cmd, sandbox);
    }

    /// Install the limits and the sandbox's set-up on a command (runs in the child before
    /// exec). The prepared data lives in the command and is dropped with it after the spawn.
    #[cfg(unix)]
    pub fn apply(self, cmd: &mut tokio::process::Command, sandbox: super::Prepared) {
        let is_root = unsafe { libc::geteuid() } == 0;
        let inchild = sandbox.child;
        // SAFETY: the closure only makes async-signal-safe system calls (open, write, close,
        // setrlimit, fcntl, and the sandbox's own, see `linux::InChild::apply`) on data
        // prepared before the fork; it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(path) = &self.cgroup_procs {
                    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd >= 0 {
                        let _ = libc::write(fd, b"0".as_ptr().cast(), 1);
                        libc::close(fd);
                    }
                }
                let set = |res, v: u64| {
                    let lim = libc::rlimit {
                        rlim_cur: v as libc::rlim_t,
                        rlim_max: v as libc::rlim_t,
                    };
                    libc::setrlimit(res, &lim);
                };
                set(libc::RLIMIT_CORE, 0);
                if let Some(b) = self.address_space {
                    set(libc::RLIMIT_AS, b);
                }
                if !is_root {
                    let mut cur = libc::rlimit {
                        rlim_cur: 0,
                        rlim_max: 0,
                    };
                    if libc::getrlimit(libc::RLIMIT_NPROC, &mut cur) == 0
                        && (cur.rlim_cur == libc::RLIM_INFINITY || cur.rlim_cur > NPROC_LIMIT)
                    {
                        set(libc::RLIMIT_NPROC, NPROC_LIMIT);
                    }
                }
                for fd in &inchild.inherit_fds {
                    use std::os::fd::AsRawFd;
                    if libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                #[cfg(target_os = "linux")]
                if let Some(l) = &inchild.linux {
                    l.apply()?;
                }
                // Last: nothing above needs what was at this number (inherited descriptors
                // are at 10 or more).
                if let Some(fd) = &inchild.call_stdout {
                    use std::os::fd::AsRawFd;
                    if libc::dup2(fd.as_raw_fd(), CALL_STDOUT_FD) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    libc::close(fd.as_raw_fd());
                }
                Ok(())
            });
        }
    }
}
