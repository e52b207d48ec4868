//! Building Rust tools to WebAssembly: scaffold, compile with cargo, check examples, commit.
//!
//! Invariant: nothing half-built is ever visible. The build happens in a per-tool work
//! directory under the toolsmith cache (never inside `tools/`); only a build that compiled and
//! passed its examples (or was told to commit anyway) reaches the toolbox, through
//! `Toolbox::write_tool`, as one commit. A tool whose source hash is unchanged (and whose
//! artifact is intact) is not compiled again.
//!
//! Invariant: a build is as contained as a call. Its files are checked first (`checks`: no
//! cargo configuration, no tool-chain override, no manifest reaching outside the tool); cargo
//! runs in the sandbox's build mode (`sandbox::contained`) — fetching from the registries only,
//! then compiling offline, seeing the tool chain and the registry cache read-only and no HOME,
//! toolbox or personal directory — and every build gets a target directory of its own, seeded
//! with compiled dependencies that only dependency builds write (`artifacts`).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_app as app;
use toolsmith_app::examples;
use toolsmith_config as config;
use toolsmith_hashing as hashing;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_names as names;
use toolsmith_platform as platform;
use toolsmith_runner as runner;
use toolsmith_sandbox as sandbox;
use toolsmith_scaffold as scaffold;
use toolsmith_telemetry as telemetry;
use toolsmith_toolbox as toolbox;
use toolsmith_wasm as wasm;

mod artifacts;
mod cargo;
mod checks;
mod component;
pub mod componentize;
mod error;
mod files;
mod request;
mod toolchain;
pub mod wit_gen;

pub use cargo::{COMPONENT_TARGET, Diagnostic, TARGET};
pub use error::BuildError;
pub use request::{BuildOutcome, BuildRequest, Options};

/// Other spellings of `build_tool`'s languages ("rust", "python", "javascript"):
/// (spelling, name). The MCP arguments and the CLI accept them.
pub const LANGUAGE_ALIASES: &[(&str, &str)] = &[
    ("rs", "rust"),
    ("js", "javascript"),
    ("node", "javascript"),
    ("nodejs", "javascript"),
    ("py", "python"),
    ("python3", "python"),
];
pub use files::{WIT_FILE, package_name, target_dir};

use crate::app::App;
use crate::index::Tool;
use crate::manifest::{CrateDep, Kind, Manifest};
use crate::toolbox::FileSpec;
use componentize::Language;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a plan builds: the tool's files, its manifest text, and what was there before.
struct Plan {
    name: String,
    /// Source files (relative path → bytes), including Cargo.toml and any Cargo.lock.
    files: BTreeMap<String, Vec<u8>>,
    manifest: String,
    /// The tool directory as it was (for the unchanged check), when it existed.
    previous: Option<(PathBuf, Manifest)>,
}

