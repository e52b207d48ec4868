//! How a tool becomes the blobs of an OCI artifact and back, with no network: a WASM tool in
//! the CNCF wasm layout (config `application/vnd.wasm.config.v0+json`, the module as
//! `application/wasm`) plus its tool.toml, lockfile and source as further layers; any other
//! tool as one tar layer of its directory. Unpacking refuses what an import from git refuses
//! (links, unsafe paths, oversized files) and any media type it does not know.

use super::fetch::check_component;
use super::{MAX_FILE_BYTES, MAX_FILES, MAX_TOOL_BYTES, ShareError};
use crate::history::FileAt;
use crate::manifest::{self, Kind, Manifest};
use std::collections::BTreeMap;
use std::io::Read;

/// The OCI image manifest media type.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// CNCF wasm artifact config.
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// CNCF wasm module layer.
pub const WASM_LAYER: &str = "application/wasm";
/// A tool's tool.toml.
pub const TOOL_MANIFEST: &str = "application/vnd.toolsmith.tool.manifest.v1+toml";
/// A tool's lockfile (Cargo.lock for a WASM tool).
pub const LOCKFILE: &str = "application/vnd.toolsmith.tool.lockfile.v1";
/// The rest of a WASM tool's directory (its source), as a tar.
pub const SOURCE_TAR: &str = "application/vnd.toolsmith.tool.source.v1.tar";
/// A whole tool directory (script and pipeline tools), as a tar.
pub const TOOL_TAR: &str = "application/vnd.toolsmith.tool.v1.tar";
/// Config of a non-WASM tool artifact.
pub const TOOL_CONFIG: &str = "application/vnd.toolsmith.tool.config.v1+json";
/// `artifactType` of a non-WASM tool artifact.
pub const TOOL_ARTIFACT: &str = "application/vnd.toolsmith.tool.v1";
/// The annotation naming a layer's file (OCI's standard title annotation).
pub const TITLE: &str = "org.opencontainers.image.title";

/// Most layers accepted in one artifact.
pub const MAX_LAYERS: usize = 16;

/// One blob of an artifact.
#[derive(Debug, Clone)]
pub struct Blob {
    pub media_type: String,
    pub bytes: Vec<u8>,
    /// The file (or tar) name, as the `org.opencontainers.image.title` annotation.
    pub title: Option<String>,
}

/// A tool laid out as an artifact: its config, layers and manifest annotations.
#[derive(Debug, Clone)]
pub struct Packed {
    pub config: Blob,
    pub layers: Vec<Blob>,
    pub artifact_type: Option<String>,
    pub annotations: BTreeMap<String, String>,
}

fn packing_error(name: &str, reason: impl std::fmt::Display) -> ShareError {
    ShareError::Unsupported {
        what: format!("publishing {name} as an OCI artifact"),
        reason: reason.to_string(),
    }
}

/// A deterministic tar of `files` (sorted, mtime 0, owner 0, mode 644 or 755): the same tool
/// gives the same bytes, so the same digest.
fn tar_of(name: &str, files: &[&FileAt]) -> Result<Vec<u8>, ShareError> {
    let mut sorted: Vec<&&FileAt> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut builder = tar::Builder::new(Vec::new());
    for f in sorted {
        let mut header = tar::Header::new_ustar();
        header.set_size(f.bytes.len() as u64);
        header.set_mode(if f.executable { 0o755 } else { 0o644 });
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder
            .append_data(&mut header, &f.path, f.bytes.as_slice())
            .map_err(|e| packing_error(name, format!("tar {}: {e}", f.path)))?;
    }
    builder
        .into_inner()
        .map_err(|e| packing_error(name, format!("tar: {e}")))
}

