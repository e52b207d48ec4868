//! What a build's files may not carry, checked before cargo sees them: cargo configuration
//! (`.cargo/`: linkers, rustflags, target directories, source replacement), a tool-chain
//! override (`rust-toolchain*`), and a `Cargo.toml` that reaches outside the tool (`[patch]`,
//! `[replace]`, path dependencies leaving its directory, git dependencies, another registry's
//! index by URL, a parent workspace). Each refusal says why and what to do instead.

use super::BuildError;
use std::collections::BTreeMap;
use std::path::{Component, Path};
use toml_edit::{DocumentMut, Item};

fn refuse(message: String) -> BuildError {
    BuildError::Refused { message }
}

/// Check every source file of a build (relative path → bytes).
pub fn check_files(files: &BTreeMap<String, Vec<u8>>) -> Result<(), BuildError> {
    for rel in files.keys() {
        check_path(rel)?;
    }
    if let Some(text) = files.get("Cargo.toml") {
        check_cargo_toml(&String::from_utf8_lossy(text))?;
    }
    Ok(())
}

/// A file a build may not have: cargo's configuration or a tool-chain override.
pub fn check_path(rel: &str) -> Result<(), BuildError> {
    let parts: Vec<&str> = rel.split('/').collect();
    if parts.iter().any(|p| p.eq_ignore_ascii_case(".cargo")) {
        return Err(refuse(format!(
            "{rel}: a build may not carry cargo configuration (.cargo/): it could set the linker, rustflags, the target directory or where crates come from; put build settings in `crates` (features, default-features) or Cargo.toml's [profile.release]"
        )));
    }
    if parts
        .last()
        .is_some_and(|f| f.to_ascii_lowercase().starts_with("rust-toolchain"))
    {
        return Err(refuse(format!(
            "{rel}: a build may not choose the tool chain (rust-toolchain files): toolsmith builds with the person's installed toolchain; leave the file out"
        )));
    }
    Ok(())
}