/// Build a tool from an MCP request (new or update) and commit it.
pub async fn build(
    app: &App,
    mut req: BuildRequest,
    opts: &Options<'_>,
) -> Result<BuildOutcome, BuildError> {
    names::validate(&req.name)?;
    let name = req.name.clone();
    let dir = app.toolbox.tools_dir().join(&name);
    let previous = if dir.is_dir() {
        let text = std::fs::read_to_string(dir.join(manifest::FILE_NAME)).ok();
        match text.map(|t| manifest::parse(Path::new(manifest::FILE_NAME), Some(&name), &t)) {
            Some(Ok(p)) if p.manifest.kind != Kind::Wasm => {
                return Err(BuildError::NotWasm {
                    name,
                    kind: p.manifest.kind.to_string(),
                });
            }
            Some(Ok(p)) => Some(p.manifest),
            _ => None,
        }
    } else {
        None
    };
    let artifact = previous.as_ref().map(|m| m.artifact().to_string());
    let asked = req.language.as_deref().map(|l| {
        let lower = l.to_ascii_lowercase();
        LANGUAGE_ALIASES
            .iter()
            .find(|(a, _)| *a == lower)
            .map_or(lower.clone(), |(_, c)| (*c).to_string())
    });
    let language = match asked
        .as_deref()
        .or_else(|| previous.as_ref().and_then(|m| m.run.language.as_deref()))
    {
        None | Some("rust") => None,
        Some(other) => Some(Language::parse(other).ok_or_else(|| BuildError::BadRequest {
            message: format!(
                "language {other:?} is not built here: give \"rust\" (the default), \"python\" or \"javascript\""
            ),
        })?),
    };
    if let Some(l) = language
        && req.crates.is_some()
    {
        return Err(BuildError::BadRequest {
            message: format!(
                "`crates` are Rust's; a {l} component has no dependencies but what its runtime brings"
            ),
        });
    }
    let component = language.is_some()
        || req.world.is_some()
        || previous.as_ref().is_some_and(Manifest::is_component);
    if !component && (req.wit.is_some() || req.export.is_some()) {
        return Err(BuildError::BadRequest {
            message: "`wit` and `export` are for components: give `world` too".into(),
        });
    }

    let mut files = match (&req.source, &previous) {
        (Some(src), _) => {
            let mut f = BTreeMap::new();
            f.insert(
                entry(language, component).to_string(),
                src.clone().into_bytes(),
            );
            if let Ok(wit) = std::fs::read(dir.join(WIT_FILE)) {
                f.insert(WIT_FILE.to_string(), wit);
            }
            if let Ok(lock) = std::fs::read(dir.join("Cargo.lock")) {
                f.insert("Cargo.lock".to_string(), lock);
            }
            if let Ok(toml) = std::fs::read(dir.join("Cargo.toml")) {
                f.insert("Cargo.toml".to_string(), toml);
            }
            f
        }
        (None, Some(_)) => files::read_sources(&dir, artifact.as_deref())?,
        (None, None) if dir.is_dir() => {
            return Err(BuildError::Manifest {
                name,
                errors: "tool.toml is missing or does not parse, and no `source` was given".into(),
            });
        }
        (None, None) => return Err(BuildError::NoSuchTool { name }),
    };
    for (rel, text) in &req.files {
        files::check_rel(rel)?;
        if [manifest::FILE_NAME, "Cargo.toml", "Cargo.lock"].contains(&rel.as_str())
            || Some(rel.as_str()) == artifact.as_deref()
        {
            return Err(BuildError::BadRequest {
                message: format!(
                    "`files` may not set {rel}: toolsmith writes it (give `crates` for Cargo.toml)"
                ),
            });
        }
        files.insert(rel.clone(), text.clone().into_bytes());
    }
    let mut crates = match (&req.crates, &previous) {
        (Some(c), _) => c.clone(),
        (None, Some(p)) => p.dependencies.crates.clone(),
        (None, None) if component => BTreeMap::new(),
        (None, None) => BTreeMap::from([("serde_json".to_string(), CrateDep::Version("1".into()))]),
    };
    let mut run = Map::new();
    if let Some(l) = language {
        run.insert("language".into(), Value::String(l.name().into()));
        run.insert("entry".into(), Value::String(l.entry().into()));
        files.remove("Cargo.toml");
        files.remove("Cargo.lock");
    } else if component {
        crates
            .entry("wit-bindgen".to_string())
            .or_insert_with(files::wit_bindgen);
    }
    if language == Some(Language::Python) {
        componentize::python::declare_input(
            app.config(),
            &mut req,
            &files,
            previous.as_ref(),
            &opts.cancel,
        )
        .await?;
    }
    if component {
        component::plan_world(&req, previous.as_ref(), &mut files, &mut run)?;
    }
    if language.is_none() {
        let cargo_toml = match files.get("Cargo.toml") {
            Some(existing) if req.crates.is_none() => {
                let text = String::from_utf8_lossy(existing);
                files::standalone_cargo_toml(&name, &text)?.0
            }
            _ => files::cargo_toml(&name, &crates)?,
        };
        let cargo_toml = if component {
            files::component_lib(&cargo_toml)?
        } else {
            cargo_toml
        };
        files.insert("Cargo.toml".to_string(), cargo_toml.into_bytes());
    }

    let manifest = match (&previous, req.changes_manifest()) {
        (Some(_), false) => std::fs::read_to_string(dir.join(manifest::FILE_NAME))
            .map_err(BuildError::io("read", &dir.join(manifest::FILE_NAME)))?,
        _ => files::manifest_text(&req, previous.as_ref(), &crates, &run)?,
    };
    let plan = Plan {
        name,
        files,
        manifest,
        previous: previous.map(|m| (dir, m)),
    };
    run_plan(app, plan, opts).await
}

