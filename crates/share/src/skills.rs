//! Agent Skills both ways: the files and front matter of an imported skill as it came (what
//! the MCP skills extension serves: `mcp::skills`), and a stored toolbox written out as a
//! skills directory (`toolsmith export --skills DIR`): one `<name>/SKILL.md` per tool, with
//! its script, WASM module or the imported skill's own files beside it, for agents that read
//! skills from disk.
//!
//! Nothing here runs a tool. An export writes only inside the directory it is given (every
//! path checked with `names::check_file_path`), and refuses to write into a non-empty
//! directory that is not an earlier export.

use super::ShareError;
use crate::index::{Index, Tool};
use crate::manifest::{Kind, Protocol};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::path::Path;

/// Files toolsmith writes into an imported skill's tool directory (not the skill's own).
pub const GENERATED: &[&str] = &[
    crate::manifest::FILE_NAME,
    "toolsmith_skill.sh",
    "toolsmith_cli.py",
    "input.schema.json",
    crate::runner::deps::PIP_LOCK,
    crate::runner::deps::NPM_MANIFEST,
    crate::runner::deps::NPM_LOCK,
];
/// Largest front matter read, in bytes.
const MAX_FRONT_MATTER: usize = 64 * 1024;
/// Most files and bytes of one skill (larger skills are not served).
pub const MAX_SKILL_FILES: usize = 512;
/// Most bytes of one skill, all files together.
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;
/// The marker an export leaves, so a second export may replace the first.
const MARKER: &str = ".toolsmith-skills";

/// The YAML front matter of a SKILL.md as JSON (every field, as written).
pub fn front_matter(text: &str) -> Result<Map<String, Value>, String> {
    let rest = text
        .strip_prefix("---")
        .ok_or("SKILL.md does not begin with `---` front matter")?;
    let end = rest
        .find("\n---")
        .ok_or("the front matter has no closing `---`")?;
    let yaml = &rest[..end];
    if yaml.len() > MAX_FRONT_MATTER {
        return Err(format!(
            "the front matter is {} bytes; at most {MAX_FRONT_MATTER} are read",
            yaml.len()
        ));
    }
    let v: Value = yaml_serde::from_str(yaml).map_err(|e| format!("the front matter: {e}"))?;
    match v {
        Value::Object(o) => Ok(o),
        _ => Err("the front matter is not a mapping".into()),
    }
}

/// The files of an imported skill in its tool directory, relative, sorted: what the skill
/// brought (toolsmith's own files left out). None when the skill is larger than served.
pub fn own_files(dir: &Path) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut bytes = 0u64;
    for e in crate::hashing::walk_tool_dir(dir).filter_map(Result::ok) {
        if !e.file_type().is_file() {
            continue;
        }
        let rel = e
            .path()
            .strip_prefix(dir)
            .ok()?
            .to_string_lossy()
            .replace('\\', "/");
        if GENERATED.contains(&rel.as_str())
            || rel.split('/').any(|p| p.starts_with('.'))
            || crate::names::check_file_path(&rel).is_err()
        {
            continue;
        }
        bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
        out.push(rel);
    }
    (out.len() <= MAX_SKILL_FILES && bytes <= MAX_SKILL_BYTES).then_some(out)
}

/// A tool's name as an Agent Skill name: lowercase letters, digits and single hyphens.
pub fn skill_name(tool: &str) -> String {
    let mut s: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    s.trim_matches('-').chars().take(64).collect()
}

/// What an export wrote.
#[derive(Debug, Clone, Serialize)]
pub struct SkillsExport {
    /// The directory written.
    pub dir: String,
    /// (skill, the tool it was made from).
    pub skills: Vec<(String, String)>,
    /// Tools not written, with the reason.
    pub skipped: Vec<(String, String)>,
}

fn io(action: &str, path: &Path, e: std::io::Error) -> ShareError {
    ShareError::Unsupported {
        what: format!("{action} {}", path.display()),
        reason: e.to_string(),
    }
}