/// Whether a relative path stays inside the directory it is relative to.
fn stays_inside(p: &str) -> bool {
    let path = Path::new(p);
    if path.is_absolute() {
        return false;
    }
    let mut depth = 0i32;
    for c in path.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

/// The dependency tables of a manifest: `[dependencies]` and friends, also per target.
fn dependency_tables(doc: &DocumentMut) -> Vec<(String, &dyn toml_edit::TableLike)> {
    let names = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut out = Vec::new();
    for n in names {
        if let Some(t) = doc.get(n).and_then(Item::as_table_like) {
            out.push((n.to_string(), t));
        }
    }
    if let Some(targets) = doc.get("target").and_then(Item::as_table_like) {
        for (cfg, t) in targets.iter() {
            for n in names {
                if let Some(d) = t.get(n).and_then(Item::as_table_like) {
                    out.push((format!("target.{cfg}.{n}"), d));
                }
            }
        }
    }
    out
}

/// Check a `Cargo.toml`: nothing that leaves the tool or changes where crates come from.
pub fn check_cargo_toml(text: &str) -> Result<(), BuildError> {
    let doc: DocumentMut = text.parse().map_err(|e| BuildError::BadRequest {
        message: format!("Cargo.toml does not parse: {e}"),
    })?;
    for key in ["patch", "replace"] {
        if doc.contains_key(key) {
            return Err(refuse(format!(
                "Cargo.toml has a [{key}] section, which replaces crates for the whole build; name the crates and versions you need in `crates` instead"
            )));
        }
    }
    if let Some(pkg) = doc.get("package").and_then(Item::as_table) {
        if pkg.contains_key("workspace") {
            return Err(refuse(
                "Cargo.toml's package.workspace points at another workspace; a tool builds on its own (remove the key)".into(),
            ));
        }
        if let Some(b) = pkg.get("build").and_then(Item::as_str)
            && !stays_inside(b)
        {
            return Err(refuse(format!(
                "Cargo.toml's package.build = {b:?} is outside the tool; keep build.rs inside the tool's directory"
            )));
        }
    }
    for section in ["lib", "bin", "example", "test", "bench"] {
        let targets: Vec<&toml_edit::Table> = match doc.get(section) {
            Some(Item::Table(t)) => vec![t],
            Some(Item::ArrayOfTables(a)) => a.iter().collect(),
            _ => Vec::new(),
        };
        for t in targets {
            if let Some(p) = t.get("path").and_then(Item::as_str)
                && !stays_inside(p)
            {
                return Err(refuse(format!(
                    "Cargo.toml's [{section}] path = {p:?} is outside the tool; keep every source file inside the tool's directory"
                )));
            }
        }
    }
    for (table, deps) in dependency_tables(&doc) {
        for (name, dep) in deps.iter() {
            let Some(d) = dep.as_table_like() else {
                continue;
            };
            if d.contains_key("git") {
                return Err(refuse(format!(
                    "Cargo.toml [{table}] {name}: git dependencies are not built (toolsmith fetches crates only from the package registries); use a published version: `crates = {{\"{name}\": \"VERSION\"}}`"
                )));
            }
            if d.contains_key("registry-index") {
                return Err(refuse(format!(
                    "Cargo.toml [{table}] {name}: `registry-index` names a registry by URL; a person configures registries in ~/.cargo/config.toml, and a dependency names one with `registry = \"NAME\"`"
                )));
            }
            if let Some(p) = d.get("path").and_then(Item::as_str)
                && !stays_inside(p)
            {
                return Err(refuse(format!(
                    "Cargo.toml [{table}] {name}: path = {p:?} is outside the tool; a build sees only the tool's own files (put the crate inside the tool, or use a published version in `crates`)"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(extra: &str) -> String {
        format!("[package]\nname = \"tool-x\"\nversion = \"0.1.0\"\n{extra}")
    }

    #[test]
    fn cargo_config_and_toolchain_files_are_refused() {
        for p in [
            ".cargo/config.toml",
            "sub/.cargo/config",
            "rust-toolchain",
            "rust-toolchain.toml",
        ] {
            let e = check_path(p).unwrap_err().to_string();
            assert!(e.contains(p), "{e}");
        }
        assert!(check_path("src/cargo.rs").is_ok() && check_path("build.rs").is_ok());
    }

    #[test]
    fn manifests_that_leave_the_tool_are_refused() {
        for (extra, needle) in [
            ("[patch.crates-io]\nserde = { path = \"/x\" }\n", "[patch]"),
            (
                "[replace]\n\"serde:1.0.0\" = { path = \"/x\" }\n",
                "[replace]",
            ),
            (
                "[dependencies]\nx = { path = \"../other\" }\n",
                "outside the tool",
            ),
            (
                "[dependencies]\nx = { path = \"/etc\" }\n",
                "outside the tool",
            ),
            (
                "[dependencies]\nx = { git = \"https://example.com/x\" }\n",
                "git dependencies",
            ),
            (
                "[target.'cfg(unix)'.build-dependencies]\nx = { git = \"https://e/x\" }\n",
                "git",
            ),
            (
                "[dependencies]\nx = { version = \"1\", registry-index = \"https://e\" }\n",
                "registry-index",
            ),
            ("build = \"../b.rs\"\n", "package.build"),
            ("workspace = \"..\"\n", "package.workspace"),
            ("[[bin]]\nname = \"m\"\npath = \"/tmp/m.rs\"\n", "[bin]"),
        ] {
            let e = check_cargo_toml(&base(extra)).unwrap_err().to_string();
            assert!(e.contains(needle), "{extra}: {e}");
        }
        let ok = base(
            "build = \"build.rs\"\n[dependencies]\nserde_json = \"1\"\nlocal = { path = \"crates/local\" }\n",
        );
        assert!(check_cargo_toml(&ok).is_ok());
    }
}
