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

use std::collections::HashMap;
use std::fs::OpenOptions;
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
    pub name: String,
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
    #[error("could not lock {}; hint: another git process may be using the repository - if none is, delete this stale lock file", path.display())]
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
        let file = adder.add_file(path, &index)?;
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

/// Like [`commit_dirs`], for a caller that already holds the process lock (see [`lock`]),
/// e.g. to move a directory into place and commit it as one locked step.
pub fn commit_dirs_locked(
    held: &ProcessLock,
    repo_dir: &Path,
    prefixes: &[&str],
    message: &str,
    sig: &Signature,
) -> Result<Option<String>, GitError> {
    commit_dirs_inner(repo_dir, prefixes, message, sig, Some(held))
}

/// Proof that this process holds the toolsmith lock of a repository; released on drop.
#[derive(Debug)]
pub struct ProcessLock(#[allow(dead_code)] std::fs::File);

/// Take the toolsmith process lock of the repository at `repo_dir` (blocks until free).
pub fn lock(repo_dir: &Path) -> Result<ProcessLock, GitError> {
    let repo = open(repo_dir)?;
    Ok(ProcessLock(lock_process(repo.common_dir())?))
}

fn commit_dirs_inner(
    repo_dir: &Path,
    prefixes: &[&str],
    message: &str,
    sig: &Signature,
    held: Option<&ProcessLock>,
) -> Result<Option<String>, GitError> {
    let message = normalize_message(message)?;
    check_signature(sig)?;
    let prefixes = normalize_prefixes(prefixes)?;
    if prefixes.is_empty() {
        return Ok(None);
    }

    let repo = open(repo_dir)?;
    let workdir = workdir_of(&repo)?;

    // Lock order: process lock, then index.lock. Both are released on drop, also on error.
    let _process_lock = match held {
        Some(_) => None,
        None => Some(lock_process(repo.common_dir())?),
    };
    let index_path = repo.index_path();
    let index_lock = lock_index(&index_path)?;
    let mut index = read_index(&repo, &workdir, &index_path)?;

    // Read HEAD only now that we hold the locks, so that it cannot move under us (except by a
    // non-toolsmith writer that ignores index.lock, which `commit_head` detects).
    let parent = head_commit_id(&repo, &workdir)?;
    let base_tree = match parent {
        Some(id) => repo
            .find_commit(id)
            .and_then(|c| c.tree_id())
            .ctx(&workdir, || format!("read the tree of HEAD commit {id}"))?
            .detach(),
        None => ObjectId::empty_tree(repo.object_hash()),
    };

    let mut adder = FileAdder::new(&repo, &workdir, &index)?;
    let mut editor = TreeEditor::new(&repo, &workdir, base_tree)?;
    let mut added = Vec::new();
    let mut populated = Vec::new();
    for prefix in &prefixes {
        editor.remove(prefix)?;
        let files = adder.scan_prefix(prefix, &index)?;
        if !files.is_empty() {
            populated.push(prefix.clone());
        }
        for file in files {
            editor.upsert(&file)?;
            added.push(file);
        }
    }
    drop(adder);
    let tree = editor.write(&format!("the tree for {}", prefixes.join(", ")))?;

    let commit = if tree == base_tree {
        None
    } else {
        Some(commit_head(&repo, &workdir, sig, &message, tree, parent)?)
    };

    if replace_index_entries(&mut index, &prefixes, &populated, &added) {
        write_index(&repo, &workdir, &mut index, index_lock)?;
    }
    // else: dropping `index_lock` removes the lock file without touching the index.
    Ok(commit.map(|id| id.to_hex().to_string()))
}

/// Commits reachable from `HEAD`, newest first (by commit time), at most `limit`.
///
/// With `prefix`, only commits whose tree entry at `prefix` differs from that of every parent
/// (for a root commit: exists) are listed – like `git log -- <prefix>` on linear history.
/// An unborn `HEAD` has an empty history.
pub fn log(
    repo_dir: &Path,
    prefix: Option<&str>,
    limit: usize,
) -> Result<Vec<CommitInfo>, GitError> {
    let prefix = prefix.map(normalize_rela_path).transpose()?;
    let mut repo = open(repo_dir)?;
    // The walk decodes each commit, and `commit_info` reads it again.
    repo.object_cache_size_if_unset(4 * 1024 * 1024);
    let workdir = workdir_of(&repo)?;
    let Some(head) = head_commit_id(&repo, &workdir)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    if limit == 0 {
        return Ok(out);
    }
    let walk = repo
        .rev_walk([head])
        .sorting(gix::revision::walk::Sorting::ByCommitTime(
            gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
        ))
        .all()
        .ctx(&workdir, || format!("walk the history of {head}"))?;

    // Entry at `prefix` per commit; in linear history every commit is looked up twice
    // (as itself and as a parent), so remember the answers.
    let mut entry_cache: HashMap<ObjectId, Option<(ObjectId, EntryMode)>> = HashMap::new();
    for info in walk {
        let info = info.ctx(&workdir, || format!("walk the history of {head}"))?;
        let id = info.id;
        if let Some(prefix) = &prefix {
            let mine = entry_at_commit(&repo, &workdir, id, prefix, &mut entry_cache)?;
            let parents: Vec<ObjectId> = info.parent_ids().map(|p| p.detach()).collect();
            let touched = if parents.is_empty() {
                mine.is_some()
            } else {
                let mut touched = true;
                for parent in parents {
                    if entry_at_commit(&repo, &workdir, parent, prefix, &mut entry_cache)? == mine {
                        touched = false;
                        break;
                    }
                }
                touched
            };
            // Each commit is visited once; keep the cache from growing without bound on
            // long histories by forgetting what no later parent lookup can need.
            entry_cache.remove(&id);
            if !touched {
                continue;
            }
        }
        let commit = repo
            .find_commit(id)
            .ctx(&workdir, || format!("read commit {id}"))?;
        out.push(commit_info(&commit, &workdir)?);
        if out.len() >= limit {
            break;
        }
    }
    Ok(out)
}

/// Resolve a revision (`HEAD`, `HEAD~2`, a branch or tag, a unique hex prefix, …) to the full
/// hex id of the commit it names (tags are peeled).
pub fn resolve(repo_dir: &Path, rev: &str) -> Result<String, GitError> {
    let repo = open(repo_dir)?;
    Ok(resolve_commit(&repo, rev)?.to_hex().to_string())
}

/// The files under `prefix` (`""` for the whole tree) in commit `rev`: path relative to
/// `prefix`, contents as stored in git, executable bit; sorted by path. Empty if `prefix` does
/// not exist in that commit. Symbolic links and submodules are reported as errors rather than
/// silently dropped.
pub fn read_tree_at(
    repo_dir: &Path,
    rev: &str,
    prefix: &str,
) -> Result<Vec<(String, Vec<u8>, bool)>, GitError> {
    let prefix = if prefix.trim_matches('/').is_empty() {
        String::new()
    } else {
        normalize_rela_path(prefix)?
    };
    let repo = open(repo_dir)?;
    let workdir = workdir_of(&repo)?;
    let commit_id = resolve_commit(&repo, rev)?;
    let root = repo
        .find_commit(commit_id)
        .and_then(|c| c.tree())
        .ctx(&workdir, || format!("read the tree of commit {commit_id}"))?;
    let tree = if prefix.is_empty() {
        root
    } else {
        let Some(entry) = root
            .lookup_entry(prefix.split('/').map(str::as_bytes))
            .ctx(&workdir, || {
                format!("look up {prefix} in commit {commit_id}")
            })?
        else {
            return Ok(Vec::new());
        };
        if !entry.mode().is_tree() {
            return Err(GitError::NotATreeAt {
                rev: rev.to_owned(),
                path: prefix,
            });
        }
        repo.find_tree(entry.object_id()).ctx(&workdir, || {
            format!("read tree {prefix} in commit {commit_id}")
        })?
    };

    let records = tree.traverse().breadthfirst.files().ctx(&workdir, || {
        format!("list the files under {prefix:?} in commit {commit_id}")
    })?;
    let mut out = Vec::with_capacity(records.len());
    for rec in records {
        let kind = match rec.mode.kind() {
            EntryKind::Tree => continue,
            EntryKind::Blob | EntryKind::BlobExecutable => rec.mode.kind(),
            other => {
                return Err(GitError::UnsupportedEntry {
                    rev: rev.to_owned(),
                    path: join_rela(&prefix, &rec.filepath.to_str_lossy()),
                    kind: if other == EntryKind::Link {
                        "symbolic link"
                    } else {
                        "submodule"
                    },
                });
            }
        };
        let path = rec.filepath.to_str().map_err(|_| GitError::InvalidPath {
            path: join_rela(&prefix, &rec.filepath.to_str_lossy()),
            reason: "the path stored in git is not valid UTF-8",
        })?;
        let data = repo
            .find_blob(rec.oid)
            .ctx(&workdir, || {
                format!(
                    "read blob {} ({}) in commit {commit_id}",
                    rec.oid,
                    join_rela(&prefix, path)
                )
            })?
            .take_data();
        out.push((path.to_owned(), data, kind == EntryKind::BlobExecutable));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/// Validate a repo-relative path and return it without a trailing `/`.
fn normalize_rela_path(path: &str) -> Result<String, GitError> {
    let invalid = |reason| GitError::InvalidPath {
        path: path.to_owned(),
        reason,
    };
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    if trimmed.is_empty() {
        return Err(invalid("the path is empty"));
    }
    if trimmed.starts_with('/') {
        return Err(invalid("the path must be relative to the repository root"));
    }
    if trimmed.contains('\\') || trimmed.contains('\0') {
        return Err(invalid(
            "the path must be '/'-separated and must not contain NUL",
        ));
    }
    for component in trimmed.split('/') {
        match component {
            "" => return Err(invalid("the path contains an empty component")),
            "." | ".." => return Err(invalid("the path must not contain '.' or '..' components")),
            c if c.eq_ignore_ascii_case(".git") => {
                return Err(invalid("the path must not contain a .git component"));
            }
            _ => {}
        }
    }
    Ok(trimmed.to_owned())
}

fn normalize_prefixes(prefixes: &[&str]) -> Result<Vec<String>, GitError> {
    let mut out: Vec<String> = prefixes
        .iter()
        .map(|p| normalize_rela_path(p))
        .collect::<Result<_, _>>()?;
    out.sort();
    out.dedup();
    for pair in out.windows(2) {
        if is_ancestor_or_self(&pair[0], &pair[1]) {
            return Err(GitError::InvalidPath {
                path: pair[1].clone(),
                reason: "the prefix lies inside another prefix of the same commit",
            });
        }
    }
    Ok(out)
}

/// `true` if `path` is `ancestor` or lies below it.
fn is_ancestor_or_self(ancestor: &str, path: &str) -> bool {
    path.strip_prefix(ancestor)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn normalize_message(message: &str) -> Result<String, GitError> {
    let trimmed = message.trim_end();
    if trimmed.trim().is_empty() {
        return Err(GitError::InvalidMessage {
            reason: "the message is empty",
        });
    }
    if trimmed.contains('\0') {
        return Err(GitError::InvalidMessage {
            reason: "the message contains a NUL byte",
        });
    }
    // Like `git commit`: no trailing blank lines, exactly one final newline.
    Ok(format!("{trimmed}\n"))
}

fn check_signature(sig: &Signature) -> Result<(), GitError> {
    let invalid = |reason| GitError::InvalidSignature {
        name: sig.name.clone(),
        email: sig.email.clone(),
        reason,
    };
    if sig.name.trim().is_empty() {
        return Err(invalid("the name is empty"));
    }
    let bad = |s: &str| s.contains(['<', '>', '\n', '\0']);
    if bad(&sig.name) || bad(&sig.email) {
        return Err(invalid(
            "name and email must not contain '<', '>', newlines or NUL",
        ));
    }
    Ok(())
}

fn join_rela(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_owned()
    } else {
        format!("{prefix}/{path}")
    }
}

// ---------------------------------------------------------------------------------------------
// Repository helpers
// ---------------------------------------------------------------------------------------------

fn workdir_of(repo: &gix::Repository) -> Result<PathBuf, GitError> {
    repo.workdir()
        .map(Path::to_owned)
        .ok_or_else(|| GitError::NoWorkTree {
            path: repo.git_dir().to_owned(),
        })
}

/// `gix::init` honours `init.defaultBranch`; a toolbox always starts on `main`.
fn ensure_head_is_main(repo: &gix::Repository, workdir: &Path) -> Result<(), GitError> {
    use gix::refs::transaction::{PreviousValue, RefEdit};
    const MAIN: &str = "refs/heads/main";
    let head = repo.head().ctx(workdir, || "read HEAD".into())?;
    if head
        .referent_name()
        .is_some_and(|name| name.as_bstr() == MAIN)
    {
        return Ok(());
    }
    let head_name: gix::refs::FullName = "HEAD".try_into().expect("HEAD is a valid reference name");
    let main: gix::refs::FullName = MAIN
        .try_into()
        .expect("refs/heads/main is a valid reference name");
    repo.edit_reference(RefEdit::update(
        head_name,
        gix::refs::Target::Symbolic(main),
        PreviousValue::Any,
        "",
    ))
    .ctx(workdir, || format!("point HEAD at {MAIN}"))?;
    Ok(())
}

/// The commit `HEAD` points to, or `None` for an unborn branch.
fn head_commit_id(repo: &gix::Repository, workdir: &Path) -> Result<Option<ObjectId>, GitError> {
    let head = repo.head().ctx(workdir, || "read HEAD".into())?;
    Ok(head.id().map(|id| id.detach()))
}

fn resolve_commit(repo: &gix::Repository, rev: &str) -> Result<ObjectId, GitError> {
    let unknown = |source| GitError::UnknownRevision {
        rev: rev.to_owned(),
        repo: repo.workdir().unwrap_or(repo.git_dir()).to_owned(),
        source,
    };
    let id = repo.rev_parse_single(rev).map_err(unknown)?;
    let commit = id
        .object()
        .and_then(|o| o.peel_to_commit())
        .map_err(unknown)?;
    Ok(commit.id)
}

/// Tree entry (id and mode) at `prefix` in commit `id`, memoized in `cache`.
fn entry_at_commit(
    repo: &gix::Repository,
    workdir: &Path,
    id: ObjectId,
    prefix: &str,
    cache: &mut HashMap<ObjectId, Option<(ObjectId, EntryMode)>>,
) -> Result<Option<(ObjectId, EntryMode)>, GitError> {
    if let Some(hit) = cache.get(&id) {
        return Ok(*hit);
    }
    let tree = repo
        .find_commit(id)
        .and_then(|c| c.tree())
        .ctx(workdir, || format!("read the tree of commit {id}"))?;
    let entry = tree
        .lookup_entry(prefix.split('/').map(str::as_bytes))
        .ctx(workdir, || format!("look up {prefix} in commit {id}"))?
        .map(|e| (e.object_id(), e.mode()));
    cache.insert(id, entry);
    Ok(entry)
}

fn commit_info(commit: &gix::Commit<'_>, workdir: &Path) -> Result<CommitInfo, GitError> {
    let id = commit.id;
    let author = commit
        .author()
        .ctx(workdir, || format!("decode the author of commit {id}"))?;
    let message = commit
        .message_raw()
        .ctx(workdir, || format!("decode the message of commit {id}"))?;
    let summary = commit
        .message()
        .ctx(workdir, || format!("decode the message of commit {id}"))?
        .summary();
    Ok(CommitInfo {
        id: id.to_hex().to_string(),
        time: author.seconds(),
        author: author.name.trim().to_str_lossy().into_owned(),
        email: author.email.trim().to_str_lossy().into_owned(),
        summary: summary.to_str_lossy().into_owned(),
        message: message
            .to_str_lossy()
            .trim_end_matches(['\n', '\r'])
            .to_owned(),
    })
}

/// Commit `tree` on top of `parent` and move `HEAD` (through to its branch) to it.
/// Fails if `HEAD` no longer points to `parent`.
fn commit_head(
    repo: &gix::Repository,
    workdir: &Path,
    sig: &Signature,
    message: &str,
    tree: ObjectId,
    parent: Option<ObjectId>,
) -> Result<ObjectId, GitError> {
    let signature = gix::actor::Signature {
        name: sig.name.as_str().into(),
        email: sig.email.as_str().into(),
        time: gix::date::Time::now_local_or_utc(),
    };
    let mut time_buf = gix::date::parse::TimeBuf::default();
    let sig_ref = signature.to_ref(&mut time_buf);
    let id = repo
        .commit_as(sig_ref, sig_ref, "HEAD", message, tree, parent)
        .ctx(workdir, || match parent {
            Some(p) => format!("commit on top of {p} and update HEAD"),
            None => "make the first commit on the unborn HEAD branch".into(),
        })?;
    Ok(id.detach())
}

// ---------------------------------------------------------------------------------------------
// Locks and the index
// ---------------------------------------------------------------------------------------------

/// Serialize toolsmith writers of this repository (threads and processes alike): `flock` on
/// `<common-dir>/toolsmith.lock`, released when the returned file is dropped. The file itself
/// is never deleted (deleting a flock'ed file races with the next locker).
fn lock_process(common_dir: &Path) -> Result<std::fs::File, GitError> {
    let path = common_dir.join(PROCESS_LOCK_FILE);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io_err("open lock file", &path))?;
    file.lock().map_err(io_err("lock", &path))?;
    Ok(file)
}

/// Take `index.lock` like git does; it is removed again when dropped without commit.
fn lock_index(index_path: &Path) -> Result<gix::lock::File, GitError> {
    gix::lock::File::acquire_to_update_resource(
        index_path,
        gix::lock::acquire::Fail::AfterDurationWithBackoff(INDEX_LOCK_TIMEOUT),
        None,
        0,
    )
    .map_err(|source| GitError::Lock {
        path: index_path.with_file_name("index.lock"),
        source,
    })
}

/// Read the index fresh from disk (not gix's shared snapshot), or start an empty one.
fn read_index(
    repo: &gix::Repository,
    workdir: &Path,
    index_path: &Path,
) -> Result<gix::index::File, GitError> {
    if index_path.exists() {
        repo.open_index().ctx(workdir, || {
            format!("read the index {}", index_path.display())
        })
    } else {
        Ok(gix::index::File::from_state(
            gix::index::State::new(repo.object_hash()),
            index_path.to_owned(),
        ))
    }
}

/// Make the index entries under `prefixes` exactly `added`. Entries that are an ancestor of a
/// `populated` prefix (a file where the tree editor now put a directory) are dropped too.
/// Returns `false` if the entries already were `added`, stat data included, so that the index
/// need not be written.
fn replace_index_entries(
    index: &mut gix::index::File,
    prefixes: &[String],
    populated: &[String],
    added: &[AddedFile],
) -> bool {
    let covered = |path: &BStr| {
        let Ok(path) = path.to_str() else {
            return false;
        };
        prefixes.iter().any(|p| is_ancestor_or_self(p, path))
            || populated.iter().any(|p| is_ancestor_or_self(path, p))
    };
    let mut old: Vec<_> = index
        .entries()
        .iter()
        .filter_map(|e| {
            let path = e.path(index);
            covered(path).then(|| (path.to_owned(), e.id, e.mode, e.stat, e.stage()))
        })
        .collect();
    let mut new: Vec<_> = added
        .iter()
        .map(|f| {
            (
                f.path.clone(),
                f.id,
                index_mode(f.kind),
                f.stat,
                gix::index::entry::Stage::Unconflicted,
            )
        })
        .collect();
    old.sort_by(|a, b| a.0.cmp(&b.0));
    new.sort_by(|a, b| a.0.cmp(&b.0));
    if old == new {
        return false;
    }

    index.remove_entries(|_, path, _| covered(path));
    for f in added {
        index.dangerously_push_entry(
            f.stat,
            f.id,
            gix::index::entry::Flags::empty(),
            index_mode(f.kind),
            f.path.as_bstr(),
        );
    }
    index.sort_entries();
    true
}

fn index_mode(kind: EntryKind) -> gix::index::entry::Mode {
    match kind {
        EntryKind::BlobExecutable => gix::index::entry::Mode::FILE_EXECUTABLE,
        _ => gix::index::entry::Mode::FILE,
    }
}

/// Write `index` into the held `index.lock` (buffered) and move it into place. The cache-tree
/// extension is dropped first: gix writes it as-is, and a stale one corrupts later git commits.
fn write_index(
    repo: &gix::Repository,
    workdir: &Path,
    index: &mut gix::index::File,
    lock: gix::lock::File,
) -> Result<(), GitError> {
    let lock_path = lock.lock_path().to_owned();
    index.remove_tree();
    let skip_hash = repo
        .config_snapshot()
        .boolean("index.skipHash")
        .unwrap_or(false);
    let mut out = BufWriter::with_capacity(64 * 1024, lock);
    index
        .write_to(
            &mut out,
            gix::index::write::Options {
                extensions: Default::default(),
                skip_hash,
            },
        )
        .ctx(workdir, || {
            format!("write the index to {}", lock_path.display())
        })?;
    let lock = out.into_inner().map_err(|e| GitError::Io {
        action: "flush",
        path: lock_path.clone(),
        source: e.into_error(),
    })?;
    lock.commit().map_err(|e| GitError::Io {
        action: "move the new index into place from",
        path: lock_path,
        source: e.error,
    })?;
    Ok(())
}

/// Edits a tree with gix's plumbing editor.
///
/// gix's high-level `tree::Editor::write` checks that *every* entry of every written tree
/// exists in the object database – one lookup (a `stat` for loose objects) per entry, ~10 ms
/// for a `tools/` tree with 1,000 tools. Here entries either come from an existing tree or are
/// blobs just written, so only the names of added files are validated (in [`FileAdder`]).
struct TreeEditor<'repo> {
    repo: &'repo gix::Repository,
    workdir: &'repo Path,
    inner: gix::objs::tree::Editor<'repo>,
}

impl<'repo> TreeEditor<'repo> {
    fn new(
        repo: &'repo gix::Repository,
        workdir: &'repo Path,
        base: ObjectId,
    ) -> Result<Self, GitError> {
        let inner = repo
            .edit_tree(base)
            .ctx(workdir, || format!("start editing tree {base}"))?
            .detach();
        Ok(TreeEditor {
            repo,
            workdir,
            inner,
        })
    }

    fn remove(&mut self, rela: &str) -> Result<(), GitError> {
        self.inner
            .remove(rela.split('/'))
            .ctx(self.workdir, || format!("remove {rela} from the tree"))?;
        Ok(())
    }

    fn upsert(&mut self, file: &AddedFile) -> Result<(), GitError> {
        self.inner
            .upsert(file.path.split_str("/"), file.kind, file.id)
            .ctx(self.workdir, || format!("add {} to the tree", file.path))?;
        Ok(())
    }

    /// Write all changed trees; returns the root tree id.
    fn write(&mut self, what: &str) -> Result<ObjectId, GitError> {
        let repo = self.repo;
        self.inner
            .write(|tree| repo.write_object(tree).map(|id| id.detach()))
            .ctx(self.workdir, || format!("write {what}"))
    }
}

// ---------------------------------------------------------------------------------------------
// Turning work-tree files into blobs
// ---------------------------------------------------------------------------------------------

/// A work-tree file written to the object database.
struct AddedFile {
    /// Repo-relative path.
    path: BString,
    kind: EntryKind,
    id: ObjectId,
    stat: gix::index::entry::Stat,
}

/// Writes work-tree files as blobs, deciding what is ignored like git does.
struct FileAdder<'repo> {
    repo: &'repo gix::Repository,
    workdir: &'repo Path,
    excludes: gix::AttributeStack<'repo>,
    filters: gix::filter::Pipeline<'repo>,
}

