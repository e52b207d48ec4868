//! Preparing fetched tools for a toolbox (import and update alike): read a directory of the
//! fetched source, convert it (Skillz manifests, Agent Skills), name each tool, give it
//! `[origin]`, and validate it exactly as the index would. Nothing is run or written here.

use super::ShareError;
use super::convert;
use super::converted::Converted;
use super::fetch::Fetched;
use crate::hashing::sha256_bytes;
use crate::history::{FileAt, write_files};
use crate::index::{Index, Status, TOOLS_DIR};
use crate::manifest::{self, Kind, Origin};
use crate::names;

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
