//! Where an MCP server comes from: a package of a registry, pinned like a script's
//! dependencies. `npx -y PKG@VER ARGS` and `uvx PKG ARGS` (how editors' configurations start
//! servers, fetching at every start) become the package in `[dependencies]`, installed once
//! from the lockfile, and its command; a command of an installed package is found in its
//! metadata (npm's `bin`, a wheel's `console_scripts`).

use crate::manifest::Dependencies;
use std::path::Path;

/// A server's package: `npm:NAME@VERSION` or `pip:REQUIREMENT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Package {
    /// An npm package at a version.
    Npm {
        /// Its name (`@scope/name` too).
        name: String,
        /// Its version.
        version: String,
    },
    /// A pip requirement (`NAME==VERSION`).
    Pip {
        /// The requirement as given.
        requirement: String,
    },
}

impl Package {
    /// Parse `npm:@scope/name@1.2.3`, `npm:name` (latest, pinned by the lockfile) or
    /// `pip:name==1.2` (or `pypi:`).
    pub fn parse(spec: &str) -> Result<Package, String> {
        if let Some(rest) = spec.strip_prefix("npm:") {
            let (name, version) = crate::manifest::npm_package(rest.trim());
            if name.is_empty() {
                return Err(format!("{spec:?} names no npm package"));
            }
            return Ok(Package::Npm { name, version });
        }
        if let Some(rest) = spec
            .strip_prefix("pip:")
            .or_else(|| spec.strip_prefix("pypi:"))
        {
            let r = rest.trim();
            if r.is_empty() {
                return Err(format!("{spec:?} names no Python package"));
            }
            return Ok(Package::Pip {
                requirement: r.to_string(),
            });
        }
        Err(format!(
            "{spec:?} is not a package: write npm:NAME@VERSION or pip:NAME==VERSION"
        ))
    }

    /// The `[dependencies]` that install it.
    pub fn dependencies(&self) -> Dependencies {
        let mut d = Dependencies::default();
        match self {
            Package::Npm { name, version } => {
                d.npm.insert(name.clone(), version.clone());
            }
            Package::Pip { requirement } => d.pip.push(requirement.clone()),
        }
        d
    }

    /// The package's name (without version).
    pub fn name(&self) -> String {
        match self {
            Package::Npm { name, .. } => name.clone(),
            Package::Pip { requirement } => requirement
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
                .collect(),
        }
    }
}

/// A launcher that fetches a package at start (`npx`, `uvx`, `pipx run`), as the package and
/// the arguments for its command. None for any other command.
pub fn from_launcher(command: &str, args: &[String]) -> Option<(Package, Vec<String>)> {
    let base = Path::new(command)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    let mut rest: Vec<String> = args.to_vec();
    match base.as_str() {
        "npx" | "npx.cmd" | "bunx" | "pnpx" => {
            // Options before the package: -y / --yes, -p PKG, --package=PKG.
            let mut pkg = None;
            while let Some(first) = rest.first().cloned() {
                if first == "-y" || first == "--yes" || first == "-q" || first == "--quiet" {
                    rest.remove(0);
                } else if first == "-p" || first == "--package" {
                    rest.remove(0);
                    if !rest.is_empty() {
                        pkg = Some(rest.remove(0));
                    }
                } else if let Some(p) = first.strip_prefix("--package=") {
                    pkg = Some(p.to_string());
                    rest.remove(0);
                } else {
                    break;
                }
            }
            let spec = match pkg {
                Some(p) => {
                    // `npx -p PKG CMD ARGS`: CMD is the package's command.
                    if !rest.is_empty() {
                        rest.remove(0);
                    }
                    p
                }
                None if !rest.is_empty() => rest.remove(0),
                None => return None,
            };
            if spec.starts_with('-') {
                return None;
            }
            let (name, version) = crate::manifest::npm_package(&spec);
            Some((Package::Npm { name, version }, rest))
        }
        "uvx" | "pipx" => {
            if base == "pipx" {
                if rest.first().map(String::as_str) != Some("run") {
                    return None;
                }
                rest.remove(0);
            }
            let mut from = None;
            while let Some(first) = rest.first().cloned() {
                if first == "--from" {
                    rest.remove(0);
                    if !rest.is_empty() {
                        from = Some(rest.remove(0));
                    }
                } else if first.starts_with('-') {
                    rest.remove(0);
                } else {
                    break;
                }
            }
            let spec = match from {
                Some(f) => {
                    if !rest.is_empty() {
                        rest.remove(0);
                    }
                    f
                }
                None if !rest.is_empty() => rest.remove(0),
                None => return None,
            };
            // uvx's `name@version` is pip's `name==version`.
            let requirement = match spec.split_once('@') {
                Some((n, v)) if !n.is_empty() && !v.contains('/') && !v.contains(':') => {
                    format!("{n}=={v}")
                }
                _ => spec,
            };
            Some((Package::Pip { requirement }, rest))
        }
        _ => None,
    }
}

