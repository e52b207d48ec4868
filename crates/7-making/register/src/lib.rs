//! Registering a script tool (MCP `register_script`, CLI `toolsmith register`): build the
//! manifest from a spec, install the dependencies and pin them in lockfiles, stage the tool
//! directory and run its examples there, then write it as one commit. Nothing is committed when
//! any step fails.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_app as app;
use toolsmith_app::examples;
use toolsmith_approval as approval;
use toolsmith_deps as deps;
use toolsmith_error as error;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_names as names;
use toolsmith_platform as platform;
use toolsmith_runner as runner;
use toolsmith_telemetry as telemetry;
use toolsmith_toolbox as toolbox;

use crate::app::App;
use crate::deps::{DepsError, Progress};
use crate::index::Tool;
use crate::manifest::{
    Declared, Dependencies, Example, Kind, LANGUAGES, Manifest, Protocol, Run, SandboxMode,
};
use crate::runner::script::Host;
use crate::toolbox::{Actor, FileSpec, WriteOutcome};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;

/// How long a registration waits for what its tool's first call will find waiting (its fork
/// server, a spare) to come up; it is started in any case.
const WARM_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Everything `register_script` accepts (the MCP arguments, and the CLI flags). Its JSON
/// Schema is `register_script`'s input schema.
// No doc comments on most fields: they would become the schema's descriptions, sent to the
// model in every tools/list (the guide says what each field is).
#[allow(missing_docs)]
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptSpec {
    pub name: String,
    // `code` is the old spelling, kept as an alias.
    #[serde(alias = "code")]
    pub source: String,
    pub description: String,
    #[serde(default)]
    #[schemars(extend("enum" = ["python", "node", "ruby", "bash", "perl", "php", "other"]))]
    pub language: Option<String>,
    // e.g. ["lua5.4"] (the guide says it; a doc comment would be sent with the schema)
    #[serde(default)]
    pub interpreter: Option<Vec<String>>,
    #[serde(default)]
    pub entry: Option<String>,
    /// Default: detected
    #[serde(default)]
    pub protocol: Option<Protocol>,
    #[serde(default)]
    pub worker: Option<bool>,
    #[serde(default)]
    pub sandbox: Option<SandboxMode>,
    #[serde(default)]
    pub dependencies: Option<DepsSpec>,
    /// Schemas, annotations, limits, capabilities (as `build_tool` takes them).
    #[serde(flatten)]
    pub declared: Declared,
    #[serde(default)]
    pub examples: Vec<ExampleSpec>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub version: Option<String>,
    // Python or JavaScript: a WebAssembly component build instead (the guide says it).
    #[serde(default)]
    pub component: Option<bool>,
}

/// One example as a registration gives it: strict, so a misspelled key (`expected_output`) is
/// an error naming the allowed ones, never an example that silently checks nothing.
// Its fields are `[[examples]]`'s (manifest::Example); doc comments would go to the model.
#[allow(missing_docs)]
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExampleSpec {
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub input: Option<Value>,
    #[serde(default)]
    pub output: Option<Value>,
    #[serde(default)]
    pub output_text: Option<String>,
}

impl ExampleSpec {
    /// The manifest's `[[examples]]` entry.
    pub fn to_manifest(&self) -> Example {
        Example {
            description: self.description.clone(),
            input: self.input.clone().unwrap_or_else(|| json!({})),
            output: self.output.clone(),
            output_text: self.output_text.clone(),
        }
    }
}

/// The dependencies a registration asks for.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DepsSpec {
    /// pip requirements
    #[serde(default)]
    pub pip: Vec<String>,
    /// npm packages
    #[serde(default)]
    pub npm: NpmSpec,
}

/// npm packages, in either shape: `{"name": "version"}` or `["name@version", ...]` (the
/// shape of the CLI's `--npm name@version`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NpmSpec {
    // No doc comments: schemars would send them to the model.
    #[allow(missing_docs)]
    Map(BTreeMap<String, String>),
    #[allow(missing_docs)]
    List(Vec<String>),
}

