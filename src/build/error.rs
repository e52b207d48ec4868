//! Why a build did not commit, and what to do about it.

use super::{Diagnostic, cargo};
use crate::examples::ExampleFailure;
use crate::names::NameError;
use crate::toolbox::ToolboxError;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a build did not commit.
#[derive(Debug, Error)]
pub enum BuildError {
    #[error("invalid build request: {message}")]
    BadRequest { message: String },
    #[error("tool {name:?}: the built component cannot be a tool: {message}")]
    Component { name: String, message: String },
    #[error(transparent)]
    Name(#[from] NameError),
    #[error("there is no tool named {name:?}")]
    NoSuchTool { name: String },
    #[error("tool {name:?} is a {kind} tool; only wasm tools are built")]
    NotWasm { name: String, kind: String },
    #[error("tool {name:?} has an invalid tool.toml:\n{errors}")]
    Manifest { name: String, errors: String },
    #[error("{message}")]
    Refused { message: String },
    #[error("the build of {tool:?} was not run: {message}")]
    Sandbox {
        tool: String,
        message: String,
        hint: String,
    },
    #[error("cannot run cargo ({command}): {message}")]
    NoCargo { command: String, message: String },
    #[error("the Rust standard library for {} is not installed", cargo::TARGET)]
    NoTarget,
    #[error(
        "the Rust standard library for {} (component tools) is not installed",
        cargo::COMPONENT_TARGET
    )]
    NoComponentTarget,
    #[error("cannot run {} ({command}): {message}", language.chain())]
    NoComponentizer {
        language: super::componentize::Language,
        command: String,
        message: String,
    },
    #[error("{chain} failed to build {tool:?} ({status}):\n{output}")]
    Componentize {
        chain: &'static str,
        tool: String,
        status: String,
        output: String,
    },
    #[error(
        "tool {tool:?} does not compile ({total} error(s)):\n{}",
        render(diagnostics)
    )]
    Compile {
        tool: String,
        total: usize,
        diagnostics: Vec<Diagnostic>,
    },
    #[error("cargo failed to build {tool:?}: {message}\n{output}")]
    Cargo {
        tool: String,
        message: String,
        output: String,
    },
    #[error("tool {tool:?} built, but {} of its examples failed:\n{}", failures.len(), failures.iter().map(|f| format!("- {f}")).collect::<Vec<_>>().join("\n"))]
    Examples {
        tool: String,
        failures: Vec<ExampleFailure>,
    },
    #[error("the build of {tool:?} was cancelled")]
    Cancelled { tool: String },
    #[error("{action} {path}: {message}")]
    Io {
        action: &'static str,
        path: PathBuf,
        message: String,
    },
    #[error(transparent)]
    Toolbox(#[from] ToolboxError),
    #[error("internal error: {message}")]
    Internal { message: String },
}

fn render(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| {
            if d.rendered.is_empty() {
                d.to_string()
            } else {
                d.rendered.clone()
            }
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

impl BuildError {
    /// For `map_err`: a filesystem `action` on `path` failed.
    pub(crate) fn io<E: std::fmt::Display>(
        action: &'static str,
        path: &Path,
    ) -> impl FnOnce(E) -> BuildError {
        let path = path.to_path_buf();
        move |e| BuildError::Io {
            action,
            path,
            message: e.to_string(),
        }
    }
}

impl crate::error::Hint for BuildError {
    /// What the caller can do about it.
    fn hint(&self) -> Option<String> {
        Some(match self {
            BuildError::BadRequest { .. } => "see build_tool's input schema and the WASM section of toolsmith://guide".into(),
            BuildError::Component { .. } => "export one function whose parameters and result JSON can carry (no resources, futures or streams), and name it with `export` when the WIT exports several (toolsmith://guide, WASM components)".into(),
            BuildError::Name(e) => return e.hint(),
            BuildError::NoSuchTool { .. } => "give `source` and `description` to create it, or `toolsmith new NAME --lang rust`".into(),
            BuildError::NotWasm { .. } => "script tools need no build; to turn it into a wasm tool, delete it first".into(),
            BuildError::Manifest { .. } => "fix tool.toml at the lines shown (fields: toolsmith://guide)".into(),
            BuildError::Refused { .. } => "nothing was built; change the files as the message says and build again".into(),
            BuildError::Sandbox { hint, .. } => hint.clone(),
            BuildError::NoCargo { .. } => format!("install Rust with rustup (https://rustup.rs), then `rustup target add {}`; or set TOOLSMITH_CARGO to the cargo binary", cargo::TARGET),
            BuildError::NoTarget => format!("run `rustup target add {}`", cargo::TARGET),
            BuildError::NoComponentTarget => format!("run `rustup target add {}`", cargo::COMPONENT_TARGET),
            BuildError::NoComponentizer { language, .. } => format!("install {} with {} (scripts/setup.sh does), or set {} to its executable; `toolsmith doctor` checks it", language.chain(), language.install(), language.var()),
            BuildError::Componentize { .. } => "fix the source at the lines shown (the WIT world's function must be implemented as the guide shows) and build again; the previous version stays active".into(),
            BuildError::Compile { .. } => "fix the errors at the lines shown and build again; the previous version stays active".into(),
            BuildError::Cargo { .. } => "check the crate names and versions in `crates` (is the network reachable for crates not cached yet?)".into(),
            BuildError::Examples { .. } => "fix the tool or its examples; pass commit_anyway=true (CLI: --force) to commit it anyway".into(),
            BuildError::Cancelled { .. } => "nothing was committed; build again when ready".into(),
            BuildError::Io { .. } => "check permissions and free space in the toolsmith cache (TOOLSMITH_CACHE)".into(),
            BuildError::Toolbox(e) => return e.hint(),
            BuildError::Internal { .. } => return None,
        })
    }
}
