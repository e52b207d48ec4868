//! Talking to a remote and asking git about history, with the `git` CLI (as `share::export`
//! pushes: gix cannot push, and `git merge-tree --write-tree` merges without a work tree).
//! Everything here reads, fetches, pushes or writes unreferenced objects; no reference of the
//! toolbox and no file of its work tree is touched.

use super::SyncError;
use std::path::Path;
use std::process::Command;

/// Run git in `dir`; stdout on success, else the stderr in an error.
pub(super) fn git(dir: &Path, args: &[&str], action: &str) -> Result<String, SyncError> {
    let out = run(dir, args, None)?;
    if !out.status.success() {
        return Err(SyncError::Git {
            action: action.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// Run git in `dir` (optionally feeding stdin) and return the raw output.
pub(super) fn run(
    dir: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> Result<std::process::Output, SyncError> {
    use std::io::Write;
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(if stdin.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| SyncError::Git {
        action: args.first().copied().unwrap_or("git").to_string(),
        stderr: format!("cannot run git: {e}"),
    })?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let _ = pipe.write_all(text.as_bytes());
    }
    child.wait_with_output().map_err(|e| SyncError::Git {
        action: args.first().copied().unwrap_or("git").to_string(),
        stderr: format!("git did not finish: {e}"),
    })
}

/// Fetch `branch` of `remote`; the commit it points to, or None when the remote has no such
/// branch yet (an empty repository).
pub(super) fn fetch(dir: &Path, remote: &str, branch: &str) -> Result<Option<String>, SyncError> {
    let refspec = format!("refs/heads/{branch}");
    let out = run(
        dir,
        &["fetch", "--quiet", "--no-tags", "--", remote, &refspec],
        None,
    )?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if stderr.contains("couldn't find remote ref") {
            return Ok(None);
        }
        return Err(SyncError::Git {
            action: format!("fetch {branch} from {remote}"),
            stderr,
        });
    }
    Ok(Some(git(dir, &["rev-parse", "FETCH_HEAD"], "rev-parse")?))
}

/// Push HEAD to `branch` of `remote` (never forced). Ok(false) when the remote moved on
/// meanwhile (a non-fast-forward rejection): fetch and integrate again.
pub(super) fn push(dir: &Path, remote: &str, branch: &str) -> Result<bool, SyncError> {
    let refspec = format!("HEAD:refs/heads/{branch}");
    let out = run(
        dir,
        &["push", "--quiet", "--porcelain", remote, &refspec],
        None,
    )?;
    if out.status.success() {
        return Ok(true);
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if text.contains("[rejected]")
        || text.contains("non-fast-forward")
        || text.contains("fetch first")
    {
        return Ok(false);
    }
    Err(SyncError::Git {
        action: format!("push to {remote}"),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

/// Whether commit `a` is an ancestor of (or equal to) `b`.
pub(super) fn is_ancestor(dir: &Path, a: &str, b: &str) -> Result<bool, SyncError> {
    let out = run(dir, &["merge-base", "--is-ancestor", a, b], None)?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(SyncError::Git {
            action: "merge-base".into(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }),
    }
}

/// The merge of two commits, computed without touching the work tree or the index.
pub(super) struct Merged {
    /// The merged tree (with conflict markers in conflicted files).
    pub tree: String,
    /// The conflicted paths (empty for a clean merge).
    pub conflicts: Vec<String>,
}

pub(super) fn merge_tree(dir: &Path, ours: &str, theirs: &str) -> Result<Merged, SyncError> {
    let out = run(
        dir,
        &[
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            ours,
            theirs,
        ],
        None,
    )?;
    let code = out.status.code();
    if code != Some(0) && code != Some(1) {
        return Err(SyncError::Git {
            action: "merge-tree (git 2.38 or later is needed)".into(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let tree = lines.next().unwrap_or("").trim().to_string();
    let mut conflicts: Vec<String> = lines
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    conflicts.sort();
    conflicts.dedup();
    Ok(Merged { tree, conflicts })
}

/// Paths that differ between two trees or commits.
pub(super) fn changed_paths(dir: &Path, a: &str, b: &str) -> Result<Vec<String>, SyncError> {
    let out = git(
        dir,
        &["diff-tree", "-r", "--name-only", "--no-renames", a, b],
        "diff-tree",
    )?;
    Ok(out.lines().map(str::to_string).collect())
}

/// `git status --porcelain` restricted to `paths` (empty: nothing changed there).
pub(super) fn local_changes(dir: &Path, paths: &[String]) -> Result<Vec<String>, SyncError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec!["status", "--porcelain", "--untracked-files=all", "--"];
    args.extend(paths.iter().map(String::as_str));
    let out = git(dir, &args, "status")?;
    Ok(out.lines().map(|l| l.to_string()).collect())
}

/// The id of the entry at `path` in tree-ish `rev` ("" for its root tree), with its mode.
pub(super) fn entry(dir: &Path, rev: &str, path: &str) -> Result<Option<String>, SyncError> {
    let spec = format!("{rev}:{path}");
    let out = run(dir, &["rev-parse", "--verify", "--quiet", &spec], None)?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok((out.status.success() && !id.is_empty()).then_some(id))
}

/// Tree `tree` with the entry `name` replaced by `entry` (a `ls-tree` line's mode, type and
/// id), or removed (None); the new tree's id.
pub(super) fn replace_entry(
    dir: &Path,
    tree: &str,
    name: &str,
    entry: Option<&str>,
) -> Result<String, SyncError> {
    let listing = git(dir, &["ls-tree", "--full-tree", tree], "ls-tree")?;
    let mut lines: Vec<String> = listing
        .lines()
        .filter(|l| l.split('\t').nth(1) != Some(name))
        .map(str::to_string)
        .collect();
    if let Some(e) = entry {
        lines.push(format!("{e}\t{name}"));
    }
    let input = lines.join("\n") + "\n";
    let out = run(dir, &["mktree"], Some(&input))?;
    if !out.status.success() {
        return Err(SyncError::Git {
            action: "mktree".into(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The `ls-tree` line (mode, type, id) of `path` in tree-ish `rev`, without the name.
pub(super) fn ls_entry(dir: &Path, rev: &str, path: &str) -> Result<Option<String>, SyncError> {
    let out = git(dir, &["ls-tree", "--full-tree", rev, "--", path], "ls-tree")?;
    Ok(out
        .lines()
        .find(|l| l.split('\t').nth(1) == Some(path))
        .and_then(|l| l.split('\t').next())
        .map(str::to_string))
}

/// The newest commit reachable from `rev` touching `path`: (id, subject, author, time).
pub(super) fn last_change(
    dir: &Path,
    rev: &str,
    path: &str,
) -> Result<Option<(String, String, String, i64)>, SyncError> {
    let out = git(
        dir,
        &[
            "log",
            "-1",
            "--format=%H%x00%s%x00%an%x00%at",
            rev,
            "--",
            path,
        ],
        "log",
    )?;
    let parts: Vec<&str> = out.trim_end().split('\0').collect();
    Ok(match parts.as_slice() {
        [id, subject, author, time] if !id.is_empty() => Some((
            id.to_string(),
            subject.to_string(),
            author.to_string(),
            time.parse().unwrap_or(0),
        )),
        _ => None,
    })
}
