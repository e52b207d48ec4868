//! A commit in two steps, so that a caller can order its work for crash safety:
//! [`stage_commit`] builds the tree (from staged copies of directories, before they are moved
//! into place) and writes the commit object without moving any reference; [`Staged::publish`]
//! then moves the branch (compare-and-swap on the parent) and writes the index.

use super::*;
use std::path::PathBuf;

/// Where the new content of one prefix comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The files of this directory (outside the prefix, e.g. a hidden staging directory that
    /// is renamed to the prefix after [`Staged::publish`]).
    Dir(PathBuf),
    /// The prefix is removed.
    Remove,
    /// The directory at the prefix as it is on disk now (missing means removed).
    InPlace,
    /// One regular file: the prefix is a file path and its content is this (staged) file,
    /// renamed to the prefix after [`Staged::publish`].
    File(PathBuf),
}

/// How the new commit joins the branch's history.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Join {
    /// A new commit on top of HEAD (every ordinary write).
    #[default]
    OnHead,
    /// A merge: a new commit whose parents are HEAD (which must still be `ours`) and `other`;
    /// the tree built from the staged files must be exactly `tree` (the merge computed
    /// beforehand).
    Merge {
        /// The commit HEAD must still be.
        ours: String,
        /// The other parent.
        other: String,
        /// The merged tree, computed beforehand.
        tree: String,
    },
    /// A fast-forward: the branch moves from `ours` (which HEAD must still be) to `commit`, a
    /// descendant of it (checked by the caller), whose tree the tree built from the staged
    /// files must equal. No new commit.
    FastForward {
        /// The commit HEAD must still be.
        ours: String,
        /// The commit the branch moves to.
        commit: String,
    },
}

/// A commit written to the object database but not yet on the branch.
pub struct Staged<'l> {
    _held: &'l ProcessLock,
    repo: gix::Repository,
    workdir: PathBuf,
    index: gix::index::File,
    index_lock: gix::lock::File,
    parent: Option<ObjectId>,
    commit: Option<ObjectId>,
    index_changed: bool,
    sig: Signature,
    /// The action recorded in the reflog ("commit", "toolsmith sync", ...).
    reflog_action: String,
}

impl Staged<'_> {
    /// The new commit, or None when the tree did not change.
    pub fn commit(&self) -> Option<String> {
        self.commit.map(|c| c.to_hex().to_string())
    }

    /// The commit the branch points to now (the new commit's parent).
    pub fn parent(&self) -> Option<String> {
        self.parent.map(|c| c.to_hex().to_string())
    }

    /// Move the branch to the new commit (failing if it moved meanwhile) and write the index.
    pub fn publish(mut self) -> Result<(), GitError> {
        if let Some(commit) = self.commit {
            use gix::refs::transaction::{LogChange, PreviousValue, RefEdit, RefLog};
            let expected = match self.parent {
                Some(p) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(p)),
                None => PreviousValue::MustNotExist,
            };
            let head: gix::refs::FullName =
                "HEAD".try_into().map_err(|_| GitError::InvalidPath {
                    path: "HEAD".into(),
                    reason: "not a reference name",
                })?;
            let summary = self
                .repo
                .find_commit(commit)
                .ok()
                .and_then(|c| c.message().ok().map(|m| m.summary().to_string()))
                .unwrap_or_default();
            let edit = RefEdit {
                change: gix::refs::transaction::Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        message: format!(
                            "{}{}: {summary}",
                            self.reflog_action,
                            if self.parent.is_none() {
                                " (initial)"
                            } else {
                                ""
                            }
                        )
                        .into(),
                    },
                    expected,
                    new: gix::refs::Target::Object(commit),
                },
                name: head,
                deref: true,
            };
            let signature = gix::actor::Signature {
                name: self.sig.name.as_str().into(),
                email: self.sig.email.as_str().into(),
                time: gix::date::Time::now_local_or_utc(),
            };
            let mut time_buf = gix::date::parse::TimeBuf::default();
            self.repo
                .edit_references_as(Some(edit), Some(signature.to_ref(&mut time_buf)))
                .ctx(&self.workdir, || match self.parent {
                    Some(p) => format!("move HEAD from {p} to the new commit {commit}"),
                    None => "make the first commit on the unborn HEAD branch".into(),
                })?;
        }
        if self.index_changed {
            write_index(&self.repo, &self.workdir, &mut self.index, self.index_lock)?;
        }
        // else: dropping `index_lock` removes the lock file without touching the index.
        Ok(())
    }
}

