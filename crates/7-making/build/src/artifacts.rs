//! Compiled dependencies shared between builds, without letting one build change what another
//! links. A tool's dependencies are compiled once per resolved dependency set — the tool's
//! `Cargo.toml` stripped of its own code and its `Cargo.lock`, with the tool chain and target
//! — by a build of a crate with no code of its own (`toolsmith-deps`, an empty library), into
//! an entry of `<cache>/build-deps/<key>/` that only such builds write. Each tool build then
//! gets a fresh target directory of its own, copied from the entry (copies, not links: what
//! the tool's build script, proc macros or linker write lands in that copy only), removed
//! after the build. A dependency that runs code at build time runs it in the entry's build,
//! sandboxed and offline like every build, and can reach only that entry: the builds that
//! use it are the ones that chose the very same dependency set.

use super::BuildError;
use super::cargo::{self, Cx, Step};
use super::files::package_name;
use super::toolchain::CargoHome;
use crate::hashing::sha256_bytes;
use std::path::{Path, PathBuf};
use toml_edit::{DocumentMut, Item, value};

/// The package name of a dependency-only crate.
const DEPS_PACKAGE: &str = "toolsmith-deps";
/// The marker of a finished entry.
const DONE: &str = "done";

/// A build's own target directory, seeded from its dependency set's entry; removed on drop.
pub struct Seeded {
    pub dir: PathBuf,
    /// Dependencies compiled for this build (empty when the entry was there already).
    pub compiled: Vec<String>,
    /// The dependency build's status lines.
    pub log: Vec<String>,
}

impl Drop for Seeded {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The dependency-only crate of a tool: its `Cargo.toml` and `Cargo.lock` texts, and whether
/// it needs an (empty) build script for build dependencies.
fn deps_crate(work: &Path, tool: &str) -> Result<(String, String, bool), BuildError> {
    let bad = |what: &str, e: String| BuildError::Internal {
        message: format!("{what} of {tool:?} does not parse: {e}"),
    };
    let manifest_path = work.join("Cargo.toml");
    let text =
        std::fs::read_to_string(&manifest_path).map_err(BuildError::io("read", &manifest_path))?;
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| bad("Cargo.toml", format!("{e}")))?;
    for k in [
        "lib",
        "bin",
        "example",
        "test",
        "bench",
        "dev-dependencies",
        "badges",
    ] {
        doc.remove(k);
    }
    let has_build_deps = doc.contains_key("build-dependencies")
        || doc
            .get("target")
            .and_then(Item::as_table_like)
            .is_some_and(|t| {
                t.iter().any(|(_, v)| {
                    v.as_table_like()
                        .is_some_and(|v| v.contains_key("build-dependencies"))
                })
            });
    if let Some(targets) = doc.get_mut("target").and_then(Item::as_table_like_mut) {
        for (_, t) in targets.iter_mut() {
            if let Some(t) = t.as_table_like_mut() {
                t.remove("dev-dependencies");
            }
        }
    }
    // Path dependencies are the tool's own code (inside it): compiled by the tool's build.
    let mut removed_path_dep = false;
    let mut strip = |deps: &mut dyn toml_edit::TableLike| {
        let paths: Vec<String> = deps
            .iter()
            .filter(|(_, d)| d.as_table_like().is_some_and(|d| d.contains_key("path")))
            .map(|(k, _)| k.to_string())
            .collect();
        for k in paths {
            deps.remove(&k);
            removed_path_dep = true;
        }
    };
    for n in ["dependencies", "build-dependencies"] {
        if let Some(d) = doc.get_mut(n).and_then(Item::as_table_like_mut) {
            strip(d);
        }
    }
    if let Some(targets) = doc.get_mut("target").and_then(Item::as_table_like_mut) {
        for (_, t) in targets.iter_mut() {
            for n in ["dependencies", "build-dependencies"] {
                if let Some(d) = t.get_mut(n).and_then(Item::as_table_like_mut) {
                    strip(d);
                }
            }
        }
    }
    if removed_path_dep {
        // Features may name the removed crates; the tool's build enables what they add.
        doc.remove("features");
    }
    let pkg = doc
        .get_mut("package")
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| bad("Cargo.toml", "no [package]".into()))?;
    // Only what changes how the dependencies compile or resolve stays (so tools that differ
    // in description, authors or comments share an entry).
    let keep = ["edition", "resolver"];
    let drop: Vec<String> = pkg
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| !keep.contains(&k.as_str()))
        .collect();
    for k in drop {
        pkg.remove(&k);
    }
    pkg.insert("name", value(DEPS_PACKAGE));
    pkg.insert("version", value("0.0.0"));
    if has_build_deps {
        pkg.insert("build", value("build.rs"));
    }
    let lock_path = work.join("Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path).map_err(BuildError::io("read", &lock_path))?;
    let mut lock_doc: DocumentMut = lock
        .parse()
        .map_err(|e| bad("Cargo.lock", format!("{e}")))?;
    let own = package_name(tool);
    if let Some(pkgs) = lock_doc
        .get_mut("package")
        .and_then(Item::as_array_of_tables_mut)
    {
        for p in pkgs.iter_mut() {
            let is_root = p.get("name").and_then(Item::as_str) == Some(own.as_str())
                && !p.contains_key("source");
            if is_root {
                p.insert("name", value(DEPS_PACKAGE));
                p.insert("version", value("0.0.0"));
            }
        }
    }
    // Normalized (no comments, one layout), so equal sets give equal texts.
    let normal = |text: String, what: &str| -> Result<String, BuildError> {
        let t: toml::Table = toml::from_str(&text).map_err(|e| bad(what, e.to_string()))?;
        toml::to_string(&t).map_err(|e| bad(what, e.to_string()))
    };
    Ok((
        normal(doc.to_string(), "Cargo.toml")?,
        normal(lock_doc.to_string(), "Cargo.lock")?,
        has_build_deps,
    ))
}

