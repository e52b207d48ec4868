//! Isolation of script processes: bubblewrap (read-only filesystem except the scratch dir and
//! declared paths, no network unless granted, own pid namespace), resource limits set in the
//! child before exec (address space, processes, core dumps), and a pids cgroup where one can be
//! made (root ignores RLIMIT_NPROC, so a fork bomb is stopped by the cgroup instead).

use crate::manifest::SandboxMode;
use std::collections::HashMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use thiserror::Error;

/// The most tasks (processes and threads) one call may have at once.
pub const MAX_TASKS: u64 = 128;
/// RLIMIT_NPROC for non-root users (it counts every process of the user, so it is generous).
pub const NPROC_LIMIT: u64 = 4096;
/// Node reserves much address space up front; its RLIMIT_AS never goes below this (its heap
/// is capped with --max-old-space-size instead).
const NODE_MIN_AS_MB: u64 = 4096;

/// Why a sandboxed process could not be prepared.
#[derive(Debug, Error)]
pub enum SandboxError {
    #[error(
        "the tool requires a sandbox (run.sandbox = \"required\") but bubblewrap is not available: {why}"
    )]
    Unavailable { why: String },
    #[error("declared path {path:?} ({what}) is not inside the allowed roots ({roots})")]
    OutsideRoots {
        path: String,
        what: &'static str,
        roots: String,
    },
}

/// The bubblewrap binary: `TOOLSMITH_BWRAP`, else `bwrap` on PATH.
fn bwrap_program() -> String {
    std::env::var("TOOLSMITH_BWRAP")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "bwrap".into())
}

/// Whether bubblewrap works here (checked once per binary path): Ok, or why not.
pub fn bwrap_status() -> Result<String, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Result<(), String>>>> = OnceLock::new();
    let prog = bwrap_program();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(r) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&prog) {
        return r.clone().map(|()| prog);
    }
    let r = std::process::Command::new(&prog)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-pid",
            "--unshare-net",
            "--die-with-parent",
            "true",
        ])
        .stdin(std::process::Stdio::null())
        .output();
    let r = match r {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "`{prog}` does not work here: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run `{prog}`: {e}")),
    };
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(prog.clone(), r.clone());
    r.map(|()| prog)
}

/// What one script process may touch.
pub struct Spec<'a> {
    pub mode: SandboxMode,
    pub network: bool,
    /// The working directory, writable.
    pub scratch: &'a Path,
    /// Directories the script must be able to read even though they may be under /tmp
    /// (its tool directory, its dependency environment).
    pub visible: Vec<PathBuf>,
    /// Declared `capabilities.read` / `capabilities.write` (relative paths are taken from the
    /// first allowed root).
    pub read: &'a [String],
    pub write: &'a [String],
    pub roots: &'a [PathBuf],
}

/// The command line to run: the program and arguments (possibly wrapped in bwrap), and
/// whether it is sandboxed.
pub struct Wrapped {
    pub argv: Vec<String>,
    pub sandboxed: bool,
}

fn resolve_declared(
    p: &str,
    what: &'static str,
    roots: &[PathBuf],
) -> Result<PathBuf, SandboxError> {
    let path = Path::new(p);
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match roots.first() {
            Some(r) => r.join(path),
            None => path.to_path_buf(),
        }
    };
    if abs.is_absolute() && super::inside_roots(&abs, roots) {
        Ok(abs.canonicalize().unwrap_or(abs))
    } else {
        Err(SandboxError::OutsideRoots {
            path: p.to_string(),
            what,
            roots: if roots.is_empty() {
                "none: set TOOLSMITH_ROOTS".into()
            } else {
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            },
        })
    }
}

/// Wrap `argv` for the spec: inside bwrap when the mode and the machine allow it.
pub fn wrap(argv: Vec<String>, spec: &Spec<'_>) -> Result<Wrapped, SandboxError> {
    let read = spec
        .read
        .iter()
        .map(|p| resolve_declared(p, "read", spec.roots))
        .collect::<Result<Vec<_>, _>>()?;
    let write = spec
        .write
        .iter()
        .map(|p| resolve_declared(p, "write", spec.roots))
        .collect::<Result<Vec<_>, _>>()?;
    let prog = match spec.mode {
        SandboxMode::None => {
            return Ok(Wrapped {
                argv,
                sandboxed: false,
            });
        }
        SandboxMode::Required => bwrap_status().map_err(|why| SandboxError::Unavailable { why })?,
        SandboxMode::Auto => match bwrap_status() {
            Ok(p) => p,
            Err(why) => {
                static WARNED: OnceLock<()> = OnceLock::new();
                WARNED.get_or_init(|| {
                    tracing::warn!("scripts run without a sandbox: {why}; install bubblewrap, or set run.sandbox = \"required\" to refuse");
                });
                return Ok(Wrapped {
                    argv,
                    sandboxed: false,
                });
            }
        },
    };
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut a: Vec<String> = vec![prog];
    for x in [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ] {
        a.push(x.into());
    }
    for dir in spec.visible.iter().chain(&read) {
        if dir.exists() {
            a.extend(["--ro-bind".into(), s(dir), s(dir)]);
        }
    }
    for dir in std::iter::once(&spec.scratch.to_path_buf()).chain(&write) {
        if dir.exists() {
            a.extend(["--bind".into(), s(dir), s(dir)]);
        }
    }
    a.extend(
        [
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--cap-drop",
            "ALL",
        ]
        .map(String::from),
    );
    if !spec.network {
        a.push("--unshare-net".into());
    }
    a.extend(["--chdir".into(), s(spec.scratch), "--".into()]);
    a.extend(argv);
    Ok(Wrapped {
        argv: a,
        sandboxed: true,
    })
}

