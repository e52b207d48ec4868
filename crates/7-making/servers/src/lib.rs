//! Adding MCP server entries (`kind = "mcp"`): `toolsmith add-mcp`, the `import_mcp`
//! meta-tool and `toolsmith import` of an editor's MCP configuration. Each server becomes a
//! tool directory holding its tool.toml and the lockfile of its package (installed like a
//! script's dependencies, contained, pinned); its server is started once from the staged
//! copy, with the default grants, to list its tools; then all of them are one commit.
//!
//! A server that asks for nothing beyond the defaults must start and list its tools, or
//! nothing is committed. One that asks for more (network, a root, a secret; a remote URL is
//! network to its host) is committed with what waits for the person's approval, and its
//! tools are listed once it runs approved.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_app as app;
use toolsmith_approval as approval;
use toolsmith_deps as deps;
use toolsmith_error as error;
use toolsmith_hashing as hashing;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_names as names;
use toolsmith_platform as platform;
use toolsmith_runner as runner;
use toolsmith_toolbox as toolbox;

pub mod config;
pub mod package;

use crate::app::App;
use crate::deps::{DepsError, Progress};
use crate::index::Tool;
use crate::manifest::{Capabilities, Kind, Manifest, McpServer, SecretsSpec};
use crate::runner::host::Host;
use crate::toolbox::{Actor, Change, FileSpec};
use package::Package;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// One MCP server to add (the `import_mcp` arguments, the CLI flags, one server of an
/// editor's configuration).
// No doc comments on most fields: they would become `import_mcp`'s schema descriptions, sent to
// the model in every tools/list (the guide says what each field is).
#[allow(missing_docs)]
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    pub name: String,
    /// npm:NAME@VERSION or pip:NAME==VERSION
    #[serde(default)]
    pub package: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub secrets: Option<SecretsSpec>,
    #[serde(default)]
    pub capabilities: Option<Capabilities>,
    #[serde(default)]
    pub description: Option<String>,
}

