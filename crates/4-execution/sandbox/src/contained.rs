//! Running a tool chain's process — cargo, pip, npm — while a tool is made, in the build and
//! install mode of the sandbox (`sandbox::prepare_build`): the same mechanisms and the same
//! fail-closed rule as calls. A process sees the system directories, the tool chain and the
//! package caches it is given read-only, its own work and output directories writable, and
//! a scratch directory as HOME and TMPDIR; nothing else of HOME, no toolbox, no personal
//! directory. Its environment is only what the tool chain needs, set inside the sandbox
//! (`crate::env`: the launcher's own is empty). Its network is none, or only the package
//! registries through the filtering proxy calls use (`sandbox::proxy`):
//! fetching is a step of its own, and build scripts and install hooks run offline.

use crate::config::SandboxConfig;
use crate::platform::ProcessTree;
use crate::proxy::Proxy;
use crate::{BuildSpec, ChildLimits, Mechanism, Net, PidsCgroup, SandboxError};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// The most tasks a build may have at once (cargo, rustc's threads, linkers, build scripts).
pub const BUILD_TASKS: u64 = 1024;
/// How much of a process's stdout and stderr is kept (the rest is dropped from the middle).
pub const MAX_OUTPUT: usize = 64 * 1024;
/// The PATH of a contained process: the system's (tool chain directories are put first by
/// the caller, with `path_with`).
pub const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A PATH of `first` then the system's (on Windows, where nothing is contained, the host's).
pub fn path_with(first: &[std::path::PathBuf]) -> OsString {
    let system: Vec<std::path::PathBuf> = if cfg!(unix) {
        std::env::split_paths(SYSTEM_PATH).collect()
    } else {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default()
    };
    std::env::join_paths(first.iter().cloned().chain(system)).unwrap_or_else(|_| SYSTEM_PATH.into())
}

/// Where a step may connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    /// None at all.
    None,
    /// Only these hosts (the package registries), through the filtering proxy.
    Registries(Vec<String>),
}

/// One tool-chain process.
pub struct Job<'a> {
    /// What it is, for messages ("cargo build of tool-x").
    pub what: String,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// The program's variables (PATH among them; HOME and TMPDIR are the scratch directory),
    /// toolsmith's and the person's own values, set inside the sandbox (`crate::env`).
    pub env: Vec<(String, OsString)>,
    /// The working directory (one of `read` or `write`).
    pub cwd: PathBuf,
    /// What it may read besides the system's own directories.
    pub read: Vec<PathBuf>,
    /// What it may write.
    pub write: Vec<PathBuf>,
    /// Where it may connect.
    pub network: Network,
    /// The sandbox settings (mechanism, bubblewrap's path, opt-outs).
    pub config: &'a SandboxConfig,
}

/// A started process with what must outlive it.
pub struct Started {
    /// The process and everything it starts (killed on drop).
    pub child: ProcessTree,
    /// The sandbox it runs in.
    pub mechanism: Mechanism,
    _scratch: tempfile::TempDir,
    _cgroup: Option<PidsCgroup>,
    _proxy: Option<Proxy>,
}

impl Drop for Started {
    fn drop(&mut self) {
        self.child.kill();
    }
}

/// Why a contained process did not start.
#[derive(Debug, thiserror::Error)]
pub enum ContainError {
    /// The sandbox could not be set up.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The program could not be started.
    #[error("cannot run {program:?}: {message}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        message: String,
    },
}

impl crate::error::Hint for ContainError {
    fn hint(&self) -> Option<String> {
        match self {
            ContainError::Sandbox(e) => e.hint(),
            ContainError::Spawn { .. } => {
                Some("check that the tool chain is installed and runs for this user".into())
            }
        }
    }
}