/// The command a package installs, read from its metadata in the environment: npm's `bin`
/// (a string: the package's own name; one entry: that one; several: the one named like the
/// package), a wheel's `console_scripts` (likewise).
pub fn command_of(pkg: &Package, env: &crate::deps::Env) -> Option<String> {
    let like = match pkg {
        Package::Npm { name, .. } => name.rsplit('/').next().unwrap_or(name).to_string(),
        Package::Pip { .. } => pkg.name(),
    };
    pick(commands_of(pkg, env), &like)
}

/// Every command a package installs (npm's `bin`, a wheel's `console_scripts`).
pub fn commands_of(pkg: &Package, env: &crate::deps::Env) -> Vec<String> {
    match pkg {
        Package::Npm { name, .. } => {
            let Some(nm) = env.node_modules.as_ref() else {
                return Vec::new();
            };
            let Some(v) = std::fs::read_to_string(nm.join(name).join("package.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            else {
                return Vec::new();
            };
            let plain = name.rsplit('/').next().unwrap_or(name).to_string();
            match v.get("bin") {
                Some(serde_json::Value::String(_)) => vec![plain],
                Some(serde_json::Value::Object(o)) => o.keys().cloned().collect(),
                _ => Vec::new(),
            }
        }
        Package::Pip { .. } => {
            let Some(venv) = env.python.as_ref().and_then(|p| p.parent()?.parent()) else {
                return Vec::new();
            };
            let want = normalize(&pkg.name());
            let Ok(pydirs) = std::fs::read_dir(venv.join("lib")) else {
                return Vec::new();
            };
            for pydir in pydirs.flatten() {
                let site = pydir.path().join("site-packages");
                let Ok(entries) = std::fs::read_dir(&site) else {
                    continue;
                };
                for e in entries.flatten() {
                    let f = e.file_name().to_string_lossy().into_owned();
                    let Some(stem) = f.strip_suffix(".dist-info") else {
                        continue;
                    };
                    let dist = stem.rsplit_once('-').map_or(stem, |(n, _)| n);
                    if normalize(dist) != want {
                        continue;
                    }
                    return std::fs::read_to_string(e.path().join("entry_points.txt"))
                        .map(|t| console_scripts(&t))
                        .unwrap_or_default();
                }
            }
            Vec::new()
        }
    }
}

fn normalize(n: &str) -> String {
    n.to_ascii_lowercase().replace(['-', '.'], "_")
}

fn pick(names: Vec<String>, like: &str) -> Option<String> {
    if names.len() == 1 {
        return names.into_iter().next();
    }
    names.into_iter().find(|n| normalize(n) == normalize(like))
}

/// The names under `[console_scripts]` of an `entry_points.txt`.
fn console_scripts(text: &str) -> Vec<String> {
    let mut on = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            on = line == "[console_scripts]";
        } else if on && let Some((name, _)) = line.split_once('=') {
            out.push(name.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn launchers_become_pinned_packages() {
        assert_eq!(
            from_launcher(
                "npx",
                &s(&[
                    "-y",
                    "@modelcontextprotocol/server-filesystem@2026.8.31",
                    "/tmp"
                ])
            ),
            Some((
                Package::Npm {
                    name: "@modelcontextprotocol/server-filesystem".into(),
                    version: "2026.8.31".into()
                },
                s(&["/tmp"])
            ))
        );
        assert_eq!(
            from_launcher(
                "uvx",
                &s(&["mcp-server-time@2026.10.19", "--local-timezone=UTC"])
            ),
            Some((
                Package::Pip {
                    requirement: "mcp-server-time==2026.10.19".into()
                },
                s(&["--local-timezone=UTC"])
            ))
        );
        assert_eq!(from_launcher("node", &s(&["server.js"])), None);
        assert_eq!(
            console_scripts(
                "[console_scripts]\nmcp-server-time = mcp_server_time:main\n[x]\ny = z\n"
            ),
            ["mcp-server-time"]
        );
        assert!(Package::parse("left-pad").is_err());
        assert_eq!(
            Package::parse("pip:mcp-server-time==1").unwrap().name(),
            "mcp-server-time"
        );
    }
}
