//! Going back: `rollback_tool` (a tool as it was at a revision, as a new commit),
//! `restore_tool` (bring back a deleted tool) and `undo_session` (revert every commit one MCP
//! session made, as one new commit).

use super::{FileAt, HistoryError, ToolAt, Version, change_to, files_at, prefix, tool_at};
use crate::git;
use crate::hashing::sha256_bytes;
use crate::manifest::{self, Dependencies, Kind};
use crate::toolbox::{Actor, Toolbox, message};
use serde::Serialize;
use std::path::Path;

/// Files whose change means a script's environment must be rebuilt.
const LOCKFILES: &[&str] = &[
    "requirements.txt",
    "requirements.lock",
    "uv.lock",
    "poetry.lock",
    "Pipfile.lock",
    "pyproject.toml",
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "Gemfile",
    "Gemfile.lock",
    "composer.json",
    "composer.lock",
    "cpanfile",
    "Cargo.toml",
    "Cargo.lock",
];

/// What a rollback or restore did.
#[derive(Debug, Clone, Serialize)]
pub struct RollbackOutcome {
    /// The tool.
    pub name: String,
    /// The commit whose version was restored.
    pub restored_from: String,
    /// The new commit; None when the tool already was exactly that version.
    pub commit: Option<String>,
    /// For WASM tools: the artifact and whether its sha256 matched tool.toml.
    pub artifact: Option<ArtifactCheck>,
    /// "kept", "rebuilt lazily on the next call" or "none".
    pub environment: &'static str,
    /// What the person should know (a rebuilt environment, a changed capability...).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArtifactCheck {
    pub path: String,
    pub sha256: String,
    pub verified: bool,
}