/// Hold an exclusive lock on `path` (blocking; run off the async threads).
fn lock_file(path: &Path) -> Result<std::fs::File, BuildError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(BuildError::io("open", path))?;
    file.lock().map_err(BuildError::io("lock", path))?;
    Ok(file)
}

/// Copy a directory tree, keeping modification times (cargo's freshness compares them).
fn copy_tree(from: &Path, to: &Path) -> Result<(), BuildError> {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.map_err(BuildError::io("read", from))?;
        let rel = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let dest = to.join(rel);
        let ft = entry.file_type();
        if ft.is_dir() {
            std::fs::create_dir_all(&dest).map_err(BuildError::io("create", &dest))?;
        } else if ft.is_file() {
            std::fs::copy(entry.path(), &dest).map_err(BuildError::io("copy", &dest))?;
            let modified = entry.metadata().ok().and_then(|m| m.modified().ok());
            if let Some(t) = modified {
                let f = std::fs::File::options()
                    .write(true)
                    .open(&dest)
                    .map_err(BuildError::io("open", &dest))?;
                f.set_modified(t)
                    .map_err(BuildError::io("set the time of", &dest))?;
            }
        }
    }
    Ok(())
}

/// Make sure the entry of the tool's dependency set exists (compiling it when missing), then
/// seed the build's own target directory from it.
pub async fn prepare(
    cx: &Cx<'_>,
    tool: &str,
    work: &Path,
    home: &CargoHome,
) -> Result<Seeded, BuildError> {
    let (manifest, lock, build_rs) = deps_crate(work, tool)?;
    let key = sha256_bytes(
        format!(
            "{}\n{}\n{manifest}\n{lock}",
            cx.toolchain.version, cx.target
        )
        .as_bytes(),
    );
    let key = key.trim_start_matches("sha256:");
    let key = &key[..32.min(key.len())];
    let root = cx.cache.join("build-deps");
    std::fs::create_dir_all(&root).map_err(BuildError::io("create", &root))?;
    let entry = root.join(key);
    let lock_path = root.join(format!("{key}.lock"));
    let guard = crate::platform::blocking(move || lock_file(&lock_path))
        .await
        .map_err(|e| BuildError::Internal {
            message: e.to_string(),
        })??;
    let (mut compiled, mut log) = (Vec::new(), Vec::new());
    // The marker names the entry's own place: cargo's records in it hold absolute paths, so
    // an entry copied or moved elsewhere (a cache directory moved) would be recompiled by
    // every build instead of reused. Such an entry is made again here.
    let done_as = format!("{key}\n{}", entry.display());
    if std::fs::read_to_string(entry.join(DONE)).ok().as_deref() != Some(done_as.as_str()) {
        if entry.exists() {
            std::fs::remove_dir_all(&entry).map_err(BuildError::io("remove", &entry))?;
        }
        let src = entry.join("src");
        std::fs::create_dir_all(src.join("src")).map_err(BuildError::io("create", &src))?;
        let write = |rel: &str, text: &str| {
            let p = src.join(rel);
            std::fs::write(&p, text).map_err(BuildError::io("write", &p))
        };
        write("Cargo.toml", &manifest)?;
        write("Cargo.lock", &lock)?;
        write("src/lib.rs", "")?;
        if build_rs {
            write("build.rs", "fn main() {}\n")?;
        }
        let target = entry.join("target");
        std::fs::create_dir_all(&target).map_err(BuildError::io("create", &target))?;
        cx.host.log(
            "info",
            "compiling the dependencies once for this dependency set (later tools with the same set reuse them)",
        );
        let report = cargo::run(cx, tool, &src, &target, home, Step::Dependencies).await?;
        compiled = report
            .compiled
            .into_iter()
            .filter(|c| c != DEPS_PACKAGE)
            .collect();
        log = report.log;
        let done = entry.join(DONE);
        std::fs::write(&done, &done_as).map_err(BuildError::io("write", &done))?;
    }
    let dir = cx.cache.join("build-target").join(tool);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(BuildError::io("remove", &dir))?;
    }
    let from = entry.join("target");
    let to = dir.clone();
    crate::platform::blocking(move || copy_tree(&from, &to))
        .await
        .map_err(|e| BuildError::Internal {
            message: e.to_string(),
        })??;
    drop(guard);
    Ok(Seeded { dir, compiled, log })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dependency_crate_keeps_the_dependencies_and_drops_the_code() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("Cargo.toml"),
            "[package]\nname = \"tool-x\"\nversion = \"0.3.0\"\nedition = \"2021\"\nbuild = \"build.rs\"\n[dependencies]\nserde_json = \"1\"\n[build-dependencies]\ncc = \"1\"\n[dev-dependencies]\nx = \"1\"\n[[bin]]\nname = \"m\"\npath = \"src/main.rs\"\n[profile.release]\npanic = \"abort\"\n[workspace]\n",
        )
        .unwrap();
        std::fs::write(
            tmp.path().join("Cargo.lock"),
            "version = 4\n[[package]]\nname = \"serde_json\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n[[package]]\nname = \"tool-x\"\nversion = \"0.3.0\"\ndependencies = [\"serde_json\"]\n",
        )
        .unwrap();
        let (m, l, b) = deps_crate(tmp.path(), "x").unwrap();
        assert!(b);
        let m: toml::Table = toml::from_str(&m).unwrap();
        assert_eq!(m["package"]["name"].as_str(), Some(DEPS_PACKAGE));
        assert_eq!(m["package"]["build"].as_str(), Some("build.rs"));
        assert!(m.contains_key("dependencies") && m.contains_key("build-dependencies"));
        assert!(!m.contains_key("bin") && !m.contains_key("dev-dependencies"));
        assert_eq!(m["profile"]["release"]["panic"].as_str(), Some("abort"));
        assert!(
            l.contains("name = \"toolsmith-deps\"\nversion = \"0.0.0\""),
            "{l}"
        );
        assert!(!l.contains("tool-x"));
    }
}
