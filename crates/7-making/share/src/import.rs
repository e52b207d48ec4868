//! `import_tool`: bring one tool, or every tool of another toolbox, from a git repository or
//! a Gist into this toolbox as one commit, pinned to the fetched commit with `[origin]`; or
//! one tool from an OCI registry (`oci://…`), pinned to its manifest digest.

use super::fetch::{Fetched, clean_path, fetch};
use super::prepare::{Naming, Prepared, prepare, prepare_files};
use super::{DEFAULT_GIST_BASE, ShareError};
use crate::error::Hint;
use crate::history::change_to;
use crate::index::TOOLS_DIR;
use crate::manifest::{self, Origin};
use crate::toolbox::{Actor, Toolbox};
use serde::Serialize;

/// What to import.
#[derive(Debug, Clone, Default)]
pub struct ImportRequest {
    /// A git URL (file://, git://, ssh://, https://), a local path, a Gist URL, `gist:<id>`,
    /// a bare Gist id, or an OCI artifact `oci://REGISTRY/REPO:TAG` (or `@sha256:…`).
    pub source: String,
    /// Branch, tag or commit (default: the remote's HEAD).
    pub reference: Option<String>,
    /// The tool's directory in the repository, or a toolbox (or its `tools/`) to import every
    /// tool of it. Default: the root.
    pub path: Option<String>,
    /// Import under this name instead (only when one tool is imported).
    pub name: Option<String>,
    /// Where Gists live (`Config::gist_base`); None: https://gist.github.com.
    pub gist_base: Option<String>,
}

/// One imported tool.
#[derive(Debug, Clone, Serialize)]
pub struct ImportedTool {
    /// Its name in this toolbox.
    pub name: String,
    /// Its kind.
    pub kind: String,
    /// Its description.
    pub description: String,
    /// Its directory in the source repository.
    pub path: String,
    /// None for a tool.toml tool; else what it was converted from.
    pub converted_from: Option<&'static str>,
    /// The tool.toml the conversion wrote.
    pub inferred_manifest: Option<String>,
    /// What the conversion assumed.
    pub notes: Vec<String>,
    /// What the person should check (validation warnings, capabilities asked).
    pub warnings: Vec<String>,
}

/// The result of an import.
#[derive(Debug, Clone, Serialize)]
pub struct ImportOutcome {
    /// The source as resolved.
    pub url: String,
    /// The source's commit the tools were taken from.
    pub source_commit: String,
    /// The tools imported.
    pub tools: Vec<ImportedTool>,
    /// The commit in this toolbox.
    pub commit: Option<String>,
    /// Directories of a multi-tool import that were not imported, each with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<Refused>,
}

/// A directory an import of several tools left out, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Refused {
    /// The directory in the source.
    pub path: String,
    /// Why it was left out.
    pub reason: String,
    /// What to do.
    pub hint: Option<String>,
}

/// Map a source to (git URL, is it a Gist), Gists living at `gist_base` (default
/// `DEFAULT_GIST_BASE`).
pub fn resolve_source(source: &str, gist_base: Option<&str>) -> (String, bool) {
    let base = gist_base
        .unwrap_or(DEFAULT_GIST_BASE)
        .trim_end_matches('/')
        .to_string();
    let gist = |id: &str| (format!("{base}/{}.git", id.trim_end_matches(".git")), true);
    let s = source.trim();
    if let Some(id) = s.strip_prefix("gist:") {
        return gist(id.trim_matches('/'));
    }
    if s.starts_with(&base) {
        return (s.to_string(), true);
    }
    if s.contains("gist.github.com/") {
        let id = s.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        return gist(id);
    }
    let is_id = (20..=40).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit());
    if is_id && !std::path::Path::new(s).exists() {
        return gist(s);
    }
    match std::path::Path::new(s).canonicalize() {
        Ok(p) if !s.contains("://") => (p.display().to_string(), false),
        _ => (s.to_string(), false),
    }
}

const TOOL_FILES: &[&str] = &[manifest::FILE_NAME, "manifest.json", "SKILL.md"];

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}/{b}")
    }
}

