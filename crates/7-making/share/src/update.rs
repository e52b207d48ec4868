//! `update_tool`: fetch an imported tool's origin and show what changed — code, description,
//! input schema, capabilities — applying it (one commit) only when the caller asks.

use super::ShareError;
use super::fetch::fetch;
use super::prepare::{Naming, Prepared, PreparedDir, prepare, prepare_files};
use crate::history::{FileAt, FileDiff, diff_files};
use crate::index::Index;
use crate::manifest::Origin;
use crate::toolbox::{Actor, Toolbox};
use serde::Serialize;
use serde_json::{Value, json};

/// A field whose value changed.
#[derive(Debug, Clone, Serialize)]
pub struct FieldChange {
    /// The field.
    pub field: &'static str,
    /// Its value here.
    pub old: Value,
    /// Its value at the origin.
    pub new: Value,
}

/// What `update_tool` found and did.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateOutcome {
    /// The tool.
    pub name: String,
    /// Its origin.
    pub url: String,
    /// The origin's commit it was imported (or last updated) from.
    pub from_commit: Option<String>,
    /// The origin's commit now.
    pub to_commit: String,
    /// Nothing changed at the origin.
    pub up_to_date: bool,
    /// Changed files (tool.toml's `[origin]` aside).
    pub files: Vec<FileDiff>,
    /// A unified diff of them.
    pub diff: String,
    /// Changes of what the model and the user rely on: description, input schema,
    /// capabilities, annotations, kind. These are never applied without `apply`.
    pub changed_fields: Vec<FieldChange>,
    /// Whether the tool was changed here since it was imported (the update overwrites that).
    pub local_changes: bool,
    /// Whether the update was applied.
    pub applied: bool,
    /// The commit that applied it.
    pub commit: Option<String>,
    /// What to do next (review, then apply).
    pub hint: Option<String>,
    /// The other tools of the same Agent Skill (one per script), checked with this one and
    /// applied in the same commit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skill_tools: Vec<UpdateOutcome>,
    /// Scripts the skill has now that no tool here runs (new since the import): import the
    /// skill again under another name to get them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub new_scripts: Vec<String>,
    /// Tools of the skill whose script is gone from it: left as they are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_alone: Vec<String>,
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
    /// The tools there, prepared as an import would be, named as the tools here.
    new: PreparedDir,
    /// The commit (git) or manifest digest (OCI) it is at.
    version: String,
    oci: bool,
    /// The tools as they were imported (converted), by the skill script each runs, when the
    /// origin still has that version.
    original: Vec<(Option<String>, Vec<FileAt>)>,
}

