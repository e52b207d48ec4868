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
    #[error(
        "{name:?} was imported from the Agent Skill at {path:?} when it had one script; it now has {count}, each its own tool, and cannot be updated as one"
    )]
    SkillSplit {
        name: String,
        path: String,
        count: usize,
    },
    #[error(
        "{name:?} runs {script} of the Agent Skill at {path:?}, which no longer has that script"
    )]
    SkillScriptGone {
        name: String,
        script: String,
        path: String,
    },
    #[error("{what}: {reason}")]
    Unsupported { what: String, reason: String },
    #[error("git {action} failed: {stderr}")]
    GitCli { action: String, stderr: String },
    #[error("{reference:?} is not a usable OCI reference: {reason}")]
    OciReference { reference: String, reason: String },
    #[error("the OCI registry refused or failed for {reference}: {message}")]
    OciRegistry { reference: String, message: String },
    #[error("there is no artifact at {reference}")]
    OciNotFound { reference: String },
    #[error(
        "refusing {reference}: {what} does not match its digest ({detail}); nothing was imported"
    )]
    OciDigest {
        reference: String,
        what: String,
        detail: String,
    },
    #[error("{reference} is not a toolsmith tool artifact: {reason}")]
    OciNotATool { reference: String, reason: String },
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