/// The YAML of a front matter: a JSON string is a YAML scalar.
fn yaml_line(key: &str, value: &str) -> String {
    format!(
        "{key}: {}\n",
        serde_json::to_string(value).unwrap_or_default()
    )
}

/// Write every tool of `index` (in `tools_dir`) as a skill under `out`.
pub fn export(index: &Index, tools_dir: &Path, out: &Path) -> Result<SkillsExport, ShareError> {
    if out.exists() {
        let empty = std::fs::read_dir(out)
            .map_err(|e| io("read", out, e))?
            .next()
            .is_none();
        if !empty && !out.join(MARKER).exists() {
            return Err(ShareError::Unsupported {
                what: format!("exporting skills into {}", out.display()),
                reason: "the directory is not empty and holds no earlier export".into(),
            });
        }
    }
    std::fs::create_dir_all(out).map_err(|e| io("create", out, e))?;
    let mut result = SkillsExport {
        dir: out.display().to_string(),
        skills: Vec::new(),
        skipped: Vec::new(),
    };
    let mut taken: Vec<String> = Vec::new();
    for t in index.tools() {
        let tool = t.manifest.name.clone();
        if t.manifest.kind == Kind::Mcp {
            result.skipped.push((
                tool,
                "an MCP server's tool is not a skill (its server is)".into(),
            ));
            continue;
        }
        let dir = tools_dir.join(&tool);
        let files = match skill_files(t, &dir) {
            Ok(f) => f,
            Err(why) => {
                result.skipped.push((tool, why));
                continue;
            }
        };
        let name = files.0;
        if name.is_empty() || taken.contains(&name) {
            result
                .skipped
                .push((tool, format!("the skill name {name:?} is taken or empty")));
            continue;
        }
        let target = out.join(&name);
        if target.exists() {
            std::fs::remove_dir_all(&target).map_err(|e| io("replace", &target, e))?;
        }
        for (rel, bytes) in &files.1 {
            crate::names::check_file_path(rel).map_err(|e| ShareError::BadPath {
                path: rel.clone(),
                reason: e.reason,
            })?;
            let path = target.join(rel);
            if let Some(p) = path.parent() {
                std::fs::create_dir_all(p).map_err(|e| io("create", p, e))?;
            }
            std::fs::write(&path, bytes).map_err(|e| io("write", &path, e))?;
        }
        taken.push(name.clone());
        result.skills.push((name, tool));
    }
    std::fs::write(
        out.join(MARKER),
        "Written by `toolsmith export --skills`; a new export replaces these skills.\n",
    )
    .map_err(|e| io("write", out, e))?;
    Ok(result)
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
            if dir.join(crate::runner::deps::PIP_LOCK).is_file() {
                files.push((
                    "scripts/requirements.txt".into(),
                    read(crate::runner::deps::PIP_LOCK)?,
                ));
                setup.push_str("Install its Python packages first: `python3 -m pip install --no-deps -r scripts/requirements.txt` (in a virtual environment).\n\n");
            }
            if dir.join(crate::runner::deps::NPM_LOCK).is_file() {
                for f in [
                    crate::runner::deps::NPM_MANIFEST,
                    crate::runner::deps::NPM_LOCK,
                ] {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_read_as_written_and_names_become_skill_names() {
        let fm = front_matter(
            "---\nname: pdf-tools\ndescription: \"Work with PDFs\"\nlicense: MIT\nmetadata:\n  version: \"2.1\"\n---\n# Body\n",
        )
        .unwrap();
        assert_eq!(fm["name"], "pdf-tools");
        assert_eq!(fm["metadata"]["version"], "2.1");
        assert!(front_matter("# no front matter").is_err());
        assert_eq!(skill_name("word_count"), "word-count");
        assert_eq!(skill_name("a__b-"), "a-b");
    }
}
