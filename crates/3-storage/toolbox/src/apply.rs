//! The one write path: bring one or many tool directories into a new state (files, removed,
//! or as they are on disk) as ONE commit, ordered so that a crash at any point leaves each tool
//! either as it was committed before or as it is committed after — never a live, uncommitted
//! version.
//!
//! The order:
//! 1. new directories are written to hidden `tools/.staging-<name>-<pid>-<nanos>` directories
//!    (outside the lock; git ignores `/tools/.*` and so does the indexer);
//! 2. under `.git/toolsmith.lock`, the git state is checked (no detached HEAD, merge, ...), the
//!    tree is built **from the staged copies** and the commit object written — no reference
//!    has moved yet, so a failure here changes nothing;
//! 3. a journal (`.git/toolsmith-journal`: branch, new commit, the directory moves) is written;
//! 4. the branch is moved to the commit (compare-and-swap on the parent) and the index written;
//! 5. the directories are swapped: the old one to `.trash-…`, the staged one into place; the
//!    trash is removed; then the journal.
//!
//! On open (and before every write), a journal left by a dead writer is finished: if the
//! branch points to the journal's commit the swaps are completed and the index refreshed
//! (roll forward), otherwise the staged directories are dropped (roll back).

use super::journal::{FileMove, Journal, Move, check_top_level};
use super::trusted::Provenance;
use super::{FileSpec, Toolbox, ToolboxError, io_err, layout, write_files};
use crate::git;
use crate::index::TOOLS_DIR;
use crate::names;
use std::path::PathBuf;

/// The new state of one tool directory.
#[derive(Debug, Clone)]
pub enum Change {
    /// Exactly these files. With `keep_env`, directories git ignores that hold the tool's
    /// environment or build output (`.venv`, `node_modules`, `target`, …) are carried over.
    Write {
        /// The files.
        files: Vec<FileSpec>,
        /// Carry the ignored environment directories over.
        keep_env: bool,
    },
    /// No directory.
    Remove,
    /// Whatever the directory holds on disk now (it was changed in place, e.g. by a build).
    InPlace,
}

impl Toolbox {
    /// Take the write lock: serializes writers across threads and processes.
    pub(crate) fn lock(&self) -> Result<git::ProcessLock, ToolboxError> {
        Ok(git::lock(&self.root)?)
    }

    pub(super) fn hidden(&self, what: &str, name: &str) -> PathBuf {
        let unique = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        self.tools_dir().join(format!(".{what}-{name}-{unique}"))
    }

    /// Apply `changes` (one per tool) as one commit with `message`. Returns the commit, or
    /// None when the tree did not change. All or nothing: on any error, nothing changed.
    /// Content made here (see [`Provenance`]) is recorded as trusted on this machine.
    pub fn apply(
        &self,
        changes: &[(String, Change)],
        message: &str,
    ) -> Result<Option<String>, ToolboxError> {
        let provenance = Provenance::of_message(message);
        let action = match provenance {
            Provenance::Local => "toolsmith",
            Provenance::Received => "toolsmith receive",
            Provenance::Restored => "toolsmith restore",
        };
        let commit = self.write(changes, &[], message, &git::Join::OnHead, action)?;
        if commit.is_some() && provenance == Provenance::Local {
            let names: Vec<String> = changes
                .iter()
                .filter(|(_, c)| !matches!(c, Change::Remove))
                .map(|(n, _)| n.clone())
                .collect();
            if let Err(e) = self.record_trusted(&names) {
                tracing::warn!(error = %e, "the change was committed but could not be recorded as trusted here");
            }
        }
        Ok(commit)
    }

    /// Integrate another line of history (a sync): the tool directories and top-level files
    /// that differ get their new content (`files`: a top-level file name and its content, or
    /// None to remove it), and the branch joins history as `join` says — fast-forwarded to an
    /// existing commit, or a merge commit with two parents — after checking that the tree built
    /// from the staged content is exactly the one to integrate. The same ordering, journal and
    /// lock as [`Toolbox::apply`]; nothing is recorded as trusted (the content came from
    /// elsewhere).
    pub fn integrate(
        &self,
        changes: &[(String, Change)],
        files: &[(String, Option<FileSpec>)],
        message: &str,
        join: &git::Join,
    ) -> Result<Option<String>, ToolboxError> {
        for (path, _) in files {
            check_top_level(path)?;
        }
        self.write(changes, files, message, join, "toolsmith sync")
    }