/// Check the repository is in a state toolsmith writes in (see [`super::state`]).
pub fn check_write_state(repo_dir: &Path) -> Result<(), GitError> {
    let repo = open(repo_dir)?;
    state::check_writable(&repo).map(|_| ())
}

/// Build the tree in which each prefix gets its new content (on top of HEAD), write the
/// commit object and prepare the index — all under `held`, with `index.lock` taken (stale git
/// locks from dead processes are removed first). Nothing visible changes until
/// [`Staged::publish`]. With `strict`, unsafe git states (detached HEAD, a merge in progress,
/// conflicts in the index, …) are refused.
pub fn stage_commit<'l>(
    held: &'l ProcessLock,
    repo_dir: &Path,
    changes: &[(String, Source)],
    message: &str,
    sig: &Signature,
    strict: bool,
) -> Result<Staged<'l>, GitError> {
    stage_commit_joined(
        held,
        repo_dir,
        changes,
        message,
        sig,
        strict,
        &Join::OnHead,
        "commit",
    )
}

/// [`stage_commit`], joining history as `join` says (a merge commit with two parents, or a
/// fast-forward to an existing commit), with `reflog_action` in the reflog ("commit" for a
/// change made here; anything else marks content that came from elsewhere).
#[allow(clippy::too_many_arguments)]
pub fn stage_commit_joined<'l>(
    held: &'l ProcessLock,
    repo_dir: &Path,
    changes: &[(String, Source)],
    message: &str,
    sig: &Signature,
    strict: bool,
    join: &Join,
    reflog_action: &str,
) -> Result<Staged<'l>, GitError> {
    let message = normalize_message(message)?;
    check_signature(sig)?;
    let names: Vec<&str> = changes.iter().map(|(p, _)| p.as_str()).collect();
    let prefixes = normalize_prefixes(&names)?;
    let source_of = |prefix: &str| {
        changes
            .iter()
            .find(|(p, _)| p.trim_end_matches('/') == prefix)
            .map(|(_, s)| s.clone())
            .unwrap_or(Source::InPlace)
    };

    let repo = open(repo_dir)?;
    let workdir = workdir_of(&repo)?;
    let branch = if strict {
        Some(state::check_writable(&repo)?)
    } else {
        repo.head_name().ok().flatten().map(|n| n.to_string())
    };
    let index_path = repo.index_path();
    let mut resources = vec![index_path.clone(), repo.git_dir().join("HEAD")];
    if let Some(b) = &branch {
        resources.push(repo.common_dir().join(b));
    }
    locks::clear_git_locks(held, &workdir, repo.git_dir(), &resources)?;
    let index_lock = lock_index(&index_path)?;
    let index = read_index(&repo, &workdir, &index_path)?;
    if strict {
        state::check_no_conflicts(&index)?;
    }
    let mut index = index;

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
        let files = match source_of(prefix) {
            Source::Remove => Vec::new(),
            Source::InPlace => adder.scan_prefix(prefix, None, &index)?,
            Source::Dir(dir) => adder.scan_prefix(prefix, Some(&dir), &index)?,
            Source::File(file) => vec![adder.add_file(prefix, &file, &index)?],
        };
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

    let parse = |hex: &str| {
        ObjectId::from_hex(hex.as_bytes()).map_err(|_| GitError::InvalidPath {
            path: hex.to_string(),
            reason: "not a full commit or tree id",
        })
    };
    let moved = |ours: &str| -> Result<(), GitError> {
        let expected = parse(ours)?;
        if parent != Some(expected) {
            return Err(GitError::HeadMoved {
                expected: expected.to_string(),
                actual: parent.map(|p| p.to_string()).unwrap_or_default(),
            });
        }
        Ok(())
    };
    let commit = match join {
        Join::OnHead if tree == base_tree => None,
        Join::OnHead => Some(sign::write_commit(
            &repo,
            &workdir,
            sig,
            &message,
            tree,
            parent.as_slice(),
        )?),
        Join::Merge {
            ours,
            other,
            tree: expected,
        } => {
            moved(ours)?;
            let expected = parse(expected)?;
            if tree != expected {
                return Err(GitError::TreeMismatch {
                    expected: expected.to_string(),
                    built: tree.to_string(),
                });
            }
            let mut parents: Vec<ObjectId> = parent.into_iter().collect();
            parents.push(parse(other)?);
            Some(sign::write_commit(
                &repo, &workdir, sig, &message, tree, &parents,
            )?)
        }
        Join::FastForward { ours, commit } => {
            moved(ours)?;
            let id = parse(commit)?;
            let theirs = repo
                .find_commit(id)
                .and_then(|c| c.tree_id())
                .ctx(&workdir, || format!("read the tree of commit {id}"))?
                .detach();
            if tree != theirs {
                return Err(GitError::TreeMismatch {
                    expected: theirs.to_string(),
                    built: tree.to_string(),
                });
            }
            Some(id)
        }
    };
    let index_changed = replace_index_entries(&mut index, &prefixes, &populated, &added);
    Ok(Staged {
        _held: held,
        repo,
        workdir,
        index,
        index_lock,
        parent,
        commit,
        index_changed,
        sig: sig.clone(),
        reflog_action: reflog_action.to_string(),
    })
}