/// Lay out tool `name` (its committed files and parsed manifest) as an artifact.
pub fn pack(name: &str, m: &Manifest, files: &[FileAt]) -> Result<Packed, ShareError> {
    let mut annotations = BTreeMap::new();
    annotations.insert(TITLE.to_string(), name.to_string());
    annotations.insert(
        "org.opencontainers.image.description".to_string(),
        m.description.clone(),
    );
    annotations.insert("io.toolsmith.kind".to_string(), m.kind.as_str().to_string());
    let file = |path: &str| files.iter().find(|f| f.path == path);
    if m.kind != Kind::Wasm {
        let all: Vec<&FileAt> = files.iter().collect();
        let config = serde_json::json!({"name": name, "kind": m.kind.as_str(), "description": m.description});
        return Ok(Packed {
            config: Blob {
                media_type: TOOL_CONFIG.into(),
                bytes: serde_json::to_vec(&config).unwrap_or_default(),
                title: None,
            },
            layers: vec![Blob {
                media_type: TOOL_TAR.into(),
                bytes: tar_of(name, &all)?,
                title: Some(format!("{name}.tar")),
            }],
            artifact_type: Some(TOOL_ARTIFACT.into()),
            annotations,
        });
    }
    let artifact_path = m.artifact();
    let module = file(artifact_path).ok_or_else(|| {
        packing_error(
            name,
            format!(
                "its artifact {artifact_path} is not committed; build the tool first (build_tool)"
            ),
        )
    })?;
    let toml = file(manifest::FILE_NAME)
        .ok_or_else(|| packing_error(name, "it has no committed tool.toml"))?;
    let module_digest = crate::hashing::sha256_bytes(&module.bytes);
    let mut layers = vec![
        Blob {
            media_type: WASM_LAYER.into(),
            bytes: module.bytes.clone(),
            title: Some(artifact_path.to_string()),
        },
        Blob {
            media_type: TOOL_MANIFEST.into(),
            bytes: toml.bytes.clone(),
            title: Some(manifest::FILE_NAME.into()),
        },
    ];
    if let Some(lock) = file("Cargo.lock") {
        layers.push(Blob {
            media_type: LOCKFILE.into(),
            bytes: lock.bytes.clone(),
            title: Some("Cargo.lock".into()),
        });
    }
    let rest: Vec<&FileAt> = files
        .iter()
        .filter(|f| ![artifact_path, manifest::FILE_NAME, "Cargo.lock"].contains(&f.path.as_str()))
        .collect();
    if !rest.is_empty() {
        layers.push(Blob {
            media_type: SOURCE_TAR.into(),
            bytes: tar_of(name, &rest)?,
            title: Some("source.tar".into()),
        });
    }
    // The CNCF wasm config: what the module (or component: WASI 0.2) targets and which layer
    // it is.
    let config = serde_json::json!({
        "architecture": "wasm",
        "os": if m.is_component() { "wasip2" } else { "wasip1" },
        "layerDigests": [module_digest],
    });
    Ok(Packed {
        config: Blob {
            media_type: WASM_CONFIG.into(),
            bytes: serde_json::to_vec(&config).unwrap_or_default(),
            title: None,
        },
        layers,
        artifact_type: None,
        annotations,
    })
}

/// Counts files and bytes against the per-tool caps while an artifact is unpacked.
struct Caps {
    files: Vec<FileAt>,
    bytes: u64,
}

impl Caps {
    fn push(&mut self, f: FileAt) -> Result<(), ShareError> {
        if self.files.iter().any(|g| g.path == f.path) {
            return Err(ShareError::BadPath {
                path: f.path,
                reason: "the artifact holds this file twice".into(),
            });
        }
        self.bytes += f.bytes.len() as u64;
        if self.bytes > MAX_TOOL_BYTES {
            return Err(ShareError::TooLarge {
                path: "the artifact".into(),
                size: self.bytes,
                limit: MAX_TOOL_BYTES,
            });
        }
        if self.files.len() >= MAX_FILES {
            return Err(ShareError::TooManyFiles {
                path: "the artifact".into(),
                limit: MAX_FILES,
            });
        }
        self.files.push(f);
        Ok(())
    }
}

/// A relative path from an artifact, each component checked like a git tree entry.
fn checked_path(path: &str) -> Result<String, ShareError> {
    let trimmed = path.strip_prefix("./").unwrap_or(path);
    if trimmed.is_empty() || trimmed.starts_with('/') {
        return Err(ShareError::BadPath {
            path: path.to_string(),
            reason: "it must be a relative path inside the tool directory".into(),
        });
    }
    let mut parts = Vec::new();
    let mut dir = String::new();
    for c in trimmed.split('/') {
        let c = check_component(&dir, c.as_bytes())?;
        dir = if dir.is_empty() {
            c.clone()
        } else {
            format!("{dir}/{c}")
        };
        parts.push(c);
    }
    Ok(parts.join("/"))
}

