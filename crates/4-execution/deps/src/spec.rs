//! What a dependency entry may be, checked before pip or npm sees it: a pip entry is a PEP 508
//! requirement naming a package on the index (`name[extras] (specifiers) ; marker`), never an
//! option (`-r FILE`, `--target DIR`, `--index-url URL`, `-e PATH`); an npm entry is a package
//! name with a version, range or tag from the registry. Anything else that names a package —
//! pip `name @ URL`, npm `file:`, `link:`, `git+…`, `github:`/`user/repo`, a tarball URL — is a
//! direct reference (`reference`), an `PipEntry::Direct` that only a person's allowance for the
//! tool lets through (`deps::check`). A person can also make packages available through the
//! package manager's own configuration when starting toolsmith (a local wheel directory in
//! `PIP_FIND_LINKS`, another registry), which a dependency then names like any other.

use super::reference::{DirectRef, Refusal, is_name};
use thiserror::Error;

/// A dependency entry toolsmith does not pass on.
#[derive(Debug, Error)]
#[error("{ecosystem} dependency {entry:?} is refused: {why}")]
pub struct SpecError {
    /// pip or npm.
    pub ecosystem: &'static str,
    /// The entry as written.
    pub entry: String,
    /// Why it is refused.
    pub why: String,
    /// What to write instead.
    pub hint: String,
}

impl From<Refusal> for SpecError {
    fn from(r: Refusal) -> SpecError {
        SpecError {
            ecosystem: r.ecosystem,
            entry: r.entry,
            why: r.why,
            hint: r.hint.to_string(),
        }
    }
}

impl crate::error::Hint for SpecError {
    fn hint(&self) -> Option<String> {
        Some(self.hint.clone())
    }
}

const PIP_HINT: &str = "name a package on the index with a version, e.g. \"six==1.16.0\" or \"requests>=2,<3\" (a package without a wheel is built from source, offline in the sandbox); a package from elsewhere is named `NAME @ file:///path` or `NAME @ https://host/file.whl`, which a person allows for the tool with `toolsmith allow`, or a person puts its wheel in a local directory and starts toolsmith with PIP_FIND_LINKS=/that/dir";
const NPM_HINT: &str = "give a version, range or tag from the registry, e.g. {\"left-pad\": \"1.3.0\"} or {\"lodash\": \"^4.17.0\"}; a package from elsewhere is named `file:/path/x.tgz` (or a package directory) or `https://host/x.tgz`, which a person allows for the tool with `toolsmith allow`";

fn pip_err(entry: &str, why: impl Into<String>) -> SpecError {
    SpecError {
        ecosystem: "pip",
        entry: entry.to_string(),
        why: why.into(),
        hint: PIP_HINT.into(),
    }
}

/// The marker variables of PEP 508.
const MARKER_VARS: &[&str] = &[
    "python_version",
    "python_full_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "extra",
];

/// Whether `m` is a PEP 508 environment marker: variables, quoted strings, comparison
/// operators, `and`/`or`/`not`/`in` and parentheses.
fn is_marker(m: &str) -> bool {
    let mut chars = m.chars().peekable();
    let mut tokens = 0;
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() || c == '(' || c == ')' {
            chars.next();
        } else if c == '"' || c == '\'' {
            chars.next();
            let mut closed = false;
            for d in chars.by_ref() {
                if d == c {
                    closed = true;
                    break;
                }
                if d.is_control() {
                    return false;
                }
            }
            if !closed {
                return false;
            }
            tokens += 1;
        } else if "<>=!~".contains(c) {
            while chars.peek().is_some_and(|d| "<>=!~".contains(*d)) {
                chars.next();
            }
            tokens += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut word = String::new();
            while let Some(&d) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '_' {
                    word.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            if !(MARKER_VARS.contains(&word.as_str())
                || ["and", "or", "not", "in"].contains(&word.as_str()))
            {
                return false;
            }
            tokens += 1;
        } else {
            return false;
        }
    }
    tokens >= 3
}

