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
    /// The request does not make sense.
    #[error("invalid build request: {message}")]
    BadRequest {
        /// What went wrong.
        message: String,
    },
    /// The built component cannot be a tool (its exports).
    #[error("tool {name:?}: the built component cannot be a tool: {message}")]
    Component {
        /// The tool.
        name: String,
        /// What went wrong.
        message: String,
    },
    /// A tool name that is not allowed.
    #[error(transparent)]
    Name(#[from] NameError),
    /// No tool of that name.
    #[error("there is no tool named {name:?}")]
    NoSuchTool {
        /// The tool.
        name: String,
    },
    /// Only WASM tools are built.
    #[error("tool {name:?} is a {kind} tool; only wasm tools are built")]
    NotWasm {
        /// The tool.
        name: String,
        /// Its kind.
        kind: String,
    },
    /// The tool's tool.toml does not validate.
    #[error("tool {name:?} has an invalid tool.toml:\n{errors}")]
    Manifest {
        /// The tool.
        name: String,
        /// The diagnostics, joined.
        errors: String,
    },
    /// Refused (a policy, a capability).
    #[error("{message}")]
    Refused {
        /// What went wrong.
        message: String,
    },
    /// The build could not be contained, so it did not run.
    #[error("the build of {tool:?} was not run: {message}")]
    Sandbox {
        /// The tool.
        tool: String,
        /// What went wrong.
        message: String,
        /// How a person can fix it or knowingly opt out.
        hint: String,
    },
    /// cargo could not be run.
    #[error("cannot run cargo ({command}): {message}")]
    NoCargo {
        /// The command.
        command: String,
        /// What went wrong.
        message: String,
    },
    /// The wasm32-wasip1 standard library is not installed.
    #[error("the Rust standard library for {} is not installed", cargo::TARGET)]
    NoTarget,
    /// The wasm32-wasip2 standard library is not installed.
    #[error(
        "the Rust standard library for {} (component tools) is not installed",
        cargo::COMPONENT_TARGET
    )]
    NoComponentTarget,
    /// componentize-py or ComponentizeJS could not be run.
    #[error("cannot run {} ({command}): {message}", language.chain())]
    NoComponentizer {
        /// The language.
        language: super::componentize::Language,
        /// The command.
        command: String,
        /// What went wrong.
        message: String,
    },
    /// componentize-py or ComponentizeJS failed.
    #[error("{chain} failed to build {tool:?} ({status}):\n{output}")]
    Componentize {
        /// The tool chain.
        chain: &'static str,
        /// The tool.
        tool: String,
        /// How it ended.
        status: String,
        /// What it printed (the end).
        output: String,
    },
    /// app.py cannot be a Python component as it is (its function, its imports).
    #[error("tool {tool:?}: {message}")]
    Python {
        /// The tool.
        tool: String,
        /// What is wrong, and where.
        message: String,
        /// What to do.
        hint: String,
    },
    /// The Rust source does not compile.
    #[error(
        "tool {tool:?} does not compile ({total} error(s)):\n{}",
        render(diagnostics)
    )]
    Compile {
        /// The tool.
        tool: String,
        /// How many errors.
        total: usize,
        /// The first diagnostics, located.
        diagnostics: Vec<Diagnostic>,
    },
    /// cargo failed otherwise.
    #[error("cargo failed to build {tool:?}: {message}\n{output}")]
    Cargo {
        /// The tool.
        tool: String,
        /// What went wrong.
        message: String,
        /// What it printed (the end).
        output: String,
    },
    /// The tool built, but examples failed.
    #[error("tool {tool:?} built, but {} of its examples failed:\n{}", failures.len(), failures.iter().map(|f| format!("- {f}")).collect::<Vec<_>>().join("\n"))]
    Examples {
        /// The tool.
        tool: String,
        /// The examples that failed.
        failures: Vec<ExampleFailure>,
    },
    /// The build was cancelled.
    #[error("the build of {tool:?} was cancelled")]
    Cancelled {
        /// The tool.
        tool: String,
    },
    /// Reading or writing a file failed.
    #[error("{action} {path}: {message}")]
    Io {
        /// What was done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The toolbox could not be written.
    #[error(transparent)]
    Toolbox(#[from] ToolboxError),
    /// A bug.
    #[error("internal error: {message}")]
    Internal {
        /// What went wrong.
        message: String,
    },
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

impl toolsmith_error::Hint for BuildError {
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
            BuildError::Python { hint, .. } => hint.clone(),
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
