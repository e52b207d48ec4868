//! A person's allowances of direct references, one toolbox's on this machine: a JSON file in
//! the personal directory (`references/<hash of the toolbox path>.json`, mode 0600), never in
//! git. An allowance names the tool, the package manager and the exact entry; for a local path
//! it pins the digest of what the path held when the person allowed it, for a URL the digest of
//! what its first fetch got. Only the person's commands write allowances (`toolsmith allow`,
//! the console, both through `allow`); an install only reads them, records the digest of a
//! URL's first fetch, and records a refusal (`request`) so `toolsmith pending` and the console
//! can list what waits. No meta-tool, manifest field or elicitation answer reaches `allow`.

use super::local;
use super::reference::{self, DirectRef, Ecosystem, Source};
use crate::personal;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Refusals kept for the person to look at (the oldest go first): an AI retrying cannot grow
/// the file without bound.
const MAX_REQUESTS: usize = 50;

/// One direct reference a person allowed for one tool.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Allowance {
    /// The tool.
    pub tool: String,
    /// pip or npm.
    pub ecosystem: Ecosystem,
    /// The entry exactly as written (pip: the requirement; npm: `name@spec`).
    pub spec: String,
    /// `path`, `url` or `vcs`.
    pub kind: String,
    /// The digest of the content allowed: a path's when allowed, a URL's at its first fetch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// When (seconds since the epoch), and through what (`cli`, `console`).
    pub at: u64,
    /// Through what the person allowed it.
    pub via: String,
}

/// A registration or install refused for a direct reference nobody allowed (or whose content
/// changed since), for the person to decide on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Request {
    /// The tool.
    pub tool: String,
    /// pip or npm.
    pub ecosystem: Ecosystem,
    /// The entry exactly as written.
    pub spec: String,
    /// `path`, `url` or `vcs`.
    pub kind: String,
    /// Why it was refused, in words.
    pub reason: String,
    /// When (seconds since the epoch).
    pub at: u64,
}

impl Request {
    /// The command that allows it.
    pub fn command(&self) -> String {
        allow_command(&self.tool, self.ecosystem, &self.spec)
    }
}

/// `toolsmith allow TOOL ECOSYSTEM 'SPEC'`, quoted for a shell.
pub fn allow_command(tool: &str, ecosystem: Ecosystem, spec: &str) -> String {
    format!(
        "toolsmith allow {} {ecosystem} {}",
        reference::shell_quote(tool),
        reference::shell_quote(spec)
    )
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    toolbox: String,
    #[serde(default)]
    allowed: Vec<Allowance>,
    #[serde(default)]
    requests: Vec<Request>,
}

/// Why an allowance was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum AllowError {
    /// The entry does not parse.
    #[error(transparent)]
    Spec(#[from] super::SpecError),
    /// A registry package: nothing to allow.
    #[error("{spec:?} is a registry package, not a direct reference: it needs no allowance")]
    NotDirect {
        /// The entry.
        spec: String,
    },
    /// A version-control reference: it cannot be installed contained.
    #[error(
        "{spec:?} is a version-control reference, which toolsmith cannot install contained (the clone would need the network while package code runs)"
    )]
    Vcs {
        /// The entry.
        spec: String,
    },
    /// A local path whose content cannot be hashed.
    #[error("the path of {spec:?} cannot be pinned: {source}")]
    Path {
        /// The entry.
        spec: String,
        /// Why.
        source: local::PathError,
    },
    /// The allowances file could not be read or written.
    #[error("cannot read or write the allowances: {0}")]
    Io(#[from] std::io::Error),
    /// The tool is not one this can be allowed for.
    #[error("{0}")]
    Tool(String),
}

