//! OCI registries: publish a tool as an artifact (`export_tool --oci REGISTRY/REPO:TAG`) and
//! pull one back for `import_tool oci://REGISTRY/REPO:TAG` (or `@sha256:…`), with the
//! maintained `oci-client` crate. The layout of the blobs is `oci_layout`'s.
//!
//! Invariants: every blob pulled is checked against its descriptor (sha256 and size) and the
//! manifest against the digest asked for, before anything is unpacked; sizes are capped before
//! a byte is downloaded; credentials come only from the docker config file (`DOCKER_CONFIG`
//! or `~/.docker/config.json`, credential helpers included); plain HTTP is used only for
//! loopback registries (`localhost`, 127.0.0.0/8, `[::1]`), TLS everywhere else.

use super::oci_layout::{self, Blob, MAX_LAYERS, OCI_MANIFEST, TITLE};
use super::{MAX_TOOL_BYTES, ShareError};
use crate::hashing::sha256_bytes;
use crate::history::{self, FileAt};
use crate::names;
use crate::toolbox::Toolbox;
use futures::TryStreamExt;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// The scheme `import_tool` takes for OCI references.
pub const SCHEME: &str = "oci://";
/// Largest manifest accepted (the distribution spec's recommended limit).
const MAX_MANIFEST_BYTES: usize = 4 * 1024 * 1024;

/// Whether an import source names an OCI artifact.
pub fn is_oci(source: &str) -> bool {
    source.trim().starts_with(SCHEME)
}

/// Parse `[oci://]REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]`. The registry host must be
/// written out: a bare `name:tag` would silently mean Docker Hub.
pub fn parse_reference(text: &str) -> Result<Reference, ShareError> {
    let bad = |reason: &str| ShareError::OciReference {
        reference: text.to_string(),
        reason: reason.to_string(),
    };
    let raw = text.trim();
    let raw = raw.strip_prefix(SCHEME).unwrap_or(raw);
    if raw.contains("://") {
        return Err(bad(
            "only oci:// names an OCI artifact (the registry decides http or https: plain HTTP only on loopback)",
        ));
    }
    let first = raw.split('/').next().unwrap_or("");
    let has_host =
        raw.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    if !has_host {
        return Err(bad("it names no registry host"));
    }
    let name = raw[first.len()..].split('@').next().unwrap_or("");
    let repo = match name.rsplit_once('/') {
        Some((dirs, last)) => format!("{dirs}/{}", last.split(':').next().unwrap_or("")),
        None => name.to_string(),
    };
    if repo.chars().any(|c| c.is_ascii_uppercase()) {
        return Err(bad("the repository must be lowercase"));
    }
    if let Some((_, digest)) = raw.split_once('@') {
        let hex = digest.strip_prefix("sha256:").unwrap_or("");
        let ok = hex.len() == 64 && hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'));
        if !ok {
            return Err(bad(
                "after '@' comes a digest: sha256: and 64 lowercase hex digits",
            ));
        }
    }
    Reference::try_from(raw).map_err(|e| bad(&e.to_string()))
}

/// Whether a registry address (`host[:port]`) is this machine.
fn is_loopback(registry: &str) -> bool {
    let host = if let Some(rest) = registry.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        registry.rsplit_once(':').map_or(registry, |(h, _)| h)
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn client_for(reference: &Reference) -> Client {
    toolsmith_platform::tls::install();
    let registry = reference.resolve_registry().to_string();
    let protocol = if is_loopback(&registry) {
        ClientProtocol::HttpsExcept(vec![registry])
    } else {
        ClientProtocol::Https
    };
    Client::new(ClientConfig {
        protocol,
        connect_timeout: Some(Duration::from_secs(15)),
        read_timeout: Some(Duration::from_secs(120)),
        platform_resolver: None,
        ..Default::default()
    })
}

/// The docker config file: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`.
fn docker_config() -> Option<std::path::PathBuf> {
    std::env::var_os("DOCKER_CONFIG")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".docker")))
        .map(|d| d.join("config.json"))
}

/// The credentials for the reference's registry from the docker config file (credential
/// helpers included); anonymous when there is no file or no entry for the registry. A file
/// that cannot be read or parsed is an error, not anonymous access.
fn auth_for(reference: &Reference) -> Result<RegistryAuth, ShareError> {
    use docker_credential::{CredentialRetrievalError as E, DockerCredential};
    let server = reference.resolve_registry();
    let Some(path) = docker_config().filter(|p| p.exists()) else {
        return Ok(RegistryAuth::Anonymous);
    };
    let failed = |e: String| ShareError::OciRegistry {
        reference: reference.whole(),
        message: format!(
            "reading the credentials for {server} from {}: {e}",
            path.display()
        ),
    };
    let file = std::fs::File::open(&path).map_err(|e| failed(e.to_string()))?;
    match docker_credential::get_credential_from_reader(std::io::BufReader::new(file), server) {
        Ok(DockerCredential::UsernamePassword(user, password)) => {
            Ok(RegistryAuth::Basic(user, password))
        }
        Ok(DockerCredential::IdentityToken(token)) => Ok(RegistryAuth::Bearer(token)),
        Err(E::NoCredentialConfigured) => Ok(RegistryAuth::Anonymous),
        Err(e) => Err(failed(e.to_string())),
    }
}

