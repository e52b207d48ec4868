//! The evidence a tool version is judged by, read from git: which commit brought it, whether
//! this machine's reflog shows that commit made here with `git commit`, and whether its SSH
//! signature verifies against an `allowed_signers` this machine accepts (with the `git` CLI:
//! `git log --format=%G?` under `gpg.ssh.allowedSignersFile`, exactly what `git verify-commit`
//! checks).

use super::TrustError;
use crate::toolbox::{ALLOWED_SIGNERS, Toolbox};
use std::path::Path;
use std::process::Command;

/// The commit that last changed a path.
#[derive(Debug, Clone)]
pub struct Commit {
    /// Its full id.
    pub id: String,
    /// How many parents it has (a merge has two or more).
    pub parents: usize,
    /// Its author.
    pub author: String,
    /// Its summary line.
    pub summary: String,
}

fn git(root: &Path, args: &[&str]) -> Result<String, TrustError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| TrustError::Git(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(TrustError::Git(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Commits reachable from `from` (`HEAD` or a full commit id) that changed `path`, newest
/// first (git's history simplification: a merge that took one side's version unchanged is
/// skipped for that side's commit), at most `limit`.
pub fn changes_of(
    root: &Path,
    from: &str,
    path: &str,
    limit: usize,
) -> Result<Vec<Commit>, TrustError> {
    if from.starts_with('-') {
        return Err(TrustError::Git(format!("not a revision: {from:?}")));
    }
    let n = format!("-{limit}");
    let out = git(
        root,
        &[
            "log",
            &n,
            "--format=%H%x00%P%x00%an%x00%s",
            from,
            "--",
            path,
        ],
    )?;
    Ok(out
        .lines()
        .filter_map(|l| {
            let p: Vec<&str> = l.split('\0').collect();
            match p.as_slice() {
                [id, parents, author, summary] => Some(Commit {
                    id: id.to_string(),
                    parents: parents.split_whitespace().count(),
                    author: author.to_string(),
                    summary: summary.to_string(),
                }),
                _ => None,
            }
        })
        .collect())
}

/// Whether HEAD's reflog shows `commit` made here by `git commit` (a person's own commit;
/// toolsmith's own writes are in its record instead, and a pull, merge, rebase or
/// cherry-pick is logged under another action).
pub fn committed_here(root: &Path, commit: &str) -> bool {
    let Ok(log) = std::fs::read_to_string(root.join(".git/logs/HEAD")) else {
        return false;
    };
    log.lines().any(|line| {
        let Some((head, action)) = line.split_once('\t') else {
            return false;
        };
        let new = head.split_whitespace().nth(1).unwrap_or("");
        new == commit
            && (action.starts_with("commit: ")
                || action.starts_with("commit (initial): ")
                || action.starts_with("commit (amend): "))
    })
}

/// Whether `commit` carries a signature at all (valid or not).
pub fn has_signature(root: &Path, commit: &str) -> bool {
    git(root, &["cat-file", "commit", commit]).is_ok_and(|text| {
        text.split("\n\n")
            .next()
            .is_some_and(|headers| headers.lines().any(|l| l.starts_with("gpgsig")))
    })
}

/// Who signed `commit`, when its signature verifies against `signers` (the text of an
/// allowed_signers file); None when unsigned, bad, or by a key not in it.
pub fn signed_by(root: &Path, commit: &str, signers: &[u8]) -> Result<Option<String>, TrustError> {
    if signers.is_empty() {
        return Ok(None);
    }
    let file = tempfile::NamedTempFile::new()
        .map_err(|e| TrustError::Git(format!("cannot write a temporary file: {e}")))?;
    std::fs::write(file.path(), signers)
        .map_err(|e| TrustError::Git(format!("cannot write a temporary file: {e}")))?;
    let config = format!("gpg.ssh.allowedSignersFile={}", file.path().display());
    let out = git(
        root,
        &["-c", &config, "log", "-1", "--format=%G?%x00%GS", commit],
    )?;
    let mut parts = out.trim_end().split('\0');
    Ok(match (parts.next(), parts.next()) {
        (Some("G"), Some(who)) => Some(who.to_string()),
        _ => None,
    })
}

/// The `allowed_signers` this machine accepts now: HEAD's version when it is recorded as
/// accepted; else, starting from the newest version that is, each later change is accepted
/// only when its commit was made here or is signed by a key of the last accepted version
/// (changes that are not are skipped). A teammate's account adding its own key without such a
/// signature changes nothing here.
pub fn effective_signers(tb: &Toolbox) -> Result<Vec<u8>, TrustError> {
    let root = tb.root();
    let trusted = tb.trusted();
    let Some(head) = crate::git::entry_id_at(root, "HEAD", ALLOWED_SIGNERS)? else {
        return Ok(Vec::new());
    };
    let read = |rev: &str| -> Result<Vec<u8>, TrustError> {
        Ok(crate::git::file_at(root, rev, ALLOWED_SIGNERS)?.unwrap_or_default())
    };
    if trusted.has_signers(&head) {
        return read("HEAD");
    }
    let commits = changes_of(root, "HEAD", ALLOWED_SIGNERS, 100)?;
    let versions: Vec<Option<String>> = commits
        .iter()
        .map(|c| {
            crate::git::entry_id_at(root, &c.id, ALLOWED_SIGNERS)
                .ok()
                .flatten()
        })
        .collect();
    let Some(k) = versions
        .iter()
        .position(|v| v.as_ref().is_some_and(|b| trusted.has_signers(b)))
    else {
        tracing::warn!(
            "{ALLOWED_SIGNERS} has no version this machine accepted; no signature is trusted (`toolsmith trust --signers` accepts the current one)"
        );
        return Ok(Vec::new());
    };
    let mut current = read(&commits[k].id)?;
    for j in (0..k).rev() {
        let c = &commits[j];
        let accepted = c.parents == 1
            && (committed_here(root, &c.id) || signed_by(root, &c.id, &current)?.is_some());
        if !accepted {
            // Skipped: a later change signed by an accepted key may still be accepted.
            tracing::warn!(
                commit = %c.id,
                "{ALLOWED_SIGNERS} was changed by a commit neither made here nor signed by an allowed key; that version is not used"
            );
            continue;
        }
        current = read(&c.id)?;
        if let Some(b) = &versions[j] {
            tb.record_signers(b)?;
        }
    }
    Ok(current)
}
