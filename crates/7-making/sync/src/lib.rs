//! `sync`: follow a git remote in one step — fetch, integrate, push.
//!
//! Integration is a fast-forward when this toolbox has nothing the remote lacks, else one merge
//! commit (two parents). The merge is computed by `git merge-tree --write-tree`, which touches
//! neither the work tree nor the index; only a merge without conflicts (or whose conflicting
//! tools the caller settled with `take`) is written, through [`Toolbox::integrate`] — the same
//! journaled, locked, crash-safe write path as every other change. So a conflict leaves the
//! toolbox exactly as it was (nothing half-merged, `git status` clean) and is reported with
//! both versions of each conflicting tool. The push is never forced; if the remote moved on
//! meanwhile, sync fetches and integrates again.
//!
//! Nothing synced is recorded as trusted here: tools whose new version came from the remote
//! are judged by `crate::trust` (signed by an allowed key, or held).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_error as error;
use toolsmith_git as git;
use toolsmith_history as history;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_names as names;
use toolsmith_toolbox as toolbox;
use toolsmith_trust as trust;

mod remote;
#[cfg(test)]
mod tests;

use crate::history::FileAt;
use crate::index::TOOLS_DIR;
use crate::toolbox::{Actor, Change, FileSpec, Toolbox, ToolboxError};
use serde::Serialize;
use std::collections::BTreeSet;

/// Which side of a conflict to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// This toolbox's version.
    Ours,
    /// The remote's version.
    Theirs,
}

impl std::str::FromStr for Side {
    type Err = String;
    fn from_str(s: &str) -> Result<Side, String> {
        match s {
            "ours" => Ok(Side::Ours),
            "theirs" => Ok(Side::Theirs),
            _ => Err(format!("{s:?} is not `ours` or `theirs`")),
        }
    }
}

/// Parse `NAME=ours|theirs`.
pub fn parse_take(s: &str) -> Result<(String, Side), String> {
    let (name, side) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not NAME=ours or NAME=theirs"))?;
    Ok((name.to_string(), side.parse()?))
}

/// What to sync.
#[derive(Debug, Clone, Default)]
pub struct SyncRequest {
    /// A configured remote's name, a URL or a path (default: the branch's upstream remote, else
    /// `origin`).
    pub remote: Option<String>,
    /// Conflicting tools (or top-level files) settled in advance.
    pub take: Vec<(String, Side)>,
}

/// One version of a conflicting tool.
#[derive(Debug, Clone, Serialize)]
pub struct Version {
    /// The commit that last changed the tool on that side.
    pub commit: String,
    /// Its summary line.
    pub summary: String,
    /// Its author.
    pub author: String,
    /// Its author time, seconds since the unix epoch.
    pub time: i64,
    /// The tool's description in that version (None when the tool is deleted there).
    pub description: Option<String>,
}

/// A tool (or top-level file) changed on both sides in a way git cannot merge.
#[derive(Debug, Clone, Serialize)]
pub struct Conflict {
    /// The tool (or top-level file).
    pub name: String,
    /// Its files that differ.
    pub files: Vec<String>,
    /// This side's version (None: deleted here).
    pub ours: Option<Version>,
    /// The remote's version (None: deleted there).
    pub theirs: Option<Version>,
}

/// What a sync did.
#[derive(Debug, Clone, Serialize)]
pub struct SyncOutcome {
    /// The remote synced with.
    pub remote: String,
    /// The branch.
    pub branch: String,
    /// `up-to-date`, `pushed` (only this side had changes), `fast-forward` or `merge`.
    pub action: &'static str,
    /// HEAD after the sync.
    pub commit: String,
    /// Tools whose content here changed.
    pub changed_tools: Vec<String>,
    /// Top-level files (e.g. allowed_signers) whose content here changed.
    pub changed_files: Vec<String>,
    /// Whether the remote branch now points to HEAD.
    pub pushed: bool,
    /// Conflicts settled by `take`.
    pub taken: Vec<(String, Side)>,
    /// Changed tools whose new version is held until a person trusts it (`crate::trust`).
    pub held: Vec<String>,
}

