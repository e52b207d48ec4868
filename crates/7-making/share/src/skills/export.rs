//! `toolsmith export --skills DIR`: the toolbox written out as a skills directory, one
//! `<skill>/` per tool, for agents that read skills from disk.
//!
//! An export writes only what it owns. Its marker file (`.toolsmith-skills`) records each
//! directory it wrote with a digest of what it wrote; the next export replaces (or, for a tool
//! gone or held since, removes) only a recorded directory whose content is still that digest.
//! Anything else in DIR — a person's own `pdf/` skill, a file, an exported skill edited since
//! — is never written over or deleted: a skill whose name is taken by it is skipped, saying
//! so. A directory that is neither empty nor an earlier export is refused. Held tools are read
//! through the toolbox's `trust::View`: they are not exported, and are listed with the command
//! that reviews them. Every path written is checked with `names::check_file_path`.

use super::{front_matter, own_files, skill_name};
use crate::index::Tool;
use crate::manifest::{Kind, Protocol};
use crate::trust::{Shown, View};
use crate::{ShareError, io_err};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// The marker an export leaves: what it wrote, so a second export replaces only that.
const MARKER: &str = ".toolsmith-skills";
/// The marker's first line.
const MARKER_HEAD: &str = "# Written by `toolsmith export --skills`: each line names a directory it wrote and the digest of what it wrote. A new export replaces only these directories, and only while they are unchanged.";

/// What an export wrote.
#[derive(Debug, Clone, Serialize)]
pub struct SkillsExport {
    /// The directory written.
    pub dir: String,
    /// (skill, the tool it was made from).
    pub skills: Vec<(String, String)>,
    /// Tools not written, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Held tools not written: (tool, the command that reviews it).
    pub held: Vec<(String, String)>,
    /// Directories of an earlier export removed (their tool is gone or held).
    pub removed: Vec<String>,
}

/// Write every tool of `view` that is not held as a skill under `out`.
pub fn export(view: &View, out: &Path) -> Result<SkillsExport, ShareError> {
    let marker = out.join(MARKER);
    let mut owned = BTreeMap::new();
    if out.exists() {
        let empty = std::fs::read_dir(out)
            .map_err(io_err("read", out))?
            .next()
            .is_none();
        if !empty && !marker.is_file() {
            return Err(ShareError::Unsupported {
                what: format!("exporting skills into {}", out.display()),
                reason: "the directory is not empty and holds no earlier export".into(),
            });
        }
        if marker.is_file() {
            owned =
                read_marker(&std::fs::read_to_string(&marker).map_err(io_err("read", &marker))?);
        }
    }
    std::fs::create_dir_all(out).map_err(io_err("create", out))?;
    let mut result = SkillsExport {
        dir: out.display().to_string(),
        skills: Vec::new(),
        skipped: Vec::new(),
        held: Vec::new(),
        removed: Vec::new(),
    };
    // What this export owns when it is done: (directory, digest).
    let mut wrote: BTreeMap<String, String> = BTreeMap::new();
    let mut taken: Vec<String> = Vec::new();
    for shown in view.tools() {
        let (o, t) = match shown {
            Shown::Held(w) => {
                result.held.push((
                    w.name().to_string(),
                    format!("toolsmith review {}", w.held().name),
                ));
                continue;
            }
            Shown::Open(o) => match o.tool() {
                Some(t) => (o, t),
                None => continue,
            },
        };
        let tool = t.manifest.name.clone();
        if t.manifest.kind == Kind::Mcp {
            result.skipped.push((
                tool,
                "an MCP server's tool is not a skill (its server is)".into(),
            ));
            continue;
        }
        let (name, files) = match skill_files(t, o.dir()) {
            Ok(f) => f,
            Err(why) => {
                result.skipped.push((tool, why));
                continue;
            }
        };
        if name.is_empty() || taken.contains(&name) {
            result
                .skipped
                .push((tool, format!("the skill name {name:?} is taken or empty")));
            continue;
        }
        taken.push(name.clone());
        let target = out.join(&name);
        if std::fs::symlink_metadata(&target).is_ok() {
            match owned.get(&name) {
                Some(digest) if digest_of(&target).as_deref() == Some(digest.as_str()) => {
                    std::fs::remove_dir_all(&target).map_err(io_err("replace", &target))?;
                }
                Some(_) => {
                    result.skipped.push((tool, format!("{} changed since toolsmith exported it: left as it is (move it away to export {name} again)", target.display())));
                    continue;
                }
                None => {
                    result.skipped.push((tool, format!("{} is not from an earlier export (your own?): left untouched; export to another directory, or rename yours", target.display())));
                    continue;
                }
            }
        }
        for (rel, _) in &files {
            crate::names::check_file_path(rel).map_err(|e| ShareError::BadPath {
                path: rel.clone(),
                reason: e.reason,
            })?;
        }
        for (rel, bytes) in &files {
            let path = target.join(rel);
            if let Some(p) = path.parent() {
                std::fs::create_dir_all(p).map_err(io_err("create", p))?;
            }
            std::fs::write(&path, bytes).map_err(io_err("write", &path))?;
        }
        wrote.insert(name.clone(), digest_of(&target).unwrap_or_default());
        result.skills.push((name, tool));
    }
    // An earlier export's directories this one did not write again (the tool is gone, or held
    // now): removed while unchanged, else left and no longer owned.
    for (name, digest) in &owned {
        if wrote.contains_key(name) || taken.contains(name) {
            continue;
        }
        let target = out.join(name);
        if digest_of(&target).as_deref() == Some(digest.as_str()) {
            std::fs::remove_dir_all(&target).map_err(io_err("remove", &target))?;
            result.removed.push(name.clone());
        }
    }
    let mut text = format!("{MARKER_HEAD}\n");
    for (name, digest) in &wrote {
        text.push_str(&format!("{name} {digest}\n"));
    }
    std::fs::write(&marker, text).map_err(io_err("write", &marker))?;
    Ok(result)
}

