//! The toolbox: a git repository whose `tools/<name>/` directories are the tools.
//!
//! Invariant: this is the only module that writes into a toolbox, through one operation,
//! [`Toolbox::apply`] (see `apply.rs` for the crash-safe ordering). Every mutation is exactly
//! one commit on the current branch with the index updated (plain `git status` stays clean),
//! made under one lock (`.git/toolsmith.lock`), refused in unsafe git states (detached HEAD,
//! merge, rebase, ...), and a crash at any point leaves each tool as committed before or as
//! committed after, never a live uncommitted version. Nothing is ever written outside the
//! toolbox.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_config as config;
use toolsmith_error as error;
use toolsmith_git as git;
use toolsmith_hashing as hashing;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_names as names;
use toolsmith_platform as platform;
use toolsmith_secrets as secrets;

mod apply;
mod journal;
mod layout;
mod staging;
mod state;
mod trusted;
mod verify;
mod write;

pub use apply::Change;
pub use journal::JOURNAL_FILE;
pub use layout::seed_files;
pub use staging::Staging;
pub use trusted::{ALLOWED_SIGNERS, Provenance, TRUSTED_FILE, Trusted};
pub use verify::{Drift, SETTINGS_FILE, UncommittedPolicy};
pub use write::{Actor, FileSpec, WriteOutcome, message, write_files};

