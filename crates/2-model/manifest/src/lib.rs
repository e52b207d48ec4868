//! The `tool.toml` manifest: its types, parsing with precise diagnostics, and validation.
//!
//! Invariant: this module does no IO. `parse` is a pure function of the file's text; a schema
//! file named by `input_schema_file` is resolved by the indexer, not here.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod capabilities;
pub mod domain;
mod edit;
pub mod env;
mod mcp;
mod parse;
mod validate;

pub use capabilities::{Capabilities, Declared, Network, SecretsSpec};
pub use edit::{EditError, set_hashes};
pub use mcp::McpServer;
pub use parse::{Diagnostic, Parsed, Severity, parse};
pub use validate::{is_secret_name, secret_refs};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The manifest format this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// The manifest's file name inside a tool directory.
pub const FILE_NAME: &str = toolsmith_names::MANIFEST_FILE;
/// The pinned Python requirements committed beside a tool.
pub const PIP_LOCK: &str = "requirements.lock";
/// The npm manifest committed beside a tool.
pub const NPM_MANIFEST: &str = "package.json";
/// The npm lockfile committed beside a tool.
pub const NPM_LOCK: &str = "package-lock.json";

/// `name@version` (also `@scope/name@version`) as (name, version); "latest" when no version.
pub fn npm_package(spec: &str) -> (String, String) {
    match spec.rfind('@').filter(|&i| i > 0) {
        Some(i) => (spec[..i].to_string(), spec[i + 1..].to_string()),
        None => (spec.to_string(), "latest".to_string()),
    }
}

/// Longest description accepted, in characters: every `tools/list` carries it to the model.
pub const MAX_DESCRIPTION_CHARS: usize = 4096;
/// Largest input or output schema accepted (as compact JSON), in bytes.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// A JSON Schema object, shared: the index keeps one copy for the manifest and the tool.
pub type Schema = std::sync::Arc<Map<String, Value>>;

/// A parsed `tool.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(
    title = "toolsmith tool.toml",
    description = "Manifest of one toolsmith tool"
)]
pub struct Manifest {
    /// Manifest format version. This build understands format 1.
    #[serde(default = "default_format")]
    pub format: u32,
    /// Tool name: equals the directory name; lowercase a-z, 0-9, '_' and '-', starting with a letter, at most 64 characters.
    pub name: String,
    /// What the tool does, in one or two sentences. The first line is its summary.
    pub description: String,
    /// How the tool runs.
    pub kind: Kind,
    /// Free-form version of the tool (history is kept by git; this is informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Keywords for search and filtering.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Exposed as its own MCP tool when the server's exposure is `pinned`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub pinned: bool,
    /// Entry point and interpreter.
    #[serde(default)]
    pub run: Run,
    /// JSON Schema of the arguments (an object schema), written in TOML.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Schema>,
    /// A JSON Schema file beside tool.toml, instead of `input_schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema_file: Option<String>,
    /// JSON Schema of the structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Schema>,
    /// A JSON Schema file beside tool.toml, instead of `output_schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema_file: Option<String>,
    /// MCP tool annotations.
    #[serde(default)]
    pub annotations: Annotations,
    /// Dependencies installed for the tool.
    #[serde(default)]
    pub dependencies: Dependencies,
    /// Resource limits for one call.
    #[serde(default)]
    pub limits: Limits,
    /// What the tool may reach; everything is denied by default.
    #[serde(default)]
    pub capabilities: Capabilities,
    /// Secrets the tool needs, by name (an environment variable name) → what it is for.
    /// Values are never in git: a person sets them with `toolsmith secret set NAME`, and they
    /// reach the tool's environment only once a person approved the tool on this machine.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: BTreeMap<String, String>,
    /// Input → expected output pairs, run after builds and registrations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
    /// Content hashes written by toolsmith.
    #[serde(default)]
    pub hashes: Hashes,
    /// Where an imported tool came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// Steps of a pipeline (kind = "pipeline").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
    /// The MCP server of an entry (kind = "mcp"): a program to run, or a URL to reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpServer>,
}

fn default_format() -> u32 {
    FORMAT_VERSION
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// How a tool runs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Rust compiled to WebAssembly (wasm32-wasip1), run in wasmtime.
    Wasm,
    /// A script run by an interpreter as a subprocess.
    Script,
    /// An ordered list of steps that call other tools.
    Pipeline,
    /// Another MCP server: its tools become `<name>__<tool>` tools of this toolbox.
    Mcp,
}

impl Kind {
    /// Every kind, in the order the guide lists them.
    pub const ALL: [Kind; 4] = [Kind::Wasm, Kind::Script, Kind::Pipeline, Kind::Mcp];

    /// The kind as `tool.toml` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Wasm => "wasm",
            Kind::Script => "script",
            Kind::Pipeline => "pipeline",
            Kind::Mcp => "mcp",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("unknown kind {s:?}; allowed: wasm, script, pipeline, mcp"))
    }
}