fn registry_err(reference: &Reference, e: OciDistributionError) -> ShareError {
    let whole = reference.whole();
    match e {
        OciDistributionError::ImageManifestNotFoundError(_) => {
            ShareError::OciNotFound { reference: whole }
        }
        OciDistributionError::RegistryError { ref envelope, .. }
            if envelope.errors.iter().any(|x| {
                matches!(
                    x.code,
                    oci_client::errors::OciErrorCode::ManifestUnknown
                        | oci_client::errors::OciErrorCode::NameUnknown
                )
            }) =>
        {
            ShareError::OciNotFound { reference: whole }
        }
        OciDistributionError::DigestError(d) => ShareError::OciDigest {
            reference: whole,
            what: "the manifest".into(),
            detail: d.to_string(),
        },
        other => {
            // reqwest's message alone ("error sending request") hides the cause.
            let mut message = other.to_string();
            let mut source = std::error::Error::source(&other);
            while let Some(s) = source {
                message.push_str(&format!(": {s}"));
                source = s.source();
            }
            ShareError::OciRegistry {
                reference: whole,
                message,
            }
        }
    }
}

/// Run async registry work to completion from synchronous code (CLI, or a blocking task of
/// the server), on a thread of its own so that no caller's runtime is re-entered.
fn run<T: Send>(
    work: impl std::future::Future<Output = Result<T, ShareError>> + Send,
) -> Result<T, ShareError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| ShareError::OciRegistry {
                    reference: String::new(),
                    message: format!("cannot start an async runtime: {e}"),
                })?
                .block_on(work)
        })
        .join()
        .unwrap_or_else(|_| {
            Err(ShareError::OciRegistry {
                reference: String::new(),
                message: "the registry client panicked".into(),
            })
        })
    })
}

/// One layer (or the config) of a published artifact.
#[derive(Debug, Clone, Serialize)]
pub struct LayerInfo {
    /// Its media type.
    pub media_type: String,
    /// Its digest (`sha256:…`).
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its title annotation (a file name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// What `export_tool --oci` published.
#[derive(Debug, Clone, Serialize)]
pub struct OciExportOutcome {
    /// The tool.
    pub tool: String,
    /// Its kind.
    pub kind: String,
    /// The reference pushed to, as given (normalized).
    pub reference: String,
    /// The manifest digest: pull exactly this with `oci://REGISTRY/REPO@DIGEST`.
    pub digest: String,
    /// `oci://…@sha256:…`, ready for `import_tool`.
    pub pinned: String,
    /// The artifact's config blob.
    pub config: LayerInfo,
    /// Its layers.
    pub layers: Vec<LayerInfo>,
    /// The toolbox commit the tool's files were taken from.
    pub source_commit: String,
}

fn descriptor(b: &Blob) -> OciDescriptor {
    OciDescriptor {
        media_type: b.media_type.clone(),
        digest: sha256_bytes(&b.bytes),
        size: b.bytes.len() as i64,
        urls: None,
        artifact_type: None,
        annotations: b.title.as_ref().map(|t| {
            let mut a = BTreeMap::new();
            a.insert(TITLE.to_string(), t.clone());
            a
        }),
    }
}

fn info(b: &Blob) -> LayerInfo {
    LayerInfo {
        media_type: b.media_type.clone(),
        digest: sha256_bytes(&b.bytes),
        size: b.bytes.len() as u64,
        title: b.title.clone(),
    }
}

/// Publish tool `name` as committed at HEAD to `target` (`[oci://]REGISTRY/REPO[:TAG]`).
pub fn export_oci(tb: &Toolbox, name: &str, target: &str) -> Result<OciExportOutcome, ShareError> {
    names::validate(name).map_err(|source| ShareError::BadName {
        name: name.to_string(),
        source,
    })?;
    let reference = parse_reference(target)?;
    if reference.digest().is_some() {
        return Err(ShareError::OciReference {
            reference: target.to_string(),
            reason: "a digest is computed from what is published; push to a tag".into(),
        });
    }
    super::export::not_held(tb, name)?;
    let head = crate::git::resolve(tb.root(), "HEAD").map_err(history::HistoryError::from)?;
    let at = history::tool_at(tb, name, &head)?;
    let text = at.manifest_text().ok_or_else(|| ShareError::NotATool {
        path: name.to_string(),
        reason: "it has no committed tool.toml".into(),
    })?;
    let parsed = crate::manifest::parse(std::path::Path::new(""), None, text).map_err(|d| {
        ShareError::Invalid {
            name: name.to_string(),
            errors: d
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        }
    })?;
    let packed = oci_layout::pack(name, &parsed.manifest, &at.files)?;
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_MANIFEST.to_string()),
        config: descriptor(&packed.config),
        layers: packed.layers.iter().map(descriptor).collect(),
        subject: None,
        artifact_type: packed.artifact_type.clone(),
        annotations: Some(packed.annotations.clone()),
    };
    let body = serde_json::to_vec(&manifest).map_err(|e| ShareError::OciRegistry {
        reference: reference.whole(),
        message: format!("cannot serialize the manifest: {e}"),
    })?;
    let digest = sha256_bytes(&body);
    let blobs: Vec<Blob> = std::iter::once(packed.config.clone())
        .chain(packed.layers.iter().cloned())
        .collect();
    let r = reference.clone();
    run(async move {
        let client = client_for(&r);
        let auth = auth_for(&r)?;
        client
            .store_auth_if_needed(r.resolve_registry(), &auth)
            .await;
        for b in blobs {
            let d = sha256_bytes(&b.bytes);
            if client.blob_exists(&r, &d).await.unwrap_or(false) {
                continue;
            }
            client
                .push_blob(&r, b.bytes, &d)
                .await
                .map_err(|e| registry_err(&r, e))?;
        }
        let content_type = http::HeaderValue::from_static(OCI_MANIFEST);
        client
            .push_manifest_raw(&r, body, content_type)
            .await
            .map_err(|e| registry_err(&r, e))?;
        Ok(())
    })?;
    let repo = format!("{}/{}", reference.registry(), reference.repository());
    Ok(OciExportOutcome {
        tool: name.to_string(),
        kind: parsed.manifest.kind.as_str().to_string(),
        reference: format!("{SCHEME}{}", reference.whole()),
        pinned: format!("{SCHEME}{repo}@{digest}"),
        digest,
        config: info(&packed.config),
        layers: packed.layers.iter().map(info).collect(),
        source_commit: head,
    })
}