impl Default for NpmSpec {
    fn default() -> Self {
        NpmSpec::Map(BTreeMap::new())
    }
}

impl DepsSpec {
    /// The manifest's `[dependencies]`.
    pub fn to_manifest(&self) -> Dependencies {
        let npm = match &self.npm {
            NpmSpec::Map(m) => m.clone(),
            NpmSpec::List(l) => l.iter().map(|s| crate::manifest::npm_package(s)).collect(),
        };
        Dependencies {
            crates: BTreeMap::new(),
            pip: self.pip.clone(),
            npm,
        }
    }
}

/// Other spellings of a language, accepted wherever a language is named (register_script,
/// execute_code): (spelling, canonical name).
pub const LANGUAGE_ALIASES: &[(&str, &str)] = &[
    ("javascript", "node"),
    ("js", "node"),
    ("nodejs", "node"),
    ("py", "python"),
    ("python3", "python"),
    ("sh", "bash"),
    ("shell", "bash"),
    ("rb", "ruby"),
    ("pl", "perl"),
];

/// The canonical name of a language spelling ("javascript" → "node", "py" → "python", ...).
pub fn canonical_language(language: &str) -> String {
    let lower = language.to_ascii_lowercase();
    LANGUAGE_ALIASES
        .iter()
        .find(|(a, _)| *a == lower)
        .map_or(lower.clone(), |(_, c)| (*c).to_string())
}

