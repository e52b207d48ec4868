//! Sharing tools between toolboxes: import from git repositories and Gists (with conversion of
//! Skillz tools and Agent Skills), update an imported tool from its origin, export to a git
//! remote or as a Gist-shaped file.
//!
//! Invariants: nothing imported runs during import or update; every imported file passed the
//! checks in `fetch` (no symlinks, no submodules, no paths leaving the tool directory, no file
//! over [`MAX_FILE_BYTES`]); every imported manifest validated like any other; an import or
//! an applied update is one commit; a changed description, input schema or capability is
//! only ever applied when the caller asks for it (`apply`).

mod convert;
mod export;
mod fetch;
mod import;
mod skill;
mod update;

pub use convert::{Converted, infer_script_manifest};
pub use export::{ExportOutcome, export_tools, gist_json};
pub use fetch::{Fetched, fetch};
pub use import::{
    ImportOutcome, ImportRequest, ImportedTool, Refused, import_tool, resolve_source,
};
pub use update::{FieldChange, UpdateOutcome, update_tool};

use crate::history::HistoryError;
use crate::names::NameError;
use crate::toolbox::ToolboxError;

/// Largest file accepted from an imported repository.
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// Most files accepted in one imported tool.
pub const MAX_FILES: usize = 2000;
/// Most bytes accepted in one imported tool (all files together).
pub const MAX_TOOL_BYTES: u64 = 32 * 1024 * 1024;
/// Most bytes accepted in one import (all tools together).
pub const MAX_IMPORT_BYTES: u64 = 128 * 1024 * 1024;
/// Most files accepted in one import (all tools together).
pub const MAX_IMPORT_FILES: usize = 5_000;
/// Where Gists live (`<base>/<id>.git`); overridden by `TOOLSMITH_GIST_BASE`.
pub const DEFAULT_GIST_BASE: &str = "https://gist.github.com";

/// What went wrong while sharing.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    #[error("could not fetch {url}: {message}")]
    Fetch { url: String, message: String },
    #[error("{url} has no branch, tag or commit named {reference:?}")]
    UnknownRef { url: String, reference: String },
    #[error("{url} at {commit} has no directory {path:?}")]
    NoSuchPath {
        url: String,
        commit: String,
        path: String,
    },
    #[error(
        "refusing {path}: it is a symbolic link (to {target:?}); imported tools may only contain regular files"
    )]
    Symlink { path: String, target: String },
    #[error("refusing {path}: it is a git submodule")]
    Submodule { path: String },
    #[error("refusing the path {path:?}: {reason}")]
    BadPath { path: String, reason: String },
    #[error("refusing {path}: it is {size} bytes, over the limit of {limit} bytes")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("refusing {path}: it holds more than {limit} files")]
    TooManyFiles { path: String, limit: usize },
    #[error("{path:?} is not a tool: {reason}")]
    NotATool { path: String, reason: String },
    #[error("the imported tool {name:?} is not valid: {errors}")]
    Invalid { name: String, errors: String },
    #[error("the imported name {name:?} is not a valid tool name: {source}")]
    BadName { name: String, source: NameError },
    #[error("a tool named {name:?} already exists in this toolbox")]
    Exists { name: String },
    #[error("tool {name:?} was not imported (its tool.toml has no [origin])")]
    NotImported { name: String },
    #[error("the origin of {name:?} is now at {actual}, not at the approved {expected}")]
    OriginMoved {
        name: String,
        expected: String,
        actual: String,
    },
    #[error("{what}: {reason}")]
    Unsupported { what: String, reason: String },
    #[error("git {action} failed: {stderr}")]
    GitCli { action: String, stderr: String },
    #[error(transparent)]
    History(#[from] HistoryError),
    #[error(transparent)]
    Toolbox(#[from] ToolboxError),
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        source: std::io::Error,
    },
}

impl ShareError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            ShareError::Fetch { .. } => "check the URL (file://, a path, git://, ssh:// or https://) and that the repository is reachable".into(),
            ShareError::UnknownRef { .. } => "pass an existing branch, tag or full commit id as `ref`, or none for the default branch".into(),
            ShareError::NoSuchPath { .. } => "pass the tool's directory in that repository as `path`, e.g. tools/word_count".into(),
            ShareError::Symlink { .. } | ShareError::Submodule { .. } | ShareError::BadPath { .. } => {
                "this repository cannot be imported as it is; ask its author to replace the link with a regular file".into()
            }
            ShareError::TooLarge { .. } | ShareError::TooManyFiles { .. } => {
                "import a smaller tool, or copy it in by hand if you trust it".into()
            }
            ShareError::NotATool { .. } => "a tool directory holds a tool.toml (or a Skillz manifest.json, or an Agent Skill SKILL.md); a Gist may also hold a single script".into(),
            ShareError::Invalid { .. } => "fix the tool.toml in its repository (fields: toolsmith://guide), then import again".into(),
            ShareError::BadName { .. } => "give the tool a new name with `name`".into(),
            ShareError::Exists { .. } => "give the imported tool a new name with `name`, or delete the existing one first".into(),
            ShareError::NotImported { .. } => "only tools brought in with import_tool can be updated from their origin".into(),
            ShareError::OriginMoved { .. } => "run update_tool without apply to review the newer changes first".into(),
            ShareError::Unsupported { .. } => "import_tool takes a git URL or path, a Gist, and a `path` inside it (toolsmith://guide)".into(),
            ShareError::GitCli { .. } => "check that the remote exists and accepts pushes (a bare repository or a URL you may push to); the git CLI must be installed".into(),
            ShareError::History(e) => return e.hint(),
            ShareError::Toolbox(e) => return e.hint(),
            ShareError::Io { .. } => "check permissions and free space".into(),
        })
    }
}

pub(crate) fn io_err(
    action: &'static str,
    path: &std::path::Path,
) -> impl FnOnce(std::io::Error) -> ShareError {
    let path = path.display().to_string();
    move |source| ShareError::Io {
        action,
        path,
        source,
    }
}
