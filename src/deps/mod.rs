//! Script dependencies: a virtual environment per Python tool and a `node_modules` per Node
//! tool, living outside git under `<toolbox>/.toolsmith/env/<tool>/` (git-ignored).
//!
//! At registration `resolve` installs what the manifest asks for and returns the lockfiles to
//! commit (`requirements.lock` from `pip freeze`; `package.json` + `package-lock.json`). At call
//! time `ensure` rebuilds an environment from the committed lockfile when it is missing or was
//! built from another lockfile (after a clone, pull or update): each environment records the
//! sha256 of the lockfile it was built from.

pub mod register;

use crate::hashing::sha256_bytes;
use crate::manifest::Manifest;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use thiserror::Error;
use tokio::process::Command;

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
}

impl DepsError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
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
    /// The environment directory (made visible inside the sandbox).
    pub dir: Option<PathBuf>,
}

/// Progress of an install: (step, total, message).
pub type Progress<'a> = &'a (dyn Fn(f64, f64, String) + Send + Sync);

/// The environment directory of a tool.
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

/// Run a command; its combined output on failure (the tail, if long).
async fn run(
    tool: &str,
    installer: &'static str,
    program: &str,
    args: &[&str],
    cwd: &Path,
) -> Result<String, DepsError> {
    let out = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PIP_NO_INPUT", "1")
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| DepsError::Program {
            program: program.to_string(),
            message: e.to_string(),
        })?;
    let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        return Ok(stdout);
    }
    if !stdout.trim().is_empty() {
        text = format!("{}\n{text}", stdout.trim());
    }
    let text = text.trim();
    let tail: String = if text.len() > 6000 {
        let mut start = text.len() - 6000;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        format!("…{}", &text[start..])
    } else {
        text.to_string()
    };
    Err(DepsError::Install {
        tool: tool.to_string(),
        installer,
        output: tail,
    })
}