fn untar(bytes: &[u8], caps: &mut Caps) -> Result<(), ShareError> {
    let mut archive = tar::Archive::new(bytes);
    let bad = |e: std::io::Error| ShareError::BadPath {
        path: "(tar layer)".into(),
        reason: format!("it is not a readable tar archive: {e}"),
    };
    for entry in archive.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        if kind.is_symlink() || kind.is_hard_link() {
            let target = entry
                .link_name_bytes()
                .map(|t| String::from_utf8_lossy(&t).into_owned())
                .unwrap_or_default();
            return Err(ShareError::Symlink { path: raw, target });
        }
        if !kind.is_file() {
            return Err(ShareError::BadPath {
                path: raw,
                reason: format!(
                    "it is a {kind:?} entry; imported tools may only contain regular files"
                ),
            });
        }
        let path = checked_path(&raw)?;
        let size = entry.header().size().map_err(bad)?;
        if size > MAX_FILE_BYTES {
            return Err(ShareError::TooLarge {
                path,
                size,
                limit: MAX_FILE_BYTES,
            });
        }
        let executable = entry
            .header()
            .mode()
            .map(|m| m & 0o111 != 0)
            .unwrap_or(false);
        let mut data = Vec::with_capacity(size as usize);
        (&mut entry)
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut data)
            .map_err(bad)?;
        caps.push(FileAt {
            path,
            bytes: data,
            executable,
        })?;
    }
    Ok(())
}

/// The tool directory an artifact holds: `config_type` is the config's media type, `layers`
/// the verified layers in manifest order. Refuses an artifact that is not a toolsmith tool.
pub fn unpack(config_type: &str, layers: Vec<Blob>) -> Result<Vec<FileAt>, ShareError> {
    let not = |reason: String| ShareError::NotATool {
        path: "the artifact".into(),
        reason,
    };
    if config_type != WASM_CONFIG && config_type != TOOL_CONFIG {
        return Err(not(format!(
            "its config media type is {config_type:?}, not {WASM_CONFIG} or {TOOL_CONFIG}"
        )));
    }
    let mut caps = Caps {
        files: Vec::new(),
        bytes: 0,
    };
    for layer in layers {
        let titled = |what: &str| {
            layer
                .title
                .as_deref()
                .ok_or_else(|| not(format!("its {what} layer has no {TITLE} annotation")))
                .and_then(checked_path)
        };
        match layer.media_type.as_str() {
            TOOL_TAR | SOURCE_TAR => untar(&layer.bytes, &mut caps)?,
            WASM_LAYER | LOCKFILE if config_type == WASM_CONFIG => {
                let path = titled(&layer.media_type)?;
                caps.push(FileAt {
                    path,
                    bytes: layer.bytes,
                    executable: false,
                })?;
            }
            TOOL_MANIFEST => caps.push(FileAt {
                path: manifest::FILE_NAME.into(),
                bytes: layer.bytes,
                executable: false,
            })?,
            other => {
                return Err(not(format!(
                    "it holds a layer of media type {other:?}, which toolsmith does not know"
                )));
            }
        }
    }
    let mut files = caps.files;
    if !files.iter().any(|f| f.path == manifest::FILE_NAME) {
        return Err(not("it holds no tool.toml".into()));
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str, bytes: &[u8]) -> FileAt {
        FileAt {
            path: path.into(),
            bytes: bytes.to_vec(),
            executable: false,
        }
    }

    #[test]
    fn a_tar_round_trips_and_is_deterministic() {
        let files = [f("b/x.py", b"print(1)"), f("tool.toml", b"name = \"t\"")];
        let refs: Vec<&FileAt> = files.iter().collect();
        let a = tar_of("t", &refs).unwrap();
        assert_eq!(a, tar_of("t", &refs).unwrap());
        let out = unpack(
            TOOL_CONFIG,
            vec![Blob {
                media_type: TOOL_TAR.into(),
                bytes: a,
                title: None,
            }],
        )
        .unwrap();
        assert_eq!(out, files.to_vec());
    }

    #[test]
    fn unknown_media_types_links_and_escapes_are_refused() {
        let err = unpack("application/vnd.oci.image.config.v1+json", vec![]).unwrap_err();
        assert!(err.to_string().contains("config media type"), "{err}");
        let err = unpack(
            TOOL_CONFIG,
            vec![Blob {
                media_type: "application/x-evil".into(),
                bytes: vec![],
                title: None,
            }],
        )
        .unwrap_err();
        assert!(err.to_string().contains("application/x-evil"), "{err}");

        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        b.append_link(&mut h, "tool.toml", "/etc/passwd").unwrap();
        let tar = b.into_inner().unwrap();
        let err = unpack(
            TOOL_CONFIG,
            vec![Blob {
                media_type: TOOL_TAR.into(),
                bytes: tar,
                title: None,
            }],
        )
        .unwrap_err();
        assert!(matches!(err, ShareError::Symlink { .. }), "{err}");

        for evil in ["../x", "a/../../x", ".git/config"] {
            assert!(checked_path(evil).is_err(), "{evil}");
        }
        assert_eq!(checked_path("./src/lib.rs").unwrap(), "src/lib.rs");
    }
}
