//! bubblewrap: the script runs in new user, mount, pid, ipc, uts, cgroup and (without network)
//! net namespaces, on a root made only of what it needs: the system directories and a few /etc
//! entries, the interpreter's prefix, the tool's directory and environment (all read-only), a
//! size-limited tmpfs as its scratch directory, `/tmp` and `/dev/shm`, and the declared roots;
//! the rest of the root and `/dev` read-only. Never the home directory, a toolbox's `.git` or
//! `.toolsmith`, the compiled-code cache or another tool's directory. Its environment comes
//! from `env.rs` (`--args`), bwrap's own is empty. The seccomp program of `linux.rs` is
//! handed to bwrap (`--seccomp FD`), which loads it right before it executes the script (a
//! filter loaded before bwrap itself would have to allow what bwrap needs to build the
//! sandbox).

use super::{Grants, SCRATCH_MB, SHM_MB, SandboxError, TMP_MB};
use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// Whether the bubblewrap binary `program` (`SandboxConfig::bwrap`) works here (checked once
/// per binary path): its path, or why not.
pub fn status(program: &Path) -> Result<String, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Result<String, String>>>> = OnceLock::new();
    let given = program.to_string_lossy().into_owned();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(r) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&given) {
        return r.clone();
    }
    // Looked up on PATH once, so a sandbox start does not search PATH again (with version
    // managers' shim directories first, that is a dozen failed execs per start).
    let prog = super::grants::which(&given)
        .map_or_else(|| given.clone(), |p| p.to_string_lossy().into_owned());
    let mut args: Vec<String> = Vec::new();
    for d in super::grants::SYSTEM_DIRS
        .iter()
        .filter(|d| Path::new(d).exists())
    {
        args.extend(["--ro-bind".into(), d.to_string(), d.to_string()]);
    }
    args.extend(
        [
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--size",
            "1048576",
            "--tmpfs",
            "/tmp",
            "--unshare-all",
            "--die-with-parent",
            "--",
            "true",
        ]
        .map(String::from),
    );
    let r = std::process::Command::new(&prog)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .output();
    let r = match r {
        Ok(o) if o.status.success() => Ok(prog.clone()),
        Ok(o) => Err(format!(
            "`{prog}` cannot create namespaces here: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("`{prog}` is not installed"))
        }
        Err(e) => Err(format!("cannot run `{prog}`: {e}")),
    };
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(given, r.clone());
    r
}

/// A file descriptor holding a seccomp program (memfd, close-on-exec: the child clears
/// that flag on these descriptors only).
fn seccomp_fd(prog: Result<seccompiler::BpfProgram, String>) -> Result<OwnedFd, SandboxError> {
    let prog = prog.map_err(|e| SandboxError::Setup(format!("seccomp: {e}")))?;
    super::limits::memfd("toolsmith-seccomp", &super::linux::seccomp_bytes(&prog))
        .map_err(|e| SandboxError::Setup(format!("writing the seccomp program: {e}")))
}

/// Wrap `argv` in bwrap for the grants: the command line and the seccomp descriptors the
/// child must inherit. Unix sockets stay allowed unless the sandbox shares the host's network
/// (and so its abstract sockets): the mount view holds only what the grants name, so no host
/// pathname socket is there to reach. A fork server (`fork_server`, see
/// `runner::fork`) keeps CAP_SYS_ADMIN and CAP_SETPCAP of the sandbox's user namespace and
/// may mount (each of its calls drops every capability, its bounding set emptied, and loads
/// the full program before the tool runs).
pub fn wrap(
    argv: Vec<String>,
    g: &Grants,
    program: &Path,
    fork_server: bool,
) -> Result<(Vec<String>, Vec<OwnedFd>), SandboxError> {
    let prog = status(program).map_err(SandboxError::Setup)?;
    // With every host, the sandbox shares the host's network namespace, and with it the
    // host's abstract unix sockets (X11, D-Bus, container runtimes): unix sockets are refused
    // then (socketpair stays). Otherwise the mount view holds only what the grants name.
    let unix = !matches!(g.network, super::Net::Any);
    let main = if fork_server {
        super::linux::seccomp_fork_server_cached(g.network.inet(), unix)
    } else {
        super::linux::seccomp_cached(g.network.inet(), unix)
    };
    let fds = vec![
        seccomp_fd(main)?,
        seccomp_fd(super::linux::clone3_cached())?,
    ];
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut a: Vec<String> = vec![prog];
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(|x| x.to_string()));
    push(&["--dev", "/dev", "--proc", "/proc"]);
    let shm_bytes = (SHM_MB << 20).to_string();
    push(&["--size", &shm_bytes, "--tmpfs", "/dev/shm"]);
    let tmp_bytes = (TMP_MB << 20).to_string();
    push(&["--size", &tmp_bytes, "--tmpfs", "/tmp"]);
    for p in g.system.iter().chain(&g.read) {
        let p = s(p);
        push(&["--ro-bind", &p, &p]);
    }
    for p in &g.write {
        let p = s(p);
        push(&["--bind", &p, &p]);
    }
    // Usual symlinks of merged-/usr systems are bound above as what they point to; keep the
    // paths scripts name (`/bin/sh`) working where /bin is a symlink.
    let scratch = s(&g.scratch);
    let scratch_bytes = (SCRATCH_MB << 20).to_string();
    push(&[
        "--size",
        &scratch_bytes,
        "--perms",
        "0700",
        "--tmpfs",
        &scratch,
    ]);
    // Nothing else is writable: the root bubblewrap builds and its /dev are tmpfs mounts a
    // process could fill (without a size) and a fork server's calls would share.
    push(&["--remount-ro", "/dev", "--remount-ro", "/"]);
    push(&[
        "--unshare-all",
        "--unshare-user-try",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]);
    if fork_server {
        // In a user namespace of its own or not at all: never the host's capabilities.
        // CAP_SETPCAP lets each call's process empty its bounding set.
        push(&[
            "--unshare-user",
            "--cap-add",
            "CAP_SYS_ADMIN",
            "--cap-add",
            "CAP_SETPCAP",
        ]);
    }
    // A proxied process keeps its own network namespace (only loopback, where the bridge
    // listens): the proxy's socket, bound in above, is its one way out.
    if g.network == super::Net::Any {
        push(&["--share-net"]);
    }
    for fd in &fds {
        let fd_s = fd.as_raw_fd().to_string();
        push(&["--add-seccomp-fd", &fd_s]);
    }
    let cwd = g.cwd.as_deref().map_or_else(|| scratch.clone(), s);
    push(&["--chdir", &cwd, "--"]);
    a.extend(argv);
    Ok((a, fds))
}