use crate::index::TOOLS_DIR;
use crate::names::NameError;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// What went wrong with a toolbox operation.
#[derive(Debug, Error)]
pub enum ToolboxError {
    /// The directory is not a toolbox (not a git repository, or no `tools/`).
    #[error("{path} is not a toolbox: {reason}")]
    NotAToolbox {
        /// The directory.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
    /// `init` into a directory that holds something.
    #[error("{path} already exists and is not empty")]
    AlreadyExists {
        /// The directory.
        path: PathBuf,
    },
    /// A tool name that is not allowed.
    #[error(transparent)]
    Name(#[from] NameError),
    /// No tool of that name.
    #[error("there is no tool named {name:?}")]
    NoSuchTool {
        /// The name asked for.
        name: String,
    },
    /// A tool of that name is there already.
    #[error("tool {name:?} already exists")]
    ToolExists {
        /// The name.
        name: String,
    },
    /// A file path inside a tool that is not allowed.
    #[error("file path {path:?} is not allowed: {reason}")]
    BadPath {
        /// The path as given.
        path: String,
        /// Why not.
        reason: String,
    },
    /// Reading or writing a file failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was done ("read", "write", ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The git layer failed.
    #[error(transparent)]
    Git(#[from] git::GitError),
    /// The change holds credentials (`secrets::commit_scan`).
    #[error("refused to commit credentials: {}", findings.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Credentials {
        /// Where, and what they look like (never the values).
        findings: Vec<crate::secrets::commit_scan::Finding>,
    },
}

impl From<names::PathError> for ToolboxError {
    fn from(e: names::PathError) -> ToolboxError {
        ToolboxError::BadPath {
            path: e.path,
            reason: e.reason,
        }
    }
}

impl crate::error::Hint for ToolboxError {
    /// What the user can do about it.
    fn hint(&self) -> Option<String> {
        Some(match self {
            ToolboxError::NotAToolbox { path, .. } => format!(
                "create one with `toolsmith init {}`, or pass --toolbox DIR",
                path.display()
            ),
            ToolboxError::AlreadyExists { .. } => "choose an empty or new directory".into(),
            ToolboxError::Name(e) => return e.hint(),
            ToolboxError::NoSuchTool { .. } => "`toolsmith list` shows the tools".into(),
            ToolboxError::ToolExists { .. } => {
                "pick another name, or update the existing tool".into()
            }
            ToolboxError::BadPath { .. } => {
                return names::PathError {
                    path: String::new(),
                    reason: String::new(),
                }
                .hint();
            }
            ToolboxError::Io { .. } => "check permissions and free space".into(),
            ToolboxError::Git(git::GitError::Locked { path, .. }) => format!(
                "wait for that process to finish; if it is gone and the file stays, delete {}",
                path.display()
            ),
            ToolboxError::Git(git::GitError::UnsafeState(s)) => format!(
                "end it with {}, then retry; reading and calling tools keeps working meanwhile",
                s.command
            ),
            ToolboxError::Git(_) => return None,
            ToolboxError::Credentials { .. } => "never put a key or token in a tool's files: declare it in tool.toml (`[secrets]`, e.g. GITHUB_TOKEN = \"what it is for\"; register_script takes `secrets`), read it from the environment variable of that name, and have a person set the value with `toolsmith secret set NAME`".into(),
        })
    }
}

pub(crate) fn io_err<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> ToolboxError + 'a {
    move |source| ToolboxError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// An open toolbox.
#[derive(Debug, Clone)]
pub struct Toolbox {
    root: PathBuf,
    /// This person's private directory (`Config::data_dir`): the stored secrets the commit
    /// scan looks for, the history memo's key. Set by `App` to its own (`with_personal`).
    personal: PathBuf,
    /// What this process derived from the toolbox (`state`), shared by clones of the handle.
    state: std::sync::Arc<state::State>,
}

/// A toolbox is its root directory where a path is asked for (reading its git history).
impl AsRef<Path> for Toolbox {
    fn as_ref(&self) -> &Path {
        &self.root
    }
}

impl Toolbox {
    /// Open an existing toolbox, finishing any write a crash interrupted.
    pub fn open(root: &Path) -> Result<Toolbox, ToolboxError> {
        let not = |reason: &str| ToolboxError::NotAToolbox {
            path: root.to_path_buf(),
            reason: reason.to_string(),
        };
        if !root.is_dir() {
            return Err(not("the directory does not exist"));
        }
        if !root.join(".git").exists() {
            return Err(not("it is not a git repository (no .git)"));
        }
        let root = root.canonicalize().map_err(io_err("resolve", root))?;
        let tb = Toolbox {
            root,
            // The one process-wide fallback (see `config`); `App` sets its own.
            personal: crate::config::Config::process().data_dir.clone(),
            state: Default::default(),
        };
        std::fs::create_dir_all(tb.tools_dir()).map_err(io_err("create", &tb.tools_dir()))?;
        tb.recover()?;
        if let Err(e) = tb.ensure_trust_baseline() {
            tracing::warn!(error = %e, "cannot record this machine's trust baseline");
        }
        Ok(tb)
    }

    /// Create a new toolbox at `root` (which must be absent or empty), with a README,
    /// .gitignore, .gitattributes, `tools/` and the given extra files, as one commit.
    pub fn init(
        root: &Path,
        extra: &[(String, Vec<u8>)],
        actor: impl Into<Actor>,
    ) -> Result<Toolbox, ToolboxError> {
        let actor: Actor = actor.into();
        if root.exists() {
            let mut rd = std::fs::read_dir(root).map_err(io_err("read", root))?;
            if rd.next().is_some() {
                return Err(ToolboxError::AlreadyExists {
                    path: root.to_path_buf(),
                });
            }
        }
        let mut files: Vec<(String, Vec<u8>)> = layout::skeleton();
        files.extend(extra.iter().cloned());
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(p, b)| (p.as_str(), b.as_slice()))
            .collect();
        let message = write::message("init", "toolbox", "a new toolsmith toolbox", &actor, None);
        git::init_with_files(root, &refs, &message, &layout::signature(root))?;
        Toolbox::open(root)
    }

    /// Open the toolbox at `root`, creating and seeding it from the example toolbox first when
    /// it does not exist yet.
    pub fn open_or_create(root: &Path) -> Result<Toolbox, ToolboxError> {
        if root.join(".git").exists() {
            return Toolbox::open(root);
        }
        let seed = seed_files();
        tracing::info!(toolbox = %root.display(), tools = seed.len(), "creating the toolbox, seeded from store-example");
        Toolbox::init(root, &seed, "toolsmith")
    }

    /// The identity this toolbox's commits are made with (see `layout::signature`), and
    /// whether it is toolsmith's fallback because git has none configured.
    pub fn identity(&self) -> (crate::git::Signature, bool) {
        let sig = layout::signature(self.root());
        let fallback = sig.name == "toolsmith" && sig.email == "toolsmith@localhost";
        (sig, fallback)
    }

    /// The toolbox's root directory (the repository's work tree).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The same toolbox, with `dir` as this person's private directory (what the commit scan
    /// and the history memo read: an `App` hands its own to its toolbox).
    pub fn with_personal(mut self, dir: impl Into<PathBuf>) -> Toolbox {
        self.personal = dir.into();
        self
    }

    /// This person's private directory, as this toolbox reads it (`with_personal`).
    pub fn personal_dir(&self) -> &Path {
        &self.personal
    }

    /// Its `tools/` directory.
    pub fn tools_dir(&self) -> PathBuf {
        self.root.join(TOOLS_DIR)
    }

    /// The directory of a tool, after validating the name.
    pub fn tool_dir(&self, name: &str) -> Result<PathBuf, ToolboxError> {
        names::validate(name)?;
        Ok(self.tools_dir().join(name))
    }

    /// Commits touching one tool (or the whole toolbox), newest first.
    pub fn log(
        &self,
        name: Option<&str>,
        limit: usize,
    ) -> Result<Vec<git::CommitInfo>, ToolboxError> {
        let prefix = match name {
            Some(n) => {
                names::validate(n)?;
                Some(format!("{TOOLS_DIR}/{n}"))
            }
            None => None,
        };
        Ok(git::log(&self.root, prefix.as_deref(), limit)?)
    }
}
