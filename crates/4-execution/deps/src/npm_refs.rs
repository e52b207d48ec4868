//! npm's direct references a person allowed, made ready for a contained `npm install`: a local
//! path is copied into the environment (`.toolsmith-refs/`, the digest of exactly what was
//! copied checked against the allowance), a directory packed there by `npm pack` offline with
//! no scripts, and the environment's `package.json` names the copy (`file:.toolsmith-refs/…`),
//! so npm never reads the person's path and the lockfile stays the same on every machine. An
//! archive at a URL is fetched by npm itself with that host added to the registry's, and the
//! integrity npm records for it is pinned on the allowance at the first install. A committed
//! `package-lock.json` is checked before `npm ci` reads it: every package resolved from the
//! registry, from one of those copies, or from an allowed URL with its pinned integrity.

use super::install::{self, Ctx, NpmBase};
use super::local;
use super::reference::Source;
use super::{Allowed, DepsError};
use crate::sandbox::contained::{Job, Network};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The directory of an environment holding the copies of local references.
pub const REFS_DIR: &str = ".toolsmith-refs";

fn failed(tool: &str, spec: &str, message: impl Into<String>) -> DepsError {
    DepsError::Source {
        tool: tool.to_string(),
        what: format!("the direct reference {spec:?}"),
        message: message.into(),
    }
}

/// The file name of a local reference's copy: the package's name and the digest allowed.
fn copy_name(a: &Allowed) -> String {
    let name: String = a
        .reference
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let digest = a.allowance.digest.as_deref().unwrap_or("");
    let hex = digest.rsplit(':').next().unwrap_or("");
    format!("{name}-{}.tgz", &hex[..hex.len().min(16)])
}

/// The spec an environment's package.json gives each allowed reference (name → spec): a
/// local path's copy; a URL as it is.
pub fn specs(direct: &[Allowed]) -> BTreeMap<String, String> {
    direct
        .iter()
        .filter_map(|a| match &a.reference.source {
            Source::Path(_) => Some((
                a.reference.name.clone(),
                format!("file:{REFS_DIR}/{}", copy_name(a)),
            )),
            _ => None,
        })
        .collect()
}

/// The hosts of the allowed archive URLs.
pub fn hosts(direct: &[Allowed]) -> Vec<String> {
    direct
        .iter()
        .filter_map(|a| match &a.reference.source {
            Source::Url { host, .. } => Some(host.clone()),
            _ => None,
        })
        .collect()
}

/// Copy each allowed local reference into `env`'s `.toolsmith-refs/` as an archive.
pub async fn prepare(
    ctx: Ctx<'_>,
    tool: &str,
    direct: &[Allowed],
    env: &Path,
) -> Result<(), DepsError> {
    let refs = env.join(REFS_DIR);
    for a in direct {
        let Source::Path(p) = &a.reference.source else {
            continue;
        };
        let spec = &a.reference.spec;
        let work = refs.join(format!("work-{}", copy_name(a)));
        let (digest, copied) =
            local::copy(p, &work.join("src")).map_err(|e| failed(tool, spec, e.to_string()))?;
        if a.allowance.digest.as_deref() != Some(digest.as_str()) {
            return Err(super::changed(
                ctx,
                tool,
                &a.reference,
                &a.allowance,
                &digest,
            ));
        }
        let archive = if copied.is_dir() {
            pack(ctx, tool, spec, &copied, &work).await?
        } else {
            let f = copied.to_string_lossy().to_ascii_lowercase();
            if !(f.ends_with(".tgz") || f.ends_with(".tar.gz") || f.ends_with(".tar")) {
                return Err(failed(
                    tool,
                    spec,
                    "it is neither a package archive (.tgz) nor a package directory",
                ));
            }
            copied
        };
        let dest = refs.join(copy_name(a));
        std::fs::rename(&archive, &dest).map_err(super::io("move", &archive))?;
        std::fs::remove_dir_all(&work).map_err(super::io("remove", &work))?;
    }
    Ok(())
}

/// `npm pack` of a copied package directory, offline and without scripts; the archive.
async fn pack(
    ctx: Ctx<'_>,
    tool: &str,
    spec: &str,
    dir: &Path,
    work: &Path,
) -> Result<PathBuf, DepsError> {
    let out = work.join("packed");
    std::fs::create_dir_all(&out).map_err(super::io("create", &out))?;
    let NpmBase { read, vars, .. } = install::npm_base(ctx)?;
    let argv = [
        "npm",
        "pack",
        "--ignore-scripts",
        "--offline",
        "--loglevel=error",
        "--pack-destination",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.to_string_lossy().into_owned()])
    .collect();
    install::step(
        tool,
        "npm",
        Job {
            what: String::new(),
            argv,
            env: vars,
            cwd: dir.to_path_buf(),
            read,
            write: vec![dir.to_path_buf(), out.clone()],
            network: Network::None,
            config: ctx.sandbox,
        },
    )
    .await?;
    let packed: Vec<PathBuf> = std::fs::read_dir(&out)
        .map_err(super::io("read", &out))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "tgz"))
        .collect();
    match packed.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(failed(tool, spec, "`npm pack` made no single archive")),
    }
}

