//! `update_tool`: fetch an imported tool's origin and show what changed — code, description,
//! input schema, capabilities — applying it (one commit) only when the caller asks.

use super::ShareError;
use super::fetch::fetch;
use super::import::{Prepared, prepare, prepare_files};
use crate::history::{FileAt, FileDiff, diff_files};
use crate::index::Index;
use crate::manifest::Origin;
use crate::toolbox::{Actor, Toolbox, message};
use serde::Serialize;
use serde_json::{Value, json};

/// A field whose value changed.
#[derive(Debug, Clone, Serialize)]
pub struct FieldChange {
    pub field: &'static str,
    pub old: Value,
    pub new: Value,
}

/// What `update_tool` found and did.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateOutcome {
    pub name: String,
    pub url: String,
    pub from_commit: Option<String>,
    pub to_commit: String,
    pub up_to_date: bool,
    /// Changed files (tool.toml's `[origin]` aside).
    pub files: Vec<FileDiff>,
    pub diff: String,
    /// Changes of what the model and the user rely on: description, input schema,
    /// capabilities, annotations, kind. These are never applied without `apply`.
    pub changed_fields: Vec<FieldChange>,
    /// Whether the tool was changed here since it was imported (the update overwrites that).
    pub local_changes: bool,
    pub applied: bool,
    pub commit: Option<String>,
    pub hint: Option<String>,
}

/// Files with tool.toml's `[origin]` table removed, to compare contents only.
fn without_origin(files: &[FileAt]) -> Vec<FileAt> {
    files
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if f.path == crate::manifest::FILE_NAME
                && let Ok(text) = std::str::from_utf8(&f.bytes)
                && let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>()
            {
                doc.remove("origin");
                f.bytes = doc.to_string().trim_end().as_bytes().to_vec();
            }
            f
        })
        .collect()
}

/// An imported tool's origin as it is now.
struct Source {
    /// The tool there, prepared as an import would be.
    new: Prepared,
    /// The commit (git) or manifest digest (OCI) it is at.
    version: String,
    oci: bool,
    /// The tool as it was imported (converted), when the origin still has that version.
    original: Option<Vec<FileAt>>,
}

fn from_git(name: &str, origin: &Origin) -> Result<Source, ShareError> {
    let fetched = fetch(&origin.url, origin.reference.as_deref())?;
    let dir = origin.path.clone().unwrap_or_default();
    let gist = dir.is_empty() && super::resolve_source(&origin.url).1;
    let new = prepare(
        &fetched,
        &dir,
        gist,
        Some(name),
        origin.reference.as_deref(),
    )?;
    let original = origin
        .commit
        .as_deref()
        .filter(|c| fetched.has_commit(c))
        .and_then(|c| fetched.read_dir_at(Some(c), &dir).ok())
        .and_then(|orig| {
            super::convert::convert(orig, dir.rsplit('/').next().unwrap_or(""), gist).ok()
        })
        .map(|c| c.files);
    Ok(Source {
        new,
        version: fetched.commit.clone(),
        oci: false,
        original,
    })
}

/// An OCI origin follows its tag; one imported by digest alone stays at that digest.
fn from_oci(name: &str, origin: &Origin) -> Result<Source, ShareError> {
    let at = match (&origin.reference, &origin.digest) {
        (Some(tag), _) => format!("{}:{tag}", origin.url),
        (None, Some(digest)) => format!("{}@{digest}", origin.url),
        (None, None) => origin.url.clone(),
    };
    let pulled = super::oci::pull(&at)?;
    let original = match &origin.digest {
        Some(d) if *d != pulled.digest => super::oci::pull(&format!("{}@{d}", origin.url))
            .ok()
            .map(|p| p.files),
        _ => None,
    };
    let version = pulled.digest.clone();
    let pinned = Origin {
        url: origin.url.clone(),
        reference: origin.reference.clone(),
        commit: None,
        path: None,
        digest: Some(pulled.digest),
    };
    let new = prepare_files(pulled.files, "", false, Some(name), pinned)?;
    Ok(Source {
        new,
        version,
        oci: true,
        original,
    })
}

