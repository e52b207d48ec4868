//! Lock files: toolsmith's own writer lock (who holds it, and whether its last holder died
//! mid-write) and git's lock files (`index.lock`, `HEAD.lock`, `refs/heads/<b>.lock`) that a
//! crashed process can leave behind.
//!
//! # The stale-lock rule
//! toolsmith's lock (`<git-common-dir>/toolsmith.lock`) is an `flock`, which the kernel drops
//! when its holder dies, so it can never be stale. The holder writes `pid start-time
//! acquired-ms` into the file and empties it on release; a record found by the next holder
//! means its predecessor died holding the lock.
//!
//! git's lock files carry no owner. One found while we hold toolsmith's lock is removed when
//! **no process has it open** (a scan of `/proc/*/fd`) and either
//! 1. toolsmith's previous holder died holding the lock and the file is not older than that
//!    holder's acquisition (it was that toolsmith's), or
//! 2. no `git` process runs in this repository (`/proc/*/comm` and `/proc/*/cwd`) and the file
//!    is older than [`STALE_AGE`] (git keeps a lock it does not have open only while the
//!    process lives, e.g. `git commit` waiting for its editor).
//!
//! Anything else is treated as live: toolsmith waits up to [`LIVE_WAIT`] and then fails with an
//! error naming the file and its holder. Where `/proc` does not exist (macOS, Windows) only
//! rule 1 applies; other stale locks are reported for a person to delete.

use super::{GitError, PROCESS_LOCK_FILE, io_err};
use std::fs::OpenOptions;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A git lock file this old, unheld, with no git process in the repository, is stale.
pub const STALE_AGE: Duration = Duration::from_secs(5);
/// How long to wait for a live git lock (or toolsmith's own lock) before giving up.
pub const LIVE_WAIT: Duration = Duration::from_secs(5);
/// How long to wait for toolsmith's own lock held by a live writer.
pub const WRITER_WAIT: Duration = Duration::from_secs(60);

/// Who held (or holds) toolsmith's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// The process start time (clock ticks since boot on Linux; 0 where unknown).
    pub start: u64,
    /// When the lock was taken, ms since the epoch.
    pub acquired_ms: u64,
}

impl Holder {
    fn me() -> Holder {
        let pid = std::process::id();
        Holder {
            pid,
            start: process_start(pid).unwrap_or(0),
            acquired_ms: now_ms(),
        }
    }

    fn parse(text: &str) -> Option<Holder> {
        let mut it = text.split_whitespace().map(|s| s.parse::<u64>().ok());
        Some(Holder {
            pid: u32::try_from(it.next()??).ok()?,
            start: it.next()??,
            acquired_ms: it.next()??,
        })
    }

    /// Whether this very process (same pid and start time) is still running.
    pub fn alive(&self) -> bool {
        process_alive(self.pid)
            && (self.start == 0 || process_start(self.pid).is_none_or(|s| s == self.start))
    }

    /// The holder in words, for an error message ("process 4711 (git), holding it for 3 s").
    pub fn describe(&self) -> String {
        let secs = now_ms().saturating_sub(self.acquired_ms) / 1000;
        format!(
            "process {} ({}), holding it for {secs} s",
            self.pid,
            command_of(self.pid).unwrap_or_else(|| "command unknown".into())
        )
    }
}

/// Proof that this process holds toolsmith's lock of a repository; released on drop.
#[derive(Debug)]
pub struct ProcessLock {
    file: std::fs::File,
    /// The previous holder, when it died while holding the lock (a write may be unfinished).
    crashed: Option<Holder>,
}

impl ProcessLock {
    /// The previous holder that died holding the lock, if any.
    pub fn crashed_holder(&self) -> Option<&Holder> {
        self.crashed.as_ref()
    }
}

impl Drop for ProcessLock {
    fn drop(&mut self) {
        // An empty record says "released cleanly"; the flock goes with the file.
        let _ = self.file.set_len(0);
    }
}

/// Take toolsmith's lock: waits while a live writer holds it (up to [`WRITER_WAIT`]), then
/// fails naming the holder. The file itself is never deleted (that races with the next locker).
pub(super) fn lock_process(common_dir: &Path) -> Result<ProcessLock, GitError> {
    let path = common_dir.join(PROCESS_LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io_err("open lock file", &path))?;
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) => {
                if start.elapsed() > WRITER_WAIT {
                    let mut text = String::new();
                    let _ = std::fs::read_to_string(&path).map(|t| text = t);
                    return Err(GitError::Locked {
                        path,
                        holder: Holder::parse(&text)
                            .map(|h| h.describe())
                            .unwrap_or_else(|| "another toolsmith writer".into()),
                    });
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io_err("lock", &path)(e)),
        }
    }
    let mut previous = String::new();
    let _ = file.read_to_string(&mut previous);
    let crashed = Holder::parse(&previous);
    if let Some(h) = &crashed {
        tracing::warn!(
            pid = h.pid,
            "the previous toolsmith writer died while holding {}; finishing what it left",
            path.display()
        );
    }
    if let Some(h) = &crashed {
        sweep_after_crash(common_dir, h);
    }
    let me = Holder::me();
    let record = format!("{} {} {}\n", me.pid, me.start, me.acquired_ms);
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(record.as_bytes()))
        .map_err(io_err("write lock holder to", &path))?;
    Ok(ProcessLock { file, crashed })
}