/// What went wrong in a sync.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// A git command failed.
    #[error("git {action} failed: {stderr}")]
    Git {
        /// What git was asked to do.
        action: String,
        /// What it said.
        stderr: String,
    },
    /// Tools changed on both sides in a way git cannot merge, and not settled by `take`.
    #[error(
        "sync stopped: {} changed on both sides and git cannot merge {}; nothing was changed\n{}",
        names(conflicts),
        if conflicts.len() == 1 { "it" } else { "them" },
        describe(conflicts)
    )]
    Conflict {
        /// Each conflicting tool.
        conflicts: Vec<Conflict>,
    },
    /// Something outside `tools/` and the top-level files changed on both sides.
    #[error("sync stopped: {what} changed on both sides, outside tools/ and top-level files")]
    Unsupported {
        /// The paths.
        what: String,
    },
    /// The remote changes files that have uncommitted changes here.
    #[error(
        "sync stopped: the remote changes {paths} here, which has uncommitted changes; nothing was changed"
    )]
    LocalChanges {
        /// The paths.
        paths: String,
    },
    /// Not a remote's name, a URL or a path; or not a branch name.
    #[error("{0:?} is not a valid remote or branch")]
    BadRemote(String),
    /// The remote branch moved between fetch and push, every time tried.
    #[error("the remote kept moving while syncing (tried {0} times)")]
    Busy(usize),
    /// The toolbox could not be read or written.
    #[error(transparent)]
    Toolbox(#[from] ToolboxError),
}

