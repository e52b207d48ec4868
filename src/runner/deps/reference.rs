//! Direct references: a dependency entry that names a local file or directory, an archive at a
//! URL or a version-control repository instead of a package on the registry (pip
//! `name @ file:///…`, `name @ https://…/x.whl`, `name @ git+https://…`; npm `file:/…`,
//! `link:/…`, `https://…/x.tgz`, `git+…`, `github:user/repo`). Parsed here into what it points
//! at; only a person's allowance for the tool (`allowed`) lets one through. A local path's
//! content is pinned by its digest (`digest`, and `copy` hashes exactly what it copies), so a
//! file swapped after the allowance is not the file allowed.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The most files of a referenced directory, and the most bytes of a referenced file or
/// directory, that are read.
const MAX_FILES: usize = 20_000;
const MAX_BYTES: u64 = 512 << 20;
/// Directories of a referenced tree left out of its digest and its copy (version-control and
/// interpreter caches, installed packages).
const SKIPPED: &[&str] = &[".git", ".hg", ".svn", "__pycache__", "node_modules"];
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
    Pip,
    Npm,
}

impl Ecosystem {
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Pip => "pip",
            Ecosystem::Npm => "npm",
        }
    }

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
        url: String,
        host: String,
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
    pub ecosystem: Ecosystem,
    /// The package's name (pip: as the requirement writes it; npm: the dependency's key).
    pub name: String,
    /// The entry exactly as written (pip: the requirement; npm: `name@spec`): what a person
    /// allows.
    pub spec: String,
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

/// Why a referenced path could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is a symbolic link or a special file, which is not followed")]
    Link { path: PathBuf },
    #[error("{path} holds more than {MAX_FILES} files or {} MiB", MAX_BYTES >> 20)]
    TooLarge { path: PathBuf },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PathError + '_ {
    move |source| PathError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A referenced path's content, piece by piece (the digest and the copy are made from the
/// same walk).
trait Sink {
    fn dir(&mut self, rel: &Path) -> std::io::Result<()>;
    fn file(&mut self, rel: &Path, executable: bool, from: &mut dyn Read) -> std::io::Result<u64>;
}

/// Walk `path` (a file or a directory, symbolic links refused), feeding `sink`; the digest of
/// what was read: `sha256:HEX` of a file's bytes (as `sha256sum` prints it), `tree-sha256:HEX`
/// of a directory (each entry's relative path, kind, mode and bytes, in name order).
fn walk(path: &Path, sink: &mut dyn Sink) -> Result<String, PathError> {
    let md = std::fs::symlink_metadata(path).map_err(io_err(path))?;
    let mut h = Sha256::new();
    if md.is_file() {
        let mut f = std::fs::File::open(path).map_err(io_err(path))?;
        if md.len() > MAX_BYTES {
            return Err(PathError::TooLarge {
                path: path.to_path_buf(),
            });
        }
        let mut hashing = Hashing {
            inner: &mut f,
            hash: &mut h,
        };
        let name = path.file_name().map(PathBuf::from).unwrap_or_default();
        sink.file(&name, is_exec(&md), &mut hashing)
            .map_err(io_err(path))?;
        return Ok(format!("sha256:{}", hex::encode(h.finalize())));
    }
    if !md.is_dir() {
        return Err(PathError::Link {
            path: path.to_path_buf(),
        });
    }
    h.update(b"toolsmith-tree-1\0");
    let (mut files, mut bytes) = (0usize, 0u64);
    let walker = walkdir::WalkDir::new(path)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| !(e.file_type().is_dir() && SKIPPED.iter().any(|s| e.file_name() == *s)));
    for entry in walker {
        let entry = entry.map_err(|e| PathError::Io {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let rel = entry.path().strip_prefix(path).unwrap_or(entry.path());
        let rel_text = rel.to_string_lossy().replace('\\', "/");
        let ft = entry.file_type();
        files += 1;
        if files > MAX_FILES {
            return Err(PathError::TooLarge {
                path: path.to_path_buf(),
            });
        }
        if ft.is_dir() {
            h.update(format!("D {rel_text}\0").as_bytes());
            sink.dir(rel).map_err(io_err(entry.path()))?;
        } else if ft.is_file() {
            let md = entry.metadata().map_err(|e| PathError::Io {
                path: entry.path().to_path_buf(),
                source: e.into(),
            })?;
            bytes += md.len();
            if bytes > MAX_BYTES {
                return Err(PathError::TooLarge {
                    path: path.to_path_buf(),
                });
            }
            let exec = is_exec(&md);
            h.update(format!("F {rel_text}\0{}\0{}\0", u8::from(exec), md.len()).as_bytes());
            let mut f = std::fs::File::open(entry.path()).map_err(io_err(entry.path()))?;
            let mut hashing = Hashing {
                inner: &mut f,
                hash: &mut h,
            };
            let n = sink
                .file(rel, exec, &mut hashing)
                .map_err(io_err(entry.path()))?;
            if n != md.len() {
                return Err(PathError::Io {
                    path: entry.path().to_path_buf(),
                    source: std::io::Error::other("the file changed while it was read"),
                });
            }
        } else {
            return Err(PathError::Link {
                path: entry.path().to_path_buf(),
            });
        }
    }
    Ok(format!("tree-sha256:{}", hex::encode(h.finalize())))
}

#[cfg(unix)]
fn is_exec(md: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    md.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_exec(_: &std::fs::Metadata) -> bool {
    false
}

/// A reader that hashes what passes through it.
struct Hashing<'a> {
    inner: &'a mut dyn Read,
    hash: &'a mut Sha256,
}

impl Read for Hashing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

struct Discard;

impl Sink for Discard {
    fn dir(&mut self, _: &Path) -> std::io::Result<()> {
        Ok(())
    }
    fn file(&mut self, _: &Path, _: bool, from: &mut dyn Read) -> std::io::Result<u64> {
        std::io::copy(from, &mut std::io::sink())
    }
}

/// The digest of what `path` holds now (see `walk`).
pub fn digest(path: &Path) -> Result<String, PathError> {
    walk(path, &mut Discard)
}

struct CopyTo<'a>(&'a Path);

