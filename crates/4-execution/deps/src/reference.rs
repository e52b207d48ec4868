//! Direct references: a dependency entry that names a local file or directory, an archive at a
//! URL or a version-control repository instead of a package on the registry (pip
//! `name @ file:///…`, `name @ https://…/x.whl`, `name @ git+https://…`; npm `file:/…`,
//! `link:/…`, `https://…/x.tgz`, `git+…`, `github:user/repo`). Parsed here into what it points
//! at; only a person's allowance for the tool (`allowed`) lets one through. A local path's
//! content is pinned by its digest (`local`), so a file swapped after the allowance is not the
//! file allowed.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The longest entry considered.
const MAX_ENTRY: usize = 2000;

/// Whether `s` is a package-style name (letters, digits, `.`, `_`, `-`).
pub(super) fn is_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 200
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"._-".contains(c))
}

/// The package manager an entry is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Ecosystem {
    /// Python packages.
    Pip,
    /// Node.js packages.
    Npm,
}

impl Ecosystem {
    /// `pip` or `npm`.
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Pip => "pip",
            Ecosystem::Npm => "npm",
        }
    }

    /// From `pip` or `npm`.
    pub fn parse(s: &str) -> Option<Ecosystem> {
        match s {
            "pip" => Some(Ecosystem::Pip),
            "npm" => Some(Ecosystem::Npm),
            _ => None,
        }
    }
}

impl std::fmt::Display for Ecosystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a direct reference points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A local file or directory (absolute).
    Path(PathBuf),
    /// An archive over HTTP(S): the URL (its `#sha256=` fragment removed), its host.
    Url {
        /// The URL, without its `#sha256=` fragment.
        url: String,
        /// Its host.
        host: String,
        /// The digest its fragment pinned.
        sha256: Option<String>,
    },
    /// A version-control repository.
    Vcs(String),
}

impl Source {
    /// The kind, for stores and messages: `path`, `url`, `vcs`.
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Path(_) => "path",
            Source::Url { .. } => "url",
            Source::Vcs(_) => "vcs",
        }
    }

    /// In words: "the local path /x", "an archive at host h", "the repository u".
    pub fn describe(&self) -> String {
        match self {
            Source::Path(p) => format!("the local path {}", p.display()),
            Source::Url { host, .. } => format!("an archive downloaded from {host}"),
            Source::Vcs(u) => format!("the version-control repository {u}"),
        }
    }
}

/// A dependency entry naming something other than a registry package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectRef {
    /// pip or npm.
    pub ecosystem: Ecosystem,
    /// The package's name (pip: as the requirement writes it; npm: the dependency's key).
    pub name: String,
    /// The entry exactly as written (pip: the requirement; npm: `name@spec`): what a person
    /// allows.
    pub spec: String,
    /// What it points at.
    pub source: Source,
}

/// Why an entry that is a direct reference cannot be used as written, and what to write
/// instead (`spec` tells it as a `SpecError`).
#[derive(Debug)]
pub struct Refusal {
    pub ecosystem: &'static str,
    pub entry: String,
    pub why: String,
    pub hint: &'static str,
}

fn err(ecosystem: &'static str, entry: &str, why: &str, hint: &'static str) -> Refusal {
    Refusal {
        ecosystem,
        entry: entry.to_string(),
        why: why.to_string(),
        hint,
    }
}

const PIP_FORM: &str = "write a direct reference as `NAME @ file:///absolute/path` (a wheel, a source archive or a source directory) or `NAME @ https://host/NAME-1.0-py3-none-any.whl`; a person then allows it for the tool";

/// A local path as a reference may name it: absolute, plain characters.
fn plain_path(p: &str) -> Option<PathBuf> {
    let ok = p.starts_with('/')
        && !p.contains("/../")
        && !p.ends_with("/..")
        && !p.contains("/./")
        && p.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || "/._+-~=,@".contains(c)
                || (!c.is_ascii() && !c.is_whitespace() && !crate::names::is_invisible(c))
        });
    ok.then(|| PathBuf::from(p))
}

