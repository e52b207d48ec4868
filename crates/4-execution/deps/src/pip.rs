//! pip, contained (`install::step`): a venv's packages installed from wheels only, in two
//! kinds of step. Fetching runs only pip's own code (`pip download --only-binary :all:`) with
//! network only to the package index through the filtering proxy; installing runs offline,
//! seeing the interpreter and the wheel directories read-only and writing only the venv.
//! A package without a wheel, and a direct reference a person allowed (`allowed`), become
//! wheels first (`wheel`: fetched without running package code, built offline); those wheels
//! stay in the install's own directory, never in the shared wheel cache another tool's
//! install reads.

use super::install::{self, Ctx, Index, Pip, no_wheel_for};
use super::wheel::{self, Work};
use super::{Allowed, DepsError};
use crate::sandbox::contained::{Job, Network};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most packages built from source in one install.
const MAX_BUILDS: usize = 10;

/// What an install put in the venv from direct references: each package's normalized name
/// and the entry it came from (the lockfile keeps the entry).
pub type FromReferences = BTreeMap<String, String>;

impl Pip {
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
