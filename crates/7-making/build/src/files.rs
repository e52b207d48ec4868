//! The files of a build: the tool's `Cargo.toml` and `tool.toml` generated from a request, and
//! the per-tool work directory (locked, synced file by file) that cargo builds in.

use super::{BuildError, BuildRequest};
use crate::manifest::{CrateDep, Manifest};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml_edit::{DocumentMut, InlineTable, Item, Table, value};

/// The one cargo target directory shared by every tool build.
pub fn target_dir(cache: &Path) -> PathBuf {
    cache.join("build-target")
}

/// The cargo package name of a tool: unique per tool, so that builds sharing the target
/// directory never overwrite each other's module.
pub fn package_name(name: &str) -> String {
    format!("tool-{name}")
}

/// Check a relative path given for a source file, with the one rule set of
/// [`crate::names::check_file_path`].
pub fn check_rel(path: &str) -> Result<(), BuildError> {
    crate::names::check_file_path(path)
        .map(|_| ())
        .map_err(|e| BuildError::BadRequest {
            message: e.to_string(),
        })
}

fn check_crate(name: &str, dep: &CrateDep) -> Result<(), BuildError> {
    let ok_name = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let version = match dep {
        CrateDep::Version(v) => v,
        CrateDep::Detailed { version, .. } => version,
    };
    if !ok_name {
        return Err(BuildError::BadRequest {
            message: format!("{name:?} is not a crate name"),
        });
    }
    if version.trim().is_empty() || version.chars().any(char::is_control) {
        return Err(BuildError::BadRequest {
            message: format!("crate {name}: {version:?} is not a version requirement"),
        });
    }
    Ok(())
}

/// A component's WIT, inside the tool directory (`wit_bindgen::generate!({ path: "wit" })`).
pub const WIT_FILE: &str = "wit/world.wit";

/// The wit-bindgen dependency every Rust component has (bindings of its WIT world).
pub fn wit_bindgen() -> CrateDep {
    CrateDep::Detailed {
        version: "0.46".into(),
        features: vec!["macros".into(), "realloc".into()],
        default_features: Some(false),
    }
}

/// The `Cargo.toml` of a tool built in place (`toolsmith build NAME`): its own, made
/// standalone (the host told what changed), or one made from tool.toml's crates.
pub fn in_place_cargo_toml(
    name: &str,
    m: &Manifest,
    existing: Option<&Vec<u8>>,
    host: &dyn crate::runner::script::Host,
) -> Result<String, BuildError> {
    let toml = match existing {
        Some(t) => {
            let (text, changed) = standalone_cargo_toml(name, &String::from_utf8_lossy(t))?;
            if changed {
                host.log(
                    "warning",
                    &format!(
                        "Cargo.toml: set the package name to {} and added an empty [workspace]",
                        package_name(name)
                    ),
                );
            }
            text
        }
        None => cargo_toml(name, &m.dependencies.crates)?,
    };
    if m.is_component() {
        component_lib(&toml)
    } else {
        Ok(toml)
    }
}

/// A component crate's `Cargo.toml`: its library is a `cdylib` at src/lib.rs (what
/// `wasm32-wasip2` links into a component), and no `[[bin]]`.
pub fn component_lib(text: &str) -> Result<String, BuildError> {
    let mut doc: DocumentMut = text.parse().map_err(|e| BuildError::BadRequest {
        message: format!("Cargo.toml does not parse: {e}"),
    })?;
    let mut lib = Table::new();
    lib["crate-type"] = value(toml_edit::Array::from_iter(["cdylib"]));
    lib["path"] = value("src/lib.rs");
    doc["lib"] = Item::Table(lib);
    doc.remove("bin");
    Ok(doc.to_string())
}

/// The tool's `Cargo.toml`: the rust template's, with `[dependencies]` from `crates`.
pub fn cargo_toml(name: &str, crates: &BTreeMap<String, CrateDep>) -> Result<String, BuildError> {
    let template = crate::scaffold::render("rust", name, "")
        .and_then(|files| files.into_iter().find(|(p, _, _)| p == "Cargo.toml"))
        .and_then(|(_, bytes, _)| String::from_utf8(bytes).ok())
        .ok_or_else(|| BuildError::Internal {
            message: "the rust template has no Cargo.toml".into(),
        })?;
    let mut doc: DocumentMut = template.parse().map_err(|e| BuildError::Internal {
        message: format!("the rust template's Cargo.toml does not parse: {e}"),
    })?;
    let mut deps = Table::new();
    for (krate, dep) in crates {
        check_crate(krate, dep)?;
        match dep {
            CrateDep::Version(v) => deps[krate.as_str()] = value(v.as_str()),
            CrateDep::Detailed {
                version,
                features,
                default_features,
            } => {
                let mut t = InlineTable::new();
                t.insert("version", version.as_str().into());
                if !features.is_empty() {
                    let arr: toml_edit::Array = features.iter().map(String::as_str).collect();
                    t.insert("features", arr.into());
                }
                if let Some(d) = default_features {
                    t.insert("default-features", (*d).into());
                }
                deps[krate.as_str()] = value(t);
            }
        }
    }
    let decor = doc
        .get("dependencies")
        .and_then(Item::as_table)
        .map(|t| t.decor().clone());
    if let Some(d) = decor {
        *deps.decor_mut() = d;
    }
    doc["dependencies"] = Item::Table(deps);
    Ok(doc.to_string())
}

