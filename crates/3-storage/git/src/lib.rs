//! The git layer of a toolbox: a git repository in which every tool lives in its own
//! directory (`tools/<name>/`).
//!
//! Everything here keeps the repository in a state that plain `git` agrees with: after every
//! operation `git status` is clean, `git fsck --strict` is happy and commits made with the git
//! CLI on top work. To get there, a commit of a directory
//!
//! 1. takes a process-wide lock (`<git-common-dir>/toolsmith.lock`, `File::lock`, i.e. `flock`)
//!    so that concurrent toolsmith writers – threads or processes – queue up,
//! 2. takes `.git/index.lock`, as git does, so that git CLI writers of the index are excluded,
//! 3. builds the new tree by editing the `HEAD` tree, writing blobs for the on-disk files
//!    (honouring `.gitignore` and `.gitattributes` clean/eol filters through gix),
//! 4. commits with an explicit signature (no git identity is needed),
//! 5. replaces the index entries under the directory with entries carrying fresh stat data,
//!    drops the cache-tree extension (a stale one makes a later `git commit` write wrong
//!    subtrees) and writes the index through a `BufWriter` into the lock file.
//!
//! # Architecture invariants
//! * Only index entries under the committed prefixes are touched; the rest of the index (and
//!   whatever a user staged there) is left alone.
//! * No function panics on input; all failures are [`GitError`] values naming the path or
//!   revision involved.
//! * Paths given to and returned from this module are repository-relative, `/`-separated UTF-8.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod blobs;
mod history;
mod index;
mod locks;
mod repo;
mod sign;
mod staged;
mod state;
mod validate;

pub use locks::{Holder, ProcessLock, STALE_AGE, process_alive};
pub use staged::{
    Join, Source, Staged, branch_target, check_write_state, refresh_index, stage_commit,
    stage_commit_joined,
};
pub use state::UnsafeState;

use blobs::*;
pub use history::{
    changed_paths, entry_id_at, file_at, head_files_by_stat, log, read_tree_at, resolve,
    tree_entries,
};
use index::*;
pub use repo::commit_info;

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the epoch (proleptic Gregorian, UTC).
pub fn format_utc(secs: i64) -> String {
    gix::date::Time::new(secs, 0)
        .format_or_unix(gix::date::time::CustomFormat::new("%Y-%m-%dT%H:%M:%SZ"))
}
use repo::*;
use validate::*;

use std::collections::HashMap;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::objs::tree::{EntryKind, EntryMode};

/// How long to wait for `.git/index.lock` held by someone else (e.g. a `git status` refreshing
/// the index) before giving up.
const INDEX_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// File-name checks applied to added files, as git's defaults (`core.protectNTFS` on,
/// `core.protectHFS` on macOS only, Windows device names on Windows only).
const PROTECT_OPTIONS: gix::validate::path::component::Options =
    gix::validate::path::component::Options {
        protect_windows: cfg!(windows),
        protect_hfs: cfg!(target_os = "macos"),
        protect_ntfs: true,
    };

/// Name of the process-wide toolsmith lock file inside the git (common) directory.
pub const PROCESS_LOCK_FILE: &str = "toolsmith.lock";

/// A `.gitignore` suitable for a fresh toolbox. Files ignored by the repository's ignore rules
/// are never committed by [`commit_dir`]; without such rules, build output would be committed.
pub const DEFAULT_GITIGNORE: &str = "target/\n.venv/\nnode_modules/\n__pycache__/\n.toolsmith/\n";

/// Who makes a commit (used as author and committer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// `user.name`.
    pub name: String,
    /// `user.email`.
    pub email: String,
}

/// One commit as shown by [`log`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CommitInfo {
    /// Full hex id.
    pub id: String,
    /// Author time, seconds since the unix epoch.
    pub time: i64,
    /// Author name.
    pub author: String,
    /// Author email.
    pub email: String,
    /// First line (paragraph) of the message.
    pub summary: String,
    /// Full message without trailing newlines.
    pub message: String,
}

