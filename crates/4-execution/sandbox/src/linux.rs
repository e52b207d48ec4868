//! The in-process Linux sandbox, used when bubblewrap is missing or cannot make namespaces.
//! Everything is built before the fork (Landlock ruleset, seccomp program, strings); the child
//! only makes system calls on that data between fork and exec (async-signal-safe):
//!
//! 1. new user, mount, ipc, uts and (unless network is granted) network namespaces, where the
//!    kernel allows them; the scratch directory and `/dev/shm` become size-limited tmpfs
//!    mounts of its own (without an IPC namespace, System V IPC and POSIX message queues are
//!    refused by seccomp: the host's would be shared);
//! 2. a new pid namespace: the child forks once more, the grandchild is the namespace's init
//!    and runs the script (killed when its parent dies); when it exits, the kernel kills every
//!    process left in the namespace — double-forked daemons included;
//! 3. every capability dropped, `no_new_privs`;
//! 4. Landlock: system directories, the interpreter, the tool directory and its environment
//!    read-only, scratch and declared write roots writable, nothing else (home, `/proc`, the
//!    toolbox's `.git`, caches, other tools); ABI ≥ 4 also denies TCP bind/connect without
//!    network, ABI ≥ 6 scopes signals and abstract unix sockets to the sandbox;
//! 5. seccomp (`seccomp`, shared with bubblewrap): no inet sockets without network, no ptrace, bpf,
//!    io_uring, keyrings, module loading and the like.

use super::{Grants, SCRATCH_MB, SHM_MB, SandboxError};
use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use seccompiler::BpfProgram;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

mod probe;
mod seccomp;
pub use probe::{Support, status};
pub use seccomp::{
    clone3_cached, host_ipc_cached, load_seccomp, seccomp_bytes, seccomp_cached,
    seccomp_fork_server_cached,
};

/// Devices a script may use (read and write).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The Landlock ruleset for the grants, as a file descriptor to apply in the child.
fn ruleset(g: &Grants, abi_version: i32) -> Result<OwnedFd, String> {
    let abi = ABI::from(abi_version);
    let e = |e: landlock::RulesetError| e.to_string();
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(e)?;
    let restrict_net = g.network != super::Net::Any && abi_version >= 4;
    if restrict_net {
        rs = rs.handle_access(AccessNet::from_all(abi)).map_err(e)?;
    }
    if abi_version >= 6 {
        rs = rs.scope(Scope::from_all(abi)).map_err(e)?;
    }
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let created = rs
        .create()
        .map_err(e)?
        .add_rules(path_beneath_rules(g.system.iter().chain(&g.read), read))
        .map_err(e)?
        .add_rules(path_beneath_rules(DEVICES, all))
        .map_err(e)?
        .add_rules(path_beneath_rules(
            std::iter::once(&g.scratch).chain(&g.write),
            all,
        ))
        .map_err(e)?;
    // A proxied process binds and reaches only the bridge's port (in its own namespace).
    let created = if restrict_net && matches!(g.network, super::Net::Proxy(_)) {
        created
            .add_rule(NetPort::new(
                super::net::BRIDGE_PORT,
                AccessNet::from_all(abi),
            ))
            .map_err(e)?
    } else {
        created
    };
    Option::<OwnedFd>::from(created).ok_or_else(|| "Landlock did not create a ruleset".into())
}

/// Where a process of these grants gets a `/dev/shm` of its own (a fresh tmpfs, mounted in
/// its mount namespace): the host's, unless it is missing or a grant lies beneath it (the
/// mount would hide it).
pub fn own_shm(g: &Grants) -> Option<std::path::PathBuf> {
    let shm = std::path::Path::new("/dev/shm");
    let real = shm.canonicalize().ok().filter(|p| p.is_dir())?;
    let hidden = (g.system.iter().chain(&g.read).chain(&g.write))
        .chain(std::iter::once(&g.scratch))
        .any(|p| p.starts_with(&real) || p.starts_with(shm));
    (!hidden).then_some(real)
}

/// One call of a fork server under this sandbox: a fresh Landlock ruleset for its grants,
/// which the call's process enters (see `call_rights` for what it adds first).
pub fn call_ruleset(g: &Grants) -> Result<OwnedFd, String> {
    ruleset(g, status()?.landlock_abi)
}

