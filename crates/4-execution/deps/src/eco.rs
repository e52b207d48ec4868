//! The two package ecosystems a script tool's environment comes from — a Python venv (pip)
//! and a `node_modules` (npm): what a manifest asks of each, the key of that request, a fresh
//! install (the lockfiles to commit), the reuse of an environment built from the same
//! request, and a rebuild from the committed lockfile. Direct references come in only as
//! `Allowed` (checked by `deps::check`, or here for a lockfile's lines).

use super::install::{self, Ctx};
use super::{
    Allowed, Checked, DepsError, MARKER, NPM_LOCK, NPM_MANIFEST, PIP_LOCK, PipEntry, REQUEST, io,
    marker_matches, npm_refs, spec, tail_text, verify,
};
use crate::hashing::sha256_bytes;
use crate::manifest::Manifest;
use crate::sandbox::contained::{Job, Network};
use std::collections::BTreeMap;
use std::path::Path;

/// The base interpreter of a Python tool, resolved through version-manager shims (whose
/// trees a sandbox does not show).
pub(super) fn base_python(m: &Manifest) -> String {
    let cmd = if m.run.language.as_deref() == Some("python")
        && let Some(cmd) = m.interpreter().and_then(|c| c.into_iter().next())
    {
        cmd
    } else {
        "python3".into()
    };
    crate::sandbox::interp::resolve(&cmd)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or(cmd)
}

/// Makes the venv at `argv[1]` with the standard library's `venv` (no package code runs) and
/// says whether the base interpreter has its own pip (`host-pip`: `python -m pip --python`
/// installs into a pip-less venv, fast), else the venv gets pip from `ensurepip`'s bundled
/// wheel (`own-pip`). `-I` keeps the working directory and PYTHON* variables off `sys.path`.
const MAKE_VENV: &str = "import importlib.util, os, sys, venv\n\
host = importlib.util.find_spec('pip') is not None\n\
venv.EnvBuilder(with_pip=not host, symlinks=os.name != 'nt', clear=True).create(sys.argv[1])\n\
print('host-pip' if host else 'own-pip')\n";

/// A fresh venv at `venv`; the pip that installs into it. The base interpreter is the one a
/// manifest names, so it runs contained like every install step (offline, seeing its own
/// installation read-only and writing only the venv): it is never run on the host.
async fn make_venv(
    ctx: Ctx<'_>,
    tool: &str,
    python: &str,
    venv: &Path,
) -> Result<install::Pip, DepsError> {
    if venv.exists() {
        std::fs::remove_dir_all(venv).map_err(io("remove", venv))?;
    }
    std::fs::create_dir_all(venv).map_err(io("create", venv))?;
    let toolchain = install::toolchain(python, ctx.sandbox);
    let (read, path) = toolchain.clone();
    let job = Job {
        what: String::new(),
        argv: vec![
            python.to_string(),
            "-I".into(),
            "-c".into(),
            MAKE_VENV.into(),
            venv.to_string_lossy().into_owned(),
        ],
        env: vec![("PATH".into(), path), ("LANG".into(), "C.UTF-8".into())],
        cwd: venv.to_path_buf(),
        read,
        write: vec![venv.to_path_buf()],
        network: Network::None,
        config: ctx.sandbox,
    };
    let out = install::step(tool, "venv", job).await?;
    let host = match out.trim() {
        "host-pip" => true,
        "own-pip" => false,
        other => {
            return Err(DepsError::Install {
                tool: tool.to_string(),
                installer: "venv",
                output: tail_text(
                    &format!(
                        "{python} is not a Python that makes virtual environments (it said {other:?})"
                    ),
                    6000,
                ),
            });
        }
    };
    Ok(install::Pip {
        base: python.to_string(),
        venv: venv.to_path_buf(),
        host_pip: host,
        toolchain,
    })
}

/// The package.json of the manifest's npm dependencies, with `specs` in place of some (an
/// environment names its copies of allowed local references so).
fn npm_package_json(m: &Manifest, specs: &BTreeMap<String, String>) -> Result<String, DepsError> {
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
    let mut deps = m.dependencies.npm.clone();
    for (name, spec) in specs {
        deps.insert(name.clone(), spec.clone());
    }
    let v = serde_json::json!({
        "name": format!("toolsmith-tool-{}", m.name.replace('_', "-")),
        "private": true,
        "description": "Dependencies of a toolsmith tool (written by toolsmith from tool.toml)",
        "dependencies": deps,
    });
    Ok(serde_json::to_string_pretty(&v).unwrap_or_default() + "\n")
}