impl Sink for CopyTo<'_> {
    fn dir(&mut self, rel: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(self.0.join(rel))
    }
    fn file(&mut self, rel: &Path, executable: bool, from: &mut dyn Read) -> std::io::Result<u64> {
        let dest = self.0.join(rel);
        if let Some(p) = dest.parent() {
            std::fs::create_dir_all(p)?;
        }
        let mut out = std::fs::File::create(&dest)?;
        let n = std::io::copy(from, &mut out)?;
        out.flush()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = if executable { 0o755 } else { 0o644 };
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(mode))?;
        }
        let _ = executable;
        Ok(n)
    }
}

/// Copy `path` into the directory `into` (a file keeps its name; a directory's content goes
/// into `into` itself); the digest of exactly what was copied, and the copy's path.
pub fn copy(path: &Path, into: &Path) -> Result<(String, PathBuf), PathError> {
    std::fs::create_dir_all(into).map_err(io_err(into))?;
    let digest = walk(path, &mut CopyTo(into))?;
    let copied = if path.is_dir() {
        into.to_path_buf()
    } else {
        into.join(path.file_name().unwrap_or_default())
    };
    Ok((digest, copied))
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
    fn a_digest_covers_names_modes_and_bytes_and_the_copy_matches_it() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("pkg");
        std::fs::create_dir_all(d.join("src/__pycache__")).unwrap();
        std::fs::write(d.join("src/a.py"), "A = 1\n").unwrap();
        std::fs::write(d.join("src/__pycache__/a.pyc"), "cache").unwrap();
        std::fs::write(d.join("pyproject.toml"), "[project]\n").unwrap();
        let first = digest(&d).unwrap();
        assert!(first.starts_with("tree-sha256:"));
        let (copied, at) = copy(&d, &tmp.path().join("copy")).unwrap();
        assert_eq!(copied, first);
        assert!(at.join("src/a.py").exists() && !at.join("src/__pycache__").exists());
        std::fs::write(d.join("src/__pycache__/a.pyc"), "other cache").unwrap();
        assert_eq!(digest(&d).unwrap(), first, "caches are left out");
        std::fs::write(d.join("src/a.py"), "A = 2\n").unwrap();
        assert_ne!(digest(&d).unwrap(), first);
        let f = tmp.path().join("x.whl");
        std::fs::write(&f, "abc").unwrap();
        assert_eq!(
            digest(&f).unwrap(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/passwd", d.join("link")).unwrap();
            assert!(matches!(digest(&d), Err(PathError::Link { .. })));
        }
        assert_eq!(shell_quote("a @ file:///x"), "'a @ file:///x'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
