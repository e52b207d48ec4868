//! Sharing tools between toolboxes: import from git repositories, Gists (with conversion of
//! Skillz tools and Agent Skills) and OCI registries, update an imported tool from its origin,
//! export to a git remote, an OCI registry or as a Gist-shaped file.
//!
//! Invariants: nothing imported runs during import or update; every imported file passed the
//! checks in `fetch` (no symlinks, no submodules, no paths leaving the tool directory, no file
//! over [`MAX_FILE_BYTES`]); every imported manifest validated like any other; an import or
//! an applied update is one commit; a changed description, input schema or capability is
//! only ever applied when the caller asks for it (`apply`); an OCI artifact is imported only
//! after every digest in it checked out, and its manifest digest is pinned in `[origin]`.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_error as error;
use toolsmith_git as git;
use toolsmith_guide as guide;
use toolsmith_hashing as hashing;
use toolsmith_history as history;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_names as names;
use toolsmith_toolbox as toolbox;
use toolsmith_trust as trust;

mod convert;
mod converted;
mod export;
mod fetch;
mod import;
mod oci;
mod oci_layout;
mod prepare;
mod skill;
pub mod skills;
mod update;

pub use convert::infer_script_manifest;
pub use converted::{Converted, SkillScript};
pub use export::{ExportOutcome, export_tools, gist_json};
pub use fetch::{Fetched, fetch};
pub use import::{
    ImportOutcome, ImportRequest, ImportedTool, Refused, import_tool, resolve_source,
};
pub use oci::{LayerInfo, OciExportOutcome, export_oci, is_oci, parse_reference};
pub use oci_layout::{
    LOCKFILE as OCI_LOCKFILE_MEDIA_TYPE, SOURCE_TAR as OCI_SOURCE_MEDIA_TYPE,
    TOOL_CONFIG as OCI_TOOL_CONFIG_MEDIA_TYPE, TOOL_MANIFEST as OCI_TOOL_MANIFEST_MEDIA_TYPE,
    TOOL_TAR as OCI_TOOL_MEDIA_TYPE, WASM_CONFIG as OCI_WASM_CONFIG_MEDIA_TYPE,
    WASM_LAYER as OCI_WASM_MEDIA_TYPE,
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
    /// The repository could not be fetched.
    #[error("could not fetch {url}: {message}")]
    Fetch {
        /// The repository.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// No branch, tag or commit of that name.
    #[error("{url} has no branch, tag or commit named {reference:?}")]
    UnknownRef {
        /// The repository.
        url: String,
        /// The name asked for.
        reference: String,
    },
    /// The repository has no such directory.
    #[error("{url} at {commit} has no directory {path:?}")]
    NoSuchPath {
        /// The repository.
        url: String,
        /// The commit.
        commit: String,
        /// The path.
        path: String,
    },
    /// A symbolic link in what was fetched.
    #[error(
        "refusing {path}: it is a symbolic link (to {target:?}); imported tools may only contain regular files"
    )]
    Symlink {
        /// The path.
        path: String,
        /// Where it points.
        target: String,
    },
    /// A git submodule in what was fetched.
    #[error("refusing {path}: it is a git submodule")]
    Submodule {
        /// The path.
        path: String,
    },
    /// A file path that is not allowed.
    #[error("refusing the path {path:?}: {reason}")]
    BadPath {
        /// The path.
        path: String,
        /// Why.
        reason: String,
    },
    /// A file over the size limit.
    #[error("refusing {path}: it is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// The path.
        path: String,
        /// Its size in bytes.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// More files than the limit.
    #[error("refusing {path}: it holds more than {limit} files")]
    TooManyFiles {
        /// The path.
        path: String,
        /// The limit.
        limit: usize,
    },
    /// The directory holds no tool (no tool.toml, Skillz manifest or SKILL.md).
    #[error("{path:?} is not a tool: {reason}")]
    NotATool {
        /// The path.
        path: String,
        /// Why.
        reason: String,
    },
    /// The tool does not validate.
    #[error("the imported tool {name:?} is not valid: {errors}")]
    Invalid {
        /// The tool.
        name: String,
        /// The diagnostics, joined.
        errors: String,
    },
    /// The name it would get is not a valid tool name.
    #[error("the imported name {name:?} is not a valid tool name: {source}")]
    BadName {
        /// The tool.
        name: String,
        /// The cause.
        source: NameError,
    },
    /// A tool of that name is already in the toolbox.
    #[error("a tool named {name:?} already exists in this toolbox")]
    Exists {
        /// The tool.
        name: String,
    },
    /// `update_tool` of a tool with no `[origin]`.
    #[error("tool {name:?} was not imported (its tool.toml has no [origin])")]
    NotImported {
        /// The tool.
        name: String,
    },
    /// The origin moved past the commit a person approved.
    #[error("the origin of {name:?} is now at {actual}, not at the approved {expected}")]
    OriginMoved {
        /// The tool.
        name: String,
        /// The commit approved.
        expected: String,
        /// The commit the origin is at now.
        actual: String,
    },
    /// A one-script skill now has several scripts.
    #[error(
        "{name:?} was imported from the Agent Skill at {path:?} when it had one script; it now has {count}, each its own tool, and cannot be updated as one"
    )]
    SkillSplit {
        /// The tool.
        name: String,
        /// The path.
        path: String,
        /// How many scripts it has now.
        count: usize,
    },
    /// The skill no longer has the script the tool runs.
    #[error(
        "{name:?} runs {script} of the Agent Skill at {path:?}, which no longer has that script"
    )]
    SkillScriptGone {
        /// The tool.
        name: String,
        /// The script.
        script: String,
        /// The path.
        path: String,
    },
    /// A source or an operation toolsmith does not support.
    #[error("{what}: {reason}")]
    Unsupported {
        /// What.
        what: String,
        /// Why.
        reason: String,
    },
    /// The git CLI failed.
    #[error("git {action} failed: {stderr}")]
    GitCli {
        /// What git was asked to do.
        action: String,
        /// What git said.
        stderr: String,
    },
    /// Not a usable OCI reference.
    #[error("{reference:?} is not a usable OCI reference: {reason}")]
    OciReference {
        /// The reference as given.
        reference: String,
        /// Why.
        reason: String,
    },
    /// The registry refused or failed.
    #[error("the OCI registry refused or failed for {reference}: {message}")]
    OciRegistry {
        /// The reference as given.
        reference: String,
        /// What went wrong.
        message: String,
    },
    /// No artifact at that reference.
    #[error("there is no artifact at {reference}")]
    OciNotFound {
        /// The reference as given.
        reference: String,
    },
    /// What the registry sent does not match its digest.
    #[error(
        "refusing {reference}: {what} does not match its digest ({detail}); nothing was imported"
    )]
    OciDigest {
        /// The reference as given.
        reference: String,
        /// What.
        what: String,
        /// How it differs.
        detail: String,
    },
    /// The artifact is not a toolsmith tool.
    #[error("{reference} is not a toolsmith tool artifact: {reason}")]
    OciNotATool {
        /// The reference as given.
        reference: String,
        /// Why.
        reason: String,
    },
    /// A held tool: nothing of it leaves this machine until a person trusts it.
    #[error("{} is not exported: {}", .0.name, .0.withheld().note())]
    Held(Box<crate::trust::Held>),
    /// Its history could not be read or written.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// The toolbox could not be read or written.
    #[error(transparent)]
    Toolbox(#[from] ToolboxError),
    /// Reading or writing a file failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was done.
        action: &'static str,
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// A tool's version could not be read: told as history's error.
impl From<crate::history::VersionsError> for ShareError {
    fn from(e: crate::history::VersionsError) -> Self {
        ShareError::History(e.into())
    }
}

impl crate::error::Hint for ShareError {
    /// What the user can do about it.
    fn hint(&self) -> Option<String> {
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
            ShareError::SkillSplit { name, .. } => format!("import the skill again under another name (import_tool with its source, `path` and a `name`: one tool per script), then delete {name} with delete_tool"),
            ShareError::SkillScriptGone { name, .. } => format!("keep {name} as it is, or delete it with delete_tool; the skill's other tools update without it"),
            ShareError::Unsupported { .. } => "import_tool takes a git URL or path, a Gist, and a `path` inside it (toolsmith://guide)".into(),
            ShareError::GitCli { .. } => "check that the remote exists and accepts pushes (a bare repository or a URL you may push to); the git CLI must be installed".into(),
            ShareError::OciReference { .. } => "write oci://REGISTRY/REPOSITORY:TAG or oci://REGISTRY/REPOSITORY@sha256:DIGEST with the registry host spelled out and a lowercase repository, e.g. oci://ghcr.io/you/word_count:1.0 or oci://127.0.0.1:5000/tools/word_count:1.0".into(),
            ShareError::OciRegistry { .. } => "check that the registry is reachable (TLS is required except for a registry on this machine) and that ~/.docker/config.json (or $DOCKER_CONFIG/config.json) holds credentials for it, e.g. after `docker login REGISTRY`".into(),
            ShareError::OciNotFound { .. } => "check the repository and tag (or digest); publish a tool there with export_tool --oci (toolsmith export NAME --oci REF)".into(),
            ShareError::OciDigest { .. } => "the registry's copy is not what was published (altered in storage or in transit); do not use it: ask the publisher to push again, and import by a digest you got from them (oci://REGISTRY/REPO@sha256:…)".into(),
            ShareError::OciNotATool { .. } => "import_tool takes OCI artifacts published by export_tool --oci (a WASM tool in the CNCF wasm layout, or a toolsmith tool tar); check the reference".into(),
            ShareError::Held(h) => return h.hint(),
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
