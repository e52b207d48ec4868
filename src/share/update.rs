//! `update_tool`: fetch an imported tool's origin and show what changed — code, description,
//! input schema, capabilities — applying it (one commit) only when the caller asks.

use super::ShareError;
use super::fetch::fetch;
use super::import::prepare;
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

    // Local edits since the import: compare with the imported commit's version, converted
    // the same way.
    let local_changes = match origin.commit.as_deref() {
        Some(c) if fetched.has_commit(c) => {
            let at = super::fetch::Fetched::read_dir_at(&fetched, Some(c), &dir).ok();
            match at {
                Some(orig) => {
                    let conv =
                        super::convert::convert(orig, dir.rsplit('/').next().unwrap_or(""), gist);
                    match conv {
                        Ok(conv) => {
                            let strip_name = |fs: &[FileAt]| {
                                without_origin(fs)
                                    .into_iter()
                                    .filter(|f| f.path != crate::manifest::FILE_NAME)
                                    .collect::<Vec<_>>()
                            };
                            strip_name(&conv.files) != strip_name(&current)
                        }
                        Err(_) => false,
                    }
                }
                None => false,
            }
        }
        _ => false,
    };

    let up_to_date = files.is_empty();
    let mut out = UpdateOutcome {
        name: name.to_string(),
        url: origin.url.clone(),
        from_commit: origin.commit.clone(),
        to_commit: fetched.commit.clone(),
        up_to_date,
        files,
        diff,
        changed_fields,
        local_changes,
        applied: false,
        commit: None,
        hint: None,
    };
    if up_to_date && origin.commit.as_deref() == Some(fetched.commit.as_str()) {
        return Ok(out);
    }
    if !apply_it {
        out.hint = Some(format!(
            "nothing was changed. Review the changes, then call update_tool again with apply: true and commit: \"{}\" to apply exactly these",
            fetched.commit
        ));
        return Ok(out);
    }
    if let Some(expected) = expect_commit
        && !fetched.commit.starts_with(expected)
    {
        return Err(ShareError::OriginMoved {
            name: name.to_string(),
            expected: expected.to_string(),
            actual: fetched.commit.clone(),
        });
    }
    let short = &fetched.commit[..10];
    let body = format!("Source: {}\nSource-Commit: {}", origin.url, fetched.commit);
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