/// The lock's entry of the installed package `name` (lockfile version 2 or 3).
fn locked<'a>(lock: &'a Value, name: &str) -> Option<&'a Value> {
    lock.get("packages")?.get(format!("node_modules/{name}"))
}

/// After an install: the integrity npm recorded for each allowed URL's archive, pinned on
/// its allowance at the first install, refused when it differs from the pinned one.
pub fn pin_urls(ctx: Ctx<'_>, tool: &str, direct: &[Allowed], env: &Path) -> Result<(), DepsError> {
    let path = env.join(super::NPM_LOCK);
    let lock: Value = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    for a in direct {
        if !matches!(a.reference.source, Source::Url { .. }) {
            continue;
        }
        let Some(integrity) = locked(&lock, &a.reference.name)
            .and_then(|p| p.get("integrity"))
            .and_then(Value::as_str)
        else {
            return Err(failed(
                tool,
                &a.reference.spec,
                "npm recorded no integrity for the archive",
            ));
        };
        match &a.allowance.digest {
            Some(d) if d != integrity => {
                return Err(super::changed(
                    ctx,
                    tool,
                    &a.reference,
                    &a.allowance,
                    integrity,
                ));
            }
            Some(_) => {}
            None => ctx
                .allowed
                .pin(tool, &a.reference, integrity)
                .map_err(super::io("write", ctx.allowed.path()))?,
        }
    }
    Ok(())
}

/// Check a committed `package-lock.json` before `npm ci` reads it: every package with a
/// `resolved` location comes from the registry, from one of the environment's copies of an
/// allowed local reference, or from an allowed URL with the integrity its allowance pinned.
pub fn check_lock(tool: &str, lock: &[u8], direct: &[Allowed]) -> Result<(), DepsError> {
    check_lock_of(tool, "the committed package-lock.json", lock, direct)
}

/// Whether `resolved` is an archive on the registry `host`: an http(s) URL of exactly that
/// host, without user information (`https://registry.npmjs.org:@evil/…` is evil's).
fn on_registry(resolved: &str, host: &str) -> bool {
    url::Url::parse(resolved).is_ok_and(|u| {
        matches!(u.scheme(), "https" | "http")
            && u.username().is_empty()
            && u.password().is_none()
            && u.host_str().is_some_and(|h| h.eq_ignore_ascii_case(host))
    })
}

/// `check_lock` of the lockfile `what` (the committed one, or the one npm just wrote: a
/// package's own dependencies on URLs, git or paths are refused there before any of its
/// scripts run).
pub fn check_lock_of(
    tool: &str,
    what: &str,
    lock: &[u8],
    direct: &[Allowed],
) -> Result<(), DepsError> {
    let bad = |why: String| DepsError::Source {
        tool: tool.to_string(),
        what: what.into(),
        message: why,
    };
    let lock: Value =
        serde_json::from_slice(lock).map_err(|e| bad(format!("it is not JSON: {e}")))?;
    let host = install::npm_registry_host();
    let copies = specs(direct);
    let Some(packages) = lock.get("packages").and_then(Value::as_object) else {
        return Err(bad(
            "it has no `packages` (lockfile version 2 or later is needed)".into(),
        ));
    };
    for (key, p) in packages {
        if p.get("link").and_then(Value::as_bool) == Some(true) {
            return Err(bad(format!("{key} is a link to a directory")));
        }
        let Some(resolved) = p.get("resolved").and_then(Value::as_str) else {
            continue;
        };
        let on_registry = on_registry(resolved, &host);
        let name = key.rsplit("node_modules/").next().unwrap_or(key);
        let copy = copies.get(name).is_some_and(|c| c == resolved);
        let url = direct.iter().any(|a| {
            a.reference.name == name
                && matches!(&a.reference.source, Source::Url { url, .. } if url == resolved)
                && a.allowance
                    .digest
                    .as_deref()
                    .is_none_or(|d| Some(d) == p.get("integrity").and_then(Value::as_str))
        });
        // A package the lock names with no `resolved` (a git dependency, a link) is caught
        // above or by `link`; one resolved from elsewhere is refused here.
        if !(on_registry || copy || url) {
            return Err(bad(format!(
                "{key} is resolved from {resolved}, which is neither the registry ({host}) nor a direct reference a person allowed for this tool"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod lock_tests {
    #[test]
    fn a_registry_url_is_its_host_exactly() {
        let h = "registry.npmjs.org";
        assert!(super::on_registry(
            "https://registry.npmjs.org/a/-/a-1.0.0.tgz",
            h
        ));
        assert!(super::on_registry(
            "http://registry.npmjs.org:80/a/-/a-1.0.0.tgz",
            h
        ));
        for evil in [
            "http://registry.npmjs.org:@127.0.0.1:45992/c-1.0.0.tgz",
            "https://registry.npmjs.org@evil.example/c.tgz",
            "https://registry.npmjs.org.evil.example/c.tgz",
            "git+https://registry.npmjs.org/c.git",
            "file:///registry.npmjs.org/c.tgz",
        ] {
            assert!(!super::on_registry(evil, h), "{evil}");
        }
    }
}
