//! Script dependencies: a virtual environment per Python tool and a `node_modules` per Node
//! tool, living outside git under `<toolbox>/.toolsmith/env/<tool>/` (git-ignored), in
//! `generations` that are never changed once built.
//!
//! At registration `resolve` installs what the manifest asks for (or reuses a generation built
//! from the same request) and returns the lockfiles to commit (`requirements.lock` from
//! the installed packages' metadata; `package.json` + `package-lock.json`). At call time `ensure` finds the
//! generation built from the committed lockfile, or builds one (after a clone, pull or update):
//! each generation records the sha256 of the lockfile it was built from.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_config as config;
use toolsmith_error as error;
use toolsmith_hashing as hashing;
use toolsmith_manifest as manifest;
use toolsmith_names as names;
use toolsmith_personal as personal;
use toolsmith_platform as platform;
use toolsmith_sandbox as sandbox;

mod allowed;
mod eco;
mod install;
mod local;
mod npm_refs;
mod pip;
mod reference;
mod spec;
mod wheel;

pub use allowed::{
    AllowError, Allowance, Allowances, Request, allow_command, parse as parse_reference,
};
use eco::Eco;
pub use install::Ctx;
pub use reference::{DirectRef, Ecosystem, Source};
use spec::PipEntry;
pub use spec::{SpecError, check_npm, check_pip};

use crate::hashing::sha256_bytes;
use crate::manifest::Manifest;
use std::path::{Path, PathBuf};
use thiserror::Error;

mod generations;

use crate::manifest::{NPM_LOCK, NPM_MANIFEST, PIP_LOCK};
/// The file inside an environment recording the lockfile hash it was built from.
const MARKER: &str = ".toolsmith-lock";
/// What an environment was last installed from (its request key), beside its marker.
const REQUEST: &str = ".toolsmith-request";

/// Why dependencies could not be installed.
#[derive(Debug, Error)]
pub enum DepsError {
    /// The installer (pip, npm) failed.
    #[error("{installer} failed to install the dependencies of {tool:?}:\n{output}")]
    Install {
        /// The tool.
        tool: String,
        /// Which installer.
        installer: &'static str,
        /// What it printed (the end of it).
        output: String,
    },
    /// A program the install needs could not be run.
    #[error("cannot run {program:?}: {message}")]
    Program {
        /// The program.
        program: String,
        /// Why.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// Not a valid npm package name.
    #[error("invalid npm package name {0:?}")]
    BadPackage(String),
    /// A dependency entry that does not parse.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The install could not be contained (no sandbox for it), so it did not run.
    #[error("the dependencies of {tool:?} were not installed: {message}")]
    Contained {
        /// The tool.
        tool: String,
        /// What could not be applied.
        message: String,
        /// How a person can fix it or knowingly opt out.
        hint: String,
    },
    /// A direct reference (a URL, a path, a VCS) no person allowed.
    #[error(
        "{} dependency {:?} of tool {:?} is refused: it is a direct reference to {}, and {}",
        .0.ecosystem, .0.spec, .0.tool, .0.what, .0.why
    )]
    NotAllowed(Box<Refused>),
    /// A local source (a directory, an archive) could not be made ready.
    #[error("{what} for tool {tool:?} could not be made: {message}")]
    Source {
        /// The tool.
        tool: String,
        /// What was being made.
        what: String,
        /// Why not.
        message: String,
    },
}

/// A direct reference refused for a tool (boxed in `DepsError`, which stays small).
#[derive(Debug)]
pub struct Refused {
    /// The tool.
    pub tool: String,
    /// Whose dependency (pip, npm).
    pub ecosystem: Ecosystem,
    /// The entry as the manifest writes it.
    pub spec: String,
    /// What it points at, in words.
    pub what: String,
    /// Why it is refused.
    pub why: String,
    /// The command that allows it (None: it cannot be installed contained even allowed).
    pub command: Option<String>,
}