/// Check the version's manifest parses and its artifact matches the recorded hash.
fn check_version(
    at: &ToolAt,
    rev: &str,
) -> Result<(Option<ArtifactCheck>, Vec<String>), HistoryError> {
    let broken = |errors: String| HistoryError::BrokenAt {
        name: at.name.clone(),
        rev: rev.to_string(),
        errors,
    };
    let text = at
        .manifest_text()
        .ok_or_else(|| broken("there is no UTF-8 tool.toml".into()))?;
    let parsed =
        manifest::parse(Path::new(manifest::FILE_NAME), Some(&at.name), text).map_err(|d| {
            broken(
                d.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?;
    let m = parsed.manifest;
    let mut warnings = Vec::new();
    if m.kind != Kind::Wasm {
        return Ok((None, warnings));
    }
    let artifact = m.artifact().to_string();
    let file = at
        .file(&artifact)
        .ok_or_else(|| HistoryError::ArtifactMissing {
            name: at.name.clone(),
            rev: rev.to_string(),
            artifact: artifact.clone(),
        })?;
    let actual = sha256_bytes(&file.bytes);
    let verified = match &m.hashes.artifact {
        Some(expected) if *expected == actual => true,
        Some(expected) => {
            return Err(HistoryError::ArtifactMismatch {
                name: at.name.clone(),
                rev: rev.to_string(),
                artifact,
                actual,
                expected: expected.clone(),
            });
        }
        None => {
            warnings.push(format!(
                "tool.toml at {rev} records no artifact hash: the runner will refuse to run {artifact} until the tool is rebuilt"
            ));
            false
        }
    };
    Ok((
        Some(ArtifactCheck {
            path: artifact,
            sha256: actual,
            verified,
        }),
        warnings,
    ))
}

fn dependencies(files: &[FileAt]) -> Option<Dependencies> {
    let f = files.iter().find(|f| f.path == manifest::FILE_NAME)?;
    let text = std::str::from_utf8(&f.bytes).ok()?;
    manifest::parse(Path::new(""), None, text)
        .ok()
        .map(|p| p.manifest.dependencies)
}

/// Whether the environment built for `old` is still right for `new`: same declared
/// dependencies and the same lockfiles.
pub fn same_environment(old: &[FileAt], new: &[FileAt]) -> bool {
    let locks = |fs: &[FileAt]| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = fs
            .iter()
            .filter(|f| LOCKFILES.contains(&f.path.as_str()))
            .map(|f| (f.path.clone(), f.bytes.clone()))
            .collect();
        v.sort();
        v
    };
    dependencies(old) == dependencies(new) && locks(old) == locks(new)
}

/// Current files of a tool in the HEAD commit (empty when absent or no HEAD).
fn head_files(tb: &Toolbox, name: &str) -> Result<Vec<FileAt>, HistoryError> {
    match git::resolve(tb.root(), "HEAD") {
        Ok(head) => Ok(files_at(tb, name, &head)?),
        Err(_) => Ok(Vec::new()),
    }
}

fn put_back(
    tb: &Toolbox,
    at: ToolAt,
    rev: &str,
    verb: &str,
    actor: &Actor,
) -> Result<RollbackOutcome, HistoryError> {
    let (artifact, warnings) = check_version(&at, rev)?;
    let current = head_files(tb, &at.name)?;
    let on_disk = tb.tools_dir().join(&at.name);
    let has_env = ["/.venv", "/node_modules"]
        .iter()
        .any(|d| Path::new(&format!("{}{d}", on_disk.display())).is_dir());
    let keep = same_environment(&current, &at.files);
    let environment = match (has_env, keep) {
        (false, _) => "none",
        (true, true) => "kept",
        (true, false) => "rebuilt lazily on the next call",
    };
    let short = &at.commit[..at.commit.len().min(10)];
    let body = format!(
        "Restores tools/{} as it was in commit {}.",
        at.name, at.commit
    );
    let msg = message(
        verb,
        &at.name,
        &format!("back to {short}"),
        actor,
        Some(&body),
    );
    let name = at.name.clone();
    let restored_from = at.commit.clone();
    let commit = tb.apply(&[(name.clone(), change_to(at.files, keep))], &msg)?;
    Ok(RollbackOutcome {
        name,
        restored_from,
        commit,
        artifact,
        environment,
        warnings,
    })
}

/// Restore tool `name` as it was at revision `rev`, as a new commit. A WASM artifact comes
/// back from that commit and must match the hash in that commit's tool.toml.
pub fn rollback_tool(
    tb: &Toolbox,
    name: &str,
    rev: &str,
    actor: impl Into<Actor>,
) -> Result<RollbackOutcome, HistoryError> {
    let at = tool_at(tb, name, rev)?;
    put_back(tb, at, rev, "rollback", &actor.into())
}

/// Bring back a deleted tool: from `rev`, or from the last commit where it existed.
pub fn restore_tool(
    tb: &Toolbox,
    name: &str,
    rev: Option<&str>,
    actor: impl Into<Actor>,
) -> Result<RollbackOutcome, HistoryError> {
    let p = prefix(name)?;
    if tb.root().join(&p).exists() {
        return Err(HistoryError::Exists {
            name: name.to_string(),
        });
    }
    let at = match rev {
        Some(rev) => tool_at(tb, name, rev)?,
        None => {
            let log = git::log(tb.root(), Some(&p), usize::MAX)?;
            let mut found = None;
            for c in &log {
                let files = files_at(tb, name, &c.id)?;
                if !files.is_empty() {
                    found = Some(ToolAt {
                        name: name.to_string(),
                        commit: c.id.clone(),
                        files,
                    });
                    break;
                }
            }
            found.ok_or_else(|| HistoryError::NoHistory {
                name: name.to_string(),
            })?
        }
    };
    let rev = at.commit.clone();
    put_back(tb, at, &rev, "restore", &actor.into())
}

/// One tool `undo_session` put back.
#[derive(Debug, Clone, Serialize)]
pub struct UndoneTool {
    /// The tool.
    pub name: String,
    /// "restored" (back to its state before the session), "removed" (the session created it)
    /// or "unchanged".
    pub action: &'static str,
    /// The commit whose state it returned to (None when removed).
    pub state_of: Option<String>,
}

/// What `undo_session` did.
#[derive(Debug, Clone, Serialize)]
pub struct UndoOutcome {
    /// The session's id.
    pub session: String,
    /// The session's commits, newest first.
    pub reverted: Vec<Version>,
    /// Each tool the session touched, and what was done with it.
    pub tools: Vec<UndoneTool>,
    /// The one new commit; None when the session's changes were already gone.
    pub commit: Option<String>,
}

/// Revert every commit whose `Session:` trailer is `session`, as one new commit: each tool the
/// session touched goes back to its state before the session's first change to it. Refused
/// (nothing is changed) when someone else changed such a tool after the session did.
pub fn undo_session(
    tb: &Toolbox,
    session: &str,
    actor: impl Into<Actor>,
) -> Result<UndoOutcome, HistoryError> {
    let actor: Actor = actor.into();
    let all = git::log(tb.root(), None, usize::MAX)?;
    let mine: Vec<Version> = all
        .iter()
        .map(Version::from)
        .filter(|v| v.session.as_deref() == Some(session))
        .collect();
    if mine.is_empty() {
        return Err(HistoryError::NoSessionCommits {
            session: session.to_string(),
        });
    }
    let ids: std::collections::HashSet<&str> = mine.iter().map(|v| v.commit.as_str()).collect();
    // Tools touched, and the session's oldest commit per tool (`mine` is newest first).
    let mut first: std::collections::BTreeMap<String, String> = Default::default();
    for v in &mine {
        for t in &v.tools {
            if crate::names::validate(t).is_ok() {
                first.insert(t.clone(), v.commit.clone());
            }
        }
    }
    let mut changes = Vec::new();
    let mut tools = Vec::new();
    for (name, oldest) in &first {
        // Anyone else's change to the tool after the session's first one is a conflict.
        let log = git::log(tb.root(), Some(&prefix(name)?), usize::MAX)?;
        for c in &log {
            if c.id == *oldest {
                break;
            }
            if !ids.contains(c.id.as_str()) {
                return Err(HistoryError::Conflict {
                    session: session.to_string(),
                    tool: name.clone(),
                    commit: c.id.clone(),
                    summary: c.summary.clone(),
                });
            }
        }
        let parent = git::resolve(tb.root(), &format!("{oldest}^")).ok();
        let before = match &parent {
            Some(p) => files_at(tb, name, p)?,
            None => Vec::new(),
        };
        let now = head_files(tb, name)?;
        let action = if before == now {
            "unchanged"
        } else if before.is_empty() {
            "removed"
        } else {
            "restored"
        };
        tools.push(UndoneTool {
            name: name.clone(),
            action,
            state_of: (!before.is_empty()).then(|| parent.clone()).flatten(),
        });
        if before != now {
            let keep = same_environment(&now, &before);
            changes.push((name.clone(), change_to(before, keep)));
        }
    }
    let commit = if changes.is_empty() {
        None
    } else {
        let names: Vec<&str> = changes.iter().map(|(n, _)| n.as_str()).collect();
        let mut msg = format!(
            "undo-session {session}: revert {} commit(s) on {}\n\n",
            mine.len(),
            names.join(", ")
        );
        for v in &mine {
            msg.push_str(&format!(
                "Reverts {} {}\n",
                &v.commit[..10.min(v.commit.len())],
                v.message
            ));
        }
        msg.push('\n');
        for n in &names {
            msg.push_str(&format!("Tool: {n}\n"));
        }
        msg.push_str(&actor.trailers());
        tb.apply(&changes, &msg)?
    };
    Ok(UndoOutcome {
        session: session.to_string(),
        reverted: mine,
        tools,
        commit,
    })
}