/// Start a job, its stdin closed, stdout and stderr piped.
pub fn spawn(job: &Job<'_>) -> Result<Started, ContainError> {
    let setup = |e: std::io::Error| ContainError::Sandbox(SandboxError::Setup(e.to_string()));
    let scratch = tempfile::Builder::new()
        .prefix("toolsmith-build-")
        .tempdir()
        .map_err(setup)?;
    let mechanism = crate::choose(crate::manifest::SandboxMode::Auto, job.config)?;
    let proxy = match &job.network {
        Network::None => None,
        Network::Registries(hosts) => {
            let unix = matches!(mechanism, Mechanism::Bubblewrap | Mechanism::Landlock);
            Some(Proxy::start_for_registries(&job.what, hosts, unix).map_err(setup)?)
        }
    };
    let net = match &proxy {
        Some(p) => Net::Proxy(p.endpoint().clone()),
        None => Net::None,
    };
    let spec = BuildSpec {
        network: net.clone(),
        scratch: scratch.path(),
        cwd: &job.cwd,
        read: job.read.clone(),
        write: job.write.clone(),
        config: job.config,
    };
    let mut prepared = crate::prepare_build(job.argv.clone(), &spec)?;
    // All of it toolsmith's and the person's own values (a build input names none of them).
    let path = path_with(&[]);
    let own = std::iter::once(("PATH", path.as_os_str()))
        .chain(job.env.iter().map(|(k, v)| (k.as_str(), v.as_os_str())));
    let env = crate::Environment::build([], own, scratch.path(), &net)?;
    let mut cmd = prepared.command(&env, &job.cwd)?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let cgroup = PidsCgroup::new(BUILD_TASKS, job.config);
    // No address-space limit: a compiler needs what it needs (the build's time is bounded).
    let limits = ChildLimits::new(0, false, cgroup.as_ref());
    let limits = ChildLimits {
        address_space: None,
        ..limits
    };
    let mechanism = prepared.mechanism;
    let program = prepared.argv[0].clone();
    limits.apply(&mut cmd, prepared);
    let child = ProcessTree::spawn(cmd).map_err(|e| ContainError::Spawn {
        program: job.argv.first().cloned().unwrap_or(program),
        message: e.to_string(),
    })?;
    Ok(Started {
        child,
        mechanism,
        _scratch: scratch,
        _cgroup: cgroup,
        _proxy: proxy,
    })
}

/// What a finished job printed (each stream bounded by `MAX_OUTPUT`) and how it ended.
#[derive(Debug)]
pub struct Output {
    /// It exited with status 0.
    pub success: bool,
    /// "exit status 1", "killed by signal 9", "timed out after N s".
    pub status: String,
    /// What it wrote to stdout (head and tail when long).
    pub stdout: String,
    /// What it wrote to stderr (head and tail when long).
    pub stderr: String,
}

/// Run a job to its end (at most `timeout`), collecting bounded output.
pub async fn output(job: &Job<'_>, timeout: Duration) -> Result<Output, ContainError> {
    let mut started = spawn(job)?;
    let (Some(out), Some(err)) = (started.child.stdout().take(), started.child.stderr().take())
    else {
        return Err(ContainError::Spawn {
            program: job.argv.first().cloned().unwrap_or_default(),
            message: "its output pipes are missing".into(),
        });
    };
    let work = async {
        let (o, e) = tokio::join!(read_bounded(out), read_bounded(err));
        let status = started.child.wait().await;
        (o, e, status)
    };
    match tokio::time::timeout(timeout, work).await {
        Ok((stdout, stderr, status)) => {
            let (success, status) = match status {
                Ok(s) => (s.success(), s.to_string()),
                Err(e) => (false, format!("cannot wait for it: {e}")),
            };
            Ok(Output {
                success,
                status,
                stdout,
                stderr,
            })
        }
        Err(_) => Ok(Output {
            success: false,
            status: format!("timed out after {} s and was stopped", timeout.as_secs()),
            stdout: String::new(),
            stderr: String::new(),
        }),
    }
}

/// Read a stream to its end, keeping at most `MAX_OUTPUT` of it.
async fn read_bounded(mut r: impl tokio::io::AsyncRead + Unpin) -> String {
    let mut kept = Bounded::default();
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 {
            break;
        }
        kept.push(&buf[..n]);
    }
    kept.text()
}

/// Output kept up to `MAX_OUTPUT`: the head and the tail, the middle dropped.
#[derive(Default)]
pub struct Bounded {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    dropped: usize,
}

impl Bounded {
    /// Keep what fits of `bytes`: the first half of the room, then the latest bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        let half = MAX_OUTPUT / 2;
        let room = half.saturating_sub(self.head.len());
        let (h, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(h);
        self.tail.extend(rest);
        while self.tail.len() > half {
            self.tail.pop_front();
            self.dropped += 1;
        }
    }

    /// The text kept, with a mark where bytes were dropped.
    pub fn text(self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            s.push_str(&format!("\n… ({} bytes left out) …\n", self.dropped));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        s.push_str(&String::from_utf8_lossy(&tail));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_bounded_head_and_tail() {
        let mut b = Bounded::default();
        for _ in 0..100 {
            b.push(&[b'x'; 4096]);
        }
        b.push(b"THE END");
        let t = b.text();
        assert!(t.len() < MAX_OUTPUT + 100, "{}", t.len());
        assert!(t.ends_with("THE END") && t.contains("bytes left out"));
    }
}