impl crate::error::Hint for DepsError {
    /// What to do about it.
    fn hint(&self) -> Option<String> {
        Some(match self {
            DepsError::Install { installer, .. } => format!(
                "check the package names and versions ({installer}'s output above says which failed); pin versions that exist, e.g. pip = [\"six==1.16.0\"], npm = {{ \"left-pad\" = \"1.3.0\" }}"
            ),
            DepsError::Program { .. } => {
                "install Python 3 (with venv) or Node.js/npm on the machine running toolsmith"
                    .into()
            }
            DepsError::Io { .. } => "check permissions and free space".into(),
            DepsError::BadPackage(_) => {
                "npm names are `name` or `@scope/name`: lowercase, no spaces".into()
            }
            DepsError::Spec(e) => return crate::error::Hint::hint(e),
            DepsError::Contained { hint, .. } => hint.clone(),
            DepsError::NotAllowed(r) => match &r.command {
                Some(c) => format!(
                "only a person can allow it, for this tool, in their own terminal (never the AI: no meta-tool, tool.toml field or answer in the MCP client allows it): `{c}`, or Allow on the Approvals page of `toolsmith console`; then try again (register the tool again, or call it). Without an allowance, name a package on the index instead, e.g. \"six==1.16.0\""
                ),
                None => "toolsmith does not install version-control references (the clone would need the network while package code could run): a person checks the repository out and allows the checkout's path (pip `NAME @ file:///path/to/checkout`, npm `file:/path/to/checkout`), or names a release archive's URL".into(),
            },
            DepsError::Source { .. } => "a package's build runs offline in the sandbox (no network, no HOME) from wheels of its build requirements: choose a version that has a wheel for this Python, or a package whose build needs nothing else".into(),
        })
    }
}

/// Paths a script needs from its environment.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// The venv's python, for Python tools with dependencies.
    pub python: Option<PathBuf>,
    /// The `node_modules` directory (for NODE_PATH).
    pub node_modules: Option<PathBuf>,
    /// The environment directories, one per ecosystem (made visible inside the sandbox).
    pub dirs: Vec<PathBuf>,
}

/// Progress of an install: (step, total, message).
pub type Progress<'a> = &'a (dyn Fn(f64, f64, String) + Send + Sync);

/// The directory of a tool's environments (their `generations`).
pub fn env_dir(root: &Path, tool: &str) -> PathBuf {
    root.join(".toolsmith").join("env").join(tool)
}

/// The lock of a tool's environments (`<dir>/lock`), held while one is made: two
/// registrations, a call and a CLI command, in this process or another, never build the same
/// environment at once. Waits on a blocking thread; released when the file is dropped.
async fn env_lock(dir: &Path) -> Result<std::fs::File, DepsError> {
    let path = dir.join("lock");
    let held = path.clone();
    match crate::platform::blocking(move || crate::platform::lock(&held)).await {
        Ok(r) => r.map_err(io("lock", &path)),
        Err(e) => Err(io("lock", &path)(std::io::Error::other(e))),
    }
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DepsError {
    let path = path.to_path_buf();
    move |source| DepsError::Io {
        action,
        path,
        source,
    }
}

/// The last `max` bytes of a text (at a character boundary), marked when cut.
pub fn tail_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &text[start..])
}

/// A direct reference a person allowed for the tool, with the allowance.
#[derive(Debug, Clone)]
pub struct Allowed {
    /// The reference.
    pub reference: DirectRef,
    /// The person's allowance of it.
    pub allowance: Allowance,
}

/// A manifest's dependency entries, checked: registry packages and allowed direct references.
#[derive(Debug, Default)]
pub struct Checked {
    /// pip requirements from the index.
    pub pip: Vec<String>,
    /// pip direct references a person allowed.
    pub pip_direct: Vec<Allowed>,
    /// npm direct references a person allowed.
    pub npm_direct: Vec<Allowed>,
}

impl Checked {
    /// What an environment's request key adds for the direct references: each entry with the
    /// digest allowed (new content, once allowed, is a new environment).
    fn key(direct: &[Allowed]) -> String {
        direct
            .iter()
            .map(|a| {
                format!(
                    "\n{} {}",
                    a.reference.spec,
                    a.allowance.digest.as_deref().unwrap_or("")
                )
            })
            .collect()
    }
}

/// The refusal of a direct reference, recorded for the person (`toolsmith pending`, the
/// console).
fn refused(ctx: Ctx<'_>, tool: &str, r: &DirectRef, why: String) -> DepsError {
    let allowable = !matches!(r.source, Source::Vcs(_));
    if allowable && let Err(e) = ctx.allowed.request(tool, r, &why) {
        tracing::warn!(tool, error = %e, "the refused direct reference was not recorded");
    }
    DepsError::NotAllowed(Box::new(Refused {
        tool: tool.to_string(),
        ecosystem: r.ecosystem,
        spec: r.spec.clone(),
        what: r.source.describe(),
        why,
        command: allowable.then(|| allow_command(tool, r.ecosystem, &r.spec)),
    }))
}

