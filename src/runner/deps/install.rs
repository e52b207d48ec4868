//! pip and npm, run contained (`runner::contained`) in two steps: fetching, where only the
//! package manager's own code runs (pip downloads wheels only, `--only-binary :all:`, into a
//! wheel directory; npm installs with `--ignore-scripts`), with network only to the package
//! registries through the filtering proxy; then installing and running install scripts
//! offline, seeing the interpreter, the wheel directory or npm cache read-only and writing
//! only the tool's environment. HOME is a scratch directory; the environment holds only
//! PATH, locale and the package manager's index settings.

use super::DepsError;
use crate::config::SandboxConfig;
use crate::runner::contained::{self, Job, Network};
use crate::runner::sandbox::interpreter_prefixes;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest one pip or npm step may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// The Python Package Index.
const PYPI: &[&str] = &["pypi.org", "files.pythonhosted.org"];
/// pip settings passed on to the fetch step (the person's index configuration).
const PIP_VARS: &[&str] = &[
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_NO_INDEX",
    "PIP_CERT",
    "PIP_DEFAULT_TIMEOUT",
    "PIP_TRUSTED_HOST",
];

/// Where installs run and what they may keep.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub sandbox: &'a SandboxConfig,
    /// The toolsmith cache: the wheel directory and npm's cache live here.
    pub cache: &'a Path,
}

fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host = rest.split(['/', ':', '?', '@']).next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The interpreter's directories, and a PATH with its `bin` first.
fn toolchain(program: &str) -> (Vec<PathBuf>, OsString) {
    let mut read = interpreter_prefixes(program);
    if let Some(real) = crate::runner::interp::resolve(program) {
        read.extend(interpreter_prefixes(&real.to_string_lossy()));
    }
    let bins: Vec<PathBuf> = read.iter().map(|p| p.join("bin")).collect();
    let path = contained::path_with(&bins);
    (read, path)
}

async fn step(
    ctx: Ctx<'_>,
    tool: &str,
    installer: &'static str,
    mut job: Job<'_>,
) -> Result<String, DepsError> {
    job.what = format!("{installer} for tool {tool:?}");
    let out = contained::output(&job, STEP_TIMEOUT)
        .await
        .map_err(|e| DepsError::Contained {
            tool: tool.to_string(),
            message: e.to_string(),
            hint: crate::error::Hint::hint(&e).unwrap_or_default(),
        })?;
    let _ = ctx;
    if out.success {
        return Ok(out.stdout);
    }
    let mut text = out.stderr.trim().to_string();
    if !out.stdout.trim().is_empty() {
        text = format!("{}\n{text}", out.stdout.trim());
    }
    if text.is_empty() {
        text = out.status;
    }
    Err(DepsError::Install {
        tool: tool.to_string(),
        installer,
        output: super::tail_text(&text, 6000),
    })
}

/// The pip command for a venv: the base interpreter's pip aimed at it (`--python`), or the
/// venv's own.
pub struct Pip {
    pub base: String,
    pub venv: PathBuf,
    /// Whether the base interpreter's pip is used (`--python VENV`).
    pub host_pip: bool,
}

impl Pip {
    fn argv(&self, args: &[&str], into_venv: bool) -> Vec<String> {
        let vpy = self.venv.join("bin/python").to_string_lossy().into_owned();
        let mut a: Vec<String> = if self.host_pip {
            let mut a = vec![self.base.clone(), "-m".into(), "pip".into()];
            if into_venv {
                a.extend(["--python".into(), vpy]);
            }
            a
        } else {
            vec![vpy, "-m".into(), "pip".into()]
        };
        a.extend(args.iter().map(|s| s.to_string()));
        a
    }