/// Remove the git lock files a toolsmith writer that died holding our lock left (rule 1 of
/// the module doc): unheld, and not older than its acquisition. Done at once, because the
/// record of the dead holder is gone when this lock is released.
fn sweep_after_crash(common_dir: &Path, dead: &Holder) {
    let mut candidates = vec![
        common_dir.join("index.lock"),
        common_dir.join("HEAD.lock"),
        common_dir.join("packed-refs.lock"),
    ];
    for entry in walkdir::WalkDir::new(common_dir.join("refs/heads"))
        .into_iter()
        .filter_map(Result::ok)
    {
        if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "lock") {
            candidates.push(entry.path().to_path_buf());
        }
    }
    for lock in candidates {
        let Ok(meta) = std::fs::symlink_metadata(&lock) else {
            continue;
        };
        let mtime_ms = meta
            .modified()
            .ok()
            .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let unheld = open_by(&lock).is_none_or(|pids| pids.is_empty());
        if unheld && mtime_ms + 1000 >= dead.acquired_ms {
            tracing::warn!(file = %lock.display(), pid = dead.pid, "removing a git lock file left by a toolsmith writer that died");
            let _ = std::fs::remove_file(&lock);
        }
    }
}

/// What is known about a git lock file.
enum LockState {
    Absent,
    Stale(String),
    Live(String),
    /// Unheld and young: wait for it to age or vanish.
    Young,
}

fn inspect(path: &Path, workdir: &Path, git_dir: &Path, held: &ProcessLock) -> LockState {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return LockState::Absent;
    };
    let mtime = meta.modified().unwrap_or(SystemTime::now());
    let mtime_ms = mtime
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    if let Some(pids) = open_by(path) {
        if let Some(pid) = pids.first() {
            return LockState::Live(format!(
                "it is open in process {pid} ({})",
                command_of(*pid).unwrap_or_else(|| "command unknown".into())
            ));
        }
        if let Some(h) = held.crashed_holder()
            // 1 s of slack for file systems with coarse timestamps.
            && mtime_ms + 1000 >= h.acquired_ms
        {
            return LockState::Stale(format!(
                "left by toolsmith process {} that died during a write",
                h.pid
            ));
        }
        if let Some((pid, cmd)) = git_process_in(workdir, git_dir) {
            return LockState::Live(format!("git process {pid} ({cmd}) runs in this repository"));
        }
        let age = SystemTime::now()
            .duration_since(mtime)
            .unwrap_or(Duration::ZERO);
        if age >= STALE_AGE {
            return LockState::Stale(format!(
                "{} s old, open in no process, and no git process runs in this repository",
                age.as_secs()
            ));
        }
        LockState::Young
    } else {
        // No /proc: only a lock made by a toolsmith that died mid-write is known to be stale.
        match held.crashed_holder() {
            Some(h) if mtime_ms + 1000 >= h.acquired_ms => LockState::Stale(format!(
                "left by toolsmith process {} that died during a write",
                h.pid
            )),
            _ => LockState::Live("its holder cannot be determined on this system".into()),
        }
    }
}

/// Make sure none of git's lock files for the given resources (`index`, `HEAD`,
/// `refs/heads/main`, … relative to the git dir) is in the way: remove stale ones, wait for
/// live ones (up to [`LIVE_WAIT`]) and fail naming the file and its holder.
pub(super) fn clear_git_locks(
    held: &ProcessLock,
    workdir: &Path,
    git_dir: &Path,
    resources: &[PathBuf],
) -> Result<(), GitError> {
    let start = Instant::now();
    for resource in resources {
        let mut name = resource.as_os_str().to_owned();
        name.push(".lock");
        let lock = PathBuf::from(name);
        loop {
            match inspect(&lock, workdir, git_dir, held) {
                LockState::Absent => break,
                LockState::Stale(why) => {
                    tracing::warn!(file = %lock.display(), why, "removing a stale git lock file");
                    match std::fs::remove_file(&lock) {
                        Ok(()) => break,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                        Err(e) => return Err(io_err("remove stale lock file", &lock)(e)),
                    }
                }
                LockState::Live(holder) if start.elapsed() > LIVE_WAIT => {
                    return Err(GitError::Locked { path: lock, holder });
                }
                // A young unheld lock turns stale at STALE_AGE; this bound is only a backstop.
                LockState::Young if start.elapsed() > STALE_AGE + LIVE_WAIT => {
                    return Err(GitError::Locked {
                        path: lock,
                        holder: "no running process, but it keeps being renewed".into(),
                    });
                }
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
    Ok(())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Whether a process with this pid exists (`platform::process_alive`).
pub fn process_alive(pid: u32) -> bool {
    toolsmith_platform::process_alive(pid)
}

/// The start time of a process (field 22 of `/proc/<pid>/stat`), where `/proc` exists.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn command_of(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let text: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .take(4)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    (!text.is_empty()).then(|| text.join(" "))
}

fn proc_pids() -> Option<Vec<u32>> {
    let rd = std::fs::read_dir("/proc").ok()?;
    Some(
        rd.filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .collect(),
    )
}

/// The processes that have `path` open; None where `/proc` is not available.
fn open_by(path: &Path) -> Option<Vec<u32>> {
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    let target = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut out = Vec::new();
    for pid in proc_pids()? {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        if fds
            .filter_map(Result::ok)
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == target || l == path))
        {
            out.push(pid);
        }
    }
    Some(out)
}

/// A live `git` process whose working directory is inside this repository.
fn git_process_in(workdir: &Path, git_dir: &Path) -> Option<(u32, String)> {
    for pid in proc_pids()? {
        let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")) else {
            continue;
        };
        let comm = comm.trim();
        if comm != "git" && !comm.starts_with("git-") {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(format!("/proc/{pid}/cwd")) else {
            continue;
        };
        if cwd.starts_with(workdir) || cwd.starts_with(git_dir) {
            return Some((pid, command_of(pid).unwrap_or_else(|| comm.to_string())));
        }
    }
    None
}
