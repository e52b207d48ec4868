//! Wheels made from what is not one, contained: a source distribution of a package the index
//! has no wheel of, and a direct reference a person allowed (a local wheel, source archive or
//! source tree; an archive at a URL). Nothing of the package runs while anything is fetched:
//! the archive is fetched by toolsmith's own helper (`pyfetch.py`: the index's pages and one
//! download, through the filtering proxy), the build requirements named in its
//! `pyproject.toml` are read as text and fetched as wheels (`pip download --only-binary`);
//! then `pip wheel` builds it with no network at all, seeing the interpreter, those wheels and
//! a copy of the source, writing only its output directory. A local path is copied before it
//! is used, and the digest of exactly what was copied must be the one the person allowed.

use super::install::{self, Ctx, Index, Pip, no_wheel_for};
use super::local;
use super::reference::Source;
use super::{Allowed, DepsError};
use crate::sandbox::contained::{Job, Network};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// toolsmith's helper: find and fetch source archives, read build requirements.
const PYFETCH: &str = include_str!("pyfetch.py");
/// Rounds of fetching build requirements a backend asks for while it builds.
const BUILD_ROUNDS: usize = 3;

/// An install's own directory (under the cache, removed with it): the wheels made for it and
/// the copies, downloads and builds they were made from.
pub struct Work {
    dir: tempfile::TempDir,
    next: AtomicUsize,
}