/// Why a registration did not commit.
#[derive(Debug, Error)]
pub enum RegisterError {
    /// The spec makes no valid tool (what is wrong, said).
    #[error("invalid tool: {0}")]
    Invalid(String),
    /// Installing or locking the dependencies failed.
    #[error(transparent)]
    Deps(#[from] DepsError),
    /// Examples gave other results than they promise.
    #[error("{} of {} examples failed; nothing was committed:\n{}", failures.len(), total, failures.iter().map(|f| format!("- {f}")).collect::<Vec<_>>().join("\n"))]
    Examples {
        /// How many examples ran.
        total: usize,
        /// The ones that failed.
        failures: Vec<crate::examples::ExampleFailure>,
    },
    /// Writing the tool (the commit) failed.
    #[error(transparent)]
    Toolbox(#[from] crate::toolbox::ToolboxError),
}

impl crate::error::Hint for RegisterError {
    fn hint(&self) -> Option<String> {
        match self {
            RegisterError::Invalid(_) => Some("the fields are in register_script's input schema and the toolsmith://guide resource".into()),
            RegisterError::Deps(e) => e.hint(),
            RegisterError::Examples { .. } => {
                Some("fix the code or the examples; the examples show what each input gave".into())
            }
            RegisterError::Toolbox(e) => e.hint(),
        }
    }
}

/// What a registration did.
#[derive(Debug, Clone, Serialize)]
pub struct Registered {
    /// The tool's name.
    pub name: String,
    /// "add" or "update".
    pub action: &'static str,
    /// The new commit (None when the tool was already exactly so).
    pub commit: Option<String>,
    /// How the script talks to the host ("jsonrpc" or "plain").
    pub protocol: Protocol,
    /// How `protocol` was chosen: "given", or "detected" from the source.
    pub protocol_from: &'static str,
    /// The files written, relative to the tool's directory.
    pub files: Vec<String>,
    /// How many examples ran and passed.
    pub examples_passed: usize,
    /// What the person should know (a deprecated spelling, a capability waiting for approval).
    pub warnings: Vec<String>,
}

fn default_entry(language: Option<&str>) -> String {
    match language.and_then(|l| LANGUAGES.iter().find(|(n, _, _)| *n == l)) {
        Some((_, _, ext)) => format!("main.{ext}"),
        None => "main".into(),
    }
}

/// The manifest a spec describes (not yet validated).
pub fn manifest_of(spec: &ScriptSpec) -> Manifest {
    let language = match (&spec.language, &spec.interpreter) {
        (Some(l), _) => Some(canonical_language(l)),
        (None, Some(_)) => Some("other".into()),
        (None, None) => None,
    };
    let input_schema = spec.declared.input_schema.clone().unwrap_or_else(|| {
        let mut m = Map::new();
        m.insert("type".into(), json!("object"));
        m.insert("properties".into(), json!({}));
        m
    });
    Manifest {
        format: manifest::FORMAT_VERSION,
        name: spec.name.clone(),
        description: spec.description.clone(),
        kind: Kind::Script,
        version: spec.version.clone(),
        tags: spec.tags.clone(),
        pinned: false,
        run: Run {
            artifact: None,
            world: None,
            export: None,
            entry: Some(
                spec.entry
                    .clone()
                    .unwrap_or_else(|| default_entry(language.as_deref())),
            ),
            language,
            interpreter: spec.interpreter.clone(),
            protocol: Some(
                spec.protocol.unwrap_or_else(|| {
                    Protocol::detect(&spec.source, spec.worker.unwrap_or(false))
                }),
            ),
            worker: spec.worker.unwrap_or(false),
            sandbox: spec.sandbox,
            long: false,
        },
        input_schema: Some(std::sync::Arc::new(input_schema)),
        input_schema_file: None,
        output_schema: spec.declared.output_schema.clone().map(std::sync::Arc::new),
        output_schema_file: None,
        annotations: spec.declared.annotations.clone().unwrap_or_default(),
        dependencies: spec
            .dependencies
            .as_ref()
            .map(DepsSpec::to_manifest)
            .unwrap_or_default(),
        limits: spec.declared.limits.clone().unwrap_or_default(),
        capabilities: spec.declared.capabilities.clone().unwrap_or_default(),
        secrets: spec
            .declared
            .secrets
            .as_ref()
            .map(manifest::SecretsSpec::to_map)
            .unwrap_or_default(),
        examples: spec.examples.iter().map(ExampleSpec::to_manifest).collect(),
        hashes: Default::default(),
        origin: None,
        steps: Vec::new(),
        mcp: None,
    }
}

/// Register `spec` as a script tool: validate, install and lock its dependencies, stage it, run
/// its examples there, then write it as one commit by `actor`. Nothing is committed when any
/// step fails.
pub async fn register(
    app: &App,
    spec: &ScriptSpec,
    actor: &Actor,
    host: &dyn Host,
    progress: Progress<'_>,
) -> Result<Registered, RegisterError> {
    let tb = &app.toolbox;
    crate::names::validate(&spec.name).map_err(|e| RegisterError::Invalid(e.to_string()))?;
    if spec.source.trim().is_empty() {
        return Err(RegisterError::Invalid("`source` is empty".into()));
    }
    if spec.component == Some(true) {
        return Err(RegisterError::Invalid(
            "`component = true` is a component build: build_tool with `language = \"python\"` or `\"javascript\"` (or register_script over MCP) makes it".into(),
        ));
    }
    let mut m = manifest_of(spec);
    let entry = m.run.entry.clone().unwrap_or_default();
    let generated = [
        manifest::FILE_NAME,
        manifest::PIP_LOCK,
        manifest::NPM_LOCK,
        manifest::NPM_MANIFEST,
    ];
    if generated.contains(&entry.as_str()) {
        return Err(RegisterError::Invalid(format!(
            "the entry file may not be called {entry:?}: toolsmith writes that file"
        )));
    }
    let text = m
        .to_toml()
        .map_err(|e| RegisterError::Invalid(format!("cannot write tool.toml: {e}")))?;
    let parsed =
        manifest::parse(Path::new(manifest::FILE_NAME), Some(&spec.name), &text).map_err(|d| {
            RegisterError::Invalid(
                d.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        })?;
    m = parsed.manifest;
    let mut warnings: Vec<String> = parsed.warnings.iter().map(|d| d.to_string()).collect();
    if m.examples.is_empty() {
        warnings.push("the tool has no examples: add 1–3 so it is tested and documented".into());
    }
    if !m.dependencies.crates.is_empty() {
        warnings.push("`dependencies.crates` is for wasm tools; a script ignores it".into());
    }
    warnings.extend(crate::approval::request::notice(&m));
    // Dependencies first: a failed install commits nothing. Every pip and npm entry is a
    // package from a registry, or a direct reference the person allowed for this tool,
    // checked (`deps::check`, in `resolve`) before pip or npm runs.
    let config = app.config();
    let allowed = deps::Allowances::new(app.personal_dir(), tb.root());
    let ctx = deps::Ctx {
        sandbox: &config.sandbox,
        cache: &config.cache_dir,
        allowed: &allowed,
    };
    let lockfiles = crate::telemetry::stage("dependencies")
        .run_checked(
            deps::resolve(ctx, tb.root(), &m, progress),
            |_| "dependencies_failed",
        )
        .await?;

    let mut files = vec![FileSpec::new(
        entry.clone(),
        spec.source.clone().into_bytes(),
    )];
    files.extend(
        lockfiles
            .into_iter()
            .map(|(p, bytes)| FileSpec::new(p, bytes)),
    );
    // Staged beside the tools to be hashed and tried.
    let staged = crate::toolbox::Staging::new(tb, &spec.name)?;
    staged.write(&files)?;
    let source = staged.source_hash()?;
    let text = manifest::set_hashes(&text, Some(&source), None)
        .map_err(|e| RegisterError::Invalid(e.to_string()))?;
    files.push(FileSpec::new(
        manifest::FILE_NAME,
        text.clone().into_bytes(),
    ));
    staged.write(&files[files.len() - 1..])?;

    let tool = Tool {
        input_schema: m.input_schema.clone().unwrap_or_default(),
        output_schema: m.output_schema.clone(),
        manifest: m,
        warnings: parsed.warnings,
        validator: Default::default(),
        upstream: None,
    };
    let total = tool.manifest.examples.len();
    let checked = async {
        let failures = crate::examples::check(app, staged.path(), &tool, host).await;
        match failures.is_empty() {
            true => Ok(()),
            false => Err(RegisterError::Examples { total, failures }),
        }
    };
    crate::telemetry::stage("examples")
        .run_checked(checked, |_| "examples_failed")
        .await?;
    drop(staged);

    let (tb2, name, actor2) = (tb.clone(), spec.name.clone(), actor.clone());
    let files2 = files.clone();
    let write = crate::platform::blocking(move || tb2.write_tool(&name, &files2, &actor2));
    let out: WriteOutcome = crate::telemetry::stage("commit")
        .run(write)
        .await
        .map_err(|e| RegisterError::Invalid(format!("the write task failed: {e}")))??;
    app.refresh();
    // What its first call needs (its fork server, a spare), up before the answer: the call
    // that usually follows a registration is forked, not started.
    crate::telemetry::stage("warm")
        .run(app.prestart_new(&out.name, WARM_WITHIN))
        .await;
    Ok(Registered {
        name: out.name,
        action: out.action,
        commit: out.commit,
        protocol: tool.manifest.protocol(),
        protocol_from: if spec.protocol.is_some() {
            "given"
        } else {
            "detected"
        },
        files: files.iter().map(|f| f.path.clone()).collect(),
        examples_passed: total,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The declared fields shared with `build_tool` (`manifest::Declared`, flattened) parse,
    /// and an unknown key is still refused.
    #[test]
    fn a_spec_takes_the_declared_fields_and_refuses_unknown_keys() {
        let s: ScriptSpec = serde_json::from_value(json!({
            "name": "t", "source": "print(1)", "description": "d",
            "limits": {"timeout_ms": 5}, "capabilities": {"network": true},
            "input_schema": {"type": "object"},
        }))
        .unwrap();
        assert_eq!(s.declared.limits.and_then(|l| l.timeout_ms), Some(5));
        assert!(s.declared.capabilities.is_some_and(|c| c.network.is_any()));
        assert!(s.declared.input_schema.is_some() && s.declared.annotations.is_none());
        let e = serde_json::from_value::<ScriptSpec>(json!({
            "name": "t", "source": "x", "description": "d", "limitz": {},
        }))
        .unwrap_err();
        assert!(e.to_string().contains("limitz"), "{e}");
    }
}
