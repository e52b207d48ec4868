//! The seccomp programs of a sandboxed process (shared by bubblewrap and the in-process
//! sandbox): built once per process for each combination of grants, handed to bubblewrap as
//! bytes or loaded in the child with one prctl.

use super::last_err;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// `seccomp_program`, built once per process for each value of `network` and `unix`.
pub fn seccomp_cached(network: bool, unix: bool) -> Result<BpfProgram, String> {
    cached(network, unix, false)
}

/// The program a fork server gets (`runner::fork`): the same with `mount`,
/// `umount2` and `setns` allowed, which it needs to give each call a fresh scratch and a pid
/// namespace of its own. It never runs a tool's code: each call's process loads the full
/// program (`seccomp_cached`) itself, on top of this one, before the tool starts.
pub fn seccomp_fork_server_cached(network: bool, unix: bool) -> Result<BpfProgram, String> {
    cached(network, unix, true)
}

fn cached(network: bool, unix: bool, mounts: bool) -> Result<BpfProgram, String> {
    static CACHE: [OnceLock<Result<BpfProgram, String>>; 8] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    CACHE[usize::from(mounts) * 4 + usize::from(network) * 2 + usize::from(unix)]
        .get_or_init(|| seccomp_program(network, unix, mounts))
        .clone()
}

/// The second program every sandboxed process gets: `clone3` answers ENOSYS, so the C
/// library falls back to `clone`, whose flags the first program can see (a `clone3` could
/// make a user namespace unseen: its flags are in memory a filter cannot read).
pub fn clone3_cached() -> Result<BpfProgram, String> {
    static P: OnceLock<Result<BpfProgram, String>> = OnceLock::new();
    P.get_or_init(|| {
        let arch = std::env::consts::ARCH
            .try_into()
            .map_err(|e: seccompiler::BackendError| e.to_string())?;
        let filter = SeccompFilter::new(
            BTreeMap::from([(libc::SYS_clone3, vec![])]),
            SeccompAction::Allow,
            SeccompAction::Errno(libc::ENOSYS as u32),
            arch,
        )
        .map_err(|e| e.to_string())?;
        BpfProgram::try_from(filter).map_err(|e| e.to_string())
    })
    .clone()
}

/// A third program for a process that shares the host's IPC namespace (the in-process
/// sandbox where the kernel makes no namespaces): System V IPC and POSIX message queues
/// refused (EPERM), so nothing a call leaves there reaches the next call, and nothing of the
/// host's is reachable by its id.
pub fn host_ipc_cached() -> Result<BpfProgram, String> {
    static P: OnceLock<Result<BpfProgram, String>> = OnceLock::new();
    P.get_or_init(|| {
        let e = |e: seccompiler::BackendError| e.to_string();
        let rules: BTreeMap<i64, Vec<SeccompRule>> = [
            libc::SYS_shmget,
            libc::SYS_shmat,
            libc::SYS_shmdt,
            libc::SYS_shmctl,
            libc::SYS_msgget,
            libc::SYS_msgsnd,
            libc::SYS_msgrcv,
            libc::SYS_msgctl,
            libc::SYS_semget,
            libc::SYS_semop,
            libc::SYS_semtimedop,
            libc::SYS_semctl,
            libc::SYS_mq_open,
            libc::SYS_mq_unlink,
            libc::SYS_mq_timedsend,
            libc::SYS_mq_timedreceive,
            libc::SYS_mq_notify,
            libc::SYS_mq_getsetattr,
        ]
        .into_iter()
        .map(|sc| (sc, vec![]))
        .collect();
        let arch = std::env::consts::ARCH.try_into().map_err(e)?;
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .map_err(e)?;
        BpfProgram::try_from(filter).map_err(e)
    })
    .clone()
}

/// The seccomp program every sandboxed process gets (also handed to bubblewrap): refuses
/// socket() for anything but unix sockets unless network is granted, unix sockets too unless
/// `unix` (the in-process sandbox, whose processes see the host's file system: a pathname
/// socket there — an SSH agent, docker.sock, D-Bus — would be reachable; `socketpair` stays
/// allowed), new user namespaces (`unshare`/`clone` with CLONE_NEWUSER: a process there
/// would regain capabilities to widen its view), and system calls a script never needs that
/// widen the kernel's attack surface. Refusals return EPERM. With `mounts` (a fork server's,
/// never a tool's): `mount`, `umount2` and `setns` allowed.
fn seccomp_program(network: bool, unix: bool, mounts: bool) -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mount_calls = [libc::SYS_setns, libc::SYS_mount, libc::SYS_umount2];
    for sc in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_kexec_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_fanotify_init,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_acct,
        libc::SYS_quotactl,
    ] {
        if !(mounts && mount_calls.contains(&sc)) {
            rules.insert(sc, vec![]);
        }
    }
    let e = |e: seccompiler::BackendError| e.to_string();
    let newuser = |arg| {
        SeccompCondition::new(
            arg,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(libc::CLONE_NEWUSER as u64),
            libc::CLONE_NEWUSER as u64,
        )
        .and_then(|c| SeccompRule::new(vec![c]))
        .map_err(e)
    };
    rules.insert(libc::SYS_unshare, vec![newuser(0)?]);
    // clone(flags, ...) on x86_64 and aarch64 alike: the flags are the first argument.
    rules.insert(libc::SYS_clone, vec![newuser(0)?]);
    let family = |op| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, op, libc::AF_UNIX as u64)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(e)
    };
    match (network, unix) {
        (true, true) => {}
        (true, false) => {
            rules.insert(libc::SYS_socket, vec![family(SeccompCmpOp::Eq)?]);
        }
        (false, true) => {
            rules.insert(libc::SYS_socket, vec![family(SeccompCmpOp::Ne)?]);
        }
        (false, false) => {
            rules.insert(libc::SYS_socket, vec![]);
        }
    }
    let arch = std::env::consts::ARCH.try_into().map_err(e)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(e)?;
    BpfProgram::try_from(filter).map_err(e)
}

/// The program as the bytes bubblewrap's `--seccomp FD` reads.
pub fn seccomp_bytes(p: &BpfProgram) -> Vec<u8> {
    let mut out = Vec::with_capacity(p.len() * 8);
    for i in p {
        out.extend_from_slice(&i.code.to_ne_bytes());
        out.push(i.jt);
        out.push(i.jf);
        out.extend_from_slice(&i.k.to_ne_bytes());
    }
    out
}

#[repr(C)]
struct SockFprog {
    len: libc::c_ushort,
    filter: *const seccompiler::sock_filter,
}

/// Load a seccomp program into the calling process (no_new_privs must be set).
///
/// SAFETY: async-signal-safe (one prctl on prepared memory).
pub unsafe fn load_seccomp(p: &BpfProgram) -> std::io::Result<()> {
    let prog = SockFprog {
        len: p.len() as libc::c_ushort,
        filter: p.as_ptr(),
    };
    // SAFETY: `prog` points at the program, alive for the call.
    if unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &prog as *const SockFprog,
        )
    } != 0
    {
        return Err(last_err());
    }
    Ok(())
}
