//! Tool history: versions of one tool (with the commit trailers parsed), a tool at any
//! revision, diffs between revisions, and (in submodules) rollback, restore and session undo.
//!
//! Invariant: history is never rewritten. Every change made here is one new commit on top of
//! `HEAD`, made by the toolbox's one write path (`Toolbox::apply`).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_error as error;
use toolsmith_git as git;
use toolsmith_hashing as hashing;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_names as names;
use toolsmith_personal as personal;
use toolsmith_platform as platform;
use toolsmith_toolbox as toolbox;
use toolsmith_versions as versions;

mod restore;
mod scan;

pub use restore::same_environment;
pub use restore::{
    RollbackOutcome, UndoOutcome, UndoneTool, restore_tool, rollback_tool, undo_session,
};
// A tool at a revision and diffs: the read half, below the toolbox (`toolsmith-versions`).
pub(crate) use versions::files_at;
pub use versions::{
    FileAt, FileDiff, ToolAt, ToolDiff, VersionsError, diff_files, diff_tool, tool_at,
};

use crate::git::{CommitInfo, GitError};
use crate::names::NameError;
use crate::toolbox::{Toolbox, ToolboxError};
use serde::Serialize;
use std::path::PathBuf;

/// What went wrong with a history operation.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The toolbox could not be read or written.
    #[error(transparent)]
    Toolbox(#[from] ToolboxError),
    /// The git layer failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// A tool name that is not allowed.
    #[error(transparent)]
    Name(#[from] NameError),
    /// A tool's version could not be read (not at that revision, an unknown revision).
    #[error(transparent)]
    Versions(#[from] VersionsError),
    /// The commits could not be read.
    #[error("cannot read the toolbox history: {message}")]
    Scan {
        /// What went wrong.
        message: String,
    },
    /// No commit ever held the tool.
    #[error("tool {name:?} has no history in this toolbox")]
    NoHistory {
        /// The tool.
        name: String,
    },
    /// `restore_tool` of a tool that is there.
    #[error("tool {name:?} exists; restore_tool only brings back deleted tools")]
    Exists {
        /// The tool.
        name: String,
    },
    /// The old version's tool.toml does not parse.
    #[error("tool {name:?} at {rev} has a tool.toml that does not parse: {errors}")]
    BrokenAt {
        /// The tool.
        name: String,
        /// The revision.
        rev: String,
        /// The diagnostics, joined.
        errors: String,
    },
    /// The old version's artifact is not the one its tool.toml names.
    #[error(
        "the artifact {artifact} of {name:?} at {rev} does not match its tool.toml: its sha256 is {actual}, tool.toml says {expected}"
    )]
    ArtifactMismatch {
        /// The tool.
        name: String,
        /// The revision.
        rev: String,
        /// The artifact's path in the tool.
        artifact: String,
        /// Its sha256.
        actual: String,
        /// The sha256 tool.toml records.
        expected: String,
    },
    /// The old version's artifact is not in its tree.
    #[error("the artifact {artifact} of {name:?} is missing at {rev}")]
    ArtifactMissing {
        /// The tool.
        name: String,
        /// The revision.
        rev: String,
        /// The artifact's path in the tool.
        artifact: String,
    },
    /// `undo_session` of a session that made no commit.
    #[error("no commit of session {session:?} was found")]
    NoSessionCommits {
        /// The session's id.
        session: String,
    },
    /// `undo_session` with no session.
    #[error("no session id was given and the caller has none")]
    NoSession,
    /// A tool the session changed was changed again after it.
    #[error(
        "cannot undo session {session}: tool {tool:?} was changed after the session by commit {commit} ({summary})"
    )]
    Conflict {
        /// The session's id.
        session: String,
        /// The tool.
        tool: String,
        /// The later commit.
        commit: String,
        /// Its summary line.
        summary: String,
    },
    /// Reading or writing a file failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
}

impl crate::error::Hint for HistoryError {
    /// What the user can do about it.
    fn hint(&self) -> Option<String> {
        Some(match self {
            HistoryError::Toolbox(e) => return e.hint(),
            HistoryError::Git(GitError::UnknownRevision { .. }) => versions::REVISION_HINT.into(),
            HistoryError::Git(_) => return None,
            HistoryError::Name(e) => return e.hint(),
            HistoryError::Versions(e) => return e.hint(),
            HistoryError::NoHistory { .. } => "`list_tools` shows the tools there are".into(),
            HistoryError::Exists { name } => {
                format!("to go back to an older version of {name}, use rollback_tool")
            }
            HistoryError::BrokenAt { .. } => {
                "pick another revision, or restore it by hand with `git checkout REV -- tools/NAME` and fix it".into()
            }
            HistoryError::ArtifactMismatch { .. } | HistoryError::ArtifactMissing { .. } => {
                "that commit's artifact cannot be trusted: pick another revision, or roll back and rebuild from source with build_tool".into()
            }
            HistoryError::NoSessionCommits { .. } => {
                "the session id is in the `Session:` trailer of each commit (`git log`)".into()
            }
            HistoryError::NoSession => "pass the session id explicitly".into(),
            HistoryError::Conflict { tool, .. } => format!(
                "roll back {tool} by hand with rollback_tool, or undo that later change first"
            ),
            HistoryError::Io { .. } => "check permissions and free space".into(),
            HistoryError::Scan { .. } => {
                "check the repository with `git fsck`; the history memo .toolsmith/history-v2.bin may be deleted at any time".into()
            }
        })
    }
}