/// Everything that can go wrong in this module.
///
/// Messages say what failed and where; the underlying cause is available through
/// [`std::error::Error::source`] (print the chain, e.g. with `{:#}` in anyhow, to see it).
///
/// Each variant is told by its `#[error]` message; the fields are what the message names.
#[allow(missing_docs)]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitError {
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath { path: String, reason: &'static str },
    #[error("invalid commit message: {reason}")]
    InvalidMessage { reason: &'static str },
    #[error("invalid signature {name:?} <{email}>: {reason}")]
    InvalidSignature {
        name: String,
        email: String,
        reason: &'static str,
    },
    #[error("{} is not inside a git work tree", path.display())]
    NotARepository {
        path: PathBuf,
        #[source]
        source: gix::Error,
    },
    #[error("{} is a bare repository, but a work tree is required", path.display())]
    NoWorkTree { path: PathBuf },
    #[error("cannot create a repository in {}: it already contains .git", path.display())]
    AlreadyExists { path: PathBuf },
    #[error("could not {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("refusing to commit symbolic link {}: tools may only contain regular files and directories", path.display())]
    Symlink { path: PathBuf },
    #[error("refusing to commit {}: it is a nested git repository", path.display())]
    NestedRepository { path: PathBuf },
    #[error("{} exists but is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    #[error("{} is locked: {holder}", path.display())]
    Locked { path: PathBuf, holder: String },
    #[error("refusing to write: {}; end it with {}", .0.state, .0.command)]
    UnsafeState(UnsafeState),
    #[error("could not lock {} (another git process is using the repository; if none is, delete this stale lock file)", path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: gix::Error,
    },
    #[error("cannot resolve revision {rev:?} to a commit in {}", repo.display())]
    UnknownRevision {
        rev: String,
        repo: PathBuf,
        #[source]
        source: gix::Error,
    },
    #[error("{path:?} at {rev} is a file, not a directory")]
    NotATreeAt { rev: String, path: String },
    #[error("{path:?} at {rev} is a {kind}, which is not supported (regular files only)")]
    UnsupportedEntry {
        rev: String,
        path: String,
        kind: &'static str,
    },
    #[error("HEAD moved from {expected} to {actual} meanwhile; nothing was changed")]
    HeadMoved { expected: String, actual: String },
    #[error("could not sign the commit with {key}: {message}")]
    Sign { key: String, message: String },
    #[error(
        "the tree built from the staged files ({built}) is not the tree to integrate ({expected}); nothing was changed"
    )]
    TreeMismatch { expected: String, built: String },
    #[error("could not {action} in {}", repo.display())]
    Git {
        action: String,
        repo: PathBuf,
        #[source]
        source: gix::Error,
    },
}

/// Attach "what" and "where" to gix errors.
trait GixContext<T> {
    fn ctx(self, repo: &Path, action: impl FnOnce() -> String) -> Result<T, GitError>;
}

impl<T> GixContext<T> for Result<T, gix::Error> {
    fn ctx(self, repo: &Path, action: impl FnOnce() -> String) -> Result<T, GitError> {
        self.map_err(|source| GitError::Git {
            action: action(),
            repo: repo.to_owned(),
            source,
        })
    }
}

fn io_err(
    action: &'static str,
    path: impl Into<PathBuf>,
) -> impl FnOnce(std::io::Error) -> GitError {
    let path = path.into();
    move |source| GitError::Io {
        action,
        path,
        source,
    }
}

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/// Create a new repository at `dir` (created with all parents if needed) whose `HEAD` is branch
/// `main`, write `files` (repo-relative path → bytes) into the work tree and make the first
/// commit with exactly these files; the index matches the commit afterwards.
///
/// Fails if `dir` already contains `.git`. Other files already present in `dir` are left alone
/// and stay untracked. Returns the commit id as hex.
pub fn init_with_files(
    dir: &Path,
    files: &[(&str, &[u8])],
    message: &str,
    sig: &Signature,
) -> Result<String, GitError> {
    let message = normalize_message(message)?;
    check_signature(sig)?;
    let paths: Vec<String> = files
        .iter()
        .map(|(p, _)| normalize_rela_path(p))
        .collect::<Result<_, _>>()?;

    std::fs::create_dir_all(dir).map_err(io_err("create directory", dir))?;
    if dir.join(".git").exists() {
        return Err(GitError::AlreadyExists {
            path: dir.to_owned(),
        });
    }
    let repo = gix::init(dir).ctx(dir, || "initialize a repository".into())?;
    let workdir = workdir_of(&repo)?;
    ensure_head_is_main(&repo, &workdir)?;

    for (path, (_, bytes)) in paths.iter().zip(files) {
        let abs = workdir.join(path);
        if let Some(parent) = abs.parent() {
            std::fs::create_dir_all(parent).map_err(io_err("create directory", parent))?;
        }
        std::fs::write(&abs, bytes).map_err(io_err("write file", &abs))?;
    }

    let index_path = repo.index_path();
    let lock = lock_index(&index_path)?;
    let mut index =
        gix::index::File::from_state(gix::index::State::new(repo.object_hash()), index_path);

    let mut adder = FileAdder::new(&repo, &workdir, &index)?;
    let mut editor = TreeEditor::new(&repo, &workdir, ObjectId::empty_tree(repo.object_hash()))?;
    // A path given twice was written twice (the last content won); add it once.
    let mut unique = paths.clone();
    unique.sort();
    unique.dedup();
    let mut added = Vec::with_capacity(unique.len());
    for path in &unique {
        let file = adder.add_file(path, &workdir.join(path), &index)?;
        editor.upsert(&file)?;
        added.push(file);
    }
    drop(adder);
    let tree = editor.write("the initial tree")?;

    let commit = commit_head(&repo, &workdir, sig, &message, tree, None)?;
    replace_index_entries(&mut index, &[], &[], &added);
    write_index(&repo, &workdir, &mut index, lock)?;
    Ok(commit.to_hex().to_string())
}