/// Make a person's `Cargo.toml` safe to build in the shared target directory: the package name
/// `tool-<name>` and an empty `[workspace]` table. Returns the text and whether it changed.
pub fn standalone_cargo_toml(name: &str, text: &str) -> Result<(String, bool), BuildError> {
    let mut doc: DocumentMut = text.parse().map_err(|e| BuildError::BadRequest {
        message: format!("Cargo.toml does not parse: {e}"),
    })?;
    let want = package_name(name);
    let mut changed = false;
    let package = doc
        .get_mut("package")
        .and_then(Item::as_table_mut)
        .ok_or_else(|| BuildError::BadRequest {
            message: "Cargo.toml has no [package] table".into(),
        })?;
    if package.get("name").and_then(Item::as_str) != Some(want.as_str()) {
        package["name"] = value(want);
        changed = true;
    }
    if !doc.contains_key("workspace") {
        doc["workspace"] = Item::Table(Table::new());
        changed = true;
    }
    Ok((doc.to_string(), changed))
}

/// The `tool.toml` text for a request: the previous manifest (if any) with the fields the
/// request gives replaced; `[hashes]` dropped (the build writes them).
pub fn manifest_text(
    req: &BuildRequest,
    previous: Option<&Manifest>,
    crates: &BTreeMap<String, CrateDep>,
    run: &Map<String, Value>,
) -> Result<String, BuildError> {
    let bad = |message: String| BuildError::BadRequest { message };
    let mut m: Map<String, Value> = match previous {
        Some(p) => match serde_json::to_value(p) {
            Ok(Value::Object(o)) => o,
            _ => Map::new(),
        },
        None => match json!({
            "format": crate::manifest::FORMAT_VERSION,
            "name": req.name,
            "kind": "wasm",
            "version": "0.1.0",
            "run": {"artifact": "tool.wasm"},
            "input_schema": {"type": "object", "properties": {}},
        }) {
            Value::Object(o) => o,
            _ => Map::new(),
        },
    };
    m.remove("hashes");
    if !run.is_empty() {
        // A component: its schemas come from its WIT unless declared.
        if previous.is_none() && req.declared.input_schema.is_none() {
            m.remove("input_schema");
        }
        if let Value::Object(r) = m.entry("run").or_insert_with(|| Value::Object(Map::new())) {
            r.extend(run.clone());
        }
    }
    let mut set = |key: &str, v: Option<Value>| {
        if let Some(v) = v {
            m.insert(key.to_string(), v);
        }
    };
    set("description", req.description.clone().map(Value::String));
    set("version", req.version.clone().map(Value::String));
    set("tags", req.tags.as_ref().map(|t| json!(t)));
    set(
        "input_schema",
        req.declared.input_schema.clone().map(Value::Object),
    );
    set(
        "output_schema",
        req.declared.output_schema.clone().map(Value::Object),
    );
    set("annotations", as_json(&req.declared.annotations));
    set("limits", as_json(&req.declared.limits));
    set("capabilities", as_json(&req.declared.capabilities));
    set(
        "secrets",
        req.declared.secrets.as_ref().map(|s| json!(s.to_map())),
    );
    set("examples", as_json(&req.examples));
    if req.declared.input_schema.is_some() {
        m.remove("input_schema_file");
    }
    if req.declared.output_schema.is_some() {
        m.remove("output_schema_file");
    }
    let deps = m
        .entry("dependencies")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(d) = deps {
        d.insert("crates".into(), json!(crates));
    }
    if !m.contains_key("description") {
        return Err(bad(format!(
            "tool {:?} is new, so it needs a `description`",
            req.name
        )));
    }
    let v = Value::Object(m);
    if let Some(at) = find_null(&v, "") {
        return Err(bad(format!(
            "{at} is null, and tool.toml (TOML) has no null; leave the key out instead"
        )));
    }
    let manifest: Manifest = serde_json::from_value(v).map_err(|e| bad(e.to_string()))?;
    manifest
        .to_toml()
        .map_err(|e| bad(format!("cannot write tool.toml: {e}")))
}

/// The path of the first null inside a JSON value.
fn find_null(v: &Value, at: &str) -> Option<String> {
    match v {
        Value::Null => Some(if at.is_empty() {
            "a value".into()
        } else {
            at.into()
        }),
        Value::Object(o) => o.iter().find_map(|(k, x)| {
            find_null(
                x,
                &if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                },
            )
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| find_null(x, &format!("{at}[{i}]"))),
        _ => None,
    }
}