fn names(c: &[Conflict]) -> String {
    c.iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe(conflicts: &[Conflict]) -> String {
    let side = |v: &Option<Version>| match v {
        None => "deleted".to_string(),
        Some(v) => format!(
            "{} ({}, {} by {}){}",
            v.summary,
            &v.commit[..v.commit.len().min(10)],
            crate::git::format_utc(v.time),
            v.author,
            v.description
                .as_ref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default()
        ),
    };
    conflicts
        .iter()
        .map(|c| {
            format!(
                "  {} ({}):\n    ours:   {}\n    theirs: {}",
                c.name,
                c.files.join(", "),
                side(&c.ours),
                side(&c.theirs)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl crate::error::Hint for SyncError {
    fn hint(&self) -> Option<String> {
        Some(match self {
            SyncError::Git { .. } => "check that the remote exists and is reachable (`git remote -v`), and that you may push to it".into(),
            SyncError::Conflict { conflicts } => format!(
                "settle each one: `toolsmith sync --take {}=ours` (or =theirs), or merge by hand (`git merge FETCH_HEAD`, fix the files, `git commit`) and run sync again",
                conflicts.first().map(|c| c.name.as_str()).unwrap_or("NAME")
            ),
            SyncError::Unsupported { .. } => "merge by hand: `git merge FETCH_HEAD`, fix the files, `git commit`, then sync again".into(),
            SyncError::LocalChanges { .. } => "commit them (`git commit`) or drop them (`git checkout -- PATH`), then sync again".into(),
            SyncError::BadRemote(_) => "name a configured remote (`git remote -v`), a URL or a path".into(),
            SyncError::Busy(_) => "run sync again".into(),
            SyncError::Toolbox(e) => return e.hint(),
        })
    }
}

/// How many times a push rejected because the remote moved is retried.
const ATTEMPTS: usize = 3;

/// Fetch, integrate and push.
pub fn sync(tb: &Toolbox, req: &SyncRequest, actor: &Actor) -> Result<SyncOutcome, SyncError> {
    crate::git::check_write_state(tb.root()).map_err(ToolboxError::from)?;
    let branch = current_branch(tb)?;
    // Default: the branch's upstream remote, else origin.
    let remote = req.remote.clone().unwrap_or_else(|| {
        remote::git(
            tb.root(),
            &["config", "--get", &format!("branch.{branch}.remote")],
            "config",
        )
        .ok()
        .filter(|r| !r.is_empty() && r != ".")
        .unwrap_or_else(|| "origin".into())
    });
    if remote.is_empty() || remote.starts_with('-') {
        return Err(SyncError::BadRemote(remote));
    }
    for _ in 0..ATTEMPTS {
        let mut out = match integrate_once(tb, &remote, &branch, req, actor) {
            // A write here landed between reading HEAD and integrating: start over.
            Err(SyncError::Toolbox(ToolboxError::Git(crate::git::GitError::HeadMoved {
                ..
            }))) => continue,
            other => other?,
        };
        out.held = out
            .changed_tools
            .iter()
            .filter(|t| {
                matches!(
                    crate::trust::standing(tb, t),
                    Ok(crate::trust::Standing::Held(_)) | Err(_)
                )
            })
            .cloned()
            .collect();
        if out.action == "up-to-date" {
            return Ok(out);
        }
        if remote::push(tb.root(), &remote, &branch)? {
            out.pushed = true;
            return Ok(out);
        }
        tracing::info!(remote, "the remote moved on while syncing; fetching again");
    }
    Err(SyncError::Busy(ATTEMPTS))
}

fn current_branch(tb: &Toolbox) -> Result<String, SyncError> {
    let head = std::fs::read_to_string(tb.root().join(".git/HEAD")).unwrap_or_default();
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_string)
        .ok_or_else(|| SyncError::BadRemote("HEAD (detached)".into()))
}

fn integrate_once(
    tb: &Toolbox,
    remote: &str,
    branch: &str,
    req: &SyncRequest,
    actor: &Actor,
) -> Result<SyncOutcome, SyncError> {
    let root = tb.root();
    let theirs = remote::fetch(root, remote, branch)?;
    let ours = remote::git(root, &["rev-parse", "HEAD"], "rev-parse")?;
    let mut out = SyncOutcome {
        remote: remote.to_string(),
        branch: branch.to_string(),
        action: "pushed",
        commit: ours.clone(),
        changed_tools: Vec::new(),
        changed_files: Vec::new(),
        pushed: false,
        taken: Vec::new(),
        held: Vec::new(),
    };
    let Some(theirs) = theirs else {
        return Ok(out);
    };
    if theirs == ours {
        out.action = "up-to-date";
        out.pushed = true;
        return Ok(out);
    }
    if remote::is_ancestor(root, &theirs, &ours)? {
        return Ok(out);
    }
    let (target, join, message) = if remote::is_ancestor(root, &ours, &theirs)? {
        out.action = "fast-forward";
        let tree = remote::git(
            root,
            &["rev-parse", &format!("{theirs}^{{tree}}")],
            "rev-parse",
        )?;
        let join = crate::git::Join::FastForward {
            ours: ours.clone(),
            commit: theirs.clone(),
        };
        (tree, join, String::new())
    } else {
        out.action = "merge";
        let merged = remote::merge_tree(root, &ours, &theirs)?;
        let tree = settle(root, &ours, &theirs, &merged, &req.take, &mut out.taken)?;
        let message = format!(
            "sync: merge {remote} {branch} at {}\n\nMerges {theirs} from {remote}.\n\n{}",
            &theirs[..10.min(theirs.len())],
            actor.trailers()
        );
        let join = crate::git::Join::Merge {
            ours: ours.clone(),
            other: theirs.clone(),
            tree: tree.clone(),
        };
        (tree, join, message)
    };
    let (changes, files) = plan(root, &ours, &target)?;
    out.changed_tools = changes.iter().map(|(n, _)| n.clone()).collect();
    out.changed_files = files.iter().map(|(p, _)| p.clone()).collect();
    let message = if message.is_empty() {
        format!("sync: fast-forward to {theirs}\n")
    } else {
        message
    };
    tb.integrate(&changes, &files, &message, &join)?;
    out.commit = remote::git(root, &["rev-parse", "HEAD"], "rev-parse")?;
    Ok(out)
}

/// The tree to integrate for a merge: git's merge, with each conflicting tool (or top-level
/// file) replaced by the side `take` names. Any conflict left unsettled stops the sync.
fn settle(
    root: &std::path::Path,
    ours: &str,
    theirs: &str,
    merged: &remote::Merged,
    take: &[(String, Side)],
    taken: &mut Vec<(String, Side)>,
) -> Result<String, SyncError> {
    // Group conflicted paths by tool (tools/<name>/...) or top-level file.
    let mut groups: Vec<(String, bool, Vec<String>)> = Vec::new();
    for path in &merged.conflicts {
        let (name, is_tool, file) = match path.strip_prefix(&format!("{TOOLS_DIR}/")) {
            Some(rest) => match rest.split_once('/') {
                Some((tool, file)) => (tool.to_string(), true, file.to_string()),
                None => (rest.to_string(), true, String::new()),
            },
            None if !path.contains('/') => (path.clone(), false, path.clone()),
            None => {
                return Err(SyncError::Unsupported { what: path.clone() });
            }
        };
        match groups
            .iter_mut()
            .find(|(n, t, _)| *n == name && *t == is_tool)
        {
            Some(g) => g.2.push(file),
            None => groups.push((name, is_tool, vec![file])),
        }
    }
    let mut tree = merged.tree.clone();
    let mut unsettled = Vec::new();
    for (name, is_tool, files) in groups {
        let Some((_, side)) = take.iter().find(|(n, _)| *n == name) else {
            unsettled.push(conflict(root, ours, theirs, &name, is_tool, files)?);
            continue;
        };
        let from = if *side == Side::Ours { ours } else { theirs };
        if is_tool {
            let path = format!("{TOOLS_DIR}/{name}");
            let chosen = remote::ls_entry(root, from, &path)?;
            let tools = remote::ls_entry(root, &tree, TOOLS_DIR)?
                .and_then(|e| e.split_whitespace().nth(2).map(str::to_string));
            let tools = match tools {
                Some(t) => t,
                None => remote::git(root, &["mktree"], "mktree")?,
            };
            let new_tools = remote::replace_entry(root, &tools, &name, chosen.as_deref())?;
            let line = format!("040000 tree {new_tools}");
            tree = remote::replace_entry(root, &tree, TOOLS_DIR, Some(&line))?;
        } else {
            let chosen = remote::ls_entry(root, from, &name)?;
            tree = remote::replace_entry(root, &tree, &name, chosen.as_deref())?;
        }
        taken.push((name, *side));
    }
    if !unsettled.is_empty() {
        return Err(SyncError::Conflict {
            conflicts: unsettled,
        });
    }
    Ok(tree)
}

fn conflict(
    root: &std::path::Path,
    ours: &str,
    theirs: &str,
    name: &str,
    is_tool: bool,
    files: Vec<String>,
) -> Result<Conflict, SyncError> {
    let path = if is_tool {
        format!("{TOOLS_DIR}/{name}")
    } else {
        name.to_string()
    };
    let version = |rev: &str| -> Result<Option<Version>, SyncError> {
        if remote::entry(root, rev, &path)?.is_none() {
            return Ok(None);
        }
        let description = is_tool
            .then(|| crate::git::file_at(root, rev, &format!("{path}/tool.toml")).ok())
            .flatten()
            .flatten()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|t| crate::manifest::parse(std::path::Path::new(""), Some(name), &t).ok())
            .map(|p| p.manifest.summary().to_string());
        Ok(
            remote::last_change(root, rev, &path)?.map(|(commit, summary, author, time)| Version {
                commit,
                summary,
                author,
                time,
                description,
            }),
        )
    };
    Ok(Conflict {
        name: name.to_string(),
        files,
        ours: version(ours)?,
        theirs: version(theirs)?,
    })
}

type Plan = (Vec<(String, Change)>, Vec<(String, Option<FileSpec>)>);

/// The tool directories and top-level files that differ between HEAD and `target`, with their
/// content in `target` — refused when any of them has uncommitted changes here.
fn plan(root: &std::path::Path, ours: &str, target: &str) -> Result<Plan, SyncError> {
    let mut tools = BTreeSet::new();
    let mut files = BTreeSet::new();
    for path in remote::changed_paths(root, ours, target)? {
        match path.strip_prefix(&format!("{TOOLS_DIR}/")) {
            Some(rest) => match rest.split_once('/') {
                Some((tool, _)) => {
                    tools.insert(tool.to_string());
                }
                // A file directly in tools/ (e.g. .gitkeep): not a tool.
                None => return Err(SyncError::Unsupported { what: path }),
            },
            None if !path.contains('/') => {
                files.insert(path);
            }
            None => return Err(SyncError::Unsupported { what: path }),
        }
    }
    let paths: Vec<String> = tools
        .iter()
        .map(|t| format!("{TOOLS_DIR}/{t}"))
        .chain(files.iter().cloned())
        .collect();
    let dirty = remote::local_changes(root, &paths)?;
    if !dirty.is_empty() {
        return Err(SyncError::LocalChanges {
            paths: dirty
                .iter()
                .map(|l| l.get(3..).unwrap_or(l).to_string())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let mut changes = Vec::new();
    for name in tools {
        crate::names::validate(&name).map_err(ToolboxError::from)?;
        let at = crate::git::read_tree_at(root, target, &format!("{TOOLS_DIR}/{name}"))
            .map_err(ToolboxError::from)?;
        let change = if at.is_empty() {
            Change::Remove
        } else {
            let files: Vec<FileAt> = at
                .into_iter()
                .map(|(path, bytes, executable)| FileAt {
                    path,
                    bytes,
                    executable,
                })
                .collect();
            crate::history::change_to(files, true)
        };
        changes.push((name, change));
    }
    let mut top = Vec::new();
    for path in files {
        let spec = crate::git::file_at(root, target, &path)
            .map_err(ToolboxError::from)?
            .map(|bytes| FileSpec::new(path.clone(), bytes));
        top.push((path, spec));
    }
    Ok((changes, top))
}
