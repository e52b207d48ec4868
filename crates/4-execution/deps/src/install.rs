//! pip and npm, run contained (`sandbox::contained`) in two steps: fetching, where only the
//! package manager's own code runs (pip downloads wheels only, `--only-binary :all:`, into a
//! wheel directory; npm installs with `--ignore-scripts`), with network only to the package
//! registries through the filtering proxy; then installing and running install scripts
//! offline, seeing the interpreter, the wheel directory or npm cache read-only and writing
//! only the tool's environment. HOME is a scratch directory; the environment holds only
//! PATH, locale and the package manager's index settings.

use super::DepsError;
use crate::config::SandboxConfig;
use crate::sandbox::contained::{self, Job, Network};
use crate::sandbox::interpreter_prefixes;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest one pip or npm step may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Where installs run and what they may keep.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    /// The sandbox settings installs run under.
    pub sandbox: &'a SandboxConfig,
    /// The toolsmith cache: the wheel directory and npm's cache live here.
    pub cache: &'a Path,
    /// The person's allowances of direct references for this toolbox.
    pub allowed: &'a super::Allowances,
}

pub(super) fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host = rest.split(['/', ':', '?', '@']).next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The interpreter's directories, and a PATH with its `bin` first.
pub(super) fn toolchain(program: &str, sandbox: &SandboxConfig) -> (Vec<PathBuf>, OsString) {
    let mut read = interpreter_prefixes(program, sandbox);
    if let Some(real) = crate::sandbox::interp::resolve(program) {
        read.extend(interpreter_prefixes(&real.to_string_lossy(), sandbox));
    }
    let bins: Vec<PathBuf> = read.iter().map(|p| p.join("bin")).collect();
    let path = contained::path_with(&bins);
    (read, path)
}

pub(super) async fn step(
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
    if installer == "npm"
        && let Some(log) = npm_log_errors(&text, &job.write)
    {
        text = format!("{text}\n{log}");
    }
    Err(DepsError::Install {
        tool: tool.to_string(),
        installer,
        output: super::tail_text(&text, 6000),
    })
}

/// What npm prints last when it fails: where its debug log is.
const NPM_LOG_POINTER: &str = "A complete log of this run can be found in:";

/// The most of npm's debug log read (its end): its errors are its last lines.
const NPM_LOG_TAIL: u64 = 256 * 1024;

/// npm's own account of a failure it printed nothing about but the path of its debug log
/// (some failures print only that line): the log's error lines, its failed fetches and the
/// first lines of its stack, at most 40 lines. Only a regular file in the `_logs` directory of
/// one of the step's own writable directories (npm's cache) is read, and only its end: the
/// path comes from the output of a process that may run a package's scripts. `None` when npm
/// said more, or there is no such log.
fn npm_log_errors(printed: &str, writable: &[PathBuf]) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let path = printed
        .lines()
        .find_map(|l| l.split_once(NPM_LOG_POINTER))
        .map(|(_, p)| Path::new(p.trim()))?;
    let said_more = printed.lines().any(|l| {
        (l.starts_with("npm error") || l.starts_with("npm ERR!")) && !l.contains(NPM_LOG_POINTER)
    });
    if said_more {
        return None;
    }
    let logs = path.parent()?.canonicalize().ok()?;
    let ours = writable
        .iter()
        .any(|w| w.join("_logs").canonicalize().is_ok_and(|a| a == logs));
    let md = std::fs::symlink_metadata(path).ok()?;
    if !ours || !md.file_type().is_file() {
        return None;
    }
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::Start(md.len().saturating_sub(NPM_LOG_TAIL)))
        .ok()?;
    let mut bytes = Vec::new();
    file.take(NPM_LOG_TAIL).read_to_end(&mut bytes).ok()?;
    let log = String::from_utf8_lossy(&bytes);
    let mut frames = 0;
    let wanted: Vec<&str> = log
        .lines()
        .filter(|line| {
            // "<n> <level> <message>"; stack frames repeat the number of their message.
            let rest = line.split_once(' ').map_or("", |(_, r)| r);
            if rest.starts_with("verbose stack") {
                frames += 1;
                return frames <= 4;
            }
            (rest.starts_with("error ") && !rest.contains(NPM_LOG_POINTER))
                || rest.starts_with("warn ")
                || rest.starts_with("verbose type ")
                || (rest.starts_with("http fetch ") && !rest.contains(" 200 "))
        })
        .collect();
    if wanted.is_empty() {
        return None;
    }
    let tail = &wanted[wanted.len().saturating_sub(40)..];
    Some(format!(
        "npm's log ({}) says:\n{}",
        path.display(),
        tail.join("\n")
    ))
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