/// The rights a fork server's call process adds to its ruleset for its fresh scratch
/// directory (all) and its own `/proc` (read) once it has mounted them.
pub fn call_rights() -> Result<(u64, u64), String> {
    let abi = ABI::from(status()?.landlock_abi);
    Ok((
        AccessFs::from_all(abi).bits(),
        AccessFs::from_read(abi).bits(),
    ))
}

/// Everything the child needs, prepared before the fork.
pub struct InChild {
    support: Support,
    /// The Landlock ruleset to enter (None: a fork server's, whose calls each enter their own).
    landlock: Option<OwnedFd>,
    /// The access rights the scratch tmpfs gets (added in the child, after the mount: a
    /// rule on the directory beneath a mount does not cover what is mounted on it).
    scratch_access: u64,
    /// Read rights on the pid namespace's own `/proc`, mounted in the child.
    proc_access: u64,
    seccomp: BpfProgram,
    /// `clone3` answered ENOSYS (see `clone3_cached`).
    clone3: BpfProgram,
    /// Without an IPC namespace of its own: the host's IPC refused (`host_ipc_cached`).
    host_ipc: Option<BpfProgram>,
    scratch: CString,
    /// The working directory (the scratch directory, or a build's own).
    cwd: CString,
    tmpfs_opts: CString,
    /// `/dev/shm`, where a fresh one is mounted (see `own_shm`), and its mount options.
    shm: Option<(CString, CString)>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Bring up the new network namespace's loopback (where the proxy's bridge listens).
    lo_up: bool,
    /// A fork server (`runner::fork`): it keeps CAP_SYS_ADMIN in its user namespace (to give
    /// each call a fresh scratch and pid namespace) and CAP_SETPCAP (to let each call empty
    /// its bounding set), and enters no Landlock domain (a Landlocked process cannot mount);
    /// each call's process drops every capability, enters its own domain and loads the full
    /// seccomp program before the tool runs.
    fork_server: bool,
}

/// The capabilities a fork server keeps (in its user namespace): CAP_SETPCAP, CAP_SYS_ADMIN.
const FORK_SERVER_CAPS: [u32; 2] = [8, 21];

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

fn last_err() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// Write `data` to the file at `path` (open, write, close).
///
/// SAFETY: async-signal-safe; `path` must be NUL-terminated.
unsafe fn write_file(path: &[u8], data: &[u8]) -> std::io::Result<()> {
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(last_err());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        if n != data.len() as isize {
            return Err(last_err());
        }
    }
    Ok(())
}

/// Bring up `lo` in the process's (new) network namespace.
///
/// SAFETY: async-signal-safe (socket, ioctl, close on a stack buffer).
unsafe fn loopback_up() -> std::io::Result<()> {
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(last_err());
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        req.ifr_name[0] = b'l' as libc::c_char;
        req.ifr_name[1] = b'o' as libc::c_char;
        let mut r = libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut req);
        if r == 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            r = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &req);
        }
        let err = last_err();
        libc::close(fd);
        if r != 0 {
            return Err(err);
        }
    }
    Ok(())
}

impl InChild {
    pub fn new(g: &Grants) -> Result<InChild, SandboxError> {
        InChild::build(g, false)
    }

    /// The set-up of a fork server's process (see the `fork_server` field): it needs a user
    /// namespace (its capability must not be the host's) and a pid namespace.
    pub fn fork_server(g: &Grants) -> Result<InChild, SandboxError> {
        let support = status().map_err(SandboxError::Setup)?;
        if support.ns_flags & libc::CLONE_NEWUSER == 0 || !support.pidns {
            return Err(SandboxError::Setup(
                "a fork server needs user and pid namespaces, which this kernel refuses".into(),
            ));
        }
        InChild::build(g, true)
    }