/// The archive a URL names, or why it cannot be one.
fn archive_url(url: &str, suffixes: &[&str]) -> Result<Source, &'static str> {
    let parsed = url::Url::parse(url).map_err(|_| "it is not a valid URL")?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("only http and https URLs are fetched");
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(
            "it carries credentials, which would be committed with the tool (set them in the package manager's configuration instead)",
        );
    }
    let host = parsed
        .host_str()
        .ok_or("it names no host")?
        .to_ascii_lowercase();
    let sha256 = match parsed.fragment() {
        None => None,
        Some(f) => match f.strip_prefix("sha256=") {
            Some(h) if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Some(h.to_ascii_lowercase())
            }
            _ => return Err("its only fragment may be `#sha256=<64 hex digits>`"),
        },
    };
    let file = parsed
        .path_segments()
        .and_then(|mut s| s.next_back())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !suffixes.iter().any(|s| file.ends_with(s)) {
        return Err("its path does not end in an archive's file name");
    }
    let mut bare = parsed.clone();
    bare.set_fragment(None);
    Ok(Source::Url {
        url: bare.to_string(),
        host,
        sha256,
    })
}

/// Whether `rest` is a version-control URL (`git+https://…`, `hg+…`, `svn+…`, `bzr+…`).
fn is_vcs(rest: &str) -> bool {
    let l = rest.to_ascii_lowercase();
    ["git+", "hg+", "svn+", "bzr+"]
        .iter()
        .any(|p| l.starts_with(p) && l.contains("://"))
}

/// A pip requirement that is a direct reference (`name[extras] @ URL`), parsed; `None` for an
/// entry that is not one (a requirement from the index, checked by `spec`).
pub fn pip(entry: &str) -> Result<Option<DirectRef>, Refusal> {
    let e = entry.trim();
    let lower = e.to_ascii_lowercase();
    let looks_direct = e.contains('@')
        || lower.contains("://")
        || lower.starts_with("file:")
        || lower.contains("git+")
        || e.starts_with(['.', '/', '~', '\\'])
        || [".whl", ".tar.gz", ".zip", ".tgz", ".tar.bz2"]
            .iter()
            .any(|x| lower.ends_with(x));
    if !looks_direct {
        return Ok(None);
    }
    let refused = |why: &str| Err(err("pip", entry, why, PIP_FORM));
    if e.len() > MAX_ENTRY || e.chars().any(crate::names::is_invisible) {
        return refused(
            "it is a direct reference longer than 2000 characters or with invisible characters",
        );
    }
    let Some((left, url)) = e.split_once('@') else {
        return refused(
            "it is a direct reference (a URL, a file or a path, a VCS repository or an archive) without a package name",
        );
    };
    let (left, url) = (left.trim(), url.trim());
    let name_end = left
        .find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
        .unwrap_or(left.len());
    let (name, extras) = (&left[..name_end], left[name_end..].trim());
    if !is_name(name) {
        return refused("it is a direct reference that does not start with a package name");
    }
    if !extras.is_empty() {
        let ok = extras
            .strip_prefix('[')
            .and_then(|x| x.strip_suffix(']'))
            .is_some_and(|x| {
                x.split(',')
                    .map(str::trim)
                    .all(|x| x.is_empty() || is_name(x))
            });
        if !ok {
            return refused("its extras are not `[name, ...]`");
        }
    }
    if url.contains(';') || url.chars().any(char::is_whitespace) {
        return refused("a direct reference here takes no environment marker and no spaces");
    }
    let source = if let Some(rest) = url.strip_prefix("file://") {
        match plain_path(rest) {
            Some(p) => Source::Path(p),
            None => {
                return refused(
                    "its file URL is not `file:///absolute/path` in plain characters (no host, no `..`, no percent-encoding)",
                );
            }
        }
    } else if is_vcs(url) {
        Source::Vcs(url.to_string())
    } else if url.starts_with("http://") || url.starts_with("https://") {
        match archive_url(url, &[".whl", ".tar.gz", ".zip"]) {
            Ok(s) => s,
            Err(why) => return refused(&format!("its URL cannot be used: {why}")),
        }
    } else {
        return refused("it is not a `file:///`, `https://` or VCS URL");
    };
    Ok(Some(DirectRef {
        ecosystem: Ecosystem::Pip,
        name: name.to_string(),
        spec: e.to_string(),
        source,
    }))
}

const NPM_FORM: &str = "a local package is named as `file:/absolute/path/x.tgz` (or a package directory); an archive as `https://host/x.tgz`; a person then allows it for the tool";

