//! Small repository helpers: the work tree, HEAD, commits, and moving HEAD.

use super::*;

// ---------------------------------------------------------------------------------------------
// Repository helpers
// ---------------------------------------------------------------------------------------------

pub(super) fn workdir_of(repo: &gix::Repository) -> Result<PathBuf, GitError> {
    repo.workdir()
        .map(Path::to_owned)
        .ok_or_else(|| GitError::NoWorkTree {
            path: repo.git_dir().to_owned(),
        })
}

/// `gix::init` honours `init.defaultBranch`; a toolbox always starts on `main`.
pub(super) fn ensure_head_is_main(repo: &gix::Repository, workdir: &Path) -> Result<(), GitError> {
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
pub(super) fn head_commit_id(
    repo: &gix::Repository,
    workdir: &Path,
) -> Result<Option<ObjectId>, GitError> {
    let head = repo.head().ctx(workdir, || "read HEAD".into())?;
    Ok(head.id().map(|id| id.detach()))
}

pub(super) fn resolve_commit(repo: &gix::Repository, rev: &str) -> Result<ObjectId, GitError> {
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
pub(super) fn entry_at_commit(
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

/// A commit's id, author, time and message, as history shows them.
pub fn commit_info(commit: &gix::Commit<'_>, workdir: &Path) -> Result<CommitInfo, GitError> {
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
pub(super) fn commit_head(
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