/// The tool directories to import under `base`.
fn discover(fetched: &Fetched, base: &str, gist: bool) -> Result<Vec<String>, ShareError> {
    let entries = fetched.list(base)?;
    let has_tool_file = entries
        .iter()
        .any(|(n, d)| !d && TOOL_FILES.contains(&n.as_str()));
    if has_tool_file || (gist && base.is_empty()) {
        return Ok(vec![base.to_string()]);
    }
    if entries.iter().any(|(n, d)| *d && n == TOOLS_DIR) {
        return discover_all(fetched, &join(base, TOOLS_DIR));
    }
    let found = discover_all(fetched, base)?;
    if found.is_empty() {
        return Err(ShareError::NotATool {
            path: if base.is_empty() {
                "(repository root)".into()
            } else {
                base.to_string()
            },
            reason:
                "there is no tool.toml, manifest.json or SKILL.md there, and no tools/ directory"
                    .into(),
        });
    }
    Ok(found)
}

fn discover_all(fetched: &Fetched, dir: &str) -> Result<Vec<String>, ShareError> {
    let mut out = Vec::new();
    for (n, is_dir) in fetched.list(dir)? {
        if !is_dir || n.starts_with('.') {
            continue;
        }
        let sub = join(dir, &n);
        if fetched
            .list(&sub)?
            .iter()
            .any(|(f, d)| !d && TOOL_FILES.contains(&f.as_str()))
        {
            out.push(sub);
        }
    }
    Ok(out)
}

/// Import per `req`, as one commit. Refused as a whole when any tool is refused.
pub fn import_tool(
    tb: &Toolbox,
    req: &ImportRequest,
    actor: impl Into<Actor>,
) -> Result<ImportOutcome, ShareError> {
    let actor: Actor = actor.into();
    if super::oci::is_oci(&req.source) {
        return import_oci(tb, req, actor);
    }
    let (url, gist) = resolve_source(&req.source, req.gist_base.as_deref());
    let base = clean_path(req.path.as_deref().unwrap_or(""))?;
    let fetched = fetch(&url, req.reference.as_deref())?;
    let dirs = discover(&fetched, &base, gist)?;
    if req.name.is_some() && dirs.len() > 1 {
        return Err(ShareError::Unsupported {
            what: "a new name".into(),
            reason: format!(
                "{} tools are being imported; a name applies to one tool (pass `path` to pick it)",
                dirs.len()
            ),
        });
    }
    if dirs.len() > super::MAX_IMPORT_FILES {
        return Err(ShareError::TooManyFiles {
            path: "the import".into(),
            limit: super::MAX_IMPORT_FILES,
        });
    }
    let mut prepared: Vec<(Prepared, String)> = Vec::new();
    let (mut total_bytes, mut total_files) = (0u64, 0usize);
    let mut refused = Vec::new();
    for dir in &dirs {
        let p = prepare(
            &fetched,
            dir,
            gist && dir.is_empty(),
            Naming::Import(req.name.as_deref()),
            req.reference.as_deref(),
        )
        .and_then(|p| {
            // A skill's tools come in together or not at all.
            match p.tools.iter().find(|t| {
                tb.tools_dir().join(&t.name).exists()
                    || prepared.iter().any(|(q, _)| q.name == t.name)
            }) {
                Some(t) => Err(ShareError::Exists {
                    name: t.name.clone(),
                }),
                None => Ok(p),
            }
        });
        match p {
            Ok(p) => {
                // Caps over the whole import, checked as each tool is read (one tool is capped by
                // the fetch itself), so memory stays bounded too.
                for t in &p.tools {
                    total_files += t.files.len();
                    total_bytes += t.files.iter().map(|f| f.bytes.len() as u64).sum::<u64>();
                }
                if total_files > super::MAX_IMPORT_FILES {
                    return Err(ShareError::TooManyFiles {
                        path: "the import".into(),
                        limit: super::MAX_IMPORT_FILES,
                    });
                }
                if total_bytes > super::MAX_IMPORT_BYTES {
                    return Err(ShareError::TooLarge {
                        path: "the import".into(),
                        size: total_bytes,
                        limit: super::MAX_IMPORT_BYTES,
                    });
                }
                prepared.extend(p.tools.into_iter().map(|t| (t, dir.clone())));
            }
            // A folder of several tools imports what it can and reports the rest.
            Err(e) if dirs.len() > 1 => refused.push(Refused {
                path: dir.clone(),
                hint: e.hint(),
                reason: e.to_string(),
            }),
            Err(e) => return Err(e),
        }
    }
    if prepared.is_empty() {
        let reasons: Vec<String> = refused
            .iter()
            .map(|r| format!("{}: {}", r.path, r.reason))
            .collect();
        return Err(ShareError::NotATool {
            path: if base.is_empty() {
                "(repository root)".into()
            } else {
                base.clone()
            },
            reason: format!(
                "none of its tools could be imported: {}",
                reasons.join("; ")
            ),
        });
    }
    let short = &fetched.commit[..10];
    let names: Vec<&str> = prepared.iter().map(|(p, _)| p.name.as_str()).collect();
    let mut msg = format!("import {}: from {url} at {short}\n\n", names.join(", "));
    msg.push_str(&format!(
        "Source: {url}\nSource-Commit: {}\n\n",
        fetched.commit
    ));
    for n in &names {
        msg.push_str(&format!("Tool: {n}\n"));
    }
    msg.push_str(&actor.trailers());
    let changes: Vec<(String, crate::toolbox::Change)> = prepared
        .iter()
        .map(|(p, _)| (p.name.clone(), change_to(p.files.clone(), false)))
        .collect();
    let commit = tb.apply(&changes, &msg)?;
    Ok(ImportOutcome {
        url: url.clone(),
        source_commit: fetched.commit.clone(),
        tools: prepared
            .into_iter()
            .map(|(p, dir)| ImportedTool {
                kind: p.tool.manifest.kind.as_str().to_string(),
                description: p.tool.manifest.description.clone(),
                name: p.name,
                path: dir,
                converted_from: p.converted.converted_from,
                inferred_manifest: p.converted.inferred_manifest,
                notes: p.converted.notes,
                warnings: p.warnings,
            })
            .collect(),
        commit,
        refused,
    })
}