/// Entry point and interpreter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Run {
    /// kind = "wasm": the built module, relative to the tool directory (default "tool.wasm").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    /// kind = "wasm": the artifact is a WebAssembly component (WASI 0.2) of this WIT world,
    /// not a wasip1 module; its exported function's WIT types are the tool's schemas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world: Option<String>,
    /// kind = "wasm" with `world`: the exported function that is the tool (its name, or
    /// `interface#name`); may be left out when the component exports one function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export: Option<String>,
    /// kind = "script": python, node, ruby, bash, perl, php or other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// kind = "script": the script file, relative to the tool directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// The interpreter command and its leading arguments; defaults from `language`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpreter: Option<Vec<String>>,
    /// How a script talks to the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// Keep a warm worker process that serves many calls.
    #[serde(default, skip_serializing_if = "is_false")]
    pub worker: bool,
    /// kind = "script": run inside the strongest sandbox available ("auto", the default;
    /// refused when there is none unless the person allowed unsandboxed runs), never
    /// unsandboxed ("required"), or without one ("none": refused unless the person started
    /// toolsmith with --allow-unsandboxed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
    /// The tool may take long (minutes): MCP clients that support tasks run it as a task,
    /// polled with `tasks/get`, instead of holding the request open.
    #[serde(default, skip_serializing_if = "is_false")]
    pub long: bool,
}

/// Whether a script runs inside the sandbox (bubblewrap, Landlock+seccomp, Seatbelt).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// The strongest sandbox available; refused when there is none, unless the person started
    /// toolsmith with --allow-unsandboxed.
    #[default]
    Auto,
    /// Always sandboxed: refused when no sandbox is available, whatever the person allowed.
    Required,
    /// No sandbox: refused unless the person started toolsmith with --allow-unsandboxed.
    None,
}

/// How a script talks to the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// One JSON-RPC 2.0 request on stdin; the script may call back the host; it answers with a response.
    Jsonrpc,
    /// Arguments as JSON on stdin, the result on stdout.
    Plain,
}

impl Protocol {
    /// The protocol of a script whose registration does not name one: a source that speaks
    /// JSON-RPC (it mentions `jsonrpc`, as the template helpers do) or asks for a warm worker
    /// is `jsonrpc`; anything else reads its arguments on stdin and prints the result
    /// (`plain`). This makes the natural first script (read JSON, print JSON) work in every
    /// language, and Bash, Perl and PHP scripts default to `plain` like their templates.
    pub fn detect(source: &str, worker: bool) -> Protocol {
        if worker || source.contains("jsonrpc") {
            Protocol::Jsonrpc
        } else {
            Protocol::Plain
        }
    }
}

/// The languages toolsmith knows an interpreter for.
pub const LANGUAGES: &[(&str, &[&str], &str)] = &[
    ("python", &["python3", "-u"], "py"),
    ("node", &["node"], "js"),
    ("ruby", &["ruby"], "rb"),
    ("bash", &["bash"], "sh"),
    ("perl", &["perl"], "pl"),
    ("php", &["php"], "php"),
];

/// The default interpreter command for a language, if toolsmith knows it.
pub fn default_interpreter(language: &str) -> Option<Vec<String>> {
    LANGUAGES
        .iter()
        .find(|(l, _, _)| *l == language)
        .map(|(_, cmd, _)| cmd.iter().map(|s| s.to_string()).collect())
}

/// MCP tool annotations.
// No doc comments on the fields: they would become the JSON Schema's descriptions, sent to
// the model in every meta-tool definition that takes this type (names say enough).
#[allow(missing_docs)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

/// Dependencies installed for the tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dependencies {
    /// Rust crates: name → version, or { version, features }.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub crates: BTreeMap<String, CrateDep>,
    /// Python requirements (pip syntax).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pip: Vec<String>,
    /// npm packages: name → version range.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub npm: BTreeMap<String, String>,
}

/// A crate dependency.
// No doc comments on the fields: they would become the JSON Schema's descriptions, sent to
// the model in every meta-tool definition that takes this type (names say enough).
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CrateDep {
    Version(String),
    Detailed {
        version: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        features: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default_features: Option<bool>,
    },
}

/// Resource limits for one call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Limits {
    /// Wall-clock / CPU time limit in milliseconds (default 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Memory limit in MiB (default 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Cap on stdout and on stderr, in bytes (default 1 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_bytes: Option<u64>,
}

impl Limits {
    /// A call's time limit when none is set: 10 s.
    pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
    /// A call's memory limit when none is set: 256 MB.
    pub const DEFAULT_MEMORY_MB: u64 = 256;
    /// The cap on stdout and on stderr when none is set: 1 MiB.
    pub const DEFAULT_OUTPUT_BYTES: u64 = 1 << 20;