fn base_python(m: &Manifest) -> String {
    if m.run.language.as_deref() == Some("python") {
        if let Some(cmd) = m.interpreter().and_then(|c| c.into_iter().next()) {
            return cmd;
        }
    }
    "python3".into()
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

/// A fresh venv at `venv`; returns the command prefix that runs pip for it.
async fn make_venv(tool: &str, python: &str, venv: &Path) -> Result<Vec<String>, DepsError> {
    if venv.exists() {
        std::fs::remove_dir_all(venv).map_err(io("remove", venv))?;
    }
    let parent = venv.parent().unwrap_or(venv);
    std::fs::create_dir_all(parent).map_err(io("create", parent))?;
    let v = venv.to_string_lossy().into_owned();
    let vpy = venv.join("bin/python").to_string_lossy().into_owned();
    if host_pip(python).await {
        run(
            tool,
            "venv",
            python,
            &["-m", "venv", "--without-pip", &v],
            parent,
        )
        .await?;
        Ok(vec![
            python.into(),
            "-m".into(),
            "pip".into(),
            "--python".into(),
            vpy,
        ])
    } else {
        run(tool, "venv", python, &["-m", "venv", &v], parent).await?;
        Ok(vec![vpy, "-m".into(), "pip".into()])
    }
}

async fn pip(tool: &str, pip: &[String], args: &[&str], cwd: &Path) -> Result<String, DepsError> {
    let mut all: Vec<&str> = pip[1..].iter().map(String::as_str).collect();
    all.extend_from_slice(args);
    run(tool, "pip", &pip[0], &all, cwd).await
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

/// Install the manifest's dependencies afresh and return the files to commit with the tool
/// (`requirements.lock`; `package.json` and `package-lock.json`). Nothing is written to the
/// toolbox's tracked files; the environment is left ready for the tool's first call.
pub async fn resolve(
    root: &Path,
    m: &Manifest,
    progress: Progress<'_>,
) -> Result<Vec<(String, Vec<u8>)>, DepsError> {
    let tool = m.name.as_str();
    let dir = env_dir(root, tool);
    let lock = env_lock(&dir);
    let _g = lock.lock().await;
    let mut files = Vec::new();
    let total = (!m.dependencies.pip.is_empty()) as u8 + (!m.dependencies.npm.is_empty()) as u8;
    let total = f64::from(total) * 2.0;
    let mut step = 0.0;
    if !m.dependencies.pip.is_empty() {
        let venv = dir.join("py");
        progress(
            step,
            total,
            format!("creating a virtual environment for {tool}"),
        );
        let p = make_venv(tool, &base_python(m), &venv).await?;
        step += 1.0;
        progress(
            step,
            total,
            format!("pip install {}", m.dependencies.pip.join(" ")),
        );
        let mut args = vec!["install", "--quiet"];
        args.extend(m.dependencies.pip.iter().map(String::as_str));
        pip(tool, &p, &args, &dir).await?;
        let frozen = pip(tool, &p, &["freeze"], &dir).await?;
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
        std::fs::write(venv.join(MARKER), sha256_bytes(text.as_bytes()))
            .map_err(io("write", &venv))?;
        files.push((PIP_LOCK.to_string(), text.into_bytes()));
        step += 1.0;
    }
    if !m.dependencies.npm.is_empty() {
        let node = dir.join("node");
        if node.exists() {
            std::fs::remove_dir_all(&node).map_err(io("remove", &node))?;
        }
        std::fs::create_dir_all(&node).map_err(io("create", &node))?;
        let pkg = npm_package_json(m)?;
        std::fs::write(node.join(NPM_MANIFEST), &pkg).map_err(io("write", &node))?;
        let names: Vec<String> = m
            .dependencies
            .npm
            .iter()
            .map(|(k, v)| format!("{k}@{v}"))
            .collect();
        progress(step, total, format!("npm install {}", names.join(" ")));
        run(
            tool,
            "npm",
            "npm",
            &["install", "--no-audit", "--no-fund", "--loglevel=error"],
            &node,
        )
        .await?;
        let lockfile = std::fs::read(node.join(NPM_LOCK)).map_err(io("read", &node))?;
        std::fs::write(node.join(MARKER), sha256_bytes(&lockfile)).map_err(io("write", &node))?;
        files.push((NPM_MANIFEST.to_string(), pkg.into_bytes()));
        files.push((NPM_LOCK.to_string(), lockfile));
        step += 2.0;
    }
    progress(step, total, format!("dependencies of {tool} installed"));
    Ok(files)
}

fn marker_matches(env: &Path, lockfile: &[u8]) -> bool {
    std::fs::read_to_string(env.join(MARKER)).is_ok_and(|h| h.trim() == sha256_bytes(lockfile))
}

/// The environment of a tool at call time, built from the committed lockfiles in `dir` when it
/// is missing or stale. A tool without dependencies gets an empty `Env` at no cost.
pub async fn ensure(root: &Path, m: &Manifest, dir: &Path) -> Result<Env, DepsError> {
    let tool = m.name.as_str();
    let wants_py = !m.dependencies.pip.is_empty() || dir.join(PIP_LOCK).exists();
    let wants_node = !m.dependencies.npm.is_empty() || dir.join(NPM_LOCK).exists();
    if !wants_py && !wants_node {
        return Ok(Env::default());
    }
    let envd = env_dir(root, tool);
    let mut env = Env {
        dir: Some(envd.clone()),
        ..Env::default()
    };
    if wants_py {
        let venv = envd.join("py");
        env.python = Some(venv.join("bin/python"));
        let lockfile = std::fs::read(dir.join(PIP_LOCK)).ok();
        if !lockfile
            .as_deref()
            .is_some_and(|l| marker_matches(&venv, l))
        {
            let lock = env_lock(&envd);
            let _g = lock.lock().await;
            if !lockfile
                .as_deref()
                .is_some_and(|l| marker_matches(&venv, l))
            {
                match &lockfile {
                    Some(l) => {
                        tracing::info!(
                            tool,
                            "building the Python environment from requirements.lock"
                        );
                        let p = make_venv(tool, &base_python(m), &venv).await?;
                        let lock_path = dir.join(PIP_LOCK).to_string_lossy().into_owned();
                        pip(
                            tool,
                            &p,
                            &["install", "--quiet", "--no-deps", "-r", &lock_path],
                            &envd,
                        )
                        .await?;
                        std::fs::write(venv.join(MARKER), sha256_bytes(l))
                            .map_err(io("write", &venv))?;
                    }
                    None if venv.join("bin/python").exists() => {}
                    None => {
                        tracing::warn!(
                            tool,
                            "no requirements.lock: installing the unpinned pip requirements"
                        );
                        let p = make_venv(tool, &base_python(m), &venv).await?;
                        let mut args = vec!["install", "--quiet"];
                        args.extend(m.dependencies.pip.iter().map(String::as_str));
                        pip(tool, &p, &args, &envd).await?;
                    }
                }
            }
        }
    }
    if wants_node {
        let node = envd.join("node");
        env.node_modules = Some(node.join("node_modules"));
        let lockfile = std::fs::read(dir.join(NPM_LOCK)).ok();
        if !lockfile
            .as_deref()
            .is_some_and(|l| marker_matches(&node, l))
        {
            let lock = env_lock(&envd);
            let _g = lock.lock().await;
            if !lockfile
                .as_deref()
                .is_some_and(|l| marker_matches(&node, l))
            {
                if node.exists() {
                    std::fs::remove_dir_all(&node).map_err(io("remove", &node))?;
                }
                std::fs::create_dir_all(&node).map_err(io("create", &node))?;
                let pkg = match std::fs::read(dir.join(NPM_MANIFEST)) {
                    Ok(b) => b,
                    Err(_) => npm_package_json(m)?.into_bytes(),
                };
                std::fs::write(node.join(NPM_MANIFEST), pkg).map_err(io("write", &node))?;
                match &lockfile {
                    Some(l) => {
                        tracing::info!(tool, "building node_modules from package-lock.json");
                        std::fs::write(node.join(NPM_LOCK), l).map_err(io("write", &node))?;
                        run(
                            tool,
                            "npm",
                            "npm",
                            &["ci", "--no-audit", "--no-fund", "--loglevel=error"],
                            &node,
                        )
                        .await?;
                        std::fs::write(node.join(MARKER), sha256_bytes(l))
                            .map_err(io("write", &node))?;
                    }
                    None => {
                        tracing::warn!(
                            tool,
                            "no package-lock.json: installing the unpinned npm dependencies"
                        );
                        run(
                            tool,
                            "npm",
                            "npm",
                            &["install", "--no-audit", "--no-fund", "--loglevel=error"],
                            &node,
                        )
                        .await?;
                    }
                }
            }
        }
    }
    Ok(env)
}