/// Write the environment's package.json (allowed local references named by their copies,
/// which are made there), for `npm install` or `npm ci`.
async fn npm_setup(
    ctx: Ctx<'_>,
    tool: &str,
    m: &Manifest,
    direct: &[Allowed],
    env: &Path,
) -> Result<(), DepsError> {
    fresh_dir(env)?;
    npm_refs::prepare(ctx, tool, direct, env).await?;
    let pkg = npm_package_json(m, &npm_refs::specs(direct))?;
    std::fs::write(env.join(NPM_MANIFEST), pkg).map_err(io("write", env))
}

/// What npm fetched, checked before any package's script runs: every package in the
/// lockfile npm wrote is from the registry or a reference the person allowed (a package's own
/// dependency on a URL, git or a path is not), and allowed archives are what was allowed.
fn fetched_check<'a>(
    ctx: Ctx<'a>,
    tool: &'a str,
    c: &'a Checked,
    env: &'a Path,
) -> impl Fn() -> Result<(), DepsError> + Send + Sync + 'a {
    move || {
        let lock = std::fs::read(env.join(NPM_LOCK)).map_err(io("read", env))?;
        npm_refs::check_lock_of(
            tool,
            "the package-lock.json npm wrote",
            &lock,
            &c.npm_direct,
        )?;
        npm_refs::pin_urls(ctx, tool, &c.npm_direct, env)
    }
}

/// A package ecosystem whose environment a tool may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Eco {
    Pip,
    Npm,
}

impl Eco {
    pub const ALL: [Eco; 2] = [Eco::Pip, Eco::Npm];