    /// The time limit in force, in milliseconds.
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(Self::DEFAULT_TIMEOUT_MS)
    }
    /// The memory limit in force, in MB.
    pub fn memory_mb(&self) -> u64 {
        self.memory_mb.unwrap_or(Self::DEFAULT_MEMORY_MB)
    }
    /// The output cap in force, in bytes (each of stdout and stderr).
    pub fn output_bytes(&self) -> u64 {
        self.output_bytes.unwrap_or(Self::DEFAULT_OUTPUT_BYTES)
    }
}

/// One example: input → expected output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Example {
    // What the example shows (a doc comment would be sent to the model in the schemas of
    // the meta-tools that take examples).
    #[allow(missing_docs)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments.
    #[serde(default = "empty_object")]
    pub input: Value,
    /// Expected structured output (exact JSON equality).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// Expected text output (exact, trailing whitespace ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_text: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// Content hashes written by toolsmith.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hashes {
    /// "sha256:<hex>" over the source files and lockfile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// "sha256:<hex>" of the built artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
}

/// Where an imported tool came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Origin {
    /// The repository, Gist, OCI reference or directory it was imported from.
    pub url: String,
    /// The branch or tag asked for, if any.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The commit it was imported at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The directory inside the source that held the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The manifest digest ("sha256:<hex>") of an artifact imported from an OCI registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The script this tool runs, inside the Agent Skill at `path`, when that skill has several
    /// scripts (each is its own tool; `update_tool` updates them together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
}

/// The separator between an MCP entry's name and its server's tool name (`github__search`).
pub const UPSTREAM_SEPARATOR: &str = "__";

/// One pipeline step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// Name for `$steps.<name>` references.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The stored tool to call.
    pub tool: String,
    /// Arguments; strings may reference `$input`, `$prev`, `$steps.<name>` with paths.
    #[serde(default = "empty_object")]
    pub args: Value,
    /// Run the step only when this reference is truthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// What a failure of this step does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<OnError>,
}

/// What a failing pipeline step does.
// `stop` the pipeline (the default) or `continue` with the next step. No doc comments on the
// variants: schemars would make the enum a `oneOf`, and this text is sent to the model.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    Stop,
    Continue,
}

impl Manifest {
    /// The first line of the description.
    pub fn summary(&self) -> &str {
        self.description.lines().next().unwrap_or("").trim()
    }

    /// The artifact path of a wasm tool, relative to the tool directory.
    /// A WebAssembly component tool (`kind = "wasm"` with `[run] world`).
    pub fn is_component(&self) -> bool {
        self.kind == Kind::Wasm && self.run.world.is_some()
    }

    /// The artifact's path in the tool directory (`[run] artifact`, else `tool.wasm`).
    pub fn artifact(&self) -> &str {
        self.run.artifact.as_deref().unwrap_or("tool.wasm")
    }

    /// The interpreter command of a script tool.
    pub fn interpreter(&self) -> Option<Vec<String>> {
        self.run
            .interpreter
            .clone()
            .or_else(|| self.run.language.as_deref().and_then(default_interpreter))
    }

    /// The sandbox mode of a script tool ("auto" unless set).
    pub fn sandbox(&self) -> SandboxMode {
        self.run.sandbox.unwrap_or_default()
    }

    /// The script protocol (jsonrpc unless set).
    pub fn protocol(&self) -> Protocol {
        self.run.protocol.unwrap_or(Protocol::Jsonrpc)
    }

    /// Serialize back to TOML (used when toolsmith writes a fresh manifest).
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        toml::to_string_pretty(self)
    }

    /// Property names of the input schema (for search).
    pub fn input_field_names(&self) -> Vec<&str> {
        self.input_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// The JSON Schema of the tool.toml format (what `docs/tool.schema.json` holds).
pub fn json_schema() -> Value {
    let schema = schemars::schema_for!(Manifest);
    let mut v = serde_json::to_value(schema).expect("a generated schema serializes");
    strip_null(&mut v);
    v
}

/// An optional field is absent, never null (TOML has no null; a client given a schema sends
/// none): drop `null` from one schema node's `type` list and from its `anyOf`/`oneOf`
/// alternatives, a single alternative left merged into the node. One node: the schema of
/// tool.toml (`json_schema`) and the meta-tools' input schemas each walk their own tree.
pub fn drop_null(o: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = o.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            o.insert("type".into(), only);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = o.get_mut(key) {
            alts.retain(|a| a.get("type").and_then(Value::as_str) != Some("null"));
            if alts.len() == 1 {
                let only = alts.remove(0);
                o.remove(key);
                if let Value::Object(inner) = only {
                    for (k, x) in inner {
                        o.entry(k).or_insert(x);
                    }
                }
            }
        }
    }
}

/// `drop_null` on every node, and no `default: null`.
fn strip_null(v: &mut Value) {
    match v {
        Value::Object(o) => {
            drop_null(o);
            if o.get("default") == Some(&Value::Null) {
                o.remove("default");
            }
            o.values_mut().for_each(strip_null);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_null),
        _ => {}
    }
}