/// What a dependency entry is: a package from the registry, or a direct reference (which
/// only a person's allowance lets through).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipEntry {
    Index,
    Direct(DirectRef),
}

/// Check one pip requirement (PEP 508, names and version specifiers only).
pub fn check_pip(entry: &str) -> Result<(), SpecError> {
    match pip_entry(entry)? {
        PipEntry::Index => Ok(()),
        PipEntry::Direct(_) => Err(pip_err(
            entry,
            "it is a direct reference (a URL, a file or a path, a VCS repository or an archive); toolsmith installs packages only from the package index, where a build backend of the package's own cannot run at install",
        )),
    }
}

/// One pip entry: never an option; a direct reference parsed (`reference::pip`); else a
/// PEP 508 requirement from the index.
pub fn pip_entry(entry: &str) -> Result<PipEntry, SpecError> {
    let e = entry.trim();
    if e.is_empty() {
        return Err(pip_err(entry, "it is empty"));
    }
    if e.starts_with('-') {
        return Err(pip_err(
            entry,
            "it is a pip option, not a requirement (options such as -r, --target, --index-url or -e would make pip read files, write elsewhere or fetch from other servers)",
        ));
    }
    if e.chars().any(|c| c.is_control()) {
        return Err(pip_err(entry, "it contains control characters"));
    }
    if let Some(d) = super::reference::pip(e)? {
        return Ok(PipEntry::Direct(d));
    }
    index_requirement(entry, e).map(|()| PipEntry::Index)
}

/// A requirement naming a package on the index: `name[extras] (specifiers) ; marker`.
fn index_requirement(entry: &str, e: &str) -> Result<(), SpecError> {
    let (req, marker) = match e.split_once(';') {
        Some((r, m)) => (r.trim(), Some(m.trim())),
        None => (e, None),
    };
    if let Some(m) = marker
        && !is_marker(m)
    {
        return Err(pip_err(
            entry,
            "its environment marker is not one PEP 508 allows",
        ));
    }
    let name_end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
        .unwrap_or(req.len());
    let (name, mut rest) = (&req[..name_end], req[name_end..].trim_start());
    if !is_name(name) {
        return Err(pip_err(entry, "it does not start with a package name"));
    }
    if let Some(r) = rest.strip_prefix('[') {
        let Some((extras, after)) = r.split_once(']') else {
            return Err(pip_err(entry, "its extras are not closed with `]`"));
        };
        if !extras
            .split(',')
            .map(str::trim)
            .all(|x| x.is_empty() || is_name(x))
        {
            return Err(pip_err(entry, "its extras are not package-style names"));
        }
        rest = after.trim_start();
    }
    let spec = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or(rest)
        .trim();
    if spec.is_empty() {
        return Ok(());
    }
    for clause in spec.split(',') {
        let c = clause.trim();
        let op_len = ["===", "~=", "==", "!=", "<=", ">=", "<", ">"]
            .iter()
            .find(|op| c.starts_with(**op))
            .map(|op| op.len())
            .ok_or_else(|| {
                pip_err(
                    entry,
                    format!("{c:?} is not a version specifier (==, >=, <, ~=, !=, ...)"),
                )
            })?;
        let version = c[op_len..].trim();
        if version.is_empty()
            || !version
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "._*+!-".contains(ch))
        {
            return Err(pip_err(entry, format!("{version:?} is not a version")));
        }
    }
    Ok(())
}

/// One line of a committed `requirements.lock` (None for comments and blank lines).
pub fn pip_lock_line(line: &str) -> Result<Option<PipEntry>, SpecError> {
    let l = line.trim();
    if l.is_empty() || l.starts_with('#') {
        return Ok(None);
    }
    pip_entry(l).map(Some)
}

