//! What a build is asked (`BuildRequest`, the MCP `build_tool` arguments), how it runs
//! (`Options`) and what it answers (`BuildOutcome`).

use crate::examples::ExampleFailure;
use crate::manifest::{CrateDep, Declared, Example};
use crate::runner::script::Host;
use crate::toolbox::Actor;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

/// What to build: the MCP `build_tool` arguments. Every field but `name` is optional for an
/// existing tool (what is left out stays as it was); a new tool needs `source` and
/// `description`.
// Its fields are told in the guide, not in doc comments: a doc comment here would become the
// field's description in the `build_tool` input schema every client lists.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct BuildRequest {
    pub name: String,
    // src/main.rs (left out: rebuild the stored one); the guide says it.
    #[serde(default)]
    pub source: Option<String>,
    // path → text; the guide says it.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    // name → version; default serde_json; the guide says it.
    #[serde(default)]
    pub crates: Option<BTreeMap<String, CrateDep>>,
    // Build a component of this WIT world (the guide says it).
    #[serde(default)]
    pub world: Option<String>,
    // "rust" (default), "python" (a component from app.py) or "javascript" (from app.js):
    // the guide says it.
    #[serde(default)]
    #[schemars(extend("enum" = ["rust", "python", "javascript"]))]
    pub language: Option<String>,
    // The WIT text (default: from the schemas) and the function to run when it exports
    // several: the guide tells them; no description here keeps the meta-tools small.
    #[serde(default)]
    pub wit: Option<String>,
    #[serde(default)]
    pub export: Option<String>,
    /// Schemas, annotations, limits, capabilities (as `register_script` takes them).
    #[serde(flatten)]
    pub declared: Declared,
    #[serde(default)]
    pub examples: Option<Vec<Example>>,
}

impl BuildRequest {
    pub(crate) fn changes_manifest(&self) -> bool {
        self.description.is_some()
            || self.version.is_some()
            || self.tags.is_some()
            || self.crates.is_some()
            || self.world.is_some()
            || self.language.is_some()
            || self.export.is_some()
            || self.declared.any()
            || self.examples.is_some()
    }
}

/// How to build: who reports progress, who may cancel, who commits.
pub struct Options<'a> {
    /// Who hears the build's progress and log.
    pub host: &'a dyn Host,
    /// Cancelling it stops cargo and commits nothing.
    pub cancel: CancellationToken,
    /// Who the commit is made for (`Actor:` trailer).
    pub actor: Actor,
    /// Commit even when examples fail.
    pub commit_anyway: bool,
    /// The toolsmith cache (work directories and the shared cargo target directory); None:
    /// the app's (`Config::cache_dir`).
    pub cache: Option<PathBuf>,
}

impl<'a> Options<'a> {
    /// Options with the app's cache directory and a fresh cancellation token.
    pub fn new(host: &'a dyn Host, actor: impl Into<Actor>) -> Options<'a> {
        Options {
            host,
            cancel: CancellationToken::new(),
            actor: actor.into(),
            commit_anyway: false,
            cache: None,
        }
    }
}

/// What a build did.
#[derive(Debug, Clone, Serialize)]
pub struct BuildOutcome {
    /// The tool.
    pub name: String,
    /// "add", "update", or "unchanged" (nothing to commit).
    pub action: &'static str,
    /// The new commit, when one was made.
    pub commit: Option<String>,
    /// Whether cargo ran (false: the source hash was unchanged, so nothing was compiled).
    pub compiled: bool,
    /// Packages cargo compiled in this build (shared dependencies already built are absent).
    pub compiled_crates: Vec<String>,
    /// How long cargo ran, in milliseconds.
    pub cargo_ms: Option<u64>,
    /// How long the whole build took, in milliseconds.
    pub total_ms: u64,
    /// The source hash recorded in tool.toml.
    pub source_hash: String,
    /// The artifact's sha256 recorded in tool.toml.
    pub artifact_hash: String,
    /// The artifact's size.
    pub artifact_bytes: u64,
    /// Compiler warnings, one line each.
    pub warnings: Vec<String>,
    /// cargo's status lines.
    pub cargo_output: Vec<String>,
    /// The sandbox cargo ran in ("bubblewrap", "landlock", "seatbelt", "none"; absent when
    /// nothing was compiled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<&'static str>,
    /// How many examples ran.
    pub examples_run: usize,
    /// Examples that failed (only when committed anyway).
    pub example_failures: Vec<ExampleFailure>,
}
