//! Publishing: push the toolbox, or a branch holding chosen tools, to a git remote (with the
//! `git` CLI: gix cannot push), and render a tool as a Gist-shaped JSON file (the body of a
//! `POST /gists` request: description, public, files → content).

use super::ShareError;
use crate::history::{self, write_files};
use crate::index::TOOLS_DIR;
use crate::names;
use crate::toolbox::Toolbox;
use serde::Serialize;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// What an export pushed.
#[derive(Debug, Clone, Serialize)]
pub struct ExportOutcome {
    /// The remote pushed to.
    pub remote: String,
    /// The branch pushed.
    pub branch: String,
    /// The commit the remote branch now points to.
    pub commit: String,
    /// The tools exported (all of them for a whole-toolbox export).
    pub tools: Vec<String>,
    /// Whether the whole toolbox was exported.
    pub whole_toolbox: bool,
}

fn git(dir: &Path, args: &[&str], action: &str) -> Result<String, ShareError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=toolsmith",
            "-c",
            "user.email=toolsmith@localhost",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| ShareError::GitCli {
            action: action.to_string(),
            stderr: format!("cannot run git: {e}"),
        })?;
    if !out.status.success() {
        return Err(ShareError::GitCli {
            action: action.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn check_remote(remote: &str, branch: &str) -> Result<(), ShareError> {
    let bad = |what: &str, v: &str| ShareError::Unsupported {
        what: format!("{what} {v:?}"),
        reason: "it must not be empty or start with '-'".into(),
    };
    if remote.is_empty() || remote.starts_with('-') {
        return Err(bad("remote", remote));
    }
    let ok_branch = !branch.is_empty()
        && !branch.starts_with('-')
        && !branch.contains("..")
        && branch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    if !ok_branch {
        return Err(bad("branch", branch));
    }
    Ok(())
}

/// Push to `remote` (a path, a bare repository or a URL) on `branch`: the whole toolbox
/// (its HEAD, with its commits: a receiver judges each version by them, as `sync` does) when
/// `tools` is empty, else a branch whose tree holds just those tools under `tools/` — built on
/// top of the remote branch when it exists, so repeated exports fast-forward; a held tool is
/// refused there. The push is never forced.
pub fn export_tools(
    tb: &Toolbox,
    tools: &[String],
    remote: &str,
    branch: &str,
) -> Result<ExportOutcome, ShareError> {
    check_remote(remote, branch)?;
    // A relative path means the same from the temporary work tree as from here.
    let local = Path::new(remote)
        .canonicalize()
        .ok()
        .filter(|_| !remote.contains("://"));
    let remote_owned = local
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| remote.to_string());
    let remote = remote_owned.as_str();
    let refspec = format!("HEAD:refs/heads/{branch}");
    if tools.is_empty() {
        git(tb.root(), &["push", "--quiet", remote, &refspec], "push")?;
        let commit = git(tb.root(), &["rev-parse", "HEAD"], "rev-parse")?;
        let all = crate::index::Index::build(tb.root())
            .entries()
            .map(|e| e.name.clone())
            .collect();
        return Ok(ExportOutcome {
            remote: remote.to_string(),
            branch: branch.to_string(),
            commit,
            tools: all,
            whole_toolbox: true,
        });
    }
    let head = crate::git::resolve(tb.root(), "HEAD").map_err(history::HistoryError::from)?;
    let mut files = Vec::new();
    for name in tools {
        names::validate(name).map_err(|source| ShareError::BadName {
            name: name.clone(),
            source,
        })?;
        not_held(tb, name)?;
        files.push((name.clone(), history::tool_at(tb, name, &head)?.files));
    }
    let tmp = tempfile::tempdir().map_err(super::io_err(
        "create a temporary directory",
        &std::env::temp_dir(),
    ))?;
    let work = tmp.path();
    git(work, &["init", "--quiet"], "init")?;
    let exists = !git(
        work,
        &[
            "ls-remote",
            "--heads",
            remote,
            &format!("refs/heads/{branch}"),
        ],
        "ls-remote",
    )?
    .is_empty();
    if exists {
        git(
            work,
            &["fetch", "--quiet", remote, &format!("refs/heads/{branch}")],
            "fetch",
        )?;
        git(
            work,
            &["checkout", "--quiet", "-B", "export", "FETCH_HEAD"],
            "checkout",
        )?;
    } else {
        git(work, &["checkout", "--quiet", "-b", "export"], "checkout")?;
        std::fs::write(work.join("README.md"), "# Tools exported from a toolsmith toolbox\n\nImport them with `toolsmith import URL` (or the `import_tool` MCP tool).\n")
            .map_err(super::io_err("write", &work.join("README.md")))?;
    }
    for (name, fs) in &files {
        let dir = work.join(TOOLS_DIR).join(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(super::io_err("remove", &dir))?;
        }
        write_files(&dir, fs)?;
    }
    git(work, &["add", "--all"], "add")?;
    let staged = Command::new("git")
        .arg("-C")
        .arg(work)
        .args(["diff", "--cached", "--quiet"])
        .status()
        .map(|s| !s.success())
        .unwrap_or(true);
    if staged {
        let msg = format!(
            "export {} from toolsmith\n\nSource-Commit: {head}\n",
            tools.join(", ")
        );
        git(work, &["commit", "--quiet", "-m", &msg], "commit")?;
    }
    git(work, &["push", "--quiet", remote, &refspec], "push")?;
    let commit = git(work, &["rev-parse", "HEAD"], "rev-parse")?;
    Ok(ExportOutcome {
        remote: remote.to_string(),
        branch: branch.to_string(),
        commit,
        tools: tools.to_vec(),
        whole_toolbox: false,
    })
}

/// A tool as a Gist: `{"description", "public": false, "files": {name: {"content"}}}`. Gists
/// are flat and hold text, so a tool with subdirectories or binary files is refused.
pub fn gist_json(tb: &Toolbox, name: &str) -> Result<Value, ShareError> {
    not_held(tb, name)?;
    let head = crate::git::resolve(tb.root(), "HEAD").map_err(history::HistoryError::from)?;
    let at = history::tool_at(tb, name, &head)?;
    let mut files = serde_json::Map::new();
    let mut refused = Vec::new();
    for f in &at.files {
        match std::str::from_utf8(&f.bytes) {
            Ok(text) if !f.path.contains('/') => {
                files.insert(f.path.clone(), json!({"content": text}));
            }
            _ => refused.push(f.path.clone()),
        }
    }
    if !refused.is_empty() {
        return Err(ShareError::Unsupported {
            what: format!("a Gist of {name}"),
            reason: format!(
                "Gists are flat and hold only text; these files are in subdirectories or binary: {} — export to a git remote instead",
                refused.join(", ")
            ),
        });
    }
    let description = at
        .manifest_text()
        .and_then(|t| crate::manifest::parse(Path::new(""), None, t).ok())
        .map(|p| format!("{name}: {}", p.manifest.description))
        .unwrap_or_else(|| name.to_string());
    Ok(json!({"description": description, "public": false, "files": files}))
}

/// Refuse to export a held tool (its version came from elsewhere and no one here trusted it):
/// a Gist, an OCI artifact or a branch of chosen tools carries no provenance a receiver could
/// judge it by. Fail closed when its standing cannot be judged.
pub(crate) fn not_held(tb: &Toolbox, name: &str) -> Result<(), ShareError> {
    match crate::trust::standing(tb, name) {
        Ok(crate::trust::Standing::Trusted(_)) => Ok(()),
        Ok(crate::trust::Standing::Held(h)) => Err(ShareError::Held(Box::new(h))),
        Err(e) => Err(ShareError::Held(Box::new(crate::trust::Held::unjudged(
            name,
            &e.to_string(),
        )))),
    }
}