/// Every file of a tool directory (relative path → contents), skipping `tool.toml`, the
/// artifact and ignored directories (`target/`, ...).
pub fn read_sources(
    dir: &Path,
    artifact: Option<&str>,
) -> Result<BTreeMap<String, Vec<u8>>, BuildError> {
    let mut out = BTreeMap::new();
    for entry in crate::hashing::walk_tool_dir(dir) {
        let entry = entry.map_err(BuildError::io("read", dir))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(dir)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if rel == crate::manifest::FILE_NAME || Some(rel.as_str()) == artifact {
            continue;
        }
        let bytes = std::fs::read(entry.path()).map_err(BuildError::io("read", entry.path()))?;
        out.insert(rel, bytes);
    }
    Ok(out)
}

/// The per-tool work directory under the cache, held exclusively while it is in use.
pub struct WorkDir {
    pub path: PathBuf,
    _lock: std::fs::File,
}

impl WorkDir {
    /// Lock and open the work directory of tool `name` (blocks while another build of the same
    /// tool, in this or another process, holds it).
    pub fn acquire(cache: &Path, name: &str) -> Result<WorkDir, BuildError> {
        let root = cache.join("build-src");
        std::fs::create_dir_all(&root).map_err(BuildError::io("create", &root))?;
        let lock_path = root.join(format!("{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(BuildError::io("open", &lock_path))?;
        file.lock().map_err(BuildError::io("lock", &lock_path))?;
        let path = root.join(name);
        std::fs::create_dir_all(&path).map_err(BuildError::io("create", &path))?;
        Ok(WorkDir { path, _lock: file })
    }

    /// Make the directory hold exactly `files`. Files whose contents are unchanged are not
    /// rewritten (their times stay, so cargo sees them as fresh).
    pub fn sync(&self, files: &BTreeMap<String, Vec<u8>>) -> Result<(), BuildError> {
        let existing = read_sources(&self.path, None)?;
        for rel in existing.keys() {
            if !files.contains_key(rel) {
                let p = self.path.join(rel);
                std::fs::remove_file(&p).map_err(BuildError::io("remove", &p))?;
            }
        }
        for (rel, bytes) in files {
            if existing.get(rel) == Some(bytes) {
                continue;
            }
            let p = self.path.join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).map_err(BuildError::io("create", parent))?;
            }
            std::fs::write(&p, bytes).map_err(BuildError::io("write", &p))?;
        }
        Ok(())
    }
}

/// A value given for a manifest field, as JSON (None: not given).
fn as_json<T: serde::Serialize>(v: &Option<T>) -> Option<Value> {
    v.as_ref().and_then(|v| serde_json::to_value(v).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_toml_lists_the_crates_and_stays_standalone() {
        let mut crates = BTreeMap::new();
        crates.insert("serde_json".to_string(), CrateDep::Version("1".into()));
        crates.insert(
            "regex".to_string(),
            CrateDep::Detailed {
                version: "1".into(),
                features: vec!["std".into()],
                default_features: Some(false),
            },
        );
        let text = cargo_toml("demo", &crates).unwrap();
        let doc: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(doc["package"]["name"].as_str(), Some("tool-demo"));
        assert!(doc.contains_key("workspace"));
        assert_eq!(doc["dependencies"]["serde_json"].as_str(), Some("1"));
        assert_eq!(
            doc["dependencies"]["regex"]["default-features"].as_bool(),
            Some(false)
        );
        assert_eq!(doc["profile"]["release"]["panic"].as_str(), Some("abort"));
        let none = cargo_toml("demo", &BTreeMap::new()).unwrap();
        let doc: toml::Table = toml::from_str(&none).unwrap();
        assert!(doc["dependencies"].as_table().unwrap().is_empty());
    }

    #[test]
    fn bad_crates_and_paths_are_refused() {
        let mut crates = BTreeMap::new();
        crates.insert("a b".to_string(), CrateDep::Version("1".into()));
        assert!(cargo_toml("demo", &crates).is_err());
        for p in ["../x", "/etc/passwd", "target/x", "", "a/./b"] {
            assert!(check_rel(p).is_err(), "{p}");
        }
        assert!(check_rel("src/util.rs").is_ok());
    }

    #[test]
    fn standalone_fixes_name_and_workspace() {
        let (text, changed) =
            standalone_cargo_toml("x", "[package]\nname = \"other\"\nversion = \"0.1.0\"\n")
                .unwrap();
        assert!(changed);
        assert!(text.contains("name = \"tool-x\"") && text.contains("[workspace]"));
        let (_, again) = standalone_cargo_toml("x", &text).unwrap();
        assert!(!again);
    }
}