/// The refusal of an allowed reference whose content is not what the person allowed.
fn changed(ctx: Ctx<'_>, tool: &str, r: &DirectRef, a: &Allowance, now: &str) -> DepsError {
    refused(
        ctx,
        tool,
        r,
        format!(
            "what it points at changed since a person allowed it on {} (allowed {}, now {now})",
            crate::personal::rfc3339(a.at),
            a.digest.as_deref().unwrap_or("-"),
        ),
    )
}

/// The allowance of `r` for `tool` (refused without one), its local path's content checked
/// against it now (`content`; else the allowance only is looked up, as before each call of a
/// tool whose environment is built).
fn verify(ctx: Ctx<'_>, tool: &str, r: DirectRef, content: bool) -> Result<Allowed, DepsError> {
    if matches!(r.source, Source::Vcs(_)) {
        return Err(refused(
            ctx,
            tool,
            &r,
            "toolsmith cannot install a version-control reference contained".into(),
        ));
    }
    let found = ctx
        .allowed
        .find(tool, &r)
        .map_err(io("read", ctx.allowed.path()))?;
    let Some(allowance) = found else {
        return Err(refused(
            ctx,
            tool,
            &r,
            "a person has not allowed it for this tool".into(),
        ));
    };
    if let Source::Path(p) = &r.source
        && content
    {
        let now = local::digest(p).map_err(|e| DepsError::Source {
            tool: tool.to_string(),
            what: format!("the direct reference {:?}", r.spec),
            message: e.to_string(),
        })?;
        if allowance.digest.as_deref() != Some(now.as_str()) {
            return Err(changed(ctx, tool, &r, &allowance, &now));
        }
    }
    Ok(Allowed {
        reference: r,
        allowance,
    })
}

/// Check every dependency entry of a manifest before a package manager sees it: registry
/// packages pass; a direct reference only with the person's allowance for this tool (and,
/// for a local path, the content they allowed).
pub fn check(ctx: Ctx<'_>, m: &Manifest) -> Result<Checked, DepsError> {
    checked(ctx, m, true)
}

fn checked(ctx: Ctx<'_>, m: &Manifest, content: bool) -> Result<Checked, DepsError> {
    let tool = m.name.as_str();
    let mut out = Checked::default();
    for p in &m.dependencies.pip {
        match spec::pip_entry(p)? {
            PipEntry::Index => out.pip.push(p.trim().to_string()),
            PipEntry::Direct(d) => out.pip_direct.push(verify(ctx, tool, d, content)?),
        }
    }
    for (name, version) in &m.dependencies.npm {
        if let PipEntry::Direct(d) = spec::npm_entry(name, version)? {
            out.npm_direct.push(verify(ctx, tool, d, content)?);
        }
    }
    Ok(out)
}

/// Install the manifest's dependencies and return the files to commit with the tool
/// (`requirements.lock`; `package.json` and `package-lock.json`). An environment installed
/// earlier from the same request (the same pip requirements, the same npm packages) is reused
/// as it is, so editing a tool's code does not reinstall its dependencies. Nothing is written
/// to the toolbox's tracked files; the environment is left ready for the tool's first call.
pub async fn resolve(
    ctx: Ctx<'_>,
    root: &Path,
    m: &Manifest,
    progress: Progress<'_>,
) -> Result<Vec<(String, Vec<u8>)>, DepsError> {
    let c = check(ctx, m)?;
    let tool = m.name.as_str();
    let dir = env_dir(root, tool);
    let _held = env_lock(&dir).await?;
    let wanted: Vec<Eco> = Eco::ALL.into_iter().filter(|e| e.asked(m)).collect();
    let total = (wanted.len() * 2) as f64;
    let mut files = Vec::new();
    for (i, eco) in wanted.into_iter().enumerate() {
        let step = (i * 2) as f64;
        let reused = generations::list(&dir, eco.subdir())
            .into_iter()
            .find_map(|g| eco.reusable(m, &c, &g));
        if let Some(kept) = reused {
            progress(
                step + 1.0,
                total,
                format!(
                    "{tool}: {} dependencies unchanged, reusing the environment",
                    eco.subdir()
                ),
            );
            files.extend(kept);
            continue;
        }
        let report = |message: String| progress(step, total, message);
        // A generation of its own: the environment of the version now committed (maybe
        // approved, maybe running) is not touched by what this registration asks for.
        let env = generations::fresh(&dir, eco.subdir()).map_err(io("name", &dir))?;
        let installed = eco.install(ctx, tool, m, &c, &env, &report).await?;
        let lockfile = installed
            .iter()
            .find(|(p, _)| p == eco.lockfile())
            .map(|(_, b)| b.clone())
            .unwrap_or_default();
        std::fs::write(env.join(MARKER), sha256_bytes(&lockfile)).map_err(io("write", &env))?;
        std::fs::write(env.join(REQUEST), eco.request_key(m, &c)?).map_err(io("write", &env))?;
        generations::prune(&dir, eco.subdir(), &env);
        files.extend(installed);
    }
    progress(total, total, format!("dependencies of {tool} installed"));
    Ok(files)
}

