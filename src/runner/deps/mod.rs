//! Script dependencies: a virtual environment per Python tool and a `node_modules` per Node
//! tool, living outside git under `<toolbox>/.toolsmith/env/<tool>/` (git-ignored), in
//! `generations` that are never changed once built.
//!
//! At registration `resolve` installs what the manifest asks for (or reuses a generation built
//! from the same request) and returns the lockfiles to commit (`requirements.lock` from
//! the installed packages' metadata; `package.json` + `package-lock.json`). At call time `ensure` finds the
//! generation built from the committed lockfile, or builds one (after a clone, pull or update):
//! each generation records the sha256 of the lockfile it was built from.

mod install;
mod spec;

pub use install::Ctx;
pub use spec::{SpecError, check_npm, check_pip};

use crate::hashing::sha256_bytes;
use crate::manifest::Manifest;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use thiserror::Error;
use tokio::process::Command;

mod generations;

/// The pinned Python requirements committed beside a tool.
pub const PIP_LOCK: &str = "requirements.lock";
/// The npm manifest and lockfile committed beside a tool.
pub const NPM_MANIFEST: &str = "package.json";
pub const NPM_LOCK: &str = "package-lock.json";
/// The file inside an environment recording the lockfile hash it was built from.
const MARKER: &str = ".toolsmith-lock";

/// Why dependencies could not be installed.
#[derive(Debug, Error)]
pub enum DepsError {
    #[error("{installer} failed to install the dependencies of {tool:?}:\n{output}")]
    Install {
        tool: String,
        installer: &'static str,
        output: String,
    },
    #[error("cannot run {program:?}: {message}")]
    Program { program: String, message: String },
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid npm package name {0:?}")]
    BadPackage(String),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("the dependencies of {tool:?} were not installed: {message}")]
    Contained {
        tool: String,
        message: String,
        hint: String,
    },
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

fn env_lock(dir: &Path) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>> = OnceLock::new();
    let mut m = LOCKS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    Arc::clone(m.entry(dir.to_path_buf()).or_default())
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
pub(crate) fn tail_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &text[start..])
}

/// The base interpreter of a Python tool, resolved through version-manager shims (whose
/// trees a sandbox does not show).
fn base_python(m: &Manifest) -> String {
    let cmd = if m.run.language.as_deref() == Some("python")
        && let Some(cmd) = m.interpreter().and_then(|c| c.into_iter().next())
    {
        cmd
    } else {
        "python3".into()
    };
    crate::runner::interp::resolve(&cmd)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or(cmd)
}

/// Whether `python -m pip --python` can install into a pip-less venv (fast), else the venv
/// gets its own pip.
async fn host_pip(python: &str) -> bool {
    Command::new(python)
        .args(["-m", "pip", "--version"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .is_ok_and(|s| s.success())
}

/// A fresh venv at `venv` (the standard library's `venv`: no package code runs); the pip
/// that installs into it.
async fn make_venv(tool: &str, python: &str, venv: &Path) -> Result<install::Pip, DepsError> {
    if venv.exists() {
        std::fs::remove_dir_all(venv).map_err(io("remove", venv))?;
    }
    let parent = venv.parent().unwrap_or(venv);
    std::fs::create_dir_all(parent).map_err(io("create", parent))?;
    let host = host_pip(python).await;
    let mut cmd = Command::new(python);
    cmd.args(["-m", "venv"]);
    if host {
        cmd.arg("--without-pip");
    }
    let out = cmd
        .arg(venv)
        .current_dir(parent)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| DepsError::Program {
            program: python.to_string(),
            message: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(DepsError::Install {
            tool: tool.to_string(),
            installer: "venv",
            output: tail_text(String::from_utf8_lossy(&out.stderr).trim(), 6000),
        });
    }
    Ok(install::Pip {
        base: python.to_string(),
        venv: venv.to_path_buf(),
        host_pip: host,
    })
}

/// Check every dependency entry of a manifest before a package manager sees it.
pub fn check(m: &Manifest) -> Result<(), DepsError> {
    for p in &m.dependencies.pip {
        spec::check_pip(p)?;
    }
    for (name, version) in &m.dependencies.npm {
        spec::check_npm(name, version)?;
    }
    Ok(())
}

fn npm_package_json(m: &Manifest) -> Result<String, DepsError> {
    for name in m.dependencies.npm.keys() {
        let plain = name.strip_prefix('@').map_or(Some(name.as_str()), |rest| {
            rest.split_once('/')
                .map(|(scope, n)| if scope.is_empty() { "" } else { n })
        });
        let ok = plain.is_some_and(|n| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._~".contains(c))
        }) && !name.contains("..");
        if !ok {
            return Err(DepsError::BadPackage(name.clone()));
        }
    }
    let v = serde_json::json!({
        "name": format!("toolsmith-tool-{}", m.name.replace('_', "-")),
        "private": true,
        "description": "Dependencies of a toolsmith tool (written by toolsmith from tool.toml)",
        "dependencies": m.dependencies.npm,
    });
    Ok(serde_json::to_string_pretty(&v).unwrap_or_default() + "\n")
}

/// A package ecosystem whose environment a tool may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eco {
    Pip,
    Npm,
}