fn from_git(
    tools: &[(String, Option<String>)],
    origin: &Origin,
    gist_base: Option<&str>,
) -> Result<Source, ShareError> {
    let fetched = fetch(&origin.url, origin.reference.as_deref())?;
    let dir = origin.path.clone().unwrap_or_default();
    let gist = dir.is_empty() && super::resolve_source(&origin.url, gist_base).1;
    let new = prepare(
        &fetched,
        &dir,
        gist,
        Naming::Existing(tools),
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
        .map(|cs| {
            cs.into_iter()
                .map(|c| (c.script.map(|s| s.path), c.files))
                .collect()
        })
        .unwrap_or_default();
    Ok(Source {
        new,
        version: fetched.commit.clone(),
        oci: false,
        original,
    })
}

/// An OCI origin follows its tag; one imported by digest alone stays at that digest.
fn from_oci(tools: &[(String, Option<String>)], origin: &Origin) -> Result<Source, ShareError> {
    let at = match (&origin.reference, &origin.digest) {
        (Some(tag), _) => format!("{}:{tag}", origin.url),
        (None, Some(digest)) => format!("{}@{digest}", origin.url),
        (None, None) => origin.url.clone(),
    };
    let pulled = super::oci::pull(&at)?;
    let original = match &origin.digest {
        Some(d) if *d != pulled.digest => super::oci::pull(&format!("{}@{d}", origin.url))
            .ok()
            .map(|p| vec![(None, p.files)])
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let version = pulled.digest.clone();
    let pinned = Origin {
        url: origin.url.clone(),
        reference: origin.reference.clone(),
        commit: None,
        path: None,
        digest: Some(pulled.digest),
        script: None,
    };
    let new = prepare_files(pulled.files, "", false, Naming::Existing(tools), pinned)?;
    Ok(Source {
        new,
        version,
        oci: true,
        original,
    })
}

/// The other tools here made from the same Agent Skill as `name` (one per script): same
/// origin URL, ref and path, each with the script it runs.
fn skill_siblings(index: &Index, name: &str, origin: &Origin) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = index
        .tools()
        .filter(|t| t.manifest.name != name)
        .filter_map(|t| {
            let o = t.manifest.origin.as_ref()?;
            (o.script.is_some()
                && o.url == origin.url
                && o.reference == origin.reference
                && o.path == origin.path)
                .then(|| (t.manifest.name.clone(), o.script.clone()))
        })
        .collect();
    out.sort();
    out
}

/// Compare one tool here with its prepared version at the origin.
fn compare(
    tb: &Toolbox,
    index: &Index,
    head: &str,
    origin: &Origin,
    new: &Prepared,
    original: &[(Option<String>, Vec<FileAt>)],
    version: &str,
) -> Result<(UpdateOutcome, Vec<FileAt>), ShareError> {
    let name = new.name.as_str();
    let current_tool = index
        .tool(name)
        .ok_or_else(|| crate::toolbox::ToolboxError::NoSuchTool {
            name: name.to_string(),
        })?
        .clone();
    let current = crate::history::tool_at(tb, name, head)
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
        Value::Object((*current_tool.input_schema).clone()),
        Value::Object((*new.tool.input_schema).clone()),
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
    let script = new.converted.script.as_ref().map(|s| &s.path);
    let orig = match original {
        [(_, one)] => Some(one),
        many => many
            .iter()
            .find(|(s, _)| s.as_ref() == script)
            .map(|(_, f)| f),
    };
    let local_changes = orig.is_some_and(|orig| {
        // Compared in path order: a conversion appends the files it writes.
        let strip_name = |fs: &[FileAt]| {
            let mut fs: Vec<FileAt> = without_origin(fs)
                .into_iter()
                .filter(|f| f.path != crate::manifest::FILE_NAME)
                .collect();
            fs.sort_by(|a, b| a.path.cmp(&b.path));
            fs
        };
        strip_name(orig) != strip_name(&current)
    });
    let own = current_tool.manifest.origin.as_ref().unwrap_or(origin);
    Ok((
        UpdateOutcome {
            name: name.to_string(),
            url: origin.url.clone(),
            from_commit: own.commit.clone().or(own.digest.clone()),
            to_commit: version.to_string(),
            up_to_date: files.is_empty(),
            files,
            diff,
            changed_fields,
            local_changes,
            applied: false,
            commit: None,
            hint: None,
            skill_tools: Vec::new(),
            new_scripts: Vec::new(),
            left_alone: Vec::new(),
        },
        current,
    ))
}

/// Check an imported tool against its origin; with `apply`, update it as one commit. With
/// `expect_commit`, apply only if the origin is still at that commit (what was reviewed).
/// A tool made from one script of an Agent Skill with several is checked and updated together
/// with the skill's other tools here (`skill_tools`), in the same commit. Gists live at
/// `gist_base` (`Config::gist_base`; None: https://gist.github.com).
pub fn update_tool(
    tb: &Toolbox,
    name: &str,
    apply_it: bool,
    expect_commit: Option<&str>,
    actor: impl Into<Actor>,
    gist_base: Option<&str>,
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
    let head =
        crate::git::resolve(tb.root(), "HEAD").map_err(crate::history::HistoryError::from)?;
    // A skill's tool imported when the skill had one script names no script: the one it runs
    // is read from its files, so it stays that script's tool if the skill gains others.
    let script = origin.script.clone().or_else(|| {
        let skill = current_tool.manifest.tags.iter().any(|t| t == "skill");
        let files = crate::history::tool_at(tb, name, &head).ok()?.files;
        skill
            .then(|| {
                super::skill::script_run_by(current_tool.manifest.run.entry.as_deref(), &files)
            })
            .flatten()
    });
    let mut tools = vec![(name.to_string(), script)];
    if origin.script.is_some() {
        tools.extend(skill_siblings(&index, name, &origin));
    }
    let source = if super::oci::is_oci(&origin.url) {
        from_oci(&tools, &origin)?
    } else {
        from_git(&tools, &origin, gist_base)?
    };
    let gone = |script: &str| ShareError::SkillScriptGone {
        name: name.to_string(),
        script: script.to_string(),
        path: origin.path.clone().unwrap_or_default(),
    };
    if let Some((_, script)) = source.new.gone.iter().find(|(n, _)| n == name) {
        return Err(gone(script));
    }
    let mut outcomes = Vec::new();
    let mut currents = Vec::new();
    for p in &source.new.tools {
        let (o, current) = compare(
            tb,
            &index,
            &head,
            &origin,
            p,
            &source.original,
            &source.version,
        )?;
        outcomes.push(o);
        currents.push(current);
    }
    // The tool asked for comes first (prepare keeps the order of `tools`).
    let mut outcomes = outcomes.into_iter();
    let Some(mut out) = outcomes.next() else {
        return Err(gone(origin.script.as_deref().unwrap_or("")));
    };
    out.skill_tools = outcomes.collect();
    out.new_scripts = source.new.new_scripts.clone();
    out.left_alone = source
        .new
        .gone
        .iter()
        .map(|(n, s)| format!("{n} (its script {s} is gone from the skill)"))
        .collect();
    let all_up_to_date = out.up_to_date && out.skill_tools.iter().all(|o| o.up_to_date);
    let pinned = origin.commit.as_deref().or(origin.digest.as_deref());
    if all_up_to_date && pinned == Some(source.version.as_str()) {
        return Ok(out);
    }
    if !apply_it {
        let together = if out.skill_tools.is_empty() {
            String::new()
        } else {
            format!(
                " (it updates {} and the skill's other tools together: {})",
                name,
                out.skill_tools
                    .iter()
                    .map(|o| o.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        out.hint = Some(format!(
            "nothing was changed. Review the changes, then call update_tool again with apply: true and commit: \"{}\" to apply exactly these{together}",
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
    let names: Vec<&str> = source.new.tools.iter().map(|p| p.name.as_str()).collect();
    let mut msg = format!(
        "update {}: from origin at {short}\n\n{body}\n\n",
        names.join(", ")
    );
    for n in &names {
        msg.push_str(&format!("Tool: {n}\n"));
    }
    msg.push_str(&actor.trailers());
    let changes: Vec<(String, crate::toolbox::Change)> = source
        .new
        .tools
        .into_iter()
        .zip(&currents)
        .map(|(p, current)| {
            let keep = crate::history::same_environment(current, &p.files);
            (p.name, crate::history::change_to(p.files, keep))
        })
        .collect();
    out.commit = tb.apply(&changes, &msg)?;
    out.applied = true;
    for o in &mut out.skill_tools {
        o.applied = true;
        o.commit = out.commit.clone();
    }
    Ok(out)
}