/// A pulled, verified artifact.
#[derive(Debug)]
pub struct Pulled {
    /// `oci://REGISTRY/REPO`, for `[origin] url`.
    pub url: String,
    /// The tag asked for, for `[origin] ref`.
    pub tag: Option<String>,
    /// The manifest digest, for `[origin] digest`.
    pub digest: String,
    /// The tool directory the artifact holds.
    pub files: Vec<FileAt>,
}

/// Read one blob, refusing it before download when its descriptor is over `limit` and after
/// when its bytes do not match the descriptor's size and sha256.
async fn pull_blob(
    client: &Client,
    reference: &Reference,
    desc: &OciDescriptor,
    limit: u64,
) -> Result<Vec<u8>, ShareError> {
    let whole = reference.whole();
    let what = match desc.annotations.as_ref().and_then(|a| a.get(TITLE)) {
        Some(t) => format!("the layer {t} ({})", desc.media_type),
        None => format!("the blob of type {}", desc.media_type),
    };
    if !desc.digest.starts_with("sha256:") {
        return Err(ShareError::OciNotATool {
            reference: whole,
            reason: format!(
                "{what} has digest {:?}: only sha256 is accepted",
                desc.digest
            ),
        });
    }
    let size = u64::try_from(desc.size).unwrap_or(u64::MAX);
    if size > limit {
        return Err(ShareError::TooLarge {
            path: what,
            size,
            limit,
        });
    }
    let mut stream = client
        .pull_blob_stream(reference, desc)
        .await
        .map_err(|e| registry_err(reference, e))?;
    let mut out = Vec::with_capacity(size as usize);
    // oci-client verifies the digest at the end of the stream too; a failure there is
    // reported below from the bytes themselves, so the message is the same either way.
    let mut failure = None;
    loop {
        match stream.try_next().await {
            Ok(Some(chunk)) => {
                out.extend_from_slice(&chunk);
                if out.len() as u64 > size {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let actual = sha256_bytes(&out);
    if out.len() as u64 != size || actual != desc.digest {
        if failure.is_some() && (out.len() as u64) < size {
            // Cut short rather than altered.
            return Err(ShareError::OciRegistry {
                reference: whole,
                message: format!(
                    "reading {what}: {}",
                    failure.map(|e| e.to_string()).unwrap_or_default()
                ),
            });
        }
        return Err(ShareError::OciDigest {
            reference: whole,
            what,
            detail: format!(
                "the manifest says {} ({size} bytes), the registry sent {actual} ({} bytes)",
                desc.digest,
                out.len()
            ),
        });
    }
    if let Some(e) = failure {
        return Err(ShareError::OciRegistry {
            reference: whole,
            message: format!("reading {what}: {e}"),
        });
    }
    Ok(out)
}

/// Pull `source` (`oci://REGISTRY/REPO:TAG` or `…@sha256:…`), verify every digest and
/// return the tool directory it holds. Nothing is written and nothing is run.
pub fn pull(source: &str) -> Result<Pulled, ShareError> {
    let reference = parse_reference(source)?;
    let r = reference.clone();
    let (digest, files) = run(async move {
        let client = client_for(&r);
        let auth = auth_for(&r)?;
        let (body, _) = client
            .pull_manifest_raw(&r, &auth, &[OCI_MANIFEST])
            .await
            .map_err(|e| registry_err(&r, e))?;
        let whole = r.whole();
        if body.len() > MAX_MANIFEST_BYTES {
            return Err(ShareError::TooLarge {
                path: "the manifest".into(),
                size: body.len() as u64,
                limit: MAX_MANIFEST_BYTES as u64,
            });
        }
        // The digest pinned is the one of the bytes read, checked against the one asked for.
        let digest = sha256_bytes(&body);
        if let Some(expected) = r.digest()
            && expected != digest
        {
            return Err(ShareError::OciDigest {
                reference: whole,
                what: "the manifest".into(),
                detail: format!("asked for {expected}, the registry sent {digest}"),
            });
        }
        let manifest: OciImageManifest =
            serde_json::from_slice(&body).map_err(|e| ShareError::OciNotATool {
                reference: whole.clone(),
                reason: format!("its manifest is not an OCI image manifest: {e}"),
            })?;
        if manifest
            .media_type
            .as_deref()
            .is_some_and(|m| m != OCI_MANIFEST)
            || manifest.schema_version != 2
        {
            return Err(ShareError::OciNotATool {
                reference: whole,
                reason: format!(
                    "its manifest has media type {:?} and schema version {}, not an OCI image manifest (2)",
                    manifest.media_type, manifest.schema_version
                ),
            });
        }
        if manifest.layers.len() > MAX_LAYERS {
            return Err(ShareError::TooManyFiles {
                path: "the artifact's layers".into(),
                limit: MAX_LAYERS,
            });
        }
        let total: u64 = manifest
            .layers
            .iter()
            .map(|l| u64::try_from(l.size).unwrap_or(u64::MAX))
            .fold(0u64, u64::saturating_add);
        if total > MAX_TOOL_BYTES {
            return Err(ShareError::TooLarge {
                path: "the artifact".into(),
                size: total,
                limit: MAX_TOOL_BYTES,
            });
        }
        // The config is read and verified too (every digest), though only its type matters.
        pull_blob(&client, &r, &manifest.config, 64 * 1024).await?;
        let mut layers = Vec::new();
        for desc in &manifest.layers {
            let bytes = pull_blob(&client, &r, desc, MAX_TOOL_BYTES).await?;
            layers.push(Blob {
                media_type: desc.media_type.clone(),
                bytes,
                title: desc
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(TITLE))
                    .cloned(),
            });
        }
        let files =
            oci_layout::unpack(&manifest.config.media_type, layers).map_err(|e| match e {
                ShareError::NotATool { reason, .. } => ShareError::OciNotATool {
                    reference: whole,
                    reason,
                },
                other => other,
            })?;
        Ok((digest, files))
    })?;
    Ok(Pulled {
        url: format!(
            "{SCHEME}{}/{}",
            reference.registry(),
            reference.repository()
        ),
        tag: reference
            .digest()
            .is_none()
            .then(|| reference.tag().map(str::to_string))
            .flatten(),
        digest,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Hint;

    #[test]
    fn references_need_a_registry_and_a_known_scheme() {
        let r = parse_reference("oci://127.0.0.1:5000/tools/slugify:1.0").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "tools/slugify");
        assert_eq!(r.tag(), Some("1.0"));
        for bad in [
            "oci://slugify:1.0",
            "https://ghcr.io/a/b:1",
            "oci://ghcr.io/A/b:1",
            "oci://ghcr.io/a/b@sha256:123",
            "oci://",
        ] {
            let e = parse_reference(bad).unwrap_err();
            assert!(e.hint().is_some_and(|h| h.contains("oci://")), "{bad}: {e}");
        }
    }

    #[test]
    fn plain_http_only_for_loopback() {
        for yes in [
            "127.0.0.1:5000",
            "localhost:5000",
            "[::1]:5000",
            "127.1.2.3",
        ] {
            assert!(is_loopback(yes), "{yes}");
        }
        for no in [
            "ghcr.io",
            "10.0.0.1:5000",
            "localhost.example.com:5000",
            "[::2]:1",
        ] {
            assert!(!is_loopback(no), "{no}");
        }
    }
}