/// What every npm step gets: the tool chain to read, the environment, npm's cache, the
/// registry's network.
pub(super) struct NpmBase {
    pub read: Vec<PathBuf>,
    pub vars: Vec<(String, OsString)>,
    pub cache: PathBuf,
    pub network: Network,
}

pub(super) fn npm_base(ctx: Ctx<'_>) -> Result<NpmBase, DepsError> {
    let cache = npm_cache(ctx);
    std::fs::create_dir_all(&cache).map_err(super::io("create", &cache))?;
    let (mut read, path) = toolchain("node", ctx.sandbox);
    read.extend(toolchain("npm", ctx.sandbox).0);
    let (reg_env, network) = npm_registry();
    let mut vars: Vec<(String, OsString)> = vec![
        ("PATH".into(), path),
        ("LANG".into(), "C.UTF-8".into()),
        ("npm_config_cache".into(), cache.clone().into()),
        ("npm_config_update_notifier".into(), "false".into()),
    ];
    vars.extend(reg_env);
    Ok(NpmBase {
        read,
        vars,
        cache,
        network,
    })
}

/// The npm registry's host (the person's `npm_config_registry`, else the public one).
pub(super) fn npm_registry_host() -> String {
    match npm_registry().1 {
        Network::Registries(h) => h.into_iter().next().unwrap_or_default(),
        Network::None => String::new(),
    }
}

