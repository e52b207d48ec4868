//! A pids cgroup (v1 or v2) per call: caps how many tasks one call may have (root ignores
//! RLIMIT_NPROC, so a fork bomb is stopped here) and makes "the call's processes" exact, so
//! everything the call started is killed with it, daemons included.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// A pids cgroup (v1 or v2) holding one call's processes, removed on drop after killing
/// whatever is left in it. None where cgroups cannot be made (not root, no pids controller).
pub struct PidsCgroup {
    dir: PathBuf,
    pub(super) procs: CString,
}

fn pids_base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| {
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
            sigkill(p);
        }
        let _ = std::fs::remove_dir(e.path());
    }
}

impl PidsCgroup {
    /// A new cgroup allowing `max` tasks, or None when cgroups are not usable here (or the
    /// configuration says not to make them: `TOOLSMITH_NO_CGROUP`).
    pub fn new(max: u64, config: &super::SandboxConfig) -> Option<PidsCgroup> {
        static N: AtomicU64 = AtomicU64::new(0);
        if config.no_cgroup {
            return None;
        }
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

    /// Move the process `pid` (its whole thread group) into this cgroup: a fork server's
    /// call, before any of its code runs (what it starts then is counted here).
    pub fn adopt(&self, pid: u32) -> std::io::Result<()> {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string())
    }

    /// The pids in the cgroup now.
    fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// SIGKILL every process in the cgroup now (one pass; `kill_all` makes sure).
    pub fn signal_all(&self) {
        for p in self.pids() {
            sigkill(p);
        }
    }

    /// SIGKILL every process in the cgroup until it is empty (bounded retries).
    pub fn kill_all(&self) {
        for _ in 0..200 {
            let pids = self.pids();
            if pids.is_empty() {
                return;
            }
            for p in pids {
                sigkill(p);
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

/// SIGKILL one process of the cgroup (`platform::kill_process`).
fn sigkill(pid: i32) {
    if let Ok(pid) = u32::try_from(pid) {
        crate::platform::kill_process(pid);
    }
}