impl<'repo> FileAdder<'repo> {
    fn new(
        repo: &'repo gix::Repository,
        workdir: &'repo Path,
        index: &gix::index::State,
    ) -> Result<Self, GitError> {
        let excludes = repo
            .excludes(
                index,
                None,
                gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
            )
            .ctx(workdir, || {
                "load the ignore rules (.gitignore, info/exclude)".into()
            })?;
        // Like `repo.filter_pipeline()`, but with our freshly read index instead of a second read.
        let filters = repo
            .attributes_only(
                index,
                gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
            )
            .and_then(|attributes| gix::filter::Pipeline::new(repo, attributes.detach()))
            .ctx(workdir, || "load the filter rules (.gitattributes)".into())?;
        Ok(FileAdder {
            repo,
            workdir,
            excludes,
            filters,
        })
    }

    fn is_excluded(&mut self, rela: &str, is_dir: bool) -> Result<bool, GitError> {
        let mode = if is_dir {
            gix::index::entry::Mode::DIR
        } else {
            gix::index::entry::Mode::FILE
        };
        let platform = self
            .excludes
            .at_entry(rela, Some(mode))
            .ctx(self.workdir, || format!("check whether {rela} is ignored"))?;
        Ok(platform.is_excluded())
    }

    /// All committable files under `prefix`, or none if the directory is missing or ignored.
    fn scan_prefix(
        &mut self,
        prefix: &str,
        index: &gix::index::State,
    ) -> Result<Vec<AddedFile>, GitError> {
        // Every ancestor of the prefix must be a real directory (not a symlink) and not ignored.
        let mut ancestor = String::new();
        for component in prefix.split('/') {
            if !ancestor.is_empty() {
                ancestor.push('/');
            }
            ancestor.push_str(component);
            let abs = self.workdir.join(&ancestor);
            let meta = match std::fs::symlink_metadata(&abs) {
                Ok(meta) => meta,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(err) => return Err(io_err("inspect", abs)(err)),
            };
            if meta.file_type().is_symlink() {
                return Err(GitError::Symlink { path: abs });
            }
            if !meta.is_dir() {
                if ancestor == prefix {
                    return Err(GitError::NotADirectory { path: abs });
                }
                // A file where a parent directory of the prefix would be: nothing lives below.
                return Ok(Vec::new());
            }
            if self.is_excluded(&ancestor, true)? {
                return Ok(Vec::new());
            }
        }
        let mut out = Vec::new();
        self.scan_dir(prefix, index, &mut out)?;
        Ok(out)
    }

