//! The journal of a write in flight (`.git/toolsmith-journal`): what the write intends (the
//! branch, its new commit, the directory and file moves), written before the branch moves;
//! `finish` completes it (the branch is at its commit: roll forward) or undoes it (roll back),
//! for the writer itself and, after a crash, for the next one. See `apply` for the order.

use super::{Toolbox, ToolboxError, io_err};
use crate::git;
use crate::index::TOOLS_DIR;
use crate::names;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Ignored directories carried into a new version with `keep_env`.
const ENV_DIRS: &[&str] = &[
    ".venv",
    "node_modules",
    "target",
    "__pycache__",
    ".toolsmith",
];

/// The journal file, in the git directory.
pub const JOURNAL_FILE: &str = "toolsmith-journal";

/// One directory move of a write.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Move {
    pub(super) tool: String,
    /// The staged directory (file name under `tools/`), None for a removal.
    pub(super) staging: Option<String>,
    /// Where the old directory goes (file name under `tools/`).
    pub(super) trash: String,
    pub(super) keep_env: bool,
}

/// What a write in flight intends; finished or rolled back by the next writer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Journal {
    pub(super) pid: u32,
    /// The commit the branch points to when the write is done.
    pub(super) commit: String,
    pub(super) moves: Vec<Move>,
    /// Every prefix the write touches (for the index refresh).
    pub(super) prefixes: Vec<String>,
    /// The branch's full name, e.g. refs/heads/main.
    pub(super) branch: String,
    /// Top-level files (outside `tools/`) the write replaces (an integration only).
    #[serde(default)]
    pub(super) files: Vec<FileMove>,
}

/// One top-level file of an integration: its staged copy (a file name in the git directory)
/// is renamed into place, or the file is removed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct FileMove {
    pub(super) path: String,
    pub(super) staging: Option<String>,
}

impl Toolbox {
    pub(super) fn journal_path(&self) -> PathBuf {
        self.root.join(".git").join(JOURNAL_FILE)
    }

    pub(super) fn write_journal(&self, journal: &Journal) -> Result<(), ToolboxError> {
        let path = self.journal_path();
        let text = serde_json::to_vec(journal).map_err(|e| ToolboxError::Io {
            action: "serialize the journal",
            path: path.clone(),
            source: std::io::Error::other(e),
        })?;
        crate::platform::write_atomic(&path, &text, crate::platform::Atomic::RECORD)
            .map_err(io_err("write", &path))
    }

    /// Finish a journal a dead writer left (under the lock). No journal: nothing to do.
    pub(super) fn finish_journal(&self, lock: &git::ProcessLock) -> Result<(), ToolboxError> {
        let path = self.journal_path();
        let Ok(text) = std::fs::read(&path) else {
            return Ok(());
        };
        match serde_json::from_slice::<Journal>(&text) {
            Ok(journal) => {
                tracing::warn!(
                    pid = journal.pid,
                    commit = %journal.commit,
                    "finishing a write a crash interrupted"
                );
                self.finish(lock, &journal, true)?;
            }
            Err(e) => {
                // Written through a rename, so a torn journal cannot happen; be safe anyway:
                // without it, the leftover sweep below removes staged copies (roll back).
                tracing::warn!(error = %e, "ignoring an unreadable journal");
                let _ = std::fs::remove_file(&path);
            }
        }
        Ok(())
    }

