//! This person's state on this machine, never in git: approvals, secret values and the audit
//! log live in one private directory (`Config::data_dir`: `$TOOLSMITH_DATA`, else
//! `<data dir>/toolsmith-private`),
//! created with mode 0700; every file in it is written atomically with mode 0600.
//!
//! It is deliberately outside every toolbox: a toolbox is shared (cloned, pulled, imported),
//! and a teammate's approval or secret must never become this person's.

use std::io::Write;
use std::path::Path;

/// Create `dir` (and parents) with mode 0700 for the last component.
pub fn ensure_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    crate::platform::make_private_dir(dir)
}

/// Write `bytes` to `path` atomically (a temporary file beside it, fsync, rename), mode 0600.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("a private file needs a parent directory"))?;
    ensure_dir(dir)?;
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    crate::platform::make_private(tmp.as_file())?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Run `f` holding an exclusive lock on `<path>.lock` (a CLI command and a running server
/// may update the same file: read-modify-write under the lock loses nothing).
pub fn with_lock<T>(path: &Path, f: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    let lock = path.with_extension("lock");
    if let Some(dir) = lock.parent() {
        ensure_dir(dir)?;
    }
    let file = append_private(&lock)?;
    file.lock()?;
    let out = f();
    let _ = file.unlock();
    out
}

/// Open `path` for appending (created with mode 0600).
pub fn append_private(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        ensure_dir(dir)?;
    }
    crate::platform::open_private(path, std::fs::OpenOptions::new().create(true).append(true))
}

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A time as RFC 3339 (UTC).
pub fn rfc3339(secs: u64) -> String {
    crate::git::format_utc(secs as i64)
}
