//! `import_tool`: bring one tool, or every tool of another toolbox, from a git repository or
//! a Gist into this toolbox as one commit, pinned to the fetched commit with `[origin]`; or
//! one tool from an OCI registry (`oci://…`), pinned to its manifest digest.

use super::convert;
use super::converted::Converted;
use super::fetch::{Fetched, clean_path, fetch};
use super::{DEFAULT_GIST_BASE, ShareError};
use crate::error::Hint;
use crate::hashing::sha256_bytes;
use crate::history::{FileAt, change_to, write_files};
use crate::index::{Index, Status, TOOLS_DIR};
use crate::manifest::{self, Kind, Origin};
use crate::names;
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
    pub name: String,
    pub kind: String,
    pub description: String,
    /// Its directory in the source repository.
    pub path: String,
    pub converted_from: Option<&'static str>,
    pub inferred_manifest: Option<String>,
    pub notes: Vec<String>,
    pub warnings: Vec<String>,
}

/// The result of an import.
#[derive(Debug, Clone, Serialize)]
pub struct ImportOutcome {
    pub url: String,
    pub source_commit: String,
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
    pub path: String,
    pub reason: String,
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

/// Set `name` and replace `[origin]` in a tool.toml, keeping the rest as written.
pub(crate) fn set_origin(text: &str, name: &str, origin: &Origin) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    doc["name"] = toml_edit::value(name);
    let mut t = toml_edit::Table::new();
    t.decor_mut().set_prefix("\n");
    t["url"] = toml_edit::value(&origin.url);
    if let Some(r) = &origin.reference {
        t["ref"] = toml_edit::value(r);
    }
    if let Some(c) = &origin.commit {
        t["commit"] = toml_edit::value(c);
    }
    if let Some(p) = origin.path.as_ref().filter(|p| !p.is_empty()) {
        t["path"] = toml_edit::value(p);
    }
    if let Some(d) = &origin.digest {
        t["digest"] = toml_edit::value(d);
    }
    if let Some(s) = &origin.script {
        t["script"] = toml_edit::value(s);
    }
    doc.remove("origin");
    doc.insert("origin", toml_edit::Item::Table(t));
    Ok(doc.to_string())
}

/// A tool from the repository, converted, renamed, with its origin, and validated.
pub(crate) struct Prepared {
    pub converted: Converted,
    pub name: String,
    pub files: Vec<FileAt>,
    pub tool: crate::index::Tool,
    pub warnings: Vec<String>,
}

