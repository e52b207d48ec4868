//! pip, contained (`install::step`): a venv's packages installed from wheels only, in two
//! kinds of step. Fetching runs only pip's own code (`pip download --only-binary :all:`) with
//! network only to the package index through the filtering proxy; installing runs offline,
//! seeing the interpreter and the wheel directories read-only and writing only the venv.
//! A package without a wheel, and a direct reference a person allowed (`allowed`), become
//! wheels first (`wheel`: fetched without running package code, built offline); those wheels
//! stay in the install's own directory, never in the shared wheel cache another tool's
//! install reads.

use super::install::{self, Ctx, toolchain};
use super::wheel::{self, Work};
use super::{Allowed, DepsError};
use crate::runner::contained::{Job, Network};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

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
/// The most packages built from source in one install.
const MAX_BUILDS: usize = 10;

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
                        match install::url_host(item) {
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
}

/// What an install put in the venv from direct references: each package's normalized name
/// and the entry it came from (the lockfile keeps the entry).
pub type FromReferences = BTreeMap<String, String>;

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
        let (mut read, path) = toolchain(&self.base);
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

    /// Install `reqs` (requirements from the index) and the allowed direct references
    /// `direct` into the venv, from wheels only (`no_deps`: exactly these, as from a lockfile).
    /// Returns the packages that came from direct references.
    pub async fn install(
        &self,
        ctx: Ctx<'_>,
        tool: &str,
        reqs: &[String],
        direct: &[Allowed],
        no_deps: bool,
    ) -> Result<FromReferences, DepsError> {
        let shared = ctx.cache.join("pip-wheels");
        std::fs::create_dir_all(&shared).map_err(super::io("create", &shared))?;
        let index = Index::from_env();
        let mut local = vec![shared.clone()];
        local.extend(index.dirs.iter().cloned());
        // Offline first when every named package has a wheel at hand (else that attempt is
        // a Python start spent on a known failure).
        if direct.is_empty()
            && (no_deps || all_at_hand(reqs, &local))
            && self
                .offline(ctx, tool, &index, reqs, &[], &shared, None, no_deps)
                .await
                .is_ok()
        {
            return Ok(FromReferences::new());
        }
        let work = Work::new(ctx)?;
        let mut from_refs = FromReferences::new();
        let mut args: Vec<String> = reqs.to_vec();
        for a in direct {
            let w = wheel::prepare(ctx, self, &index, tool, a, &work).await?;
            from_refs.insert(wheel::wheel_name(&w), a.reference.spec.clone());
            args.push(w.to_string_lossy().into_owned());
        }
        let mut built: Vec<String> = Vec::new();
        loop {
            let private = !from_refs.is_empty() || !built.is_empty();
            match self
                .download(ctx, tool, &index, &args, &shared, &work, private, no_deps)
                .await
            {
                Ok(()) => break,
                Err(e) => {
                    let Some(missing) = no_wheel_for(&e) else {
                        return Err(e);
                    };
                    // Built once already (its wheel does not fit), or too many builds.
                    if built.contains(&missing) || built.len() >= MAX_BUILDS {
                        return Err(e);
                    }
                    built.push(missing.clone());
                    wheel::from_index(ctx, self, &index, tool, &missing, &work)
                        .await
                        .map_err(|b| with_no_wheel(e, &missing, b))?;
                }
            }
        }
        let private = (!from_refs.is_empty() || !built.is_empty()).then_some(work.wheels());
        self.offline(ctx, tool, &index, &args, &[], &shared, private, no_deps)
            .await?;
        Ok(from_refs)
    }

    /// `pip download --only-binary :all:` of `args` (network to the index): into the shared
    /// wheel cache, or (`private`: wheels of this install's own are among them) into the
    /// install's own directory.
    #[allow(clippy::too_many_arguments)]
    async fn download(
        &self,
        ctx: Ctx<'_>,
        tool: &str,
        index: &Index,
        args: &[String],
        shared: &Path,
        work: &Work,
        private: bool,
        no_deps: bool,
    ) -> Result<(), DepsError> {
        let dest = if private {
            work.wheels()
        } else {
            shared.to_path_buf()
        };
        let mut a: Vec<String> = [
            "download",
            "--quiet",
            "--no-cache-dir",
            "--only-binary",
            ":all:",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        a.extend(["--dest".into(), dest.to_string_lossy().into_owned()]);
        if private {
            for d in [work.wheels(), shared.to_path_buf()] {
                a.extend(["--find-links".into(), d.to_string_lossy().into_owned()]);
            }
        }
        if no_deps {
            a.push("--no-deps".into());
        }
        a.extend(args.iter().cloned());
        let (mut read, mut env) = self.base_job(index);
        read.extend([shared.to_path_buf(), work.path().to_path_buf()]);
        env.extend(index.env.iter().cloned());
        install::step(
            tool,
            "pip",
            Job {
                what: String::new(),
                argv: self.argv(&a, false),
                env,
                cwd: dest.clone(),
                read,
                write: vec![dest],
                network: index.network.clone(),
                config: ctx.sandbox,
            },
        )
        .await
        .map(|_| ())
    }

    /// `pip install` offline from the wheel directories into the venv.
    #[allow(clippy::too_many_arguments)]
    async fn offline(
        &self,
        ctx: Ctx<'_>,
        tool: &str,
        index: &Index,
        args: &[String],
        read_extra: &[PathBuf],
        shared: &Path,
        private: Option<PathBuf>,
        no_deps: bool,
    ) -> Result<(), DepsError> {
        let mut a: Vec<String> = [
            "install",
            "--quiet",
            "--no-cache-dir",
            "--no-index",
            "--only-binary",
            ":all:",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        let (mut read, env) = self.base_job(index);
        let mut links: Vec<PathBuf> = private.iter().cloned().collect();
        links.push(shared.to_path_buf());
        links.extend(index.dirs.iter().cloned());
        for d in &links {
            a.extend(["--find-links".into(), d.to_string_lossy().into_owned()]);
        }
        if no_deps {
            a.push("--no-deps".into());
        }
        a.extend(args.iter().cloned());
        read.extend(links);
        read.extend(read_extra.iter().cloned());
        read.retain(|p| p != &self.venv);
        install::step(
            tool,
            "pip",
            Job {
                what: String::new(),
                argv: self.argv(&a, true),
                env,
                cwd: self.venv.clone(),
                read,
                write: vec![self.venv.clone()],
                network: Network::None,
                config: ctx.sandbox,
            },
        )
        .await
        .map(|_| ())
    }

    /// What is installed in the venv, as `pip freeze` prints it (`name==version`, sorted, pip
    /// and setuptools left out; a package from a direct reference as its entry), read from
    /// the packages' metadata files: no Python starts, so no installed package's code (a
    /// `.pth` hook) runs.
    pub fn freeze(&self, from_refs: &FromReferences) -> Result<String, DepsError> {
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
                    if let Some(spec) = from_refs.get(&wheel::normalize(&name)) {
                        out.push(spec.clone());
                    } else if !skip.contains(&name.to_ascii_lowercase().as_str()) {
                        out.push(format!("{name}=={version}"));
                    }
                }
            }
        }
        out.sort_unstable_by_key(|l| l.to_ascii_lowercase());
        Ok(out.join("\n"))
    }
}

/// Whether every requirement in `reqs` has a wheel file of its name in one of `dirs` (names
/// compared as wheel file names spell them: lowercase, `-` and `.` as `_`).
fn all_at_hand(reqs: &[String], dirs: &[PathBuf]) -> bool {
    let files: Vec<String> = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().to_ascii_lowercase())
        .filter(|f| f.ends_with(".whl"))
        .collect();
    reqs.iter().all(|req| {
        let name: String = req
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
            .collect::<String>()
            .to_ascii_lowercase()
            .replace(['-', '.'], "_");
        files.iter().any(|f| f.starts_with(&format!("{name}-")))
    })
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

/// A package with no wheel whose source could not be built either: pip's words, then why.
fn with_no_wheel(e: DepsError, missing: &str, build: DepsError) -> DepsError {
    match e {
        DepsError::Install {
            tool,
            installer,
            output,
        } => DepsError::Install {
            tool,
            installer,
            output: format!(
                "{output}\n(no wheel of {missing} fits this Python, and building it from source did not work: {})",
                crate::error::Hint::hint(&build)
                    .map(|h| format!("{build} (hint: {h})"))
                    .unwrap_or_else(|| build.to_string())
            ),
        },
        other => other,
    }
}