/// An npm dependency spec that is a direct reference, parsed; `None` for one that is not (a
/// registry version, range or tag, checked by `spec`).
pub fn npm(name: &str, spec: &str) -> Result<Option<DirectRef>, Refusal> {
    let s = spec.trim();
    let entry = format!("{name}@{s}");
    let refused = |why: &str| Err(err("npm", &entry, why, NPM_FORM));
    let lower = s.to_ascii_lowercase();
    let source = if let Some(rest) = lower
        .strip_prefix("file:")
        .or_else(|| lower.strip_prefix("link:"))
        .map(|_| &s[5..])
    {
        let rest = rest.strip_prefix("//").unwrap_or(rest);
        match plain_path(rest) {
            Some(p) => Source::Path(p),
            None => {
                return refused(
                    "its path is not absolute in plain characters (`file:/absolute/path`; relative paths would depend on where npm runs)",
                );
            }
        }
    } else if lower.starts_with("http://") || lower.starts_with("https://") {
        match archive_url(s, &[".tgz", ".tar.gz", ".tar"]) {
            Ok(src) => src,
            Err(why) => return refused(&format!("its URL cannot be used: {why}")),
        }
    } else if lower.starts_with("git+")
        || lower.starts_with("git://")
        || ["github:", "gitlab:", "bitbucket:", "gist:"]
            .iter()
            .any(|p| lower.starts_with(p))
        || (!s.contains(':') && s.contains('/') && !s.starts_with(['.', '/', '~']))
    {
        Source::Vcs(s.to_string())
    } else {
        return Ok(None);
    };
    if s.len() > MAX_ENTRY
        || s.chars()
            .any(|c| crate::names::is_invisible(c) || c.is_whitespace())
    {
        return refused("it is longer than 2000 characters or holds spaces or control characters");
    }
    Ok(Some(DirectRef {
        ecosystem: Ecosystem::Npm,
        name: name.to_string(),
        spec: entry,
        source,
    }))
}

/// `s` quoted for a POSIX shell (for the commands hints name).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_direct_references_are_parsed_and_odd_ones_refused() {
        let r = pip("evil-pkg[x] @ file:///tmp/evil").unwrap().unwrap();
        assert_eq!(r.name, "evil-pkg");
        assert_eq!(r.source, Source::Path("/tmp/evil".into()));
        let r = pip(&format!(
            "w @ https://h.example/a/w-1.0-py3-none-any.whl#sha256={}",
            "a".repeat(64)
        ))
        .unwrap()
        .unwrap();
        match r.source {
            Source::Url { host, sha256, url } => {
                assert_eq!(host, "h.example");
                assert_eq!(sha256.unwrap().len(), 64);
                assert!(!url.contains('#'));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            pip("x @ git+https://g.example/x.git@v1")
                .unwrap()
                .unwrap()
                .source,
            Source::Vcs("git+https://g.example/x.git@v1".into())
        );
        assert!(pip("six==1.16.0").unwrap().is_none());
        for bad in [
            "/abs/path",
            "./local",
            "pkg-1.0.tar.gz",
            "x @ file://host/tmp/x",
            "x @ file:///tmp/../etc",
            "x @ file:///tmp/a%20b",
            "x @ https://user:tok@h.example/x.whl",
            "x @ https://h.example/x",
            "x @ ftp://h.example/x.whl",
            "x @ file:///tmp/x ; python_version>'3'",
            "@ file:///tmp/x",
        ] {
            assert!(pip(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn npm_direct_references_are_parsed() {
        let r = npm("x", "file:/tmp/x.tgz").unwrap().unwrap();
        assert_eq!(r.source, Source::Path("/tmp/x.tgz".into()));
        assert_eq!(r.spec, "x@file:/tmp/x.tgz");
        assert!(matches!(
            npm("x", "link:/tmp/x").unwrap().unwrap().source,
            Source::Path(_)
        ));
        assert!(matches!(
            npm("x", "https://h.example/x-1.0.0.tgz")
                .unwrap()
                .unwrap()
                .source,
            Source::Url { .. }
        ));
        for v in ["github:a/b", "a/b", "git+https://g.example/a.git"] {
            assert!(
                matches!(npm("x", v).unwrap().unwrap().source, Source::Vcs(_)),
                "{v}"
            );
        }
        assert!(npm("x", "^1.2").unwrap().is_none());
        assert!(npm("x", "file:../x.tgz").is_err());
    }

    #[test]
    fn hints_quote_for_a_shell() {
        assert_eq!(shell_quote("a @ file:///x"), "'a @ file:///x'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
