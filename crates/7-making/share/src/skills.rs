//! Agent Skills both ways: the files and front matter of an imported skill as it came (what
//! the MCP skills extension serves: `mcp::skills`), and a stored toolbox written out as a
//! skills directory (`toolsmith export --skills DIR`): one `<name>/SKILL.md` per tool, with
//! its script, WASM module or the imported skill's own files beside it, for agents that read
//! skills from disk.
//!
//! Nothing here runs a tool. An export (`export`) reads the toolbox through its `trust::View`
//! and writes only what it owns.

mod export;

pub use export::{SkillsExport, export};

use serde_json::{Map, Value};
use std::path::Path;

/// Files toolsmith writes into an imported skill's tool directory (not the skill's own).
pub const GENERATED: &[&str] = &[
    crate::manifest::FILE_NAME,
    "toolsmith_skill.sh",
    "toolsmith_cli.py",
    "input.schema.json",
    crate::manifest::PIP_LOCK,
    crate::manifest::NPM_MANIFEST,
    crate::manifest::NPM_LOCK,
];
/// Largest front matter read, in bytes.
const MAX_FRONT_MATTER: usize = 64 * 1024;
/// Most files and bytes of one skill (larger skills are not served).
pub const MAX_SKILL_FILES: usize = 512;
/// Most bytes of one skill, all files together.
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

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