impl Work {
    pub fn new(ctx: Ctx<'_>) -> Result<Work, DepsError> {
        let base = ctx.cache.join("pip-work");
        std::fs::create_dir_all(&base).map_err(super::io("create", &base))?;
        let dir = tempfile::Builder::new()
            .prefix("install-")
            .tempdir_in(&base)
            .map_err(super::io("create", &base))?;
        let wheels = dir.path().join("wheels");
        std::fs::create_dir_all(&wheels).map_err(super::io("create", &wheels))?;
        Ok(Work {
            dir,
            next: AtomicUsize::new(0),
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The wheels made for this install.
    pub fn wheels(&self) -> PathBuf {
        self.dir.path().join("wheels")
    }

    /// A new empty directory for one piece of work.
    fn fresh(&self, what: &str) -> Result<PathBuf, DepsError> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let d = self.dir.path().join(format!("{what}-{n}"));
        std::fs::create_dir_all(&d).map_err(super::io("create", &d))?;
        Ok(d)
    }
}

/// A package name as PEP 503 compares them (lowercase, runs of `-_.` as one `-`).
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if "-_.".contains(c) {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The normalized package name of a wheel file (`name-version-…whl`).
pub fn wheel_name(wheel: &Path) -> String {
    let file = wheel
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    normalize(file.split('-').next().unwrap_or(""))
}

fn failed(tool: &str, what: &str, message: impl Into<String>) -> DepsError {
    DepsError::Source {
        tool: tool.to_string(),
        what: what.to_string(),
        message: message.into(),
    }
}

/// Run the helper with `args` (a step of its own: `network`, reading `read`, writing
/// `write`); its JSON answer.
#[allow(clippy::too_many_arguments)]
async fn helper(
    ctx: Ctx<'_>,
    pip: &Pip,
    index: &Index,
    tool: &str,
    args: &[String],
    read: &[PathBuf],
    write: &Path,
    network: Network,
) -> Result<serde_json::Value, DepsError> {
    let python = if pip.host_pip {
        pip.base.clone()
    } else {
        pip.venv.join("bin/python").to_string_lossy().into_owned()
    };
    let mut argv = vec![python, "-I".into(), "-c".into(), PYFETCH.into()];
    argv.extend(args.iter().cloned());
    let (mut r, mut env) = pip.base_job(index);
    r.extend(read.iter().cloned());
    env.extend(index.env.iter().cloned());
    let out = install::step(
        tool,
        "pip",
        Job {
            what: String::new(),
            argv,
            env,
            cwd: write.to_path_buf(),
            read: r,
            write: vec![write.to_path_buf()],
            network,
            config: ctx.sandbox,
        },
    )
    .await?;
    serde_json::from_str(out.trim()).map_err(|e| {
        failed(
            tool,
            "toolsmith's fetch helper",
            format!("answered {out:?}: {e}"),
        )
    })
}

/// The wheel of an allowed direct reference, in `work.wheels()`.
pub async fn prepare(
    ctx: Ctx<'_>,
    pip: &Pip,
    index: &Index,
    tool: &str,
    a: &Allowed,
    work: &Work,
) -> Result<PathBuf, DepsError> {
    let r = &a.reference;
    let got = match &r.source {
        Source::Path(p) => {
            let into = work.fresh("ref")?;
            let (digest, copied) = local::copy(p, &into).map_err(|e| {
                failed(
                    tool,
                    &format!("the direct reference {:?}", r.spec),
                    e.to_string(),
                )
            })?;
            if a.allowance.digest.as_deref() != Some(digest.as_str()) {
                return Err(super::changed(ctx, tool, r, &a.allowance, &digest));
            }
            copied
        }
        Source::Url { url, host, sha256 } => {
            let into = work.fresh("fetched")?;
            let mut fetch_url = url.clone();
            if let Some(h) = sha256 {
                fetch_url.push_str(&format!("#sha256={h}"));
            }
            let v = helper(
                ctx,
                pip,
                index,
                tool,
                &[
                    "fetch".into(),
                    fetch_url,
                    into.to_string_lossy().into_owned(),
                ],
                &[],
                &into,
                Network::Registries(vec![host.clone()]),
            )
            .await?;
            let (Some(file), Some(digest)) = (v["file"].as_str(), v["sha256"].as_str()) else {
                return Err(failed(tool, "toolsmith's fetch helper", v.to_string()));
            };
            match &a.allowance.digest {
                Some(d) if d != digest => {
                    return Err(super::changed(ctx, tool, r, &a.allowance, digest));
                }
                Some(_) => {}
                None => ctx
                    .allowed
                    .pin(tool, r, digest)
                    .map_err(super::io("write", ctx.allowed.path()))?,
            }
            PathBuf::from(file)
        }
        Source::Vcs(_) => {
            return Err(failed(
                tool,
                &format!("the direct reference {:?}", r.spec),
                "a version-control reference cannot be installed contained; check it out and allow the checkout's path instead",
            ));
        }
    };
    let name = normalize(&r.name);
    let file = got
        .file_name()
        .map(|f| f.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if got.is_dir() || file.ends_with(".tar.gz") || file.ends_with(".zip") || file.ends_with(".tgz")
    {
        return build(ctx, pip, index, tool, &got, &name, work).await;
    }
    if !file.ends_with(".whl") {
        return Err(failed(
            tool,
            &format!("the direct reference {:?}", r.spec),
            "it is not a wheel (.whl), a source archive (.tar.gz, .zip) or a source directory",
        ));
    }
    if wheel_name(&got) != name {
        return Err(failed(
            tool,
            &format!("the direct reference {:?}", r.spec),
            format!(
                "the wheel is of the package {:?}, not {:?}",
                wheel_name(&got),
                r.name
            ),
        ));
    }
    let dest = work.wheels().join(got.file_name().unwrap_or_default());
    std::fs::rename(&got, &dest).map_err(super::io("move", &got))?;
    Ok(dest)
}

/// The wheel of `req` (a requirement from the index that has no wheel for this Python),
/// built from its source distribution, in `work.wheels()`.
pub async fn from_index(
    ctx: Ctx<'_>,
    pip: &Pip,
    index: &Index,
    tool: &str,
    req: &str,
    work: &Work,
) -> Result<PathBuf, DepsError> {
    let into = work.fresh("sdist")?;
    let v = helper(
        ctx,
        pip,
        index,
        tool,
        &[
            "sdist".into(),
            req.into(),
            into.to_string_lossy().into_owned(),
        ],
        &[],
        &into,
        index.network.clone(),
    )
    .await?;
    let (Some(file), Some(name)) = (v["file"].as_str(), v["name"].as_str()) else {
        return Err(failed(tool, "toolsmith's fetch helper", v.to_string()));
    };
    build(
        ctx,
        pip,
        index,
        tool,
        Path::new(file),
        &normalize(name),
        work,
    )
    .await
}

/// `pip download --only-binary :all:` of build requirements into `dest` (network to the index).
async fn fetch_wheels(
    ctx: Ctx<'_>,
    pip: &Pip,
    index: &Index,
    tool: &str,
    reqs: &[String],
    dest: &Path,
) -> Result<(), DepsError> {
    let mut a: Vec<String> = [
        "download",
        "--quiet",
        "--no-cache-dir",
        "--only-binary",
        ":all:",
        "--dest",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    a.push(dest.to_string_lossy().into_owned());
    a.extend(reqs.iter().cloned());
    let (read, mut env) = pip.base_job(index);
    env.extend(index.env.iter().cloned());
    install::step(
        tool,
        "pip",
        Job {
            what: String::new(),
            argv: pip.argv(&a, false),
            env,
            cwd: dest.to_path_buf(),
            read,
            write: vec![dest.to_path_buf()],
            network: index.network.clone(),
            config: ctx.sandbox,
        },
    )
    .await
    .map(|_| ())
}

/// Build a wheel of `src` (a source archive, or a source tree this install copied), named
/// `name`, offline; moved into `work.wheels()`.
async fn build(
    ctx: Ctx<'_>,
    pip: &Pip,
    index: &Index,
    tool: &str,
    src: &Path,
    name: &str,
    work: &Work,
) -> Result<PathBuf, DepsError> {
    let what = format!("the wheel of {name}");
    let src_dir = if src.is_dir() {
        src.to_path_buf()
    } else {
        src.parent().unwrap_or(src).to_path_buf()
    };
    let scratch = work.fresh("inspect")?;
    let v = helper(
        ctx,
        pip,
        index,
        tool,
        &["requires".into(), src.to_string_lossy().into_owned()],
        std::slice::from_ref(&src_dir),
        &scratch,
        Network::None,
    )
    .await?;
    let requires: Vec<String> = v["requires"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    for r in &requires {
        super::spec::check_pip(r)
            .map_err(|e| failed(tool, &what, format!("a build requirement: {e}")))?;
    }
    let breqs = work.fresh("build-requires")?;
    if !requires.is_empty() {
        fetch_wheels(ctx, pip, index, tool, &requires, &breqs)
            .await
            .map_err(|e| {
                failed(
                    tool,
                    &what,
                    format!("its build requirements {requires:?} have no wheels to fetch: {e}"),
                )
            })?;
    }
    let out = work.fresh("built")?;
    let mut fetched_more = 0;
    loop {
        let mut a: Vec<String> = [
            "wheel",
            "--quiet",
            "--no-cache-dir",
            "--no-index",
            "--no-deps",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        let mut links = vec![breqs.clone()];
        links.extend(index.dirs.iter().cloned());
        for d in &links {
            a.extend(["--find-links".into(), d.to_string_lossy().into_owned()]);
        }
        a.extend(["--wheel-dir".into(), out.to_string_lossy().into_owned()]);
        a.push(src.to_string_lossy().into_owned());
        let (mut read, env) = pip.base_job(index);
        read.push(breqs.clone());
        let mut write = vec![out.clone()];
        if src.is_dir() {
            write.push(src.to_path_buf());
        } else {
            read.push(src_dir.clone());
        }
        let r = install::step(
            tool,
            "pip",
            Job {
                what: String::new(),
                argv: pip.argv(&a, false),
                env,
                cwd: out.clone(),
                read,
                write,
                network: Network::None,
                config: ctx.sandbox,
            },
        )
        .await;
        match r {
            Ok(_) => break,
            Err(e) => match no_wheel_for(&e) {
                Some(more) if fetched_more < BUILD_ROUNDS => {
                    fetched_more += 1;
                    fetch_wheels(ctx, pip, index, tool, &[more], &breqs).await?;
                }
                _ => return Err(e),
            },
        }
    }
    let wheels: Vec<PathBuf> = std::fs::read_dir(&out)
        .map_err(super::io("read", &out))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    let [wheel] = wheels.as_slice() else {
        return Err(failed(
            tool,
            &what,
            format!("the build made {} wheels instead of one", wheels.len()),
        ));
    };
    if wheel_name(wheel) != name {
        return Err(failed(
            tool,
            &what,
            format!("the build made a wheel of {:?}", wheel_name(wheel)),
        ));
    }
    let dest = work.wheels().join(wheel.file_name().unwrap_or_default());
    std::fs::rename(wheel, &dest).map_err(super::io("move", wheel))?;
    Ok(dest)
}