/// The directories an earlier export recorded, with their digests. A line that names no
/// single plain directory is ignored.
fn read_marker(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .filter(|(name, digest)| {
            !name.contains('/')
                && !name.starts_with('.')
                && crate::names::check_file_path(name).is_ok()
                && digest.starts_with("sha256:")
        })
        .map(|(n, d)| (n.to_string(), d.to_string()))
        .collect()
}

/// A digest of a directory's files (paths and contents); None when it is not a plain
/// directory of regular files (a link anywhere, an unreadable file).
fn digest_of(dir: &Path) -> Option<String> {
    if !std::fs::symlink_metadata(dir).ok()?.is_dir() {
        return None;
    }
    let mut listing = String::new();
    for e in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let e = e.ok()?;
        let rel = e
            .path()
            .strip_prefix(dir)
            .ok()?
            .to_string_lossy()
            .replace('\\', "/");
        let kind = e.file_type();
        if kind.is_dir() {
            listing.push_str(&format!("dir {rel}\n"));
        } else if kind.is_file() {
            let bytes = std::fs::read(e.path()).ok()?;
            listing.push_str(&format!(
                "file {rel} {}\n",
                crate::hashing::sha256_bytes(&bytes)
            ));
        } else {
            return None;
        }
    }
    Some(crate::hashing::sha256_bytes(listing.as_bytes()))
}

/// The YAML of a front matter: a JSON string is a YAML scalar.
fn yaml_line(key: &str, value: &str) -> String {
    format!(
        "{key}: {}\n",
        serde_json::to_string(value).unwrap_or_default()
    )
}

type Files = (String, Vec<(String, Vec<u8>)>);