/// A pids cgroup (v1 or v2) holding one call's processes, removed on drop after killing
/// whatever is left in it. None where cgroups cannot be made (not root, no pids controller).
pub struct PidsCgroup {
    dir: PathBuf,
    procs: CString,
}

fn pids_base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| {
        if std::env::var_os("TOOLSMITH_NO_CGROUP").is_some() {
            return None;
        }
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        // v1: "N:pids:/path"; v2: "0::/path" with the pids controller enabled.
        let v1 = own.lines().find_map(|l| {
            let mut it = l.splitn(3, ':');
            let (_, ctrl, path) = (it.next()?, it.next()?, it.next()?);
            ctrl.split(',')
                .any(|c| c == "pids")
                .then(|| Path::new("/sys/fs/cgroup/pids").join(path.trim_start_matches('/')))
        });
        let base = v1.or_else(|| {
            let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
            let dir = Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
            let ctrls = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
            ctrls.split_whitespace().any(|c| c == "pids").then_some(dir)
        })?;
        let probe = base.join(format!("toolsmith-probe-{}", std::process::id()));
        std::fs::create_dir(&probe).ok()?;
        let ok = probe.join("pids.max").exists();
        let _ = std::fs::remove_dir(&probe);
        if ok {
            remove_stale(&base);
        }
        ok.then_some(base)
    })
    .as_deref()
}

/// Remove cgroups left by toolsmith processes that are gone (a worker's cgroup outlives an
/// exiting server, whose statics are never dropped), killing anything still inside.
fn remove_stale(base: &Path) {
    let Ok(rd) = std::fs::read_dir(base) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("toolsmith-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let procs = std::fs::read_to_string(e.path().join("cgroup.procs")).unwrap_or_default();
        for p in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe {
                libc::kill(p, libc::SIGKILL);
            }
        }
        let _ = std::fs::remove_dir(e.path());
    }
}

impl PidsCgroup {
    /// A new cgroup allowing `max` tasks, or None when cgroups are not usable here.
    pub fn new(max: u64) -> Option<PidsCgroup> {
        static N: AtomicU64 = AtomicU64::new(0);
        let base = pids_base()?;
        let dir = base.join(format!(
            "toolsmith-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir).ok()?;
        let cg = PidsCgroup {
            procs: CString::new(dir.join("cgroup.procs").as_os_str().as_encoded_bytes()).ok()?,
            dir,
        };
        std::fs::write(cg.dir.join("pids.max"), max.to_string()).ok()?;
        Some(cg)
    }

    /// The pids in the cgroup now.
    fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// SIGKILL every process in the cgroup until it is empty (bounded retries).
    pub fn kill_all(&self) {
        for _ in 0..200 {
            let pids = self.pids();
            if pids.is_empty() {
                return;
            }
            for p in pids {
                // SAFETY: kill(2) has no memory-safety preconditions.
                unsafe {
                    libc::kill(p, libc::SIGKILL);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        self.kill_all();
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        tracing::warn!(dir = %self.dir.display(), "could not remove a cgroup");
    }
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

    /// Install them on a command (runs in the child before exec).
    pub fn apply(self, cmd: &mut tokio::process::Command) {
        let is_root = unsafe { libc::geteuid() } == 0;
        // SAFETY: the closure only makes async-signal-safe system calls (open, write, close,
        // setrlimit) on data prepared before the fork; it allocates nothing.
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
                        && (cur.rlim_cur == libc::RLIM_INFINITY
                            || cur.rlim_cur as u64 > NPROC_LIMIT)
                    {
                        set(libc::RLIMIT_NPROC, NPROC_LIMIT);
                    }
                }
                Ok(())
            });
        }
    }
}
