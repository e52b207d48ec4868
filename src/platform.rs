//! What differs between the platforms editors run on (Linux, macOS, Windows), behind small
//! functions: private files (mode 0600 on Unix; on Windows the per-user profile's inherited
//! ACL) and process trees (a process group on Unix, a job object on Windows, through
//! `process-wrap`), so the rest of the code has no `cfg`.

use std::fs::File;
use std::io;
use std::path::Path;

/// Create a new file only its owner can read (fails if it exists).
pub fn create_private(path: &Path) -> io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
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

/// A child process with everything it starts: killed as a whole by `kill` or on drop.
pub struct ProcessTree {
    child: Box<dyn process_wrap::tokio::ChildWrapper>,
    done: bool,
}

impl ProcessTree {
    /// Spawn `cmd` as the leader of a new process group (Unix) or in a new job object
    /// (Windows).
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
            done: false,
        })
    }

    pub fn stdout(&mut self) -> Option<tokio::process::ChildStdout> {
        self.child.stdout().take()
    }

    pub fn stderr(&mut self) -> Option<tokio::process::ChildStderr> {
        self.child.stderr().take()
    }

    /// Kill the whole tree (idempotent; errors mean it is already gone).
    pub fn kill(&mut self) {
        if !self.done {
            let _ = self.child.start_kill();
            self.done = true;
        }
    }

    /// Wait for the leader to exit. The tree is then left alone on drop.
    pub async fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        let s = self.child.wait().await;
        self.done = true;
        s
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        self.kill();
    }
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