/// One version of a tool: a commit that changed its directory.
#[derive(Debug, Clone, Serialize)]
pub struct Version {
    /// The commit's full id.
    pub commit: String,
    /// Author time, seconds since the unix epoch.
    pub time: i64,
    /// Author time as `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: String,
    /// The git author.
    pub author: String,
    /// The `Actor:` trailer (MCP client name or `cli`), when present.
    pub actor: Option<String>,
    /// The `Session:` trailer, when the commit came from an MCP session.
    pub session: Option<String>,
    /// The first line of the message.
    pub message: String,
    /// The tools named in `Tool:` trailers.
    pub tools: Vec<String>,
}

/// The trailers of a commit message: (key, value) pairs of the last paragraph, as git's
/// trailer rules (gix's parser) read them.
pub fn trailers(message: &str) -> Vec<(String, String)> {
    gix::objs::commit::MessageRef::from_bytes(message.as_bytes())
        .body()
        .map(|body| {
            body.trailers()
                .map(|t| (t.token.to_string(), t.value.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

impl From<&CommitInfo> for Version {
    fn from(c: &CommitInfo) -> Version {
        let t = trailers(&c.message);
        let get = |key: &str| t.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        Version {
            commit: c.id.clone(),
            time: c.time,
            date: git::format_utc(c.time),
            author: c.author.clone(),
            actor: get("Actor"),
            session: get("Session"),
            message: c.summary.clone(),
            tools: t
                .iter()
                .filter(|(k, _)| k == "Tool")
                .map(|(_, v)| v.clone())
                .collect(),
        }
    }
}

/// The repository-relative directory of a tool, after validating its name.
pub(crate) fn prefix(name: &str) -> Result<String, HistoryError> {
    Ok(versions::prefix(name)?)
}

/// The versions of a tool, newest first (also those from before a delete).
pub fn tool_history(tb: &Toolbox, name: &str, limit: usize) -> Result<Vec<Version>, HistoryError> {
    names::validate(name)?;
    if limit == 0 {
        return Ok(Vec::new());
    }
    let log = scan::tool_commits(tb, name, limit)?;
    Ok(log.iter().map(Version::from).collect())
}

/// Build the history memo of this toolbox, or catch it up with HEAD, so that later
/// `tool_history` calls answer from it (a server does this at start, in the background).
pub fn prepare(tb: &Toolbox) -> Result<(), HistoryError> {
    scan::prepare(tb)
}

/// `prepare`, with a memo that does not exist yet built by `build_apart` (a child process
/// writing the memo file, true when it did) while calls here wait for it.
pub fn prepare_apart(tb: &Toolbox, build_apart: impl FnOnce() -> bool) -> Result<(), HistoryError> {
    scan::prepare_apart(tb, build_apart)
}

/// The toolbox's file of a tool's file at some revision.
fn spec(f: FileAt) -> crate::toolbox::FileSpec {
    crate::toolbox::FileSpec {
        path: f.path,
        contents: f.bytes,
        executable: f.executable,
    }
}

/// The toolbox change that makes a tool directory exactly `files` (absent when empty).
pub fn change_to(files: Vec<FileAt>, keep_env: bool) -> crate::toolbox::Change {
    if files.is_empty() {
        crate::toolbox::Change::Remove
    } else {
        crate::toolbox::Change::Write {
            files: files.into_iter().map(spec).collect(),
            keep_env,
        }
    }
}

/// Write `files` into `dir` (a scratch or export directory), with the one path check.
pub fn write_files(dir: &std::path::Path, files: &[FileAt]) -> Result<(), HistoryError> {
    let specs: Vec<crate::toolbox::FileSpec> = files.iter().cloned().map(spec).collect();
    Ok(crate::toolbox::write_files(dir, &specs)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_and_dates() {
        let m = "rollback x: back\n\nbody text\n\nTool: x\nActor: cli\nSession: abc";
        let t = trailers(m);
        assert_eq!(t.len(), 3);
        assert_eq!(t[2], ("Session".into(), "abc".into()));
        assert_eq!(git::format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(git::format_utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(git::format_utc(951_782_400), "2000-02-29T00:00:00Z");
    }
}