fn marker_matches(env: &Path, lockfile: &[u8]) -> bool {
    std::fs::read_to_string(env.join(MARKER)).is_ok_and(|h| h.trim() == sha256_bytes(lockfile))
}

/// The generation of `eco` in `envd` built from the committed lockfile (or, without one,
/// from the same request), if there is one.
fn built(envd: &Path, eco: Eco, lockfile: Option<&[u8]>, request: Option<&str>) -> Option<PathBuf> {
    let matches = |g: &Path| match lockfile {
        Some(l) => marker_matches(g, l),
        None => {
            g.join(MARKER).exists()
                && std::fs::read_to_string(g.join(REQUEST)).is_ok_and(|r| Some(r.trim()) == request)
        }
    };
    generations::list(envd, eco.subdir())
        .into_iter()
        .find(|g| matches(g))
}

/// Whether the environment `ensure` would give the tool is already built (nothing to
/// install): what a server may start processes for before any call.
pub fn built_already(ctx: Ctx<'_>, root: &Path, m: &Manifest, dir: &Path) -> bool {
    let envd = env_dir(root, &m.name);
    let Ok(c) = checked(ctx, m, false) else {
        return false;
    };
    Eco::ALL
        .into_iter()
        .filter(|e| e.asked(m) || dir.join(e.lockfile()).exists())
        .all(|eco| {
            let lockfile = std::fs::read(dir.join(eco.lockfile())).ok();
            let request = eco.request_key(m, &c).ok();
            built(&envd, eco, lockfile.as_deref(), request.as_deref()).is_some()
        })
}

/// The environment of a tool at call time, built from the committed lockfiles in `dir` when it
/// is missing or stale. A tool without dependencies gets an empty `Env` at no cost.
pub async fn ensure(ctx: Ctx<'_>, root: &Path, m: &Manifest, dir: &Path) -> Result<Env, DepsError> {
    let tool = m.name.as_str();
    let wanted: Vec<Eco> = Eco::ALL
        .into_iter()
        .filter(|e| e.asked(m) || dir.join(e.lockfile()).exists())
        .collect();
    if wanted.is_empty() {
        return Ok(Env::default());
    }
    let envd = env_dir(root, tool);
    let mut out = Env::default();
    // Every direct reference still allowed (a person may have taken one back); the content
    // is checked when an environment is built.
    let c = checked(ctx, m, false)?;
    for eco in wanted {
        let lockfile = std::fs::read(dir.join(eco.lockfile())).ok();
        if eco == Eco::Pip
            && let Some(l) = &lockfile
            && String::from_utf8_lossy(l).contains('@')
        {
            for line in String::from_utf8_lossy(l).lines() {
                if let Some(PipEntry::Direct(d)) = spec::pip_lock_line(line)? {
                    verify(ctx, tool, d, false)?;
                }
            }
        }
        let request = eco.request_key(m, &c).ok();
        let find = || built(&envd, eco, lockfile.as_deref(), request.as_deref());
        let env = match find() {
            Some(g) => g,
            None => {
                let _held = env_lock(&envd).await?;
                match find() {
                    Some(g) => g,
                    None => {
                        let g =
                            generations::fresh(&envd, eco.subdir()).map_err(io("name", &envd))?;
                        let c = check(ctx, m)?;
                        eco.rebuild(ctx, tool, m, &c, dir, &g).await?;
                        if lockfile.is_none() {
                            std::fs::write(g.join(MARKER), "unpinned").map_err(io("write", &g))?;
                        }
                        if let Some(r) = &request {
                            std::fs::write(g.join(REQUEST), r).map_err(io("write", &g))?;
                        }
                        generations::prune(&envd, eco.subdir(), &g);
                        g
                    }
                }
            }
        };
        match eco {
            Eco::Pip => out.python = Some(env.join("bin/python")),
            Eco::Npm => out.node_modules = Some(env.join("node_modules")),
        }
        out.dirs.push(env);
    }
    Ok(out)
}