/// `npm install` / `npm ci` in `env` without running any package's scripts (fetching from
/// the registry only, and from `extra_hosts`: the hosts of archives a person allowed), then
/// `check` on what was fetched (the lockfile npm wrote: every package from the registry or
/// allowed, allowed archives as pinned) before any package's script runs, then, when a
/// package has install scripts, `npm rebuild` offline.
pub async fn npm(
    ctx: Ctx<'_>,
    tool: &str,
    command: &str,
    env: &Path,
    extra_hosts: &[String],
    check: &(dyn Fn() -> Result<(), DepsError> + Send + Sync),
) -> Result<(), DepsError> {
    let NpmBase {
        read,
        vars,
        cache,
        mut network,
    } = npm_base(ctx)?;
    if let Network::Registries(h) = &mut network {
        h.extend(extra_hosts.iter().cloned());
        h.sort();
        h.dedup();
    }
    let c = cache.to_string_lossy().into_owned();
    let argv = |args: &[&str]| -> Vec<String> {
        ["npm"].iter().chain(args).map(|s| s.to_string()).collect()
    };
    step(
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
            network,
            config: ctx.sandbox,
        },
    )
    .await?;
    check()?;
    let lock = std::fs::read_to_string(env.join(super::NPM_LOCK)).unwrap_or_default();
    if lock.contains("\"hasInstallScript\": true") {
        step(
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

/// The Python Package Index.
const PYPI: &[&str] = &["pypi.org", "files.pythonhosted.org"];
/// pip settings passed on to the fetch steps (the person's index configuration).
const PIP_VARS: &[&str] = &[
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_NO_INDEX",
    "PIP_CERT",
    "PIP_DEFAULT_TIMEOUT",
    "PIP_TRUSTED_HOST",
];
/// The person's index settings.
pub struct Index {
    /// Variables passed on to fetch steps.
    pub env: Vec<(String, OsString)>,
    /// Local wheel (and source) directories of `PIP_FIND_LINKS`, read by every step.
    pub dirs: Vec<PathBuf>,
    /// The index's hosts, for fetch steps.
    pub network: Network,
}

impl Index {
    pub fn from_env() -> Index {
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
        let network = if no_index {
            Network::None
        } else {
            Network::Registries(hosts)
        };
        Index { env, dirs, network }
    }
}

/// The pip command for a venv: the base interpreter's pip aimed at it (`--python`), or the
/// venv's own.
pub struct Pip {
    pub base: String,
    pub venv: PathBuf,
    /// Whether the base interpreter's pip is used (`--python VENV`).
    pub host_pip: bool,
    /// The base interpreter's directories and a PATH with its `bin` first (`toolchain`).
    pub toolchain: (Vec<PathBuf>, OsString),
}

impl Pip {
    /// `python -m pip ARGS` (into the venv: with `--python VENV` when the base's pip is used).
    pub fn argv(&self, args: &[String], into_venv: bool) -> Vec<String> {
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
        a.extend(args.iter().cloned());
        a
    }

    /// The interpreter's directories (and the venv) to read, and the environment of a step.
    pub fn base_job(&self, index: &Index) -> (Vec<PathBuf>, Vec<(String, OsString)>) {
        let (mut read, path) = self.toolchain.clone();
        read.extend(index.dirs.iter().cloned());
        read.push(self.venv.clone());
        let env = vec![
            ("PATH".into(), path),
            ("LANG".into(), "C.UTF-8".into()),
            ("PIP_DISABLE_PIP_VERSION_CHECK".into(), "1".into()),
            ("PIP_NO_INPUT".into(), "1".into()),
        ];
        (read, env)
    }
}

/// The requirement pip found no wheel for, from its "No matching distribution found for X".
pub fn no_wheel_for(e: &DepsError) -> Option<String> {
    let DepsError::Install { output, .. } = e else {
        return None;
    };
    output.lines().find_map(|l| {
        let r = l
            .split_once("No matching distribution found for ")?
            .1
            .trim();
        (!r.is_empty()).then(|| r.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_npm_failure_that_printed_only_its_log_path_is_told_from_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("npm-cache");
        std::fs::create_dir_all(cache.join("_logs")).unwrap();
        let log = cache.join("_logs").join("debug-0.log");
        std::fs::write(
            &log,
            "17 http fetch GET 200 https://registry.npmjs.org/a 3ms (cache stale)\n\
             18 http fetch GET 503 https://registry.npmjs.org/b 40ms\n\
             20 verbose type FetchError\n\
             21 verbose stack FetchError: request to https://registry.npmjs.org/b failed\n\
             21 verbose stack     at one\n\
             21 verbose stack     at two\n\
             21 verbose stack     at three\n\
             21 verbose stack     at four\n\
             22 error code ECONNRESET\n\
             27 verbose cwd /tmp/x\n\
             33 error A complete log of this run can be found in: /x.log\n",
        )
        .unwrap();
        let printed = format!("npm error {NPM_LOG_POINTER} {}", log.display());
        let writable = [dir.path().join("env"), cache.clone()];
        let told = npm_log_errors(&printed, &writable).expect("the log's errors");
        assert!(
            told.contains("GET 503") && !told.contains("GET 200"),
            "{told}"
        );
        assert!(told.contains("error code ECONNRESET"), "{told}");
        assert!(told.contains("verbose type FetchError"), "{told}");
        assert!(
            told.contains("at three") && !told.contains("at four"),
            "{told}"
        );
        assert!(
            !told.contains("verbose cwd") && !told.contains("/x.log"),
            "{told}"
        );

        // npm said what failed: its output is enough.
        let said = format!("npm error code ETARGET\n{printed}");
        assert_eq!(npm_log_errors(&said, &writable), None);
        // No log to read: nothing added.
        let gone = format!("npm error {NPM_LOG_POINTER} /nonexistent/x.log");
        assert_eq!(npm_log_errors(&gone, &writable), None);
        // A path the output names outside npm's own logs (a package's script can print
        // anything) is never read: not another file, not a device, not a link.
        let other = dir.path().join("elsewhere.log");
        std::fs::copy(&log, &other).unwrap();
        for p in [other.as_path(), Path::new("/dev/zero")] {
            let named = format!("npm error {NPM_LOG_POINTER} {}", p.display());
            assert_eq!(npm_log_errors(&named, &writable), None, "{}", p.display());
        }
        #[cfg(unix)]
        {
            let link = cache.join("_logs").join("link.log");
            std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
            let named = format!("npm error {NPM_LOG_POINTER} {}", link.display());
            assert_eq!(npm_log_errors(&named, &writable), None);
        }
    }
}
