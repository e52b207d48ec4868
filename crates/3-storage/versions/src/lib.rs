//! A tool's committed versions read from git: its files at any revision, and the difference
//! between two. The read half of history, below the toolbox: the gates (approval, trust) show
//! and judge a change with it without depending on history's writes.
//!
//! Every function takes the toolbox's root (a `Toolbox` is one: `AsRef<Path>`).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_error as error;
use toolsmith_git as git;
use toolsmith_hashing as hashing;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_names as names;

use crate::git::GitError;
use crate::names::NameError;
use serde::Serialize;
use std::path::Path;

/// What went wrong reading a tool's versions.
#[derive(Debug, thiserror::Error)]
pub enum VersionsError {
    /// The git layer failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// A tool name that is not allowed.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The tool is not in the tree of that revision.
    #[error("tool {name:?} does not exist at revision {rev}")]
    NotAt {
        /// The tool.
        name: String,
        /// The revision as given.
        rev: String,
    },
}

impl crate::error::Hint for VersionsError {
    /// What the user can do about it.
    fn hint(&self) -> Option<String> {
        match self {
            VersionsError::Git(GitError::UnknownRevision { .. }) => Some(REVISION_HINT.into()),
            VersionsError::Git(_) => None,
            VersionsError::Name(e) => e.hint(),
            VersionsError::NotAt { name, .. } => Some(not_at_hint(name)),
        }
    }
}

/// What to do about a revision git does not know (history's errors say the same).
pub const REVISION_HINT: &str =
    "use a commit id from `tool_history` (a unique prefix is enough), HEAD~N, a branch or a tag";

/// What to do about a tool that is not at a revision.
fn not_at_hint(name: &str) -> String {
    format!("`tool_history {name}` lists the commits where the tool exists")
}

/// A tool's directory in a commit's tree: `tools/<name>`, the name checked.
pub fn prefix(name: &str) -> Result<String, NameError> {
    names::validate(name)?;
    Ok(format!("{}/{name}", index::TOOLS_DIR))
}

/// One file of a tool at some revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAt {
    /// Path relative to the tool directory, `/`-separated.
    pub path: String,
    /// What it holds.
    pub bytes: Vec<u8>,
    /// Its git mode is 100755.
    pub executable: bool,
}

/// A tool's directory as it was in one commit.
#[derive(Debug, Clone)]
pub struct ToolAt {
    /// The tool.
    pub name: String,
    /// The full commit id the revision resolved to.
    pub commit: String,
    /// Its files, sorted by path.
    pub files: Vec<FileAt>,
}

impl ToolAt {
    /// The text of tool.toml, if there is one and it is UTF-8.
    pub fn manifest_text(&self) -> Option<&str> {
        self.file(crate::manifest::FILE_NAME)
            .and_then(|f| std::str::from_utf8(&f.bytes).ok())
    }

    /// The file at that path (relative to the tool directory).
    pub fn file(&self, path: &str) -> Option<&FileAt> {
        self.files.iter().find(|f| f.path == path)
    }
}

/// The files of a tool at a revision; an empty list when it did not exist there.
pub fn files_at(
    root: impl AsRef<Path>,
    name: &str,
    commit: &str,
) -> Result<Vec<FileAt>, VersionsError> {
    let prefix = prefix(name)?;
    Ok(git::read_tree_at(root.as_ref(), commit, &prefix)?
        .into_iter()
        .map(|(path, bytes, executable)| FileAt {
            path,
            bytes,
            executable,
        })
        .collect())
}

/// A tool as it was at revision `rev` (a commit id or prefix, `HEAD~2`, a branch or tag).
pub fn tool_at(root: impl AsRef<Path>, name: &str, rev: &str) -> Result<ToolAt, VersionsError> {
    let root = root.as_ref();
    let commit = git::resolve(root, rev)?;
    let files = files_at(root, name, &commit)?;
    if files.is_empty() {
        return Err(VersionsError::NotAt {
            name: name.to_string(),
            rev: rev.to_string(),
        });
    }
    Ok(ToolAt {
        name: name.to_string(),
        commit,
        files,
    })
}

/// How one file differs between two revisions.
#[derive(Debug, Clone, Serialize)]
pub struct FileDiff {
    /// Its path relative to the tool directory.
    pub path: String,
    /// "added", "removed", "modified" or "binary".
    pub status: &'static str,
}