/// Build an existing tool directory as it is on disk (e.g. after editing src/main.rs) and
/// commit it: the CLI's `toolsmith build NAME`.
pub async fn build_in_place(
    app: &App,
    name: &str,
    opts: &Options<'_>,
) -> Result<BuildOutcome, BuildError> {
    let dir = app.toolbox.tool_dir(name)?;
    if !dir.is_dir() {
        return Err(BuildError::NoSuchTool { name: name.into() });
    }
    let path = dir.join(manifest::FILE_NAME);
    let text = std::fs::read_to_string(&path).map_err(BuildError::io("read", &path))?;
    let parsed = manifest::parse(&path, Some(name), &text).map_err(|d| manifest_error(name, &d))?;
    if parsed.manifest.kind != Kind::Wasm {
        return Err(BuildError::NotWasm {
            name: name.into(),
            kind: parsed.manifest.kind.to_string(),
        });
    }
    let mut files = files::read_sources(&dir, Some(parsed.manifest.artifact()))?;
    let language = Language::of(&parsed.manifest);
    let entry = entry(language, parsed.manifest.is_component());
    if !files.contains_key(entry) {
        return Err(BuildError::BadRequest {
            message: format!("tools/{name}/{entry} is missing"),
        });
    }
    if language.is_none() {
        let toml =
            files::in_place_cargo_toml(name, &parsed.manifest, files.get("Cargo.toml"), opts.host)?;
        files.insert("Cargo.toml".into(), toml.into_bytes());
    }
    let plan = Plan {
        name: name.to_string(),
        files,
        manifest: text,
        previous: Some((dir, parsed.manifest)),
    };
    run_plan(app, plan, opts).await
}

