//! What differs between the platforms editors run on (Linux, macOS, Windows), behind small
//! functions: private files (mode 0600 on Unix; on Windows the per-user profile's inherited
//! ACL), files replaced atomically (`write_atomic`), process trees (a process group on Unix,
//! a job object on Windows, through `process-wrap`) and single processes by pid (alive?
//! kill), so the rest of the code has no `cfg`; and the process-wide TLS set-up ([`tls`]).

#![deny(missing_docs)]

mod blocking;
pub mod tls;

pub use blocking::{Stopped, blocking, blocking_here, detached};

use std::fs::File;
use std::io;
use std::path::Path;

/// Open `path` as `options` say; a file this creates only its owner can read (mode 0600 on
/// Unix; on Windows the inherited per-user ACL).
pub fn open_private(path: &Path, options: &mut std::fs::OpenOptions) -> io::Result<File> {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    options.open(path)
}

/// Create a new file only its owner can read (fails if it exists).
pub fn create_private(path: &Path) -> io::Result<File> {
    open_private(
        path,
        std::fs::OpenOptions::new().write(true).create_new(true),
    )
}

/// How [`write_atomic`] writes: who may read the file, and whether it must survive a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Atomic {
    /// Only the owner can read it (mode 0600 on Unix), from its first byte.
    pub private: bool,
    /// Flushed to the disk (fsync) before it replaces the old file: a record that must survive
    /// a crash. A cache that is rebuilt when missing skips it.
    pub durable: bool,
}

impl Atomic {
    /// A record of the person's (secrets, approvals, allowances): private and durable.
    pub const PRIVATE: Atomic = Atomic {
        private: true,
        durable: true,
    };
    /// A record others may read (a tool's memory, the toolbox's journal): durable.
    pub const RECORD: Atomic = Atomic {
        private: false,
        durable: true,
    };
    /// Derived data, rebuilt when missing or damaged (compiled code, listings, usage).
    pub const CACHE: Atomic = Atomic {
        private: false,
        durable: false,
    };
}

/// Write `bytes` to `path` atomically: into a temporary file beside it (`.tmp-` and a random
/// name), then renamed over `path`, so a reader sees the old file or the new one, never a
/// part, and a crash leaves at most a temporary file. The parent directory must exist.
pub fn write_atomic(path: &Path, bytes: &[u8], how: Atomic) -> io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    if how.private {
        make_private(tmp.as_file())?;
    }
    tmp.write_all(bytes)?;
    if how.durable {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// An exclusive lock on the file `path` (created, mode 0600, its directory too), held until the
/// returned file is dropped: an advisory lock every process and thread of toolsmith takes
/// before a read-modify-write of what the lock guards (`flock` on Unix, `LockFileEx` on
/// Windows). Blocks while another holder has it.
pub fn lock(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let file = open_private(
        path,
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )?;
    file.lock()?;
    Ok(file)
}

/// Run `f` holding [`lock`] on `<path>.lock` (the lock of the file `path`: a CLI command and a
/// running server may update the same file; a read-modify-write under it loses nothing).
pub fn with_lock<T>(path: &Path, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let _held = lock(&path.with_extension("lock"))?;
    f()
}

/// Make an open file readable by its owner only (mode 0600 on Unix).
pub fn make_private(file: &File) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

/// Make a directory reachable by its owner only (mode 0700 on Unix).
pub fn make_private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Whether other users may read the file (Unix mode bits; always false on Windows, where
/// files under the user's profile inherit a per-user ACL).
pub fn readable_by_others(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o077 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Whether a file is executable by anyone (Unix mode bits); None where the platform has no
/// such bit (Windows). The one test of it: what git records as mode 100755, what a tool's
/// copy keeps, what an archive carries.
pub fn executable(meta: &std::fs::Metadata) -> Option<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(meta.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// A child process with everything it starts (a process group on Unix, a job object on
/// Windows, through `process-wrap`): killed as a whole by `kill`, and on drop unless it was
/// waited for. The command's own set-up (its `pre_exec` hooks: limits, sandbox) runs in the
/// child after it joined its group (std sets the group before the hooks).
pub struct ProcessTree {
    child: Box<dyn process_wrap::tokio::ChildWrapper>,
    waited: bool,
}

impl ProcessTree {
    /// Spawn `cmd` as the leader of a new process group (Unix) or in a new job object
    /// (Windows). `cmd` is dropped before this returns, closing what it held for the child.
    pub fn spawn(cmd: tokio::process::Command) -> io::Result<ProcessTree> {
        use process_wrap::tokio::*;
        let mut w = CommandWrap::from(cmd);
        #[cfg(unix)]
        w.wrap(ProcessGroup::leader());
        #[cfg(windows)]
        w.wrap(JobObject);
        w.wrap(KillOnDrop);
        Ok(ProcessTree {
            child: w.spawn()?,
            waited: false,
        })
    }

    /// The leader's process id (None once it has been reaped).
    /// The leader's process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// The leader's stdin, when it was piped.
    pub fn stdin(&mut self) -> &mut Option<tokio::process::ChildStdin> {
        self.child.stdin()
    }

    /// The leader's stdout, when it was piped.
    pub fn stdout(&mut self) -> &mut Option<tokio::process::ChildStdout> {
        self.child.stdout()
    }

    /// The leader's stderr, when it was piped.
    pub fn stderr(&mut self) -> &mut Option<tokio::process::ChildStderr> {
        self.child.stderr()
    }

    /// Kill the whole tree now, the leader and whatever is left of its group or job, also
    /// after the leader exited (errors mean it is already gone).
    pub fn kill(&mut self) {
        let _ = self.child.start_kill();
    }

    /// The leader's exit status if it has exited, without waiting.
    pub fn try_wait(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        self.child.try_wait()
    }

    /// Wait for the leader to exit. The tree is then left alone on drop.
    pub async fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        let s = self.child.wait().await;
        self.waited = true;
        s
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        if !self.waited {
            self.kill();
        }
    }
}

/// Whether a process with this pid exists (Unix: `kill(pid, 0)`, which also says "exists"
/// for another user's process; elsewhere: assumed alive, so nothing is taken for stale).
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    #[cfg(unix)]
    {
        // SAFETY: kill(2) with signal 0 only checks for existence and permission.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// Kill one process by pid at once (SIGKILL; a process tree is `ProcessTree::kill`). Nothing
/// where there are no signals: the callers (a pids cgroup's members) exist only on Linux.
pub fn kill_process(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(pid)
        && pid > 0
    {
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Give memory freed after a large one-off job (the history memo of a long history) back to
/// the system, so a long-running server's RSS shows what it holds, not what it once used.
/// glibc keeps freed heap pages, per thread arena, until asked; elsewhere this does nothing.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of malloc's own arenas to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// What identifies a directory rather than its path: a directory replaced by another (a
/// commit swaps a tool's directory for a new one) has another identity. On Unix its device,
/// inode and modification time; None where it cannot be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DirId(u64, u64, i64, i64);

/// The identity of the directory at `path` (None when it cannot be read, or off Unix).
pub fn dir_id(path: &Path) -> Option<DirId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let md = std::fs::metadata(path).ok()?;
        Some(DirId(md.dev(), md.ino(), md.mtime(), md.mtime_nsec()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// `bytes` random bytes from the operating system, as hex (tokens, ids).
pub fn random_hex(bytes: usize) -> io::Result<String> {
    let mut b = vec![0u8; bytes];
    getrandom::fill(&mut b).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(hex::encode(b))
}