/// Open the repository whose work tree contains `dir` (searching upwards like git does).
///
/// Bare repositories are refused with [`GitError::NoWorkTree`].
pub fn open(dir: &Path) -> Result<gix::Repository, GitError> {
    let repo = gix::discover(dir).map_err(|source| GitError::NotARepository {
        path: dir.to_owned(),
        source,
    })?;
    if repo.workdir().is_none() {
        return Err(GitError::NoWorkTree {
            path: dir.to_owned(),
        });
    }
    Ok(repo)
}

/// `true` if `dir` is (inside) the work tree of a non-bare git repository.
pub fn is_work_tree(dir: &Path) -> bool {
    open(dir).is_ok()
}

/// Make one commit on the current branch (an unborn branch is fine) in which the subtree at
/// `prefix` (repo-relative, e.g. `tools/word_count`) is replaced by the current contents of the
/// directory `<workdir>/<prefix>`, or removed if that directory does not exist.
///
/// * Regular files are committed recursively with their executable bit; empty directories
///   disappear, as in git.
/// * Files and directories ignored by the repository's ignore rules (`.gitignore` files,
///   `.git/info/exclude`, `core.excludesFile`) are skipped – see [`DEFAULT_GITIGNORE`].
/// * `.gitattributes` clean filters and eol conversion apply as they would for `git add`.
/// * Symbolic links and nested git repositories are refused with an error; other special files
///   (fifos, sockets) are skipped, as git does.
///
/// Afterwards the index entries under `prefix` match the commit, with fresh stat data.
/// Returns the new commit id as hex, or `None` if the tree did not change (then no commit is
/// made; the index entries under `prefix` are still refreshed if they were out of date).
///
/// `repo_dir` may be anywhere inside the work tree; `prefix` is always relative to its root.
pub fn commit_dir(
    repo_dir: &Path,
    prefix: &str,
    message: &str,
    sig: &Signature,
) -> Result<Option<String>, GitError> {
    commit_dirs(repo_dir, &[prefix], message, sig)
}

/// Like [`commit_dir`], for several prefixes at once, all in one commit.
///
/// Prefixes must not be nested in each other; duplicates are ignored. An empty list commits
/// nothing and returns `None`.
pub fn commit_dirs(
    repo_dir: &Path,
    prefixes: &[&str],
    message: &str,
    sig: &Signature,
) -> Result<Option<String>, GitError> {
    commit_dirs_inner(repo_dir, prefixes, message, sig, None)
}

/// Take the toolsmith process lock of the repository at `repo_dir` (waits while a live writer
/// holds it; fails naming the holder after a while).
pub fn lock(repo_dir: &Path) -> Result<ProcessLock, GitError> {
    let repo = open(repo_dir)?;
    locks::lock_process(repo.common_dir())
}

fn commit_dirs_inner(
    repo_dir: &Path,
    prefixes: &[&str],
    message: &str,
    sig: &Signature,
    held: Option<&ProcessLock>,
) -> Result<Option<String>, GitError> {
    let own;
    let held = match held {
        Some(h) => h,
        None => {
            own = lock(repo_dir)?;
            &own
        }
    };
    let changes: Vec<(String, Source)> = prefixes
        .iter()
        .map(|p| (p.to_string(), Source::InPlace))
        .collect();
    let staged = stage_commit(held, repo_dir, &changes, message, sig, false)?;
    let id = staged.commit();
    staged.publish()?;
    Ok(id)
}

/// Commits reachable from `HEAD`, newest first (by commit time), at most `limit`.
///
/// With `prefix`, only commits whose tree entry at `prefix` differs from that of every parent
/// (for a root commit: exists) are listed – like `git log -- <prefix>` on linear history.
/// An unborn `HEAD` has an empty history.
#[cfg(test)]
mod tests;