    /// The person's index settings: variables passed on, local wheel directories (read),
    /// the hosts to reach (None: no index).
    fn index() -> (Vec<(String, OsString)>, Vec<PathBuf>, Network) {
        let mut env = Vec::new();
        let (mut dirs, mut hosts) = (Vec::new(), Vec::new());
        let mut no_index = false;
        for var in PIP_VARS {
            let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) else {
                continue;
            };
            let text = v.to_string_lossy().into_owned();
            match *var {
                "PIP_NO_INDEX" => no_index = !matches!(text.as_str(), "0" | "false" | "no"),
                "PIP_FIND_LINKS" | "PIP_INDEX_URL" | "PIP_EXTRA_INDEX_URL" => {
                    for item in text.split_whitespace() {
                        match url_host(item) {
                            Some(h) => hosts.push(h),
                            None => {
                                let p = Path::new(item.trim_start_matches("file:"));
                                if p.is_absolute() {
                                    dirs.push(p.to_path_buf());
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
            env.push((var.to_string(), v));
        }
        if std::env::var_os("PIP_INDEX_URL").is_none() {
            hosts.extend(PYPI.iter().map(|h| h.to_string()));
        }
        hosts.sort();
        hosts.dedup();
        let net = if no_index {
            Network::None
        } else {
            Network::Registries(hosts)
        };
        (env, dirs, net)
    }

    /// Install `args` (requirements, or `-r LOCK --no-deps`) into the venv from wheels only:
    /// first from the wheel directory alone (offline), else after fetching what is missing.
    pub async fn install(
        &self,
        ctx: Ctx<'_>,
        tool: &str,
        args: &[String],
        read_extra: &[PathBuf],
    ) -> Result<(), DepsError> {
        let wheels = ctx.cache.join("pip-wheels");
        std::fs::create_dir_all(&wheels).map_err(super::io("create", &wheels))?;
        let (index_env, dirs, net) = Pip::index();
        let (mut read, path) = toolchain(&self.base);
        read.extend(dirs.iter().cloned());
        read.extend(read_extra.iter().cloned());
        let base_env = |extra: &[(String, OsString)]| {
            let mut env: Vec<(String, OsString)> = vec![
                ("PATH".into(), path.clone()),
                ("LANG".into(), "C.UTF-8".into()),
                ("PIP_DISABLE_PIP_VERSION_CHECK".into(), "1".into()),
                ("PIP_NO_INPUT".into(), "1".into()),
            ];
            env.extend(extra.iter().cloned());
            env
        };
        let w = wheels.to_string_lossy().into_owned();
        let install = |offline_read: Vec<PathBuf>| {
            let mut a = vec![
                "install",
                "--quiet",
                "--no-cache-dir",
                "--no-index",
                "--only-binary",
                ":all:",
                "--find-links",
                &w,
            ]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
            for d in &dirs {
                a.extend(["--find-links".into(), d.to_string_lossy().into_owned()]);
            }
            a.extend(args.iter().cloned());
            let refs: Vec<&str> = a.iter().map(String::as_str).collect();
            let mut r = offline_read;
            r.push(wheels.clone());
            Job {
                what: String::new(),
                argv: self.argv(&refs, true),
                env: base_env(&[]),
                cwd: self.venv.clone(),
                read: r,
                write: vec![self.venv.clone()],
                network: Network::None,
                config: ctx.sandbox,
            }
        };
        // Offline first when every named package has a wheel at hand (else that attempt is
        // a Python start spent on a known failure).
        let mut local = vec![wheels.clone()];
        local.extend(dirs.iter().cloned());
        if all_at_hand(args, &local) && step(ctx, tool, "pip", install(read.clone())).await.is_ok()
        {
            return Ok(());
        }
        let mut a: Vec<String> = [
            "download",
            "--quiet",
            "--no-cache-dir",
            "--only-binary",
            ":all:",
            "--dest",
            &w,
        ]
        .into_iter()
        .map(String::from)
        .collect();
        a.extend(args.iter().cloned());
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let mut fetch_read = read.clone();
        fetch_read.push(self.venv.clone());
        step(
            ctx,
            tool,
            "pip",
            Job {
                what: String::new(),
                argv: self.argv(&refs, false),
                env: base_env(&index_env),
                cwd: wheels.clone(),
                read: fetch_read,
                write: vec![wheels.clone()],
                network: net,
                config: ctx.sandbox,
            },
        )
        .await
        .map_err(no_wheel_hint)?;
        step(ctx, tool, "pip", install(read)).await.map(|_| ())
    }

    /// What is installed in the venv, as `pip freeze` prints it (`name==version`, sorted, pip
    /// and setuptools left out), read from the packages' metadata files: no Python starts,
    /// so no installed package's code (a `.pth` hook) runs.
    pub fn freeze(&self) -> Result<String, DepsError> {
        let mut out = Vec::new();
        let lib = self.venv.join("lib");
        let sites = std::fs::read_dir(&lib)
            .map_err(super::io("read", &lib))?
            .filter_map(Result::ok)
            .map(|e| e.path().join("site-packages"));
        for site in sites {
            let Ok(rd) = std::fs::read_dir(&site) else {
                continue;
            };
            for e in rd.filter_map(Result::ok) {
                let path = e.path();
                if path.extension().is_none_or(|x| x != "dist-info") {
                    continue;
                }
                let Ok(meta) = std::fs::read_to_string(path.join("METADATA")) else {
                    continue;
                };
                let field = |k: &str| {
                    meta.lines()
                        .take_while(|l| !l.is_empty())
                        .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
                };
                if let (Some(name), Some(version)) = (field("Name:"), field("Version:")) {
                    let skip = ["pip", "setuptools", "wheel", "distribute"];
                    if !skip.contains(&name.to_ascii_lowercase().as_str()) {
                        out.push(format!("{name}=={version}"));
                    }
                }
            }
        }
        out.sort_unstable_by_key(|l| l.to_ascii_lowercase());
        Ok(out.join("\n"))
    }
}

/// Whether every requirement in `args` has a wheel file of its name in one of `dirs` (names
/// compared as wheel file names spell them: lowercase, `-` and `.` as `_`). A lock file
/// (`-r FILE`) counts as at hand: its install is tried offline first.
fn all_at_hand(args: &[String], dirs: &[PathBuf]) -> bool {
    if args.iter().any(|a| a == "-r") {
        return true;
    }
    let files: Vec<String> = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().to_ascii_lowercase())
        .filter(|f| f.ends_with(".whl"))
        .collect();
    args.iter().filter(|a| !a.starts_with('-')).all(|req| {
        let name: String = req
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
            .collect::<String>()
            .to_ascii_lowercase()
            .replace(['-', '.'], "_");
        files.iter().any(|f| f.starts_with(&format!("{name}-")))
    })
}

/// Say, for a package without a wheel, why it is not built from source.
fn no_wheel_hint(e: DepsError) -> DepsError {
    match e {
        DepsError::Install {
            tool,
            installer,
            output,
        } if output.contains("No matching distribution")
            || output.contains("from versions: none") =>
        {
            DepsError::Install {
                tool,
                installer,
                output: format!(
                    "{output}\n(toolsmith installs wheels only, never building a package from source, because a build runs the package's own code; a package with no wheel for this Python is not installed: choose a version that has one)"
                ),
            }
        }
        other => other,
    }
}

/// The npm registry's host (the person's `npm_config_registry`, else the public one).
fn npm_registry() -> (Vec<(String, OsString)>, Network) {
    let mut env = Vec::new();
    let mut host = "registry.npmjs.org".to_string();
    for var in ["npm_config_registry", "NPM_CONFIG_REGISTRY"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            if let Some(h) = url_host(&v.to_string_lossy()) {
                host = h;
            }
            env.push((var.to_string(), v));
        }
    }
    (env, Network::Registries(vec![host]))
}

/// npm's cache: the person's `npm_config_cache`, else one in the toolsmith cache.
fn npm_cache(ctx: Ctx<'_>) -> PathBuf {
    ["npm_config_cache", "NPM_CONFIG_CACHE"]
        .iter()
        .find_map(|v| std::env::var_os(v).filter(|v| !v.is_empty()))
        .map(PathBuf::from)
        .unwrap_or_else(|| ctx.cache.join("npm-cache"))
}

/// `npm install` / `npm ci` in `env` without running any package's scripts (fetching from
/// the registry only), then, when a package has install scripts, `npm rebuild` offline.
pub async fn npm(ctx: Ctx<'_>, tool: &str, command: &str, env: &Path) -> Result<(), DepsError> {
    let cache = npm_cache(ctx);
    std::fs::create_dir_all(&cache).map_err(super::io("create", &cache))?;
    let (mut read, path) = toolchain("node");
    read.extend(toolchain("npm").0);
    let (reg_env, net) = npm_registry();
    let mut vars: Vec<(String, OsString)> = vec![
        ("PATH".into(), path),
        ("LANG".into(), "C.UTF-8".into()),
        ("npm_config_cache".into(), cache.clone().into()),
        ("npm_config_update_notifier".into(), "false".into()),
    ];
    vars.extend(reg_env);
    let c = cache.to_string_lossy().into_owned();
    let argv = |args: &[&str]| -> Vec<String> {
        ["npm"].iter().chain(args).map(|s| s.to_string()).collect()
    };
    step(
        ctx,
        tool,
        "npm",
        Job {
            what: String::new(),
            argv: argv(&[
                command,
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
                "--prefer-offline",
                "--loglevel=error",
                "--cache",
                &c,
            ]),
            env: vars.clone(),
            cwd: env.to_path_buf(),
            read: read.clone(),
            write: vec![env.to_path_buf(), cache.clone()],
            network: net,
            config: ctx.sandbox,
        },
    )
    .await?;
    let lock = std::fs::read_to_string(env.join(super::NPM_LOCK)).unwrap_or_default();
    if lock.contains("\"hasInstallScript\": true") {
        step(
            ctx,
            tool,
            "npm",
            Job {
                what: String::new(),
                argv: argv(&[
                    "rebuild",
                    "--no-audit",
                    "--no-fund",
                    "--offline",
                    "--loglevel=error",
                ]),
                env: vars,
                cwd: env.to_path_buf(),
                read,
                write: vec![env.to_path_buf()],
                network: Network::None,
                config: ctx.sandbox,
            },
        )
        .await?;
    }
    Ok(())
}