/// Check one npm dependency from the registry: the name (`name`, `@scope/name`) and its
/// version, range or tag.
pub fn check_npm(name: &str, spec: &str) -> Result<(), SpecError> {
    match npm_entry(name, spec)? {
        PipEntry::Index => Ok(()),
        PipEntry::Direct(_) => Err(SpecError {
            ecosystem: "npm",
            entry: format!("{name}@{spec}"),
            why: "it is not a registry version (file:, link:, git+…, github:/user/repo shorthands, paths and tarball URLs are refused: they could run code from anywhere at install)".into(),
            hint: NPM_HINT.into(),
        }),
    }
}

/// One npm dependency: its name checked, then a direct reference parsed
/// (`reference::npm`), else a version, range or tag from the registry.
pub fn npm_entry(name: &str, spec: &str) -> Result<PipEntry, SpecError> {
    let err = |why: &str| SpecError {
        ecosystem: "npm",
        entry: format!("{name}@{spec}"),
        why: why.to_string(),
        hint: NPM_HINT.into(),
    };
    let plain = name.strip_prefix('@').map_or(Some(name), |rest| {
        rest.split_once('/')
            .map(|(scope, n)| if scope.is_empty() { "" } else { n })
    });
    let name_ok = plain.is_some_and(|n| {
        !n.is_empty()
            && n.len() <= 214
            && n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._~".contains(c))
    }) && !name.contains("..")
        && !name.starts_with(['.', '_']);
    if !name_ok {
        return Err(err(
            "npm names are `name` or `@scope/name`: lowercase, no spaces",
        ));
    }
    if let Some(d) = super::reference::npm(name, spec)? {
        return Ok(PipEntry::Direct(d));
    }
    let s = spec.trim();
    let lower = s.to_ascii_lowercase();
    if s.contains(':') || s.contains('/') || s.contains('\\') || lower.ends_with(".tgz") {
        return Err(err(
            "it is not a registry version (file:, link:, git+…, github:/user/repo shorthands, paths and tarball URLs are refused: they could run code from anywhere at install)",
        ));
    }
    if s.is_empty()
        || !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".*^~<>=| +_-".contains(c))
    {
        return Err(err("it is not a version, a range or a tag"));
    }
    Ok(PipEntry::Index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_requirements_from_the_index_pass() {
        for ok in [
            "six",
            "six==1.16.0",
            "requests[socks, security]>=2.0,<3",
            "Django (>=4.2)",
            "numpy~=1.26; python_version >= \"3.9\"",
            "a.b_c-d===1.0+local",
        ] {
            check_pip(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn options_urls_paths_and_vcs_are_refused_with_a_reason() {
        for (bad, why) in [
            ("-r/root/.ssh/id_rsa", "option"),
            ("--target=/home/x", "option"),
            ("--index-url=https://evil", "option"),
            ("-e .", "option"),
            ("pkg @ file:///tmp/pkg", "direct reference"),
            ("pkg@https://x.example/p.whl", "direct reference"),
            ("git+https://github.com/a/b", "direct reference"),
            ("./local", "direct reference"),
            ("/abs/path", "direct reference"),
            ("pkg-1.0.tar.gz", "direct reference"),
            ("six==1.16.0 --hash=x", "version"),
            ("six; import os", "marker"),
            ("", "empty"),
        ] {
            let e = check_pip(bad).expect_err(bad).to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn npm_specs_must_come_from_the_registry() {
        for (n, v) in [
            ("left-pad", "1.3.0"),
            ("@isaacs/x", "^1.1"),
            ("a", "latest"),
            ("b", ">=1 <2 || 3.x"),
        ] {
            check_npm(n, v).unwrap_or_else(|e| panic!("{n}@{v}: {e}"));
        }
        for (n, v) in [
            ("x", "file:../x.tgz"),
            ("x", "link:../x"),
            ("x", "git+https://github.com/a/b.git"),
            ("x", "github:a/b"),
            ("x", "a/b"),
            ("x", "https://e.example/x.tgz"),
            ("x", "npm:other@1"),
            ("X Y", "1"),
        ] {
            assert!(check_npm(n, v).is_err(), "{n}@{v}");
        }
    }
}