    /// Complete (branch at the journal's commit) or undo (branch elsewhere) a journaled write,
    /// then remove the journal. Returns whether the write landed. With `refresh`, the index
    /// entries of the touched prefixes are rebuilt from disk (after a crash or failed publish).
    pub(super) fn finish(
        &self,
        lock: &git::ProcessLock,
        journal: &Journal,
        refresh: bool,
    ) -> Result<bool, ToolboxError> {
        let tools = self.tools_dir();
        let now = git::branch_target(&self.root, &journal.branch)?;
        let landed = now.as_deref() == Some(journal.commit.as_str());
        for m in &journal.moves {
            names::validate(&m.tool)?;
            let fin = tools.join(&m.tool);
            let trash = tools.join(&m.trash);
            let staging = m.staging.as_ref().map(|s| tools.join(s));
            if landed {
                let staging = staging.filter(|s| s.exists());
                let replace = m.staging.is_none() || staging.is_some();
                if replace && fin.exists() {
                    if let (Some(s), true) = (&staging, m.keep_env) {
                        for d in ENV_DIRS {
                            if fin.join(d).is_dir() && !s.join(d).exists() {
                                let _ = std::fs::rename(fin.join(d), s.join(d));
                            }
                        }
                    }
                    std::fs::rename(&fin, &trash).map_err(io_err("move aside", &fin))?;
                }
                if let Some(s) = &staging {
                    std::fs::rename(s, &fin).map_err(io_err("move into place", &fin))?;
                }
            } else {
                if let Some(s) = &staging
                    && s.exists()
                {
                    std::fs::remove_dir_all(s).map_err(io_err("remove", s))?;
                }
                if trash.exists() && !fin.exists() {
                    std::fs::rename(&trash, &fin).map_err(io_err("restore", &fin))?;
                }
            }
            if trash.exists() {
                std::fs::remove_dir_all(&trash).map_err(io_err("remove", &trash))?;
            }
        }
        let git_dir = self.root.join(".git");
        for f in &journal.files {
            check_top_level(&f.path)?;
            let fin = self.root.join(&f.path);
            let staging = f.staging.as_ref().map(|s| git_dir.join(s));
            if landed {
                match &staging {
                    Some(s) if s.exists() => {
                        std::fs::rename(s, &fin).map_err(io_err("move into place", &fin))?
                    }
                    Some(_) => {}
                    None => match std::fs::remove_file(&fin) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                            return Err(io_err("remove", &fin)(e));
                        }
                        _ => {}
                    },
                }
            } else if let Some(s) = &staging {
                let _ = std::fs::remove_file(s);
            }
        }
        if landed && refresh {
            let refs: Vec<&str> = journal.prefixes.iter().map(String::as_str).collect();
            git::refresh_index(lock, &self.root, &refs)?;
        }
        let path = self.journal_path();
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io_err("remove", &path)(e));
            }
            _ => {}
        }
        Ok(landed)
    }

    /// Finish or undo writes a crash interrupted: a journaled write is finished (see the
    /// module doc); hidden staging and trash directories of dead processes are removed.
    pub(crate) fn recover(&self) -> Result<(), ToolboxError> {
        let leftovers = self.leftovers();
        if leftovers.is_empty() && !self.journal_path().exists() {
            return Ok(());
        }
        let lock = self.lock()?;
        self.finish_journal(&lock)?;
        for p in self.leftovers() {
            let file = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // ".<what>-<name>-<pid>-<nanos>": a live process may still be preparing it.
            let mut parts = file.rsplitn(3, '-');
            let (_nanos, pid) = (parts.next(), parts.next());
            if pid
                .and_then(|p| p.parse::<u32>().ok())
                .is_some_and(git::process_alive)
            {
                continue;
            }
            // A trash directory outside any journal comes from an older toolsmith that moved
            // the old directory aside before committing: put it back if nothing replaced it.
            let rest = file.rsplitn(3, '-').nth(2).unwrap_or("");
            if let Some(name) = rest.strip_prefix(".trash-") {
                let target = self.tools_dir().join(name);
                if names::validate(name).is_ok() && !target.exists() {
                    tracing::warn!(
                        tool = name,
                        "restoring a tool directory after an interrupted write"
                    );
                    std::fs::rename(&p, &target).map_err(io_err("restore", &target))?;
                    continue;
                }
            }
            tracing::warn!(path = %p.display(), "removing a leftover of an interrupted write");
            if let Err(e) = std::fs::remove_dir_all(&p)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                return Err(io_err("remove", &p)(e));
            }
        }
        Ok(())
    }

    fn leftovers(&self) -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(self.tools_dir()) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n.starts_with(".staging-") || n.starts_with(".trash-")
                })
            })
            .collect();
        out.sort();
        out
    }
}

/// A top-level file an integration may write: one safe file name, not `tools` or `.git`.
pub(super) fn check_top_level(path: &str) -> Result<(), ToolboxError> {
    let ok = names::check_file_path(path).is_ok()
        && !path.contains('/')
        && path != TOOLS_DIR
        && !path.eq_ignore_ascii_case(".git");
    if ok {
        Ok(())
    } else {
        Err(ToolboxError::BadPath {
            path: path.to_string(),
            reason: "only single top-level files (not tools/ or .git) are integrated".into(),
        })
    }
}