/// Check an imported tool against its origin; with `apply`, update it as one commit. With
/// `expect_commit`, apply only if the origin is still at that commit (what was reviewed).
pub fn update_tool(
    tb: &Toolbox,
    name: &str,
    apply_it: bool,
    expect_commit: Option<&str>,
    actor: impl Into<Actor>,
) -> Result<UpdateOutcome, ShareError> {
    let actor: Actor = actor.into();
    let index = Index::build(tb.root());
    let current_tool = index
        .tool(name)
        .ok_or_else(|| crate::toolbox::ToolboxError::NoSuchTool {
            name: name.to_string(),
        })?
        .clone();
    let origin: Origin =
        current_tool
            .manifest
            .origin
            .clone()
            .ok_or_else(|| ShareError::NotImported {
                name: name.to_string(),
            })?;
    let source = if super::oci::is_oci(&origin.url) {
        from_oci(name, &origin)?
    } else {
        from_git(name, &origin)?
    };
    let new = source.new;
    let head =
        crate::git::resolve(tb.root(), "HEAD").map_err(crate::history::HistoryError::from)?;
    let current = crate::history::tool_at(tb, name, &head)
        .map(|t| t.files)
        .unwrap_or_default();
    let (files, diff) = diff_files(&without_origin(&current), &without_origin(&new.files));

    let (old_m, new_m) = (&current_tool.manifest, &new.tool.manifest);
    let mut changed_fields = Vec::new();
    let mut field = |field: &'static str, old: Value, new: Value| {
        if old != new {
            changed_fields.push(FieldChange { field, old, new });
        }
    };
    field(
        "description",
        json!(old_m.description),
        json!(new_m.description),
    );
    field("kind", json!(old_m.kind), json!(new_m.kind));
    field(
        "input_schema",
        Value::Object(current_tool.input_schema.clone()),
        Value::Object(new.tool.input_schema.clone()),
    );
    field(
        "output_schema",
        json!(current_tool.output_schema),
        json!(new.tool.output_schema),
    );
    field(
        "capabilities",
        json!(old_m.capabilities),
        json!(new_m.capabilities),
    );
    field(
        "annotations",
        json!(old_m.annotations),
        json!(new_m.annotations),
    );

    // Local edits since the import: compare with the imported version, converted the same way.
    let local_changes = source.original.is_some_and(|orig| {
        let strip_name = |fs: &[FileAt]| {
            without_origin(fs)
                .into_iter()
                .filter(|f| f.path != crate::manifest::FILE_NAME)
                .collect::<Vec<_>>()
        };
        strip_name(&orig) != strip_name(&current)
    });

    let up_to_date = files.is_empty();
    let mut out = UpdateOutcome {
        name: name.to_string(),
        url: origin.url.clone(),
        from_commit: origin.commit.clone().or(origin.digest.clone()),
        to_commit: source.version.clone(),
        up_to_date,
        files,
        diff,
        changed_fields,
        local_changes,
        applied: false,
        commit: None,
        hint: None,
    };
    let pinned = origin.commit.as_deref().or(origin.digest.as_deref());
    if up_to_date && pinned == Some(source.version.as_str()) {
        return Ok(out);
    }
    if !apply_it {
        out.hint = Some(format!(
            "nothing was changed. Review the changes, then call update_tool again with apply: true and commit: \"{}\" to apply exactly these",
            source.version
        ));
        return Ok(out);
    }
    if let Some(expected) = expect_commit
        && !source.version.starts_with(expected)
    {
        return Err(ShareError::OriginMoved {
            name: name.to_string(),
            expected: expected.to_string(),
            actual: source.version.clone(),
        });
    }
    let short = &source.version[..source.version.len().min(if source.oci { 19 } else { 10 })];
    let body = if source.oci {
        format!("Source: {}\nSource-Digest: {}", origin.url, source.version)
    } else {
        format!("Source: {}\nSource-Commit: {}", origin.url, source.version)
    };
    let msg = message(
        "update",
        name,
        &format!("from origin at {short}"),
        &actor,
        Some(&body),
    );
    let keep = crate::history::same_environment(&current, &new.files);
    out.commit = tb.apply(
        &[(name.to_string(), crate::history::change_to(new.files, keep))],
        &msg,
    )?;
    out.applied = true;
    Ok(out)
}
