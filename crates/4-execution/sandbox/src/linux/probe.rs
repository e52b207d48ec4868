//! What the kernel offers the in-process sandbox, asked once per process: the Landlock ABI,
//! which namespaces an unprivileged process may create, and whether a pid namespace too.

use std::sync::OnceLock;

/// What the kernel offers the in-process sandbox.
#[derive(Debug, Clone, Copy)]
pub struct Support {
    /// The Landlock ABI version (≥ 1).
    pub landlock_abi: i32,
    /// Namespaces to create (0 when none can be made).
    pub ns_flags: libc::c_int,
    /// Whether a pid namespace can be made too.
    pub pidns: bool,
}

fn landlock_abi() -> i32 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns
    // the ABI version; it reads no memory.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        ) as i32
    }
}

/// Whether a forked child can unshare `flags` (and, with `pid`, fork into a pid namespace).
fn can_unshare(flags: libc::c_int, pid: bool) -> bool {
    // SAFETY: the child only calls unshare, fork, waitpid and _exit (async-signal-safe).
    unsafe {
        let child = libc::fork();
        if child < 0 {
            return false;
        }
        if child == 0 {
            if libc::unshare(flags) != 0 {
                libc::_exit(1);
            }
            if pid {
                if libc::unshare(libc::CLONE_NEWPID) != 0 {
                    libc::_exit(1);
                }
                let g = libc::fork();
                if g < 0 {
                    libc::_exit(1);
                }
                if g == 0 {
                    libc::_exit(0);
                }
                let mut st = 0;
                libc::waitpid(g, &mut st, 0);
                libc::_exit(if libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0 {
                    0
                } else {
                    1
                });
            }
            libc::_exit(0);
        }
        let mut st = 0;
        libc::waitpid(child, &mut st, 0) == child
            && libc::WIFEXITED(st)
            && libc::WEXITSTATUS(st) == 0
    }
}

/// Whether the in-process sandbox works here (checked once): what it can use, or why not.
pub fn status() -> Result<Support, String> {
    static S: OnceLock<Result<Support, String>> = OnceLock::new();
    S.get_or_init(|| {
        let abi = landlock_abi();
        if abi < 1 {
            let err = std::io::Error::last_os_error();
            return Err(match err.raw_os_error() {
                Some(libc::EOPNOTSUPP) => "Landlock is built into this kernel but not enabled (add `landlock` to the `lsm=` kernel boot parameter)".into(),
                _ => format!("this kernel has no Landlock (needs Linux 5.13+ with CONFIG_SECURITY_LANDLOCK): {err}"),
            });
        }
        let base = libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS | libc::CLONE_NEWNET;
        let ns_flags = [base | libc::CLONE_NEWUSER, base]
            .into_iter()
            .find(|f| can_unshare(*f, false))
            .unwrap_or(0);
        let pidns = ns_flags != 0 && can_unshare(ns_flags, true);
        if ns_flags == 0 {
            tracing::info!("the in-process sandbox runs without namespaces (the kernel refuses them): Landlock and seccomp only");
        }
        Ok(Support {
            landlock_abi: abi,
            ns_flags,
            pidns,
        })
    })
    .clone()
}