    fn build(g: &Grants, fork_server: bool) -> Result<InChild, SandboxError> {
        let support = status().map_err(SandboxError::Setup)?;
        let landlock = if fork_server {
            None
        } else {
            Some(
                ruleset(g, support.landlock_abi)
                    .map_err(|e| SandboxError::Setup(format!("Landlock: {e}")))?,
            )
        };
        // The host's file system stays visible here, so unix sockets are refused; a proxied
        // process's bridge needs one to reach the proxy, and refuses them to the program it
        // starts (`bridge.rs`).
        let unix = matches!(g.network, super::Net::Proxy(_));
        let seccomp = if fork_server {
            seccomp_fork_server_cached(g.network.inet(), unix)
        } else {
            seccomp_cached(g.network.inet(), unix)
        }
        .map_err(|e| SandboxError::Setup(format!("seccomp: {e}")))?;
        let clone3 = clone3_cached().map_err(|e| SandboxError::Setup(format!("seccomp: {e}")))?;
        let host_ipc = if support.ns_flags & libc::CLONE_NEWIPC == 0 {
            Some(host_ipc_cached().map_err(|e| SandboxError::Setup(format!("seccomp: {e}")))?)
        } else {
            None
        };
        let cstr = |s: String| CString::new(s).map_err(|e| SandboxError::Setup(e.to_string()));
        // SAFETY: getuid/getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut support = support;
        let lo_up = matches!(g.network, super::Net::Proxy(_));
        if g.network == super::Net::Any {
            support.ns_flags &= !libc::CLONE_NEWNET;
        } else if lo_up && support.ns_flags & libc::CLONE_NEWNET == 0 {
            return Err(SandboxError::Setup(
                "a tool limited to listed domains needs its own network namespace, and this kernel refuses to make one; install bubblewrap, or (knowingly) grant it every host with `network = true`".into(),
            ));
        }
        let scratch_access = AccessFs::from_all(ABI::from(support.landlock_abi)).bits();
        let proc_access = AccessFs::from_read(ABI::from(support.landlock_abi)).bits();
        Ok(InChild {
            support,
            landlock,
            scratch_access,
            proc_access,
            seccomp,
            clone3,
            host_ipc,
            scratch: cstr(g.scratch.to_string_lossy().into_owned())?,
            cwd: cstr(
                g.cwd
                    .as_deref()
                    .unwrap_or(&g.scratch)
                    .to_string_lossy()
                    .into_owned(),
            )?,
            tmpfs_opts: cstr(format!("size={SCRATCH_MB}m,mode=0700"))?,
            shm: match own_shm(g) {
                Some(p) => Some((
                    cstr(p.to_string_lossy().into_owned())?,
                    cstr(format!("size={SHM_MB}m,mode=1777"))?,
                )),
                None => None,
            },
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
            lo_up,
            fork_server,
        })
    }

    /// Add a Landlock rule for a path mounted in the child (raw system calls only).
    ///
    /// SAFETY: async-signal-safe; `path` is NUL-terminated.
    unsafe fn add_rule(&self, path: *const libc::c_char, access: u64) -> std::io::Result<()> {
        let Some(landlock) = &self.landlock else {
            return Ok(());
        };
        unsafe {
            let fd = libc::open(path, libc::O_PATH | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(last_err());
            }
            let attr = PathBeneathAttr {
                allowed_access: access,
                parent_fd: fd,
            };
            let r = libc::syscall(
                libc::SYS_landlock_add_rule,
                landlock.as_raw_fd(),
                1u32, // LANDLOCK_RULE_PATH_BENEATH
                &attr as *const PathBeneathAttr,
                0u32,
            );
            libc::close(fd);
            if r != 0 {
                return Err(last_err());
            }
        }
        Ok(())
    }