/// Why servers were not added.
#[derive(Debug, Error)]
pub enum AddError {
    /// The entry makes no valid tool.
    #[error("invalid MCP entry {name:?}: {message}")]
    Invalid {
        /// The entry's name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// The entry asks for an environment variable that steers a loader or an interpreter
    /// (`manifest::env`).
    #[error("MCP entry {name:?} was not added: {why}")]
    Refused {
        /// The entry's name.
        name: String,
        /// The refusal, naming the variable and why.
        why: String,
    },
    /// Installing or locking the server's package failed.
    #[error(transparent)]
    Deps(#[from] DepsError),
    #[error(
        "the MCP server of {name:?} did not list its tools, so nothing was committed: {message}"
    )]
    /// The server, started from the staged entry, did not list its tools.
    Server {
        /// The entry's name.
        name: String,
        /// What went wrong.
        message: String,
        /// What to do about it.
        hint: Option<String>,
    },
    /// Writing the entries (the commit) failed.
    #[error(transparent)]
    Toolbox(#[from] crate::toolbox::ToolboxError),
    /// A file of a staged entry could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// To which file.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
}

impl crate::error::Hint for AddError {
    fn hint(&self) -> Option<String> {
        match self {
            AddError::Invalid { .. } => Some("an entry is a name plus `package` and `command`/`args` (a server over stdio) or `url` (streamable HTTP); the fields are in the guide (toolsmith://guide)".into()),
            AddError::Refused { .. } => Some(manifest::env::HINT.into()),
            AddError::Deps(e) => e.hint(),
            AddError::Server { hint, .. } => hint.clone(),
            AddError::Toolbox(e) => e.hint(),
            AddError::Io { .. } => Some("check permissions and free space".into()),
        }
    }
}

/// One entry added.
#[derive(Debug, Clone, Serialize)]
pub struct Added {
    /// The entry's name.
    pub name: String,
    /// "add" or "update".
    pub action: &'static str,
    /// Its tools as toolsmith names them (none yet when it waits for approval).
    pub tools: Vec<String>,
    /// The files written, relative to the entry's directory.
    pub files: Vec<String>,
    /// What the person should know (secrets to set, approval to give).
    pub warnings: Vec<String>,
}

/// What an addition did: the entries and the one commit.
#[derive(Debug, Clone, Serialize)]
pub struct Additions {
    /// Each entry added or updated.
    pub entries: Vec<Added>,
    /// The commit (None when nothing changed).
    pub commit: Option<String>,
}

/// The manifest a spec describes (not yet validated): a launcher (`npx`, `uvx`) becomes its
/// package; a package without a command gets its command once installed (`resolve_command`).
pub fn manifest_of(spec: &ServerSpec) -> Result<(Manifest, Option<Package>), AddError> {
    let invalid = |message: String| AddError::Invalid {
        name: spec.name.clone(),
        message,
    };
    // Before anything is installed or started: a variable that steers a loader or an
    // interpreter is refused wherever it is asked for.
    let secret_names = spec.secrets.as_ref().map(SecretsSpec::to_map);
    let asked = (spec.env.keys())
        .chain(secret_names.iter().flat_map(|s| s.keys()))
        .chain(spec.capabilities.iter().flat_map(|c| &c.env));
    if let Some(why) = asked.filter_map(|k| manifest::env::refusal(k)).next() {
        return Err(AddError::Refused {
            name: spec.name.clone(),
            why,
        });
    }
    let mut command = spec.command.clone();
    let mut args = spec.args.clone();
    let mut package = match &spec.package {
        Some(p) => Some(Package::parse(p).map_err(invalid)?),
        None => None,
    };
    if package.is_none()
        && let Some((p, rest)) = command
            .as_deref()
            .and_then(|c| package::from_launcher(c, &args))
    {
        package = Some(p);
        command = None;
        args = rest;
    }
    if spec.url.is_some() && (package.is_some() || command.is_some()) {
        return Err(invalid(
            "give `url` (a server reached over HTTP) or `package`/`command` (one started here), not both".into(),
        ));
    }
    if spec.url.is_none() && command.is_none() && package.is_none() {
        return Err(invalid(
            "give `package` (npm:NAME@VERSION or pip:NAME==VERSION), `command` or `url`".into(),
        ));
    }
    let secrets: BTreeMap<String, String> = spec
        .secrets
        .as_ref()
        .map(SecretsSpec::to_map)
        .unwrap_or_default();
    // A remote server with one secret and no headers: the secret is its bearer token.
    let mut headers = spec.headers.clone();
    if spec.url.is_some() && headers.is_empty() && secrets.len() == 1 {
        let only = secrets.keys().next().cloned().unwrap_or_default();
        headers.insert("Authorization".into(), format!("Bearer ${{{only}}}"));
    }
    let description = spec
        .description
        .clone()
        .unwrap_or_else(|| match (&package, &spec.url) {
            (Some(p), _) => format!("The MCP server {} (package {}).", spec.name, p.name()),
            (None, Some(u)) => format!("The MCP server {} at {u}.", spec.name),
            _ => format!("The MCP server {}.", spec.name),
        });
    let m = Manifest {
        format: manifest::FORMAT_VERSION,
        name: spec.name.clone(),
        description,
        kind: Kind::Mcp,
        version: None,
        tags: vec!["mcp".into()],
        pinned: false,
        run: Default::default(),
        input_schema: None,
        input_schema_file: None,
        output_schema: None,
        output_schema_file: None,
        annotations: Default::default(),
        dependencies: package
            .as_ref()
            .map(Package::dependencies)
            .unwrap_or_default(),
        limits: Default::default(),
        capabilities: spec.capabilities.clone().unwrap_or_default(),
        secrets,
        examples: Vec::new(),
        hashes: Default::default(),
        origin: None,
        steps: Vec::new(),
        mcp: Some(McpServer {
            command,
            args,
            env: spec.env.clone(),
            url: spec.url.clone(),
            headers,
            tools: Vec::new(),
            idle_secs: None,
        }),
    };
    Ok((m, package))
}

fn parse_checked(name: &str, text: &str) -> Result<manifest::Parsed, AddError> {
    manifest::parse(Path::new(manifest::FILE_NAME), Some(name), text).map_err(|d| {
        AddError::Invalid {
            name: name.to_string(),
            message: d
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        }
    })
}

/// The files of an entry's directory that an update carries over: all but its tool.toml, the
/// lockfiles (made afresh) and what git ignores there (`.venv`, `node_modules`, ...).
fn kept_files(dir: &Path, new: &[FileSpec]) -> Result<Vec<FileSpec>, AddError> {
    let mut out = Vec::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    for entry in crate::hashing::walk_tool_dir(dir) {
        let entry = entry.map_err(|e| AddError::Io {
            action: "read",
            path: dir.to_path_buf(),
            source: e.into(),
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(dir)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if [manifest::FILE_NAME, manifest::PIP_LOCK, manifest::NPM_LOCK].contains(&rel.as_str())
            || new.iter().any(|f| f.path == rel)
        {
            continue;
        }
        let contents = std::fs::read(entry.path()).map_err(|e| AddError::Io {
            action: "read",
            path: entry.path().to_path_buf(),
            source: e,
        })?;
        out.push(FileSpec {
            path: rel,
            contents,
            executable: executable(&entry),
        });
    }
    Ok(out)
}

/// Whether a file is executable (kept so when it is carried over); never on Windows.
/// A word that names a program by itself: a path, or a program on PATH (`node`, `python3`,
/// `uvx`). A word that is neither (`stdio`, `--port`) is an argument.
fn is_command(word: &str) -> bool {
    word.contains('/') || (!word.starts_with('-') && which::which(word).is_ok())
}

fn executable(entry: &walkdir::DirEntry) -> bool {
    entry
        .metadata()
        .is_ok_and(|m| platform::executable(&m) == Some(true))
}

/// One entry made ready in a staging directory: its files and what its server listed.
struct Ready {
    added: Added,
    files: Vec<FileSpec>,
    _staged: crate::toolbox::Staging,
}

async fn prepare(
    app: &App,
    spec: &ServerSpec,
    host: &dyn Host,
    progress: Progress<'_>,
) -> Result<Ready, AddError> {
    let tb = &app.toolbox;
    let name = spec.name.clone();
    crate::names::validate(&name).map_err(|e| AddError::Invalid {
        name: name.clone(),
        message: e.to_string(),
    })?;
    let action = match app.index().get(&name).and_then(|e| e.tool()) {
        Some(t) if t.manifest.kind != Kind::Mcp || t.upstream.is_some() => {
            return Err(AddError::Invalid {
                name,
                message: format!(
                    "a tool of that name exists (kind {}); an MCP entry takes a name of its own",
                    t.manifest.kind
                ),
            });
        }
        Some(_) => "update",
        None if tb
            .tools_dir()
            .join(&name)
            .join(manifest::FILE_NAME)
            .exists() =>
        {
            "update"
        }
        None => "add",
    };
    let (mut m, package) = manifest_of(spec)?;
    let text = m.to_toml().map_err(|e| AddError::Invalid {
        name: name.clone(),
        message: format!("cannot write tool.toml: {e}"),
    })?;
    // A package without a command is checked once its command is known (below).
    let command_later = package.is_some()
        && m.mcp
            .as_ref()
            .is_some_and(|s| s.command.is_none() && s.url.is_none());
    let mut warnings: Vec<String> = Vec::new();
    if !command_later {
        let parsed = parse_checked(&name, &text)?;
        warnings.extend(parsed.warnings.iter().map(|d| d.to_string()));
        m = parsed.manifest;
    }
    let config = app.config();
    let allowed = deps::Allowances::new(app.personal_dir(), tb.root());
    let ctx = deps::Ctx {
        sandbox: &config.sandbox,
        cache: &config.cache_dir,
        allowed: &allowed,
    };
    deps::check(ctx, &m)?;
    let lockfiles = deps::resolve(ctx, tb.root(), &m, progress).await?;
    let mut files: Vec<FileSpec> = lockfiles
        .into_iter()
        .map(|(p, b)| FileSpec::new(p, b))
        .collect();
    // Staged beside the tools to be hashed and tried (an entry without packages — a URL, a
    // command on PATH — has no lockfile to write first).
    let staged = crate::toolbox::Staging::new(tb, &name)?;
    let staging = staged.path().to_path_buf();
    // An update keeps the entry's own files (a server script of its own, a README).
    files.extend(kept_files(&tb.tools_dir().join(&name), &files)?);
    staged.write(&files)?;
    // A package with a first word that is not a command (`add-mcp x --npm PKG@VER -- stdio`):
    // the words are arguments of the package's own command.
    let server = m.mcp.get_or_insert_with(Default::default);
    if let (Some(p), Some(first)) = (&package, server.command.clone())
        && server.url.is_none()
        && !is_command(&first)
    {
        let env = deps::ensure(ctx, tb.root(), &m, &staging).await?;
        if !package::commands_of(p, &env).contains(&first) {
            let own = package::command_of(p, &env).ok_or_else(|| AddError::Invalid {
                name: name.clone(),
                message: format!(
                    "`{first}` is not a command of {} and the package installs no single command to start it with (give the command first, after `--`)",
                    p.name()
                ),
            })?;
            let server = m.mcp.get_or_insert_with(Default::default);
            server.args.insert(0, first);
            server.command = Some(own);
        }
    }
    // A package without a command: the command it installs.
    let server = m.mcp.get_or_insert_with(Default::default);
    if server.command.is_none()
        && server.url.is_none()
        && let Some(p) = &package
    {
        let env = deps::ensure(ctx, tb.root(), &m, &staging).await?;
        let cmd = package::command_of(p, &env).ok_or_else(|| AddError::Invalid {
            name: name.clone(),
            message: format!(
                "the package {} installs no single command to start (give `command`)",
                p.name()
            ),
        })?;
        m.mcp.get_or_insert_with(Default::default).command = Some(cmd);
    }
    let text = m.to_toml().map_err(|e| AddError::Invalid {
        name: name.clone(),
        message: format!("cannot write tool.toml: {e}"),
    })?;
    let source = staged.source_hash()?;
    let text = manifest::set_hashes(&text, Some(&source), None).map_err(|e| AddError::Invalid {
        name: name.clone(),
        message: e.to_string(),
    })?;
    let parsed = parse_checked(&name, &text)?;
    if command_later {
        warnings.extend(parsed.warnings.iter().map(|d| d.to_string()));
    }
    let toml = FileSpec::new(manifest::FILE_NAME, text.into_bytes());
    staged.write(std::slice::from_ref(&toml))?;
    files.push(toml);
    let tool = Tool {
        input_schema: std::sync::Arc::new(Default::default()),
        output_schema: None,
        manifest: parsed.manifest,
        warnings: Vec::new(),
        validator: Default::default(),
        upstream: None,
    };
    let waits = crate::approval::request::notice(&tool.manifest);
    // Its server, started from the staged copy with the default grants (or those a person
    // approved for exactly this content), lists its tools.
    let listed = app
        .run(
            staged.callee(tool.clone()),
            Value::Object(Default::default()),
            host,
        )
        .await;
    if let Some(u) = app.upstream() {
        u.stop(&name);
    }
    let tools: Vec<String> = match listed {
        Ok(out) => out
            .structured
            .as_ref()
            .and_then(|v| v.get("tools"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        Err(e) if waits.is_none() => {
            use crate::error::Hint;
            return Err(AddError::Server {
                name,
                message: crate::error::chain(&e),
                hint: e.hint(),
            });
        }
        Err(e) => {
            warnings.push(format!(
                "its tools are listed once it runs with what it asks for ({})",
                crate::error::chain(&e)
            ));
            Vec::new()
        }
    };
    warnings.extend(waits);
    Ok(Ready {
        added: Added {
            name,
            action,
            tools,
            files: files.iter().map(|f| f.path.clone()).collect(),
            warnings,
        },
        files,
        _staged: staged,
    })
}

/// Add (or update) MCP entries, all in one commit. `source` names where they came from (an
/// editor's configuration file) for the commit message.
pub async fn add(
    app: &App,
    specs: &[ServerSpec],
    actor: &Actor,
    host: &dyn Host,
    progress: Progress<'_>,
    source: Option<&str>,
) -> Result<Additions, AddError> {
    let mut ready = Vec::new();
    for spec in specs {
        if ready.iter().any(|r: &Ready| r.added.name == spec.name) {
            return Err(AddError::Invalid {
                name: spec.name.clone(),
                message: "the name is given twice".into(),
            });
        }
        ready.push(prepare(app, spec, host, progress).await?);
    }
    let changes: Vec<(String, Change)> = ready
        .iter()
        .map(|r| {
            (
                r.added.name.clone(),
                Change::Write {
                    files: r.files.clone(),
                    keep_env: false,
                },
            )
        })
        .collect();
    let names: Vec<String> = ready.iter().map(|r| r.added.name.clone()).collect();
    let message = match (names.as_slice(), source) {
        ([one], None) => {
            let verb = ready[0].added.action;
            crate::toolbox::message(verb, one, &format!("MCP server {one}"), actor, None)
        }
        _ => {
            let mut m = format!(
                "add MCP servers {}{}\n\n",
                names.join(", "),
                source.map(|s| format!(" from {s}")).unwrap_or_default()
            );
            for n in &names {
                m.push_str(&format!("Tool: {n}\n"));
            }
            m.push_str(&actor.trailers());
            m
        }
    };
    let tb = app.toolbox.clone();
    let commit = crate::platform::blocking(move || tb.apply(&changes, &message))
        .await
        .map_err(|e| AddError::Io {
            action: "commit",
            path: app.toolbox.root().to_path_buf(),
            source: std::io::Error::other(e),
        })??;
    app.refresh();
    let entries = ready.into_iter().map(|r| r.added).collect();
    Ok(Additions { entries, commit })
}

/// The specs of an editor's MCP configuration file, with the notes for the person.
pub fn read_config(path: &Path) -> Result<Vec<config::Found>, AddError> {
    let text = std::fs::read_to_string(path).map_err(|e| AddError::Io {
        action: "read",
        path: path.to_path_buf(),
        source: e,
    })?;
    config::parse(&text).map_err(|message| AddError::Invalid {
        name: path.display().to_string(),
        message,
    })
}