/// How the tools of a directory are named.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Naming<'a> {
    /// An import: each tool's own name; a given name renames the one tool, or is the base of
    /// the names of an Agent Skill's several script tools (`<name>-<script>`).
    Import(Option<&'a str>),
    /// An update: the tools already here, each with the skill script it runs (`[origin]
    /// script`; None for the directory's only tool).
    Existing(&'a [(String, Option<String>)]),
}

/// The tools of one directory, prepared.
pub(crate) struct PreparedDir {
    pub tools: Vec<Prepared>,
    /// (Update) scripts of the skill that no tool here runs: new since the import.
    pub new_scripts: Vec<String>,
    /// (Update) tools here whose script the skill no longer has, with that script.
    pub gone: Vec<(String, String)>,
}

/// Read `dir` of the fetched commit, convert it, name its tools per `naming`, give them
/// `[origin]`, and validate them like any tool in a toolbox. Nothing is run.
pub(crate) fn prepare(
    fetched: &Fetched,
    dir: &str,
    gist: bool,
    naming: Naming<'_>,
    reference: Option<&str>,
) -> Result<PreparedDir, ShareError> {
    let origin = Origin {
        url: fetched.url.clone(),
        reference: reference.map(str::to_string),
        commit: Some(fetched.commit.clone()),
        path: Some(dir.to_string()),
        digest: None,
        script: None,
    };
    prepare_files(fetched.read_dir(dir)?, dir, gist, naming, origin)
}

/// `prepare` for files already read from a source: convert, name, set `origin`, validate.
pub(crate) fn prepare_files(
    files: Vec<FileAt>,
    dir: &str,
    gist: bool,
    naming: Naming<'_>,
    origin: Origin,
) -> Result<PreparedDir, ShareError> {
    let dir_name = dir.rsplit('/').next().unwrap_or("");
    let mut converted: Vec<Option<Converted>> = convert::convert(files, dir_name, gist)?
        .into_iter()
        .map(Some)
        .collect();
    let several = converted.len() > 1;
    let mut chosen: Vec<(Converted, String)> = Vec::new();
    let mut gone = Vec::new();
    match naming {
        Naming::Import(name) => {
            for c in converted.iter_mut().filter_map(Option::take) {
                let n = match (&c.script, name) {
                    (Some(s), Some(base)) if several => {
                        super::skill::script_tool_name(base, &s.suffix)
                    }
                    (_, Some(n)) => n.to_string(),
                    (_, None) => c.name.clone(),
                };
                chosen.push((c, n));
            }
        }
        Naming::Existing(tools) => {
            let count = converted.len();
            for (tool, script) in tools {
                let at = match script {
                    // By its script; a one-tool skill whose one script was renamed follows it.
                    Some(s) => converted
                        .iter()
                        .position(|c| {
                            c.as_ref()
                                .and_then(|c| c.script.as_ref())
                                .is_some_and(|c| c.path == *s)
                        })
                        .or((count == 1 && tools.len() == 1).then_some(0)),
                    None if count == 1 => Some(0),
                    None => {
                        return Err(ShareError::SkillSplit {
                            name: tool.clone(),
                            path: dir.to_string(),
                            count,
                        });
                    }
                };
                match at.and_then(|i| converted[i].take()) {
                    Some(c) => chosen.push((c, tool.clone())),
                    None => gone.push((tool.clone(), script.clone().unwrap_or_default())),
                }
            }
        }
    }
    let new_scripts = converted
        .into_iter()
        .flatten()
        .map(|c| c.script.map_or(c.name, |s| s.path))
        .collect();
    let mut tools = Vec::new();
    for (c, name) in chosen {
        let mut origin = origin.clone();
        origin.script = c
            .script
            .as_ref()
            .filter(|_| several)
            .map(|s| s.path.clone());
        tools.push(validate_one(c, name, &origin)?);
    }
    Ok(PreparedDir {
        tools,
        new_scripts,
        gone,
    })
}

/// Give a converted tool its name and origin, and validate it as the index would.
fn validate_one(
    converted: Converted,
    name: String,
    origin: &Origin,
) -> Result<Prepared, ShareError> {
    names::validate(&name).map_err(|source| ShareError::BadName {
        name: name.clone(),
        source,
    })?;
    let invalid = |errors: String| ShareError::Invalid {
        name: name.clone(),
        errors,
    };
    let mut files = converted.files.clone();
    for f in &mut files {
        if f.path == manifest::FILE_NAME {
            let text = std::str::from_utf8(&f.bytes)
                .map_err(|_| invalid("tool.toml is not UTF-8".into()))?;
            f.bytes = set_origin(text, &name, origin)
                .map_err(|e| invalid(format!("tool.toml: {e}")))?
                .into_bytes();
        }
    }
    // Validate exactly as the index would, in a scratch toolbox.
    let scratch = tempfile::tempdir().map_err(|e| ShareError::Io {
        action: "create a temporary directory",
        path: std::env::temp_dir().display().to_string(),
        source: e,
    })?;
    write_files(&scratch.path().join(TOOLS_DIR).join(&name), &files)?;
    let index = Index::build(scratch.path());
    let tool = match index.get(&name).map(|e| &e.status) {
        Some(Status::Ok(t)) => (**t).clone(),
        Some(Status::Broken(d)) => {
            return Err(invalid(
                d.iter()
                    .map(|d| {
                        d.to_string()
                            .replace(&scratch.path().display().to_string(), "")
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            ));
        }
        None => return Err(invalid("the directory could not be indexed".into())),
    };
    let mut warnings: Vec<String> = tool.warnings.iter().map(|d| d.message.clone()).collect();
    if tool.manifest.kind == Kind::Wasm {
        let artifact = tool.manifest.artifact();
        let file = files
            .iter()
            .find(|f| f.path == artifact)
            .ok_or_else(|| invalid(format!("the artifact {artifact} is missing")))?;
        let actual = sha256_bytes(&file.bytes);
        match &tool.manifest.hashes.artifact {
            Some(expected) if *expected != actual => {
                return Err(invalid(format!(
                    "the artifact {artifact} has sha256 {actual}, but tool.toml says {expected}"
                )));
            }
            Some(_) => {}
            None => warnings.push(format!(
                "tool.toml records no artifact hash: {artifact} will not run until the tool is rebuilt from source"
            )),
        }
    }
    Ok(Prepared {
        converted,
        name,
        files,
        tool,
        warnings,
    })
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