/// Import the one tool an OCI artifact holds, pinned to its manifest digest.
fn import_oci(
    tb: &Toolbox,
    req: &ImportRequest,
    actor: Actor,
) -> Result<ImportOutcome, ShareError> {
    for (field, given) in [("ref", &req.reference), ("path", &req.path)] {
        if given.is_some() {
            return Err(ShareError::OciReference {
                reference: req.source.clone(),
                reason: format!(
                    "`{field}` applies to git sources; an OCI artifact holds one tool, named by its tag or digest in the reference"
                ),
            });
        }
    }
    let pulled = super::oci::pull(&req.source)?;
    let origin = Origin {
        url: pulled.url.clone(),
        reference: pulled.tag.clone(),
        commit: None,
        path: None,
        digest: Some(pulled.digest.clone()),
        script: None,
    };
    let mut dir = prepare_files(
        pulled.files,
        "",
        false,
        Naming::Import(req.name.as_deref()),
        origin,
    )?;
    let p = match (dir.tools.pop(), dir.tools.is_empty()) {
        (Some(p), true) => p,
        _ => {
            return Err(ShareError::OciNotATool {
                reference: req.source.clone(),
                reason: "it holds more than one tool".into(),
            });
        }
    };
    if tb.tools_dir().join(&p.name).exists() {
        return Err(ShareError::Exists { name: p.name });
    }
    let shown = match &pulled.tag {
        Some(t) => format!("{}:{t}", pulled.url),
        None => pulled.url.clone(),
    };
    let mut msg = format!(
        "import {}: from {shown} at {}\n\n",
        p.name,
        &pulled.digest[..19.min(pulled.digest.len())]
    );
    msg.push_str(&format!(
        "Source: {shown}\nSource-Digest: {}\n\nTool: {}\n",
        pulled.digest, p.name
    ));
    msg.push_str(&actor.trailers());
    let commit = tb.apply(&[(p.name.clone(), change_to(p.files.clone(), false))], &msg)?;
    Ok(ImportOutcome {
        url: shown,
        source_commit: pulled.digest,
        tools: vec![ImportedTool {
            kind: p.tool.manifest.kind.as_str().to_string(),
            description: p.tool.manifest.description.clone(),
            name: p.name,
            path: String::new(),
            converted_from: p.converted.converted_from,
            inferred_manifest: p.converted.inferred_manifest,
            notes: p.converted.notes,
            warnings: p.warnings,
        }],
        commit,
        refused: Vec::new(),
    })
}