/// The skill of one tool: its name and files (SKILL.md first).
fn skill_files(t: &Tool, dir: &Path) -> Result<Files, String> {
    let m = &t.manifest;
    let read =
        |rel: &str| std::fs::read(dir.join(rel)).map_err(|e| format!("cannot read {rel}: {e}"));
    // An imported skill goes out as it came.
    if m.tags.iter().any(|g| g == "skill") && dir.join("SKILL.md").is_file() {
        let text = String::from_utf8(read("SKILL.md")?).map_err(|_| "SKILL.md is not UTF-8")?;
        let fm = front_matter(&text)?;
        let name = fm
            .get("name")
            .and_then(Value::as_str)
            .map(skill_name)
            .unwrap_or_else(|| skill_name(&m.name));
        let own = own_files(dir).ok_or("the skill is too large")?;
        let mut files = Vec::new();
        for rel in own {
            files.push((rel.clone(), read(&rel)?));
        }
        return Ok((name, files));
    }
    let name = skill_name(&m.name);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut body = format!("# {}\n\n{}\n\n", m.name, m.description.trim());
    let schema =
        serde_json::to_string_pretty(&Value::Object((*t.input_schema).clone())).unwrap_or_default();
    let example = m
        .examples
        .first()
        .map(|e| e.input.to_string())
        .unwrap_or_else(|| "{}".into());
    match m.kind {
        Kind::Script => {
            let entry = m.run.entry.clone().unwrap_or_default();
            let interp = m.interpreter().unwrap_or_default().join(" ");
            files.push((format!("scripts/{entry}"), read(&entry)?));
            let mut setup = String::new();
            if dir.join(crate::manifest::PIP_LOCK).is_file() {
                files.push((
                    "scripts/requirements.txt".into(),
                    read(crate::manifest::PIP_LOCK)?,
                ));
                setup.push_str("Install its Python packages first: `python3 -m pip install --no-deps -r scripts/requirements.txt` (in a virtual environment).\n\n");
            }
            if dir.join(crate::manifest::NPM_LOCK).is_file() {
                for f in [crate::manifest::NPM_MANIFEST, crate::manifest::NPM_LOCK] {
                    files.push((format!("scripts/{f}"), read(f)?));
                }
                setup.push_str(
                    "Install its npm packages first: `npm ci --ignore-scripts` in `scripts/`.\n\n",
                );
            }
            let run = match m.protocol() {
                Protocol::Plain => format!(
                    "Run it with the arguments as one JSON object on stdin; it prints the result on stdout:\n\n```sh\necho '{example}' | {interp} scripts/{entry}\n```\n"
                ),
                Protocol::Jsonrpc => format!(
                    "It speaks toolsmith's jsonrpc script protocol: send one request line and read the line with `\"id\":0` (its `result`, or `error`):\n\n```sh\necho '{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/call\",\"params\":{{\"arguments\":{example}}}}}' | {interp} scripts/{entry}\n```\n"
                ),
            };
            body.push_str(&setup);
            body.push_str(&run);
        }
        Kind::Wasm => {
            files.push(("scripts/tool.wasm".into(), read(m.artifact())?));
            body.push_str(&format!(
                "A WebAssembly (WASI) program: run it with the arguments as one JSON object on stdin; it prints the result on stdout:\n\n```sh\necho '{example}' | wasmtime run scripts/tool.wasm\n```\n"
            ));
        }
        Kind::Pipeline => {
            body.push_str("It runs these tools in order (each a skill of this directory):\n\n");
            for (i, s) in m.steps.iter().enumerate() {
                body.push_str(&format!(
                    "{}. `{}` with `{}`\n",
                    i + 1,
                    skill_name(&s.tool),
                    s.args
                ));
            }
            body.push_str("\nIn a step's arguments, `$input.x` is the pipeline's argument x, `$prev` the previous step's result and `$steps.NAME` a named step's.\n");
        }
        Kind::Mcp => return Err("an MCP server entry".into()),
    }
    body.push_str(&format!("\n## Arguments\n\n```json\n{schema}\n```\n"));
    for e in &m.examples {
        let out = e
            .output
            .as_ref()
            .map(|o| o.to_string())
            .or_else(|| e.output_text.clone())
            .unwrap_or_default();
        body.push_str(&format!("\nExample: `{}` gives `{out}`\n", e.input));
    }
    let mut md = String::from("---\n");
    md.push_str(&yaml_line("name", &name));
    let summary: String = m.description.trim().chars().take(1024).collect();
    md.push_str(&yaml_line("description", &summary));
    md.push_str("metadata:\n");
    md.push_str(&format!("  toolsmith-tool: {}\n", json!(m.name)));
    md.push_str(&format!("  toolsmith-kind: {}\n", json!(m.kind.as_str())));
    md.push_str("---\n\n");
    md.push_str(&body);
    files.insert(0, ("SKILL.md".into(), md.into_bytes()));
    Ok((name, files))
}