    /// Apply the sandbox to the calling process (the child, between fork and exec).
    ///
    /// SAFETY: only async-signal-safe system calls on data prepared before the fork; no
    /// allocation. Must run in a freshly forked child (it may fork again and never return in
    /// the intermediate process).
    pub unsafe fn apply(&self) -> std::io::Result<()> {
        unsafe {
            let flags = self.support.ns_flags;
            if flags != 0 {
                if libc::unshare(flags) != 0 {
                    return Err(last_err());
                }
                if flags & libc::CLONE_NEWUSER != 0 {
                    let _ = write_file(b"/proc/self/setgroups\0", b"deny");
                    write_file(b"/proc/self/uid_map\0", &self.uid_map)?;
                    write_file(b"/proc/self/gid_map\0", &self.gid_map)?;
                }
                if self.lo_up && flags & libc::CLONE_NEWNET != 0 {
                    loopback_up()?;
                }
                if libc::mount(
                    c"none".as_ptr(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(last_err());
                }
                if libc::mount(
                    c"tmpfs".as_ptr(),
                    self.scratch.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    self.tmpfs_opts.as_ptr().cast(),
                ) != 0
                {
                    return Err(last_err());
                }
                if libc::chdir(self.cwd.as_ptr()) != 0 {
                    return Err(last_err());
                }
                self.add_rule(self.scratch.as_ptr(), self.scratch_access)?;
                // Its own /dev/shm, gone with it (where the mount fails, the host's stays
                // denied by Landlock: nothing is shared either way).
                if let Some((shm, opts)) = &self.shm
                    && libc::mount(
                        c"tmpfs".as_ptr(),
                        shm.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV,
                        opts.as_ptr().cast(),
                    ) == 0
                {
                    self.add_rule(shm.as_ptr(), self.scratch_access)?;
                }
            } else {
                // No mount namespace: the scratch directory is on disk; cap each file at least.
                let lim = SCRATCH_MB << 20;
                let rl = libc::rlimit {
                    rlim_cur: lim as libc::rlim_t,
                    rlim_max: lim as libc::rlim_t,
                };
                libc::setrlimit(libc::RLIMIT_FSIZE, &rl);
            }
            if self.support.pidns {
                if libc::unshare(libc::CLONE_NEWPID) != 0 {
                    return Err(last_err());
                }
                let child = libc::fork();
                if child < 0 {
                    return Err(last_err());
                }
                if child > 0 {
                    // The intermediate: hold nothing open (so the spawner sees exec succeed
                    // and the pipes close with the script), wait, and pass the status on.
                    libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
                    let mut st = 0;
                    loop {
                        let r = libc::waitpid(child, &mut st, 0);
                        if r == child {
                            break;
                        }
                        if r < 0 && *libc::__errno_location() != libc::EINTR {
                            libc::_exit(127);
                        }
                    }
                    if libc::WIFEXITED(st) {
                        libc::_exit(libc::WEXITSTATUS(st));
                    }
                    libc::_exit(128 + libc::WTERMSIG(st));
                }
                // The namespace's init: dies with the intermediate (killed by the host). Had
                // the intermediate died before this line, the host's kill of the process group
                // (which this process is still in) reaches it anyway.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // Its own /proc (only the namespace's processes), readable. Where the kernel
                // refuses the mount (a masked /proc in a container), /proc stays denied.
                if flags & libc::CLONE_NEWNS != 0
                    && libc::mount(
                        c"proc".as_ptr(),
                        c"/proc".as_ptr(),
                        c"proc".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                        std::ptr::null(),
                    ) == 0
                {
                    self.add_rule(c"/proc".as_ptr(), self.proc_access)?;
                }
            }
            // Drop every capability, for good (bounding set first, then the sets); a fork
            // server keeps CAP_SYS_ADMIN (of its own user namespace), also across its exec.
            let kept = if self.fork_server {
                &FORK_SERVER_CAPS[..]
            } else {
                &[]
            };
            let keep = kept.iter().fold(0u32, |m, c| m | (1 << c));
            for cap in 0..64u32 {
                if !kept.contains(&cap) {
                    libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0);
                }
            }
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0,
            );
            let mut hdr = CapHeader {
                version: 0x2008_0522,
                pid: 0,
            };
            let data = [
                CapData {
                    effective: keep,
                    permitted: keep,
                    inheritable: keep,
                },
                CapData {
                    effective: 0,
                    permitted: 0,
                    inheritable: 0,
                },
            ];
            if libc::syscall(libc::SYS_capset, &mut hdr, data.as_ptr()) != 0 {
                return Err(last_err());
            }
            for &cap in kept {
                if libc::prctl(
                    libc::PR_CAP_AMBIENT,
                    libc::PR_CAP_AMBIENT_RAISE,
                    cap as libc::c_ulong,
                    0,
                    0,
                ) != 0
                {
                    return Err(last_err());
                }
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(last_err());
            }
            if let Some(landlock) = &self.landlock {
                if libc::syscall(libc::SYS_landlock_restrict_self, landlock.as_raw_fd(), 0u32) != 0
                {
                    return Err(last_err());
                }
                libc::close(landlock.as_raw_fd());
            }
            load_seccomp(&self.seccomp)?;
            load_seccomp(&self.clone3)?;
            if let Some(p) = &self.host_ipc {
                load_seccomp(p)?;
            }
        }
        Ok(())
    }
}