/// The difference of a tool between two revisions.
#[derive(Debug, Clone, Serialize)]
pub struct ToolDiff {
    /// The tool.
    pub name: String,
    /// The older revision's commit.
    pub from: String,
    /// The newer revision's commit (or the work tree).
    pub to: String,
    /// Each file that differs.
    pub files: Vec<FileDiff>,
    /// A unified diff (`a/` and `b/` paths relative to the tool directory).
    pub unified: String,
}

/// The unified diff of a tool's files between revisions `a` and `b`. A side where the tool
/// did not exist counts as empty; it is an error when it exists at neither.
pub fn diff_tool(
    root: impl AsRef<Path>,
    name: &str,
    a: &str,
    b: &str,
) -> Result<ToolDiff, VersionsError> {
    let root = root.as_ref();
    let ca = git::resolve(root, a)?;
    let cb = git::resolve(root, b)?;
    let fa = files_at(root, name, &ca)?;
    let fb = files_at(root, name, &cb)?;
    if fa.is_empty() && fb.is_empty() {
        return Err(VersionsError::NotAt {
            name: name.to_string(),
            rev: format!("{a} or {b}"),
        });
    }
    let (files, unified) = diff_files(&fa, &fb);
    Ok(ToolDiff {
        name: name.to_string(),
        from: ca,
        to: cb,
        files,
        unified,
    })
}

/// Compare two file sets: per-file status and one unified diff.
pub fn diff_files(old: &[FileAt], new: &[FileAt]) -> (Vec<FileDiff>, String) {
    let mut paths: Vec<&str> = old.iter().chain(new).map(|f| f.path.as_str()).collect();
    paths.sort();
    paths.dedup();
    let mut files = Vec::new();
    let mut out = String::new();
    for path in paths {
        let o = old.iter().find(|f| f.path == path);
        let n = new.iter().find(|f| f.path == path);
        if o.map(|f| (&f.bytes, f.executable)) == n.map(|f| (&f.bytes, f.executable)) {
            continue;
        }
        fn text(f: Option<&FileAt>) -> Option<&str> {
            match f {
                None => Some(""),
                Some(f) => std::str::from_utf8(&f.bytes).ok(),
            }
        }
        let status = match (o, n, text(o), text(n)) {
            (None, _, _, _) => "added",
            (_, None, _, _) => "removed",
            (_, _, Some(_), Some(_)) => "modified",
            _ => "binary",
        };
        let (ta, tb) = (text(o), text(n));
        match (ta, tb) {
            (Some(ta), Some(tb)) if ta != tb => {
                let a_name = if o.is_some() {
                    format!("a/{path}")
                } else {
                    "/dev/null".into()
                };
                let b_name = if n.is_some() {
                    format!("b/{path}")
                } else {
                    "/dev/null".into()
                };
                let diff = similar::TextDiff::from_lines(ta, tb);
                out.push_str(&format!("diff a/{path} b/{path}\n"));
                out.push_str(
                    &diff
                        .unified_diff()
                        .context_radius(3)
                        .header(&a_name, &b_name)
                        .missing_newline_hint(true)
                        .to_string(),
                );
            }
            (Some(_), Some(_)) => {
                out.push_str(&format!(
                    "diff a/{path} b/{path}\nmode changed: executable {} -> {}\n",
                    o.is_some_and(|f| f.executable),
                    n.is_some_and(|f| f.executable)
                ));
            }
            _ => {
                let h = |f: Option<&FileAt>| {
                    f.map(|f| crate::hashing::sha256_bytes(&f.bytes))
                        .unwrap_or_else(|| "(none)".into())
                };
                out.push_str(&format!(
                    "diff a/{path} b/{path}\nBinary files differ: {} -> {}\n",
                    h(o),
                    h(n)
                ));
            }
        }
        files.push(FileDiff {
            path: path.to_string(),
            status,
        });
    }
    (files, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_statuses() {
        let f = |p: &str, b: &[u8]| FileAt {
            path: p.into(),
            bytes: b.to_vec(),
            executable: false,
        };
        let (files, text) = diff_files(
            &[
                f("a.txt", b"one\ntwo\n"),
                f("gone", b"x"),
                f("bin", &[0xff, 0]),
            ],
            &[f("a.txt", b"one\n2\n"), f("new", b"y\n"), f("bin", &[0xfe])],
        );
        let st: Vec<_> = files.iter().map(|d| (d.path.as_str(), d.status)).collect();
        assert_eq!(
            st,
            [
                ("a.txt", "modified"),
                ("bin", "binary"),
                ("gone", "removed"),
                ("new", "added")
            ]
        );
        assert!(text.contains("-two\n+2\n"), "{text}");
        assert!(text.contains("--- /dev/null"), "{text}");
    }
}
