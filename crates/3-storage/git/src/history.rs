//! Reading history: commits touching a prefix, revision lookup, and old trees.

use super::*;

/// The commits from HEAD (newest first, at most `limit`) that changed something under
/// `prefix`, each with what it changed there.
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

/// The root tree of `rev`: a commit (or anything peeling to one), or a tree id.
fn root_tree<'r>(
    repo: &'r gix::Repository,
    workdir: &Path,
    rev: &str,
) -> Result<(ObjectId, gix::Tree<'r>), GitError> {
    let unknown = |source| GitError::UnknownRevision {
        rev: rev.to_owned(),
        repo: workdir.to_owned(),
        source,
    };
    match resolve_commit(repo, rev) {
        Ok(id) => {
            let tree = repo
                .find_commit(id)
                .and_then(|c| c.tree())
                .ctx(workdir, || format!("read the tree of commit {id}"))?;
            Ok((id, tree))
        }
        Err(e) => {
            let Ok(id) = ObjectId::from_hex(rev.as_bytes()) else {
                return Err(e);
            };
            let tree = repo.find_tree(id).map_err(unknown)?;
            Ok((id, tree))
        }
    }
}

/// The files under `prefix` (`""` for the whole tree) in commit `rev` (or tree id): path relative to
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
    let (commit_id, root) = root_tree(&repo, &workdir, rev)?;
    let tree = if prefix.is_empty() {
        root
    } else {
        match subtree(&repo, &workdir, commit_id, &root, &prefix)? {
            Subtree::Tree(t) => t,
            Subtree::Missing => return Ok(Vec::new()),
            Subtree::NotATree => {
                return Err(GitError::NotATreeAt {
                    rev: rev.to_owned(),
                    path: prefix,
                });
            }
        }
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

/// What a path (not empty) names in a commit's tree.
enum Subtree<'r> {
    Tree(gix::Tree<'r>),
    Missing,
    NotATree,
}

/// Look `prefix` up in `root`, the tree of commit `commit_id`.
fn subtree<'r>(
    repo: &'r gix::Repository,
    workdir: &Path,
    commit_id: ObjectId,
    root: &gix::Tree<'r>,
    prefix: &str,
) -> Result<Subtree<'r>, GitError> {
    let Some(entry) = root
        .lookup_entry(prefix.split('/').map(str::as_bytes))
        .ctx(workdir, || {
            format!("look up {prefix} in commit {commit_id}")
        })?
    else {
        return Ok(Subtree::Missing);
    };
    if !entry.mode().is_tree() {
        return Ok(Subtree::NotATree);
    }
    let tree = repo.find_tree(entry.object_id()).ctx(workdir, || {
        format!("read tree {prefix} in commit {commit_id}")
    })?;
    Ok(Subtree::Tree(tree))
}