    fn write(
        &self,
        changes: &[(String, Change)],
        files: &[(String, Option<FileSpec>)],
        message: &str,
        join: &git::Join,
        action: &str,
    ) -> Result<Option<String>, ToolboxError> {
        let mut seen = std::collections::HashSet::new();
        for (name, change) in changes {
            names::validate(name)?;
            if !seen.insert(name.as_str()) {
                return Err(ToolboxError::BadPath {
                    path: format!("{TOOLS_DIR}/{name}"),
                    reason: "the tool is named twice in one change".into(),
                });
            }
            if let Change::Write { files, .. } = change {
                for f in files {
                    names::check_file_path(&f.path)?;
                }
            }
        }
        // 1. Stage outside the lock.
        let mut staged_dirs: Vec<(String, PathBuf)> = Vec::new();
        let mut staged_files: Vec<(String, PathBuf)> = Vec::new();
        let result = (|| {
            for (name, change) in changes {
                if let Change::Write { files, .. } = change {
                    let dir = self.hidden("staging", name);
                    staged_dirs.push((name.clone(), dir.clone()));
                    write_files(&dir, files)?;
                }
            }
            for (path, spec) in files {
                if let Some(spec) = spec {
                    let staged = self.staged_file(path);
                    staged_files.push((path.clone(), staged.clone()));
                    std::fs::write(&staged, &spec.contents).map_err(io_err("write", &staged))?;
                    #[cfg(unix)]
                    if spec.executable {
                        use std::os::unix::fs::PermissionsExt;
                        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o755))
                            .map_err(io_err("chmod", &staged))?;
                    }
                }
            }
            let lock = self.lock()?;
            self.finish_journal(&lock)?;
            let plan = Plan {
                changes,
                staged_dirs: &staged_dirs,
                files,
                staged_files: &staged_files,
                message,
                join,
                action,
            };
            self.apply_locked(&lock, &plan)
        })();
        for (_, dir) in &staged_dirs {
            if dir.exists() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
        for (_, file) in &staged_files {
            let _ = std::fs::remove_file(file);
        }
        result
    }

    /// A hidden place for the staged copy of a top-level file (in the git directory, on the
    /// same file system as the work tree, never seen by `git status`).
    fn staged_file(&self, path: &str) -> PathBuf {
        let hidden = self.hidden("staging", path);
        let unique = hidden
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.root.join(".git").join(format!("toolsmith{unique}"))
    }

    fn apply_locked(
        &self,
        lock: &git::ProcessLock,
        plan: &Plan<'_>,
    ) -> Result<Option<String>, ToolboxError> {
        let Plan {
            changes,
            staged_dirs,
            files,
            staged_files,
            message,
            join,
            action,
        } = *plan;
        let dir_of = |name: &str| {
            staged_dirs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, d)| d.clone())
        };
        let file_of = |path: &str| {
            staged_files
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, f)| f.clone())
        };
        let mut sources: Vec<(String, git::Source)> = changes
            .iter()
            .map(|(name, change)| {
                let source = match change {
                    Change::Write { .. } => dir_of(name)
                        .map(git::Source::Dir)
                        .unwrap_or(git::Source::Remove),
                    Change::Remove => git::Source::Remove,
                    Change::InPlace => git::Source::InPlace,
                };
                (format!("{TOOLS_DIR}/{name}"), source)
            })
            .collect();
        for (path, _) in files {
            let source = file_of(path)
                .map(git::Source::File)
                .unwrap_or(git::Source::Remove);
            sources.push((path.clone(), source));
        }
        // No credentials in a commit made here: the files going in are scanned before the
        // commit object. (An integrated line of history was committed elsewhere already.)
        if matches!(join, git::Join::OnHead) {
            self.scan_changes(changes, &dir_of)?;
        }
        // 2. Tree and commit object from the staged content; nothing visible moves yet.
        let sig = layout::signature(&self.root);
        let staged = git::stage_commit_joined(
            lock, &self.root, &sources, message, &sig, true, join, action,
        )?;
        let branch = self.branch()?;
        let target = staged
            .commit()
            .or_else(|| staged.parent())
            .unwrap_or_default();
        let moves: Vec<Move> = changes
            .iter()
            .filter_map(|(name, change)| {
                let trash = self.hidden("trash", name);
                let trash = trash.file_name()?.to_string_lossy().into_owned();
                match change {
                    Change::Write { keep_env, .. } => Some(Move {
                        tool: name.clone(),
                        staging: dir_of(name)
                            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned())),
                        trash,
                        keep_env: *keep_env,
                    }),
                    Change::Remove => Some(Move {
                        tool: name.clone(),
                        staging: None,
                        trash,
                        keep_env: false,
                    }),
                    Change::InPlace => None,
                }
            })
            .collect();
        let journal = Journal {
            pid: std::process::id(),
            commit: target,
            moves,
            prefixes: sources.iter().map(|(p, _)| p.clone()).collect(),
            branch,
            files: files
                .iter()
                .map(|(path, _)| FileMove {
                    path: path.clone(),
                    staging: file_of(path)
                        .and_then(|f| f.file_name().map(|n| n.to_string_lossy().into_owned())),
                })
                .collect(),
        };
        // 3. Journal the intent, 4. move the branch and write the index.
        self.write_journal(&journal)?;
        let commit = staged.commit();
        let published = staged.publish();
        // 5. Swap (or, if the branch did not move, roll back) exactly as a recovery would.
        // The index entries carry the stat data of the staged files, which a rename of their
        // directory keeps; only a failed publish needs the index rebuilt from disk.
        let landed = self.finish(lock, &journal, published.is_err())?;
        match published {
            Ok(()) => Ok(commit),
            Err(e) if landed => {
                tracing::warn!(error = %e, "the commit landed; the index was refreshed after an error");
                Ok(commit)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Refuse a change whose files hold a credential (see `commit_scan`).
    fn scan_changes(
        &self,
        changes: &[(String, Change)],
        dir_of: &dyn Fn(&str) -> Option<PathBuf>,
    ) -> Result<(), ToolboxError> {
        let scanner = crate::secrets::commit_scan::Scanner::new(
            &crate::secrets::commit_scan::stored_secrets(self.personal_dir()),
        );
        let mut findings = Vec::new();
        for (name, change) in changes {
            let dir = match change {
                Change::Write { .. } => dir_of(name),
                Change::InPlace => Some(self.tools_dir().join(name)),
                Change::Remove => None,
            };
            if let Some(dir) = dir {
                let prefix = format!("{TOOLS_DIR}/{name}");
                findings.extend(scanner.dir(&dir, &prefix));
            }
        }
        if findings.is_empty() {
            Ok(())
        } else {
            Err(ToolboxError::Credentials { findings })
        }
    }

    /// The full name of the branch HEAD points to.
    fn branch(&self) -> Result<String, ToolboxError> {
        let head = std::fs::read_to_string(self.root.join(".git/HEAD"))
            .map_err(io_err("read", &self.root.join(".git/HEAD")))?;
        Ok(head
            .trim()
            .strip_prefix("ref: ")
            .unwrap_or("HEAD")
            .to_string())
    }
}

/// What one write does (the arguments of [`Toolbox::apply_locked`]).
#[derive(Clone, Copy)]
struct Plan<'a> {
    changes: &'a [(String, Change)],
    staged_dirs: &'a [(String, PathBuf)],
    files: &'a [(String, Option<FileSpec>)],
    staged_files: &'a [(String, PathBuf)],
    message: &'a str,
    join: &'a git::Join,
    action: &'a str,
}