/// The commit a branch (full name, e.g. `refs/heads/main`) points to, or None.
pub fn branch_target(repo_dir: &Path, branch: &str) -> Result<Option<String>, GitError> {
    let repo = open(repo_dir)?;
    let workdir = workdir_of(&repo)?;
    let r = repo
        .try_find_reference(branch)
        .ctx(&workdir, || format!("read {branch}"))?;
    Ok(r.and_then(|mut r| r.peel_to_id().ok().map(|id| id.to_hex().to_string())))
}

/// Make the index entries under `prefixes` (directories, or single files) match the files on
/// disk (no commit): used after a crash between moving a branch and writing the index.
pub fn refresh_index(
    held: &ProcessLock,
    repo_dir: &Path,
    prefixes: &[&str],
) -> Result<(), GitError> {
    let prefixes = normalize_prefixes(prefixes)?;
    if prefixes.is_empty() {
        return Ok(());
    }
    let repo = open(repo_dir)?;
    let workdir = workdir_of(&repo)?;
    let index_path = repo.index_path();
    locks::clear_git_locks(
        held,
        &workdir,
        repo.git_dir(),
        std::slice::from_ref(&index_path),
    )?;
    let lock = lock_index(&index_path)?;
    let mut index = read_index(&repo, &workdir, &index_path)?;
    let mut adder = FileAdder::new(&repo, &workdir, &index)?;
    let mut added = Vec::new();
    let mut populated = Vec::new();
    for prefix in &prefixes {
        // A top-level file an integration wrote is a prefix too.
        let abs = workdir.join(prefix);
        let is_file = std::fs::symlink_metadata(&abs).is_ok_and(|m| m.is_file());
        let files = if is_file {
            vec![adder.add_file(prefix, &abs, &index)?]
        } else {
            adder.scan_prefix(prefix, None, &index)?
        };
        if !files.is_empty() {
            populated.push(prefix.clone());
        }
        added.extend(files);
    }
    drop(adder);
    if replace_index_entries(&mut index, &prefixes, &populated, &added) {
        write_index(&repo, &workdir, &mut index, lock)?;
    }
    Ok(())
}