/// What an environment was last installed from (its request key), beside its marker.
const REQUEST: &str = ".toolsmith-request";

impl Eco {
    const ALL: [Eco; 2] = [Eco::Pip, Eco::Npm];

    /// The environment's directory inside the tool's env dir.
    fn subdir(self) -> &'static str {
        match self {
            Eco::Pip => "py",
            Eco::Npm => "node",
        }
    }

    /// The lockfile committed beside the tool.
    fn lockfile(self) -> &'static str {
        match self {
            Eco::Pip => PIP_LOCK,
            Eco::Npm => NPM_LOCK,
        }
    }

    /// Whether the manifest asks for packages of this ecosystem.
    fn asked(self, m: &Manifest) -> bool {
        match self {
            Eco::Pip => !m.dependencies.pip.is_empty(),
            Eco::Npm => !m.dependencies.npm.is_empty(),
        }
    }

    /// A key of what the manifest asks for: the same key means the same install.
    fn request_key(self, m: &Manifest) -> Result<String, DepsError> {
        Ok(sha256_bytes(
            match self {
                Eco::Pip => format!("{}\n{}", base_python(m), m.dependencies.pip.join("\n")),
                Eco::Npm => npm_package_json(m)?,
            }
            .as_bytes(),
        ))
    }

    /// Install what the manifest asks for into `env` afresh; the files to commit.
    async fn install(
        self,
        ctx: Ctx<'_>,
        tool: &str,
        m: &Manifest,
        env: &Path,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Vec<(String, Vec<u8>)>, DepsError> {
        match self {
            Eco::Pip => {
                progress(format!("creating a virtual environment for {tool}"));
                let p = make_venv(tool, &base_python(m), env).await?;
                progress(format!("pip install {}", m.dependencies.pip.join(" ")));
                p.install(ctx, tool, &m.dependencies.pip, &[]).await?;
                let frozen = p.freeze()?;
                let mut lines: Vec<&str> = frozen
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                lines.sort_unstable_by_key(|l| l.to_ascii_lowercase());
                let text = format!(
                    "# Exact versions installed for this tool (pip freeze), written by toolsmith.\n# The environment is rebuilt from this file with `pip install --no-deps -r requirements.lock`.\n{}\n",
                    lines.join("\n")
                );
                // Kept in the environment too, so an unchanged request can reuse it.
                std::fs::write(env.join(PIP_LOCK), &text).map_err(io("write", env))?;
                Ok(vec![(PIP_LOCK.to_string(), text.into_bytes())])
            }
            Eco::Npm => {
                fresh_dir(env)?;
                let pkg = npm_package_json(m)?;
                std::fs::write(env.join(NPM_MANIFEST), &pkg).map_err(io("write", env))?;
                let names: Vec<String> = m
                    .dependencies
                    .npm
                    .iter()
                    .map(|(k, v)| format!("{k}@{v}"))
                    .collect();
                progress(format!("npm install {}", names.join(" ")));
                install::npm(ctx, tool, "install", env).await?;
                let lockfile = std::fs::read(env.join(NPM_LOCK)).map_err(io("read", env))?;
                Ok(vec![
                    (NPM_MANIFEST.to_string(), pkg.into_bytes()),
                    (NPM_LOCK.to_string(), lockfile),
                ])
            }
        }
    }

    /// The files to commit of an environment installed earlier from the same request, if it
    /// is intact (its marker matches the lockfile kept in it).
    fn reusable(self, m: &Manifest, env: &Path) -> Option<Vec<(String, Vec<u8>)>> {
        let key = self.request_key(m).ok()?;
        let recorded = std::fs::read_to_string(env.join(REQUEST)).ok()?;
        let lockfile = std::fs::read(env.join(self.lockfile())).ok()?;
        if recorded.trim() != key || !marker_matches(env, &lockfile) {
            return None;
        }
        Some(match self {
            Eco::Pip => vec![(PIP_LOCK.to_string(), lockfile)],
            Eco::Npm => vec![
                (
                    NPM_MANIFEST.to_string(),
                    std::fs::read(env.join(NPM_MANIFEST)).ok()?,
                ),
                (NPM_LOCK.to_string(), lockfile),
            ],
        })
    }

    /// Rebuild `env` from the committed lockfile in `dir` (or, without one, from the
    /// manifest's unpinned request).
    async fn rebuild(
        self,
        ctx: Ctx<'_>,
        tool: &str,
        m: &Manifest,
        dir: &Path,
        env: &Path,
    ) -> Result<(), DepsError> {
        let lockfile = std::fs::read(dir.join(self.lockfile())).ok();
        match (self, &lockfile) {
            (Eco::Pip, Some(l)) => {
                tracing::info!(
                    tool,
                    "building the Python environment from requirements.lock"
                );
                for line in String::from_utf8_lossy(l).lines() {
                    spec::check_pip_lock_line(line)?;
                }
                let p = make_venv(tool, &base_python(m), env).await?;
                let lock_path = dir.join(PIP_LOCK).to_string_lossy().into_owned();
                let args = ["--no-deps".to_string(), "-r".into(), lock_path];
                p.install(ctx, tool, &args, &[dir.to_path_buf()]).await?;
                std::fs::write(env.join(MARKER), sha256_bytes(l)).map_err(io("write", env))?;
            }
            (Eco::Pip, None) if env.join("bin/python").exists() => {}
            (Eco::Pip, None) => {
                tracing::warn!(
                    tool,
                    "no requirements.lock: installing the unpinned pip requirements"
                );
                let p = make_venv(tool, &base_python(m), env).await?;
                p.install(ctx, tool, &m.dependencies.pip, &[]).await?;
            }
            (Eco::Npm, _) => {
                fresh_dir(env)?;
                let pkg = match std::fs::read(dir.join(NPM_MANIFEST)) {
                    Ok(b) => b,
                    Err(_) => npm_package_json(m)?.into_bytes(),
                };
                std::fs::write(env.join(NPM_MANIFEST), pkg).map_err(io("write", env))?;
                match &lockfile {
                    Some(l) => {
                        tracing::info!(tool, "building node_modules from package-lock.json");
                        std::fs::write(env.join(NPM_LOCK), l).map_err(io("write", env))?;
                        install::npm(ctx, tool, "ci", env).await?;
                        std::fs::write(env.join(MARKER), sha256_bytes(l))
                            .map_err(io("write", env))?;
                    }
                    None => {
                        tracing::warn!(
                            tool,
                            "no package-lock.json: installing the unpinned npm dependencies"
                        );
                        install::npm(ctx, tool, "install", env).await?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// An empty directory at `dir` (removing what was there).
fn fresh_dir(dir: &Path) -> Result<(), DepsError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(io("remove", dir))?;
    }
    std::fs::create_dir_all(dir).map_err(io("create", dir))
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
    check(m)?;
    let tool = m.name.as_str();
    let dir = env_dir(root, tool);
    let lock = env_lock(&dir);
    let _g = lock.lock().await;
    let wanted: Vec<Eco> = Eco::ALL.into_iter().filter(|e| e.asked(m)).collect();
    let total = (wanted.len() * 2) as f64;
    let mut files = Vec::new();
    for (i, eco) in wanted.into_iter().enumerate() {
        let step = (i * 2) as f64;
        let reused = generations::list(&dir, eco.subdir())
            .into_iter()
            .find_map(|g| eco.reusable(m, &g));
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
        let installed = eco.install(ctx, tool, m, &env, &report).await?;
        let lockfile = installed
            .iter()
            .find(|(p, _)| p == eco.lockfile())
            .map(|(_, b)| b.clone())
            .unwrap_or_default();
        std::fs::write(env.join(MARKER), sha256_bytes(&lockfile)).map_err(io("write", &env))?;
        std::fs::write(env.join(REQUEST), eco.request_key(m)?).map_err(io("write", &env))?;
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
pub fn built_already(root: &Path, m: &Manifest, dir: &Path) -> bool {
    let envd = env_dir(root, &m.name);
    Eco::ALL
        .into_iter()
        .filter(|e| e.asked(m) || dir.join(e.lockfile()).exists())
        .all(|eco| {
            let lockfile = std::fs::read(dir.join(eco.lockfile())).ok();
            let request = eco.request_key(m).ok();
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
    for eco in wanted {
        let lockfile = std::fs::read(dir.join(eco.lockfile())).ok();
        let request = eco.request_key(m).ok();
        let find = || built(&envd, eco, lockfile.as_deref(), request.as_deref());
        let env = match find() {
            Some(g) => g,
            None => {
                let lock = env_lock(&envd);
                let _g = lock.lock().await;
                match find() {
                    Some(g) => g,
                    None => {
                        let g =
                            generations::fresh(&envd, eco.subdir()).map_err(io("name", &envd))?;
                        check(m)?;
                        eco.rebuild(ctx, tool, m, dir, &g).await?;
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