/// The files under `prefix` in HEAD (paths relative to `prefix`), each with whether it is
/// executable there and whether the work tree's file is, by git's own shortcut, unchanged:
/// its index entry has HEAD's blob id and mode, and the file on disk still has the stat data
/// (size, mtime and ctime to the nanosecond, inode, owner) the index recorded, recorded before
/// the index was written (not "racy"). What `git status` does not hash again. `false` means
/// only "compare the content", never "changed". No blob is read.
pub fn head_files_by_stat(
    repo_dir: &Path,
    prefix: &str,
) -> Result<Vec<(String, bool, bool)>, GitError> {
    use gix::index::entry::stat::Options;
    let prefix = normalize_rela_path(prefix)?;
    let repo = open(repo_dir)?;
    let workdir = workdir_of(&repo)?;
    let (commit_id, root) = root_tree(&repo, &workdir, "HEAD")?;
    let Subtree::Tree(tree) = subtree(&repo, &workdir, commit_id, &root, &prefix)? else {
        return Ok(Vec::new());
    };
    let records = tree.traverse().breadthfirst.files().ctx(&workdir, || {
        format!("list the files under {prefix} in commit {commit_id}")
    })?;
    let index_path = repo.index_path();
    let index = read_index(&repo, &workdir, &index_path)?;
    let options = Options {
        trust_ctime: true,
        check_stat: true,
        use_nsec: true,
        use_stdev: false,
    };
    let mut out = Vec::with_capacity(records.len());
    for rec in records {
        let kind = rec.mode.kind();
        if !matches!(kind, EntryKind::Blob | EntryKind::BlobExecutable) {
            continue;
        }
        let Ok(rel) = rec.filepath.to_str() else {
            continue;
        };
        let path = join_rela(&prefix, rel);
        let unchanged = index
            .entry_by_path(path.as_bytes().as_bstr())
            .filter(|e| e.id == rec.oid && e.mode == index_mode(kind))
            .filter(|e| !e.stat.is_racy(index.timestamp(), options))
            .is_some_and(|e| {
                gix::index::fs::Metadata::from_path_no_follow(&workdir.join(&path))
                    .ok()
                    .filter(|m| m.is_file())
                    .and_then(|m| gix::index::entry::Stat::from_fs(&m).ok())
                    .is_some_and(|now| e.stat.matches(&now, options))
            });
        out.push((rel.to_owned(), kind == EntryKind::BlobExecutable, unchanged));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Paths under `prefix` (repo-relative) that differ between HEAD, the index and the work tree,
/// untracked files included (like `git status`), sorted and deduplicated.
pub fn changed_paths(repo_dir: &Path, prefix: &str) -> Result<Vec<String>, GitError> {
    let prefix = normalize_rela_path(prefix)?;
    let repo = open(repo_dir)?;
    let workdir = workdir_of(&repo)?;
    let iter = repo
        .status(gix::progress::Discard)
        .ctx(&workdir, || "start a status".into())?
        .untracked_files(gix::status::UntrackedFiles::Files)
        .into_iter([BString::from(format!("{prefix}/"))])
        .ctx(&workdir, || format!("compute the status of {prefix}"))?;
    let mut out = Vec::new();
    for item in iter {
        let item = item.ctx(&workdir, || format!("compute the status of {prefix}"))?;
        let path = item.location().to_str_lossy().into_owned();
        if is_ancestor_or_self(&prefix, &path) {
            out.push(path);
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The object id (hex) of the entry at `path` (a tree for a directory, a blob for a file) in
/// commit `rev`, or None when the path does not exist there.
pub fn entry_id_at(repo_dir: &Path, rev: &str, path: &str) -> Result<Option<String>, GitError> {
    let path = normalize_rela_path(path)?;
    let repo = open(repo_dir)?;
    let workdir = workdir_of(&repo)?;
    let commit_id = resolve_commit(&repo, rev)?;
    let mut cache = HashMap::new();
    Ok(
        entry_at_commit(&repo, &workdir, commit_id, &path, &mut cache)?
            .map(|(id, _)| id.to_hex().to_string()),
    )
}

/// The subdirectories directly in tree `tree` (hex id): (name, tree id), in tree order.
pub fn tree_entries(repo_dir: &Path, tree: &str) -> Result<Vec<(String, String)>, GitError> {
    let repo = open(repo_dir)?;
    let workdir = workdir_of(&repo)?;
    let id = ObjectId::from_hex(tree.as_bytes()).map_err(|_| GitError::InvalidPath {
        path: tree.to_string(),
        reason: "not a full tree id",
    })?;
    let tree = repo
        .find_tree(id)
        .ctx(&workdir, || format!("read tree {id}"))?;
    let decoded = tree
        .decode()
        .ctx(&workdir, || format!("decode tree {id}"))?;
    Ok(decoded
        .entries
        .iter()
        .filter(|e| e.mode.is_tree())
        .map(|e| {
            (
                e.filename.to_str_lossy().into_owned(),
                e.oid.to_hex().to_string(),
            )
        })
        .collect())
}

/// The bytes of the file at `path` in commit `rev`, or None when it is not a file there.
pub fn file_at(repo_dir: &Path, rev: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
    let path = normalize_rela_path(path)?;
    let repo = open(repo_dir)?;
    let workdir = workdir_of(&repo)?;
    let (commit_id, root) = root_tree(&repo, &workdir, rev)?;
    let entry = root
        .lookup_entry(path.split('/').map(str::as_bytes))
        .ctx(&workdir, || format!("look up {path} in {commit_id}"))?;
    match entry {
        Some(e) if e.mode().is_blob() => Ok(Some(
            repo.find_blob(e.object_id())
                .ctx(&workdir, || format!("read {path} in {commit_id}"))?
                .take_data(),
        )),
        _ => Ok(None),
    }
}