    /// The environment's directory inside the tool's env dir.
    pub fn subdir(self) -> &'static str {
        match self {
            Eco::Pip => "py",
            Eco::Npm => "node",
        }
    }

    /// The lockfile committed beside the tool.
    pub fn lockfile(self) -> &'static str {
        match self {
            Eco::Pip => PIP_LOCK,
            Eco::Npm => NPM_LOCK,
        }
    }

    /// Whether the manifest asks for packages of this ecosystem.
    pub fn asked(self, m: &Manifest) -> bool {
        match self {
            Eco::Pip => !m.dependencies.pip.is_empty(),
            Eco::Npm => !m.dependencies.npm.is_empty(),
        }
    }

    /// A key of what the manifest asks for: the same key means the same install (a direct
    /// reference counts with the digest allowed).
    pub fn request_key(self, m: &Manifest, c: &Checked) -> Result<String, DepsError> {
        Ok(sha256_bytes(
            match self {
                Eco::Pip => format!(
                    "{}\n{}{}",
                    base_python(m),
                    m.dependencies.pip.join("\n"),
                    Checked::key(&c.pip_direct)
                ),
                Eco::Npm => npm_package_json(m, &BTreeMap::new())? + &Checked::key(&c.npm_direct),
            }
            .as_bytes(),
        ))
    }

    /// Install what the manifest asks for into `env` afresh; the files to commit.
    pub async fn install(
        self,
        ctx: Ctx<'_>,
        tool: &str,
        m: &Manifest,
        c: &Checked,
        env: &Path,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Vec<(String, Vec<u8>)>, DepsError> {
        match self {
            Eco::Pip => {
                progress(format!("creating a virtual environment for {tool}"));
                let p = make_venv(ctx, tool, &base_python(m), env).await?;
                progress(format!("pip install {}", m.dependencies.pip.join(" ")));
                let from_refs = p.install(ctx, tool, &c.pip, &c.pip_direct, false).await?;
                let frozen = p.freeze(&from_refs)?;
                let mut lines: Vec<&str> = frozen
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                lines.sort_unstable_by_key(|l| l.to_ascii_lowercase());
                let text = format!(
                    "# Exact versions installed for this tool (pip freeze), written by toolsmith.\n# The environment is rebuilt from this file with `pip install --no-deps`.\n{}\n",
                    lines.join("\n")
                );
                // Kept in the environment too, so an unchanged request can reuse it.
                std::fs::write(env.join(PIP_LOCK), &text).map_err(io("write", env))?;
                Ok(vec![(PIP_LOCK.to_string(), text.into_bytes())])
            }
            Eco::Npm => {
                npm_setup(ctx, tool, m, &c.npm_direct, env).await?;
                let names: Vec<String> = m
                    .dependencies
                    .npm
                    .iter()
                    .map(|(k, v)| format!("{k}@{v}"))
                    .collect();
                progress(format!("npm install {}", names.join(" ")));
                let check = fetched_check(ctx, tool, c, env);
                install::npm(
                    ctx,
                    tool,
                    "install",
                    env,
                    &npm_refs::hosts(&c.npm_direct),
                    &check,
                )
                .await?;
                let lockfile = std::fs::read(env.join(NPM_LOCK)).map_err(io("read", env))?;
                let pkg = npm_package_json(m, &BTreeMap::new())?;
                Ok(vec![
                    (NPM_MANIFEST.to_string(), pkg.into_bytes()),
                    (NPM_LOCK.to_string(), lockfile),
                ])
            }
        }
    }

    /// The files to commit of an environment installed earlier from the same request, if it
    /// is intact (its marker matches the lockfile kept in it).
    pub fn reusable(self, m: &Manifest, c: &Checked, env: &Path) -> Option<Vec<(String, Vec<u8>)>> {
        let key = self.request_key(m, c).ok()?;
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
                    npm_package_json(m, &BTreeMap::new()).ok()?.into_bytes(),
                ),
                (NPM_LOCK.to_string(), lockfile),
            ],
        })
    }

    /// Rebuild `env` from the committed lockfile in `dir` (or, without one, from the
    /// manifest's unpinned request).
    pub async fn rebuild(
        self,
        ctx: Ctx<'_>,
        tool: &str,
        m: &Manifest,
        c: &Checked,
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
                let (reqs, direct) = pip_lock(ctx, tool, l)?;
                let p = make_venv(ctx, tool, &base_python(m), env).await?;
                p.install(ctx, tool, &reqs, &direct, true).await?;
                std::fs::write(env.join(MARKER), sha256_bytes(l)).map_err(io("write", env))?;
            }
            (Eco::Pip, None) if env.join("bin/python").exists() => {}
            (Eco::Pip, None) => {
                tracing::warn!(
                    tool,
                    "no requirements.lock: installing the unpinned pip requirements"
                );
                let p = make_venv(ctx, tool, &base_python(m), env).await?;
                p.install(ctx, tool, &c.pip, &c.pip_direct, false).await?;
            }
            (Eco::Npm, _) => {
                npm_setup(ctx, tool, m, &c.npm_direct, env).await?;
                let hosts = npm_refs::hosts(&c.npm_direct);
                match &lockfile {
                    Some(l) => {
                        tracing::info!(tool, "building node_modules from package-lock.json");
                        npm_refs::check_lock(tool, l, &c.npm_direct)?;
                        std::fs::write(env.join(NPM_LOCK), l).map_err(io("write", env))?;
                        install::npm(
                            ctx,
                            tool,
                            "ci",
                            env,
                            &hosts,
                            &fetched_check(ctx, tool, c, env),
                        )
                        .await?;
                        std::fs::write(env.join(MARKER), sha256_bytes(l))
                            .map_err(io("write", env))?;
                    }
                    None => {
                        tracing::warn!(
                            tool,
                            "no package-lock.json: installing the unpinned npm dependencies"
                        );
                        install::npm(
                            ctx,
                            tool,
                            "install",
                            env,
                            &hosts,
                            &fetched_check(ctx, tool, c, env),
                        )
                        .await?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The lines of a committed `requirements.lock`: requirements from the index, and direct
/// references, each allowed for the tool (else refused).
pub(super) fn pip_lock(
    ctx: Ctx<'_>,
    tool: &str,
    lock: &[u8],
) -> Result<(Vec<String>, Vec<Allowed>), DepsError> {
    let (mut reqs, mut direct) = (Vec::new(), Vec::new());
    for line in String::from_utf8_lossy(lock).lines() {
        match spec::pip_lock_line(line)? {
            None => {}
            Some(PipEntry::Index) => reqs.push(line.trim().to_string()),
            Some(PipEntry::Direct(d)) => direct.push(verify(ctx, tool, d, true)?),
        }
    }
    Ok((reqs, direct))
}

/// An empty directory at `dir` (removing what was there).
fn fresh_dir(dir: &Path) -> Result<(), DepsError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(io("remove", dir))?;
    }
    std::fs::create_dir_all(dir).map_err(io("create", dir))
}