impl crate::error::Hint for AllowError {
    fn hint(&self) -> Option<String> {
        Some(match self {
            AllowError::Spec(e) => return crate::error::Hint::hint(e),
            AllowError::NotDirect { .. } => "a registry package installs without an allowance".into(),
            AllowError::Vcs { .. } => "check the repository out yourself and allow the checkout (`NAME @ file:///path/to/checkout` for pip, `file:/path/to/checkout` for npm), or a release archive's URL".into(),
            AllowError::Path { .. } => "allow a regular file or a directory without symbolic links, readable by you, under 512 MiB".into(),
            AllowError::Io(_) => "check the files of the private directory (mode 0700/0600, owned by you)".into(),
            AllowError::Tool(_) => "name the tool as it is (or will be) registered".into(),
        })
    }
}

/// Parse what a person typed: pip's requirement, or npm's `name@spec`.
pub fn parse(ecosystem: Ecosystem, spec: &str) -> Result<DirectRef, AllowError> {
    let entry = match ecosystem {
        Ecosystem::Pip => super::spec::pip_entry(spec)?,
        Ecosystem::Npm => {
            let s = spec.trim();
            let at = s
                .char_indices()
                .skip(1)
                .find(|(_, c)| *c == '@')
                .map(|(i, _)| i);
            let Some(at) = at else {
                return Err(AllowError::NotDirect {
                    spec: spec.to_string(),
                });
            };
            super::spec::npm_entry(&s[..at], &s[at + 1..])?
        }
    };
    match entry {
        super::spec::PipEntry::Direct(d) => Ok(d),
        super::spec::PipEntry::Index => Err(AllowError::NotDirect {
            spec: spec.to_string(),
        }),
    }
}

impl personal::ToolboxRecords for File {
    fn empty(toolbox: String) -> File {
        File {
            toolbox,
            ..Default::default()
        }
    }
}

/// The allowances file of one toolbox.
#[derive(Debug, Clone)]
pub struct Allowances {
    file: personal::ToolboxFile,
}

impl Allowances {
    /// The allowances of the toolbox at `root`, kept under `personal_dir`.
    pub fn new(personal_dir: &Path, root: &Path) -> Allowances {
        Allowances {
            file: personal::ToolboxFile::new(personal_dir, "references", root),
        }
    }

