//! Git states in which toolsmith refuses to write: a detached or unborn HEAD, a missing branch,
//! an operation in progress (merge, rebase, cherry-pick, revert, bisect, am), or unresolved
//! conflicts in the index. Reading and calling tools never look here.

use super::GitError;
use gix::state::InProgress;

/// Why the repository cannot take a toolsmith commit now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsafeState {
    /// What the state is, e.g. "a merge is in progress".
    pub state: String,
    /// The git command(s) that end it.
    pub command: String,
}

/// Check that HEAD is a born branch and no operation is in progress.
/// Returns the full name of the branch HEAD points to.
pub fn check_writable(repo: &gix::Repository) -> Result<String, GitError> {
    let refuse = |state: String, command: &str| {
        GitError::UnsafeState(UnsafeState {
            state,
            command: command.to_string(),
        })
    };
    if let Some(op) = repo.state() {
        let (what, cmd) = match op {
            InProgress::Merge => (
                "a merge is in progress",
                "`git merge --abort`, or resolve the conflicts and `git commit`",
            ),
            InProgress::Rebase | InProgress::RebaseInteractive => (
                "a rebase is in progress",
                "`git rebase --abort` or `git rebase --continue`",
            ),
            InProgress::ApplyMailbox | InProgress::ApplyMailboxRebase => {
                ("`git am` is in progress", "`git am --abort`")
            }
            InProgress::CherryPick | InProgress::CherryPickSequence => (
                "a cherry-pick is in progress",
                "`git cherry-pick --abort` or `git cherry-pick --continue`",
            ),
            InProgress::Revert | InProgress::RevertSequence => (
                "a revert is in progress",
                "`git revert --abort` or `git revert --continue`",
            ),
            InProgress::Bisect => ("a bisect is in progress", "`git bisect reset`"),
        };
        return Err(refuse(what.to_string(), cmd));
    }
    let head = repo.head().map_err(|e| GitError::Git {
        action: "read HEAD".into(),
        repo: repo.git_dir().to_owned(),
        source: e,
    })?;
    match head.kind {
        gix::head::Kind::Symbolic(r) => Ok(r.name.as_bstr().to_string()),
        gix::head::Kind::Detached { target, .. } => Err(refuse(
            format!("HEAD is detached (at {})", target.to_hex_with_len(10)),
            "`git switch main` (or the branch you work on), or `git switch -c NEW-BRANCH` to keep commits made here",
        )),
        gix::head::Kind::Unborn(name) => Err(refuse(
            format!(
                "HEAD points to the branch {}, which does not exist (an unborn or deleted branch)",
                name.shorten()
            ),
            "`git switch main` (or another existing branch), or `git commit --allow-empty -m start` to begin this one",
        )),
    }
}

/// Refuse an index with unresolved conflict entries (left by e.g. `git stash pop`).
pub fn check_no_conflicts(index: &gix::index::State) -> Result<(), GitError> {
    if let Some(e) = index
        .entries()
        .iter()
        .find(|e| e.stage() != gix::index::entry::Stage::Unconflicted)
    {
        return Err(GitError::UnsafeState(UnsafeState {
            state: format!(
                "the index has unresolved conflicts (first: {})",
                e.path(index)
            ),
            command: "`git status` lists them: resolve and `git add` them, or `git checkout HEAD -- PATH`"
                .into(),
        }));
    }
    Ok(())
}