    fn scan_dir(
        &mut self,
        rela_dir: &str,
        index: &gix::index::State,
        out: &mut Vec<AddedFile>,
    ) -> Result<(), GitError> {
        let abs_dir = self.workdir.join(rela_dir);
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(&abs_dir).map_err(io_err("read directory", &abs_dir))? {
            let entry = entry.map_err(io_err("read directory", &abs_dir))?;
            let file_type = entry.file_type().map_err(io_err("inspect", entry.path()))?;
            let name = entry
                .file_name()
                .into_string()
                .map_err(|name| GitError::InvalidPath {
                    path: format!("{rela_dir}/{}", name.to_string_lossy()),
                    reason: "file names must be valid UTF-8",
                })?;
            entries.push((name, file_type));
        }
        // Sorted traversal keeps the ignore stack's directory pushes/pops minimal and the
        // order of work deterministic.
        entries.sort_by(|a, b| a.0.cmp(&b.0));

        for (name, file_type) in entries {
            let rela = format!("{rela_dir}/{name}");
            if name == ".git" {
                return Err(GitError::NestedRepository { path: abs_dir });
            }
            if file_type.is_dir() {
                if self.is_excluded(&rela, true)? {
                    continue;
                }
                self.scan_dir(&rela, index, out)?;
            } else if self.is_excluded(&rela, false)? {
                continue;
            } else if file_type.is_symlink() {
                return Err(GitError::Symlink {
                    path: self.workdir.join(&rela),
                });
            } else if file_type.is_file() {
                out.push(self.add_file(&rela, index)?);
            }
            // Fifos, sockets and devices are skipped, as git does.
        }
        Ok(())
    }