fn manifest_error(name: &str, diags: &[manifest::Diagnostic]) -> BuildError {
    BuildError::Manifest {
        name: name.to_string(),
        errors: diags
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The artifact of the previous version, when it is intact and built from exactly this source.
fn reusable_artifact(previous: &Option<(PathBuf, Manifest)>, source_hash: &str) -> Option<Vec<u8>> {
    let (dir, m) = previous.as_ref()?;
    if m.hashes.source.as_deref() != Some(source_hash) {
        return None;
    }
    let bytes = std::fs::read(dir.join(m.artifact())).ok()?;
    (m.hashes.artifact.as_deref() == Some(hashing::sha256_bytes(&bytes).as_str())).then_some(bytes)
}

/// A build step's blocking work (`platform::blocking`), its error a build error.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, BuildError> + Send + 'static,
) -> Result<T, BuildError> {
    crate::platform::blocking(f)
        .await
        .map_err(|e| BuildError::Internal {
            message: e.to_string(),
        })?
}

async fn run_plan(app: &App, plan: Plan, opts: &Options<'_>) -> Result<BuildOutcome, BuildError> {
    let started = Instant::now();
    let name = plan.name.clone();
    let host = opts.host;
    let parsed = manifest::parse(Path::new(manifest::FILE_NAME), Some(&name), &plan.manifest)
        .map_err(|d| manifest_error(&name, &d))?;
    if parsed.manifest.kind != Kind::Wasm {
        return Err(BuildError::NotWasm {
            name,
            kind: parsed.manifest.kind.to_string(),
        });
    }
    let artifact = parsed.manifest.artifact().to_string();
    files::check_rel(&artifact)?;
    checks::check_files(&plan.files)?;

    let cache = opts
        .cache
        .clone()
        .unwrap_or_else(|| app.config().cache_dir.clone());
    let work = {
        let (cache, n) = (cache.clone(), name.clone());
        blocking(move || files::WorkDir::acquire(&cache, &n)).await?
    };
    work.sync(&plan.files)?;
    let pre_hash = hashing::source_hash(&work.path, Some(&artifact))
        .map_err(BuildError::io("hash", &work.path))?;

    let language = Language::of(&parsed.manifest);
    let (bytes, report) = match (reusable_artifact(&plan.previous, &pre_hash), language) {
        (Some(bytes), _) => {
            host.log(
                "info",
                "source unchanged: reusing the built module, nothing to compile",
            );
            (bytes, None)
        }
        (None, Some(language)) => {
            let built = componentize::build(
                app.config(),
                language,
                &name,
                &parsed.manifest,
                &work.path,
                host,
                &opts.cancel,
            );
            let mut report = crate::telemetry::stage("compile")
                .run_checked(built, |_| "compile_failed")
                .await?;
            let bytes = std::mem::take(&mut report.bytes);
            (bytes, Some(report))
        }
        (None, None) => {
            let config = app.config();
            let toolchain = {
                let cargo = config.cargo.clone();
                blocking(move || toolchain::resolve(&cargo)).await?
            };
            let target = if parsed.manifest.is_component() {
                cargo::COMPONENT_TARGET
            } else {
                cargo::TARGET
            };
            if !toolchain.has_target(target) {
                return Err(if target == cargo::COMPONENT_TARGET {
                    BuildError::NoComponentTarget
                } else {
                    BuildError::NoTarget
                });
            }
            let cx = cargo::Cx {
                toolchain: &toolchain,
                target,
                cache: &cache,
                sandbox: &config.sandbox,
                host,
                cancel: &opts.cancel,
            };
            let mut report = crate::telemetry::stage("compile")
                .run_checked(compile(&cx, &name, &work.path), |_| "compile_failed")
                .await?;
            let bytes = std::mem::take(&mut report.bytes);
            (bytes, Some(report))
        }
    };
    let art_path = work.path.join(&artifact);
    std::fs::write(&art_path, &bytes).map_err(BuildError::io("write", &art_path))?;
    let manifest_text = if parsed.manifest.is_component() {
        component::with_schemas(app, &name, &plan.manifest, &parsed.manifest, &bytes)?
    } else {
        plan.manifest.clone()
    };
    let source_hash = hashing::source_hash(&work.path, Some(&artifact))
        .map_err(BuildError::io("hash", &work.path))?;
    let artifact_hash = hashing::sha256_bytes(&bytes);
    let text = manifest::set_hashes(&manifest_text, Some(&source_hash), Some(&artifact_hash))
        .map_err(|e| BuildError::Internal {
            message: e.to_string(),
        })?;
    let toml_path = work.path.join(manifest::FILE_NAME);
    std::fs::write(&toml_path, &text).map_err(BuildError::io("write", &toml_path))?;
    let tool = load_tool(&work.path, &name, &text)?;

    let n = tool.manifest.examples.len();
    if n > 0 {
        host.progress(0.0, Some(n as f64), Some(format!("running {n} example(s)")));
    }
    let failures = crate::telemetry::stage("examples")
        .run(examples::check(app, &work.path, &tool, host))
        .await;
    if !failures.is_empty() && !opts.commit_anyway {
        return Err(BuildError::Examples {
            tool: name,
            failures,
        });
    }
    if opts.cancel.is_cancelled() {
        return Err(BuildError::Cancelled { tool: name });
    }

    let mut specs: Vec<FileSpec> = files::read_sources(&work.path, None)?
        .into_iter()
        .map(|(p, b)| FileSpec::new(p, b))
        .collect();
    specs.push(FileSpec::new(manifest::FILE_NAME, text.into_bytes()));
    let (tb, actor, n2) = (app.toolbox.clone(), opts.actor.clone(), name.clone());
    let out = crate::telemetry::stage("commit")
        .run(blocking(move || Ok(tb.write_tool(&n2, &specs, &actor)?)))
        .await?;
    drop(work);
    app.refresh();
    let warnings = report
        .as_ref()
        .map(|r| r.warnings.iter().map(|d| d.to_string()).collect())
        .unwrap_or_default();
    Ok(BuildOutcome {
        name,
        action: if out.commit.is_none() {
            "unchanged"
        } else {
            out.action
        },
        commit: out.commit,
        compiled: report.is_some(),
        compiled_crates: report
            .as_ref()
            .map(|r| r.compiled.clone())
            .unwrap_or_default(),
        cargo_ms: report.as_ref().map(|r| r.elapsed.as_millis() as u64),
        total_ms: started.elapsed().as_millis() as u64,
        source_hash,
        artifact_hash,
        artifact_bytes: bytes.len() as u64,
        warnings,
        sandbox: report.as_ref().map(|r| r.mechanism),
        cargo_output: report.map(|r| r.log).unwrap_or_default(),
        examples_run: n,
        example_failures: failures,
    })
}

/// Build the crate in `work`: fetch what is missing (the registries only, no package code
/// runs), compile the dependencies once per dependency set, then the tool in a target
/// directory of its own — every step contained, the compiling ones offline.
async fn compile(cx: &cargo::Cx<'_>, tool: &str, work: &Path) -> Result<cargo::Report, BuildError> {
    let home = toolchain::CargoHome::new(cx.cache)?;
    cargo::fetch(cx, tool, work, &home).await?;
    let seeded = artifacts::prepare(cx, tool, work, &home).await?;
    let mut report = cargo::run(cx, tool, work, &seeded.dir, &home, cargo::Step::Tool).await?;
    report.bytes = std::fs::read(&report.wasm).map_err(BuildError::io("read", &report.wasm))?;
    let mut compiled = seeded.compiled.clone();
    compiled.append(&mut report.compiled);
    report.compiled = compiled;
    let mut log = seeded.log.clone();
    log.append(&mut report.log);
    log.truncate(cargo::MAX_LOG);
    report.log = log;
    Ok(report)
}

/// The source file of a tool: a component language's entry, a Rust component's library or a
/// Rust module's main.
fn entry(language: Option<Language>, component: bool) -> &'static str {
    match language {
        Some(l) => l.entry(),
        None if component => "src/lib.rs",
        None => "src/main.rs",
    }
}

/// A `Tool` for a directory not in the index (the work directory of a build).
fn load_tool(dir: &Path, name: &str, text: &str) -> Result<Tool, BuildError> {
    crate::index::load(dir, name, text).map_err(|d| manifest_error(name, &d))
}