    /// The allowances file.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    fn load(&self) -> std::io::Result<File> {
        self.file.load()
    }

    fn change<T>(&self, f: impl FnOnce(&mut File) -> T) -> std::io::Result<T> {
        self.file.change(f)
    }

    /// Every allowance and every refusal waiting for the person.
    pub fn list(&self) -> std::io::Result<(Vec<Allowance>, Vec<Request>)> {
        let f = self.load()?;
        Ok((f.allowed, f.requests))
    }

    /// The allowances of one tool.
    pub fn of_tool(&self, tool: &str) -> std::io::Result<Vec<Allowance>> {
        Ok(self
            .load()?
            .allowed
            .into_iter()
            .filter(|a| a.tool == tool)
            .collect())
    }

    /// The allowance of `r` for `tool`, if a person gave one.
    pub fn find(&self, tool: &str, r: &DirectRef) -> std::io::Result<Option<Allowance>> {
        Ok(self
            .load()?
            .allowed
            .into_iter()
            .find(|a| a.tool == tool && a.ecosystem == r.ecosystem && a.spec == r.spec))
    }

    /// A person allows `r` for `tool` (`via`: `cli`, `console`): a local path is read now and
    /// its digest pinned; a URL's is pinned at its first fetch. Replaces an earlier allowance
    /// of the same entry and drops the refusals it answers.
    pub fn allow(&self, tool: &str, r: &DirectRef, via: &str) -> Result<Allowance, AllowError> {
        let digest = match &r.source {
            Source::Path(p) => Some(local::digest(p).map_err(|source| AllowError::Path {
                spec: r.spec.clone(),
                source,
            })?),
            Source::Url { sha256, .. } => sha256.as_ref().map(|h| format!("sha256:{h}")),
            Source::Vcs(_) => {
                return Err(AllowError::Vcs {
                    spec: r.spec.clone(),
                });
            }
        };
        let a = Allowance {
            tool: tool.to_string(),
            ecosystem: r.ecosystem,
            spec: r.spec.clone(),
            kind: r.source.kind().to_string(),
            digest,
            at: personal::now_secs(),
            via: via.to_string(),
        };
        let kept = a.clone();
        self.change(move |f| {
            let same =
                |t: &str, e: Ecosystem, s: &str| t == tool && e == r.ecosystem && s == r.spec;
            f.allowed.retain(|x| !same(&x.tool, x.ecosystem, &x.spec));
            f.requests.retain(|x| !same(&x.tool, x.ecosystem, &x.spec));
            f.allowed.push(kept);
        })?;
        Ok(a)
    }

    /// Take an allowance back; whether there was one.
    pub fn remove(&self, tool: &str, ecosystem: Ecosystem, spec: &str) -> std::io::Result<bool> {
        self.change(|f| {
            let before = f.allowed.len();
            f.allowed
                .retain(|a| !(a.tool == tool && a.ecosystem == ecosystem && a.spec == spec));
            before != f.allowed.len()
        })
    }

    /// Record that `r` was refused for `tool` (`reason` in words), for the person to see.
    pub fn request(&self, tool: &str, r: &DirectRef, reason: &str) -> std::io::Result<()> {
        let entry = Request {
            tool: tool.to_string(),
            ecosystem: r.ecosystem,
            spec: r.spec.clone(),
            kind: r.source.kind().to_string(),
            reason: reason.to_string(),
            at: personal::now_secs(),
        };
        self.change(|f| {
            f.requests.retain(|x| {
                !(x.tool == entry.tool && x.ecosystem == entry.ecosystem && x.spec == entry.spec)
            });
            f.requests.push(entry);
            let extra = f.requests.len().saturating_sub(MAX_REQUESTS);
            f.requests.drain(..extra);
        })
    }

    /// Pin the digest of a URL's first fetch on its allowance (a later fetch must match).
    pub fn pin(&self, tool: &str, r: &DirectRef, digest: &str) -> std::io::Result<()> {
        self.change(|f| {
            for a in &mut f.allowed {
                if a.tool == tool
                    && a.ecosystem == r.ecosystem
                    && a.spec == r.spec
                    && a.digest.is_none()
                {
                    a.digest = Some(digest.to_string());
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowances_bind_tool_entry_and_content_and_answer_requests() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Allowances::new(&tmp.path().join("personal"), tmp.path());
        let file = tmp.path().join("w-1.0-py3-none-any.whl");
        std::fs::write(&file, "one").unwrap();
        let spec = format!("w @ file://{}", file.display());
        let r = parse(Ecosystem::Pip, &spec).unwrap();
        store.request("t", &r, "not allowed").unwrap();
        assert_eq!(store.list().unwrap().1.len(), 1);
        assert!(store.find("t", &r).unwrap().is_none());
        let a = store.allow("t", &r, "cli").unwrap();
        assert_eq!(
            a.digest.as_deref(),
            Some(local::digest(&file).unwrap().as_str())
        );
        assert!(
            store.list().unwrap().1.is_empty(),
            "the request is answered"
        );
        assert!(store.find("t", &r).unwrap().is_some());
        assert!(
            store.find("other", &r).unwrap().is_none(),
            "for that tool only"
        );
        assert!(matches!(
            parse(Ecosystem::Pip, "six==1.16.0"),
            Err(AllowError::NotDirect { .. })
        ));
        let vcs = parse(Ecosystem::Npm, "x@github:a/b").unwrap();
        assert!(matches!(
            store.allow("t", &vcs, "cli"),
            Err(AllowError::Vcs { .. })
        ));
        for i in 0..(MAX_REQUESTS + 5) {
            let r = parse(Ecosystem::Npm, &format!("x{i}@file:/tmp/x{i}.tgz")).unwrap();
            store.request("t", &r, "not allowed").unwrap();
        }
        assert_eq!(store.list().unwrap().1.len(), MAX_REQUESTS);
        assert!(store.remove("t", Ecosystem::Pip, &spec).unwrap());
        assert!(store.find("t", &r).unwrap().is_none());
    }
}