    /// Write the regular file at `rela` (repo-relative) as a blob, after clean filters.
    /// The stat data is taken *before* reading, so a concurrent change shows up as modified.
    fn add_file(&mut self, rela: &str, index: &gix::index::State) -> Result<AddedFile, GitError> {
        use gix::filter::plumbing::pipeline::convert::ToGitOutcome;

        for component in rela.split('/') {
            gix::validate::path::component(component.into(), None, PROTECT_OPTIONS).map_err(
                |_| GitError::InvalidPath {
                    path: rela.to_owned(),
                    reason: "git does not allow this file name (see core.protectNTFS)",
                },
            )?;
        }
        let abs = self.workdir.join(rela);
        let meta =
            gix::index::fs::Metadata::from_path_no_follow(&abs).map_err(io_err("inspect", &abs))?;
        if meta.is_symlink() {
            return Err(GitError::Symlink { path: abs });
        }
        if !meta.is_file() {
            return Err(GitError::InvalidPath {
                path: rela.to_owned(),
                reason: "not a regular file",
            });
        }
        let stat = gix::index::entry::Stat::from_fs(&meta).map_err(|err| GitError::Io {
            action: "read the modification time of",
            path: abs.clone(),
            source: std::io::Error::other(err),
        })?;
        let kind = if meta.is_executable() {
            EntryKind::BlobExecutable
        } else {
            EntryKind::Blob
        };

        let file = std::fs::File::open(&abs).map_err(io_err("open", &abs))?;
        let repo = self.repo;
        let workdir = self.workdir;
        let converted = self
            .filters
            .convert_to_git(file, Path::new(rela), index)
            .ctx(workdir, || {
                format!("apply .gitattributes filters to {rela}")
            })?;
        let id = match converted {
            ToGitOutcome::Unchanged(file) => repo.write_blob_stream(file),
            ToGitOutcome::Buffer(buf) => repo.write_blob(buf),
            ToGitOutcome::Process(read) => repo.write_blob_stream(read),
        }
        .ctx(workdir, || format!("store {rela} as a blob"))?
        .detach();

        Ok(AddedFile {
            path: rela.into(),
            kind,
            id,
            stat,
        })
    }
}

#[cfg(test)]
mod tests;
