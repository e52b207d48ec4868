//! ARCHITECTURE.md kept honest: the invariants that can be checked by reading the source.
//! (The way rust-analyzer keeps its own: a rule broken in a new file fails here, naming it.)

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace's crates, as (tier, crate directory name): `crates/<tier>/<name>/Cargo.toml`.
fn tiered() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for tier in std::fs::read_dir(root().join("crates")).expect("crates/") {
        let tier = tier.expect("a tier").path();
        for e in std::fs::read_dir(&tier).expect("a tier's crates") {
            let e = e.expect("a crate");
            if e.path().join("Cargo.toml").is_file() {
                out.push((
                    tier.file_name().unwrap().to_string_lossy().into_owned(),
                    e.file_name().to_string_lossy().into_owned(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// The workspace's crates (their directory names).
fn crates() -> Vec<String> {
    let mut names: Vec<String> = tiered().into_iter().map(|(_, c)| c).collect();
    names.sort();
    names
}

/// A crate's directory relative to the workspace: `crates/<tier>/<name>`.
fn crate_rel(name: &str) -> String {
    let (tier, _) = tiered()
        .into_iter()
        .find(|(_, c)| c == name)
        .unwrap_or_else(|| panic!("no crate {name}"));
    format!("crates/{tier}/{name}")
}

/// A crate's directory.
fn crate_dir(name: &str) -> PathBuf {
    root().join(crate_rel(name))
}

/// Every `.rs` file under `src/` and `crates/*/*/src/`, as (path relative to the workspace, text).
fn sources() -> Vec<(String, String)> {
    let dirs = std::iter::once(root().join("src"))
        .chain(crates().into_iter().map(|c| crate_dir(&c).join("src")));
    dirs.flat_map(walkdir::WalkDir::new)
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(root())
                .expect("under the crate")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(e.path()).expect("readable source");
            (rel, text)
        })
        .collect()
}

/// The source without `//` comments (doc comments may name what the code must not use).
fn code_only(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Files whose path `applies` and whose code contains any of `needles`, each with the first
/// needle found.
fn scan(applies: impl Fn(&str) -> bool, needles: &[&str]) -> Vec<String> {
    sources()
        .into_iter()
        .filter(|(p, _)| applies(p))
        .filter_map(|(p, t)| {
            let code = code_only(&t);
            needles
                .iter()
                .find(|n| code.contains(**n))
                .map(|n| format!("{p} (uses `{n}`)"))
        })
        .collect()
}

/// Files outside `allowed` (path prefixes) whose code contains any of `needles`.
fn offenders(allowed: &[&str], needles: &[&str]) -> Vec<String> {
    scan(|p| !allowed.iter().any(|a| p.starts_with(a)), needles)
}

mod boundaries;
mod modules;
mod one_way;
mod tiers;
