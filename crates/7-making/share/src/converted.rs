//! What converting a repository's directory produces ([`Converted`]: a tool directory ready for
//! validation) and the file helpers the converters share (`convert` for tool.toml, Skillz and
//! Gist shapes, `skill` for Agent Skills).

use crate::history::FileAt;
use crate::manifest;
use serde_json::Value;

/// A tool directory ready for validation.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The tool's own name (before any rename by the caller).
    pub name: String,
    /// Its files as they will be written.
    pub files: Vec<FileAt>,
    /// None for a tool.toml tool; else "skillz", "agent-skill" or "gist-script".
    pub converted_from: Option<&'static str>,
    /// The tool.toml written by the conversion.
    pub inferred_manifest: Option<String>,
    /// What the conversion assumed, for the person to check.
    pub notes: Vec<String>,
    /// The script it runs, when it is one of the tools of an Agent Skill with several scripts.
    pub script: Option<SkillScript>,
}

/// One callable script of an Agent Skill that has several: each becomes its own tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillScript {
    /// The script's path inside the skill (recorded as `[origin] script`).
    pub path: String,
    /// What its tool's name adds to the skill's: `<skill>-<suffix>` (unique in the skill).
    pub suffix: String,
}

/// Script languages by file extension.
const EXTENSIONS: &[(&str, &str)] = &[
    ("py", "python"),
    ("js", "node"),
    ("mjs", "node"),
    ("rb", "ruby"),
    ("sh", "bash"),
    ("pl", "perl"),
    ("php", "php"),
];

pub(super) fn language_of(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    EXTENSIONS.iter().find(|(e, _)| *e == ext).map(|(_, l)| *l)
}

pub(super) fn text_of(f: &FileAt) -> Option<&str> {
    std::str::from_utf8(&f.bytes).ok()
}

/// The first comment line or docstring line of a script, as a description.
pub(super) fn leading_comment(text: &str) -> Option<String> {
    for line in text.lines().take(20) {
        let l = line.trim();
        if l.starts_with("#!") || l.is_empty() || l == "<?php" || l.starts_with("# -*-") {
            continue;
        }
        let stripped = l
            .trim_start_matches("\"\"\"")
            .trim_start_matches("'''")
            .trim_start_matches("//")
            .trim_start_matches('#')
            .trim_start_matches("/*")
            .trim_start_matches('*')
            .trim_end_matches("\"\"\"")
            .trim_end_matches("*/")
            .trim();
        let was_comment = l.starts_with('#')
            || l.starts_with("//")
            || l.starts_with("\"\"\"")
            || l.starts_with("'''")
            || l.starts_with("/*");
        if was_comment && !stripped.is_empty() {
            return Some(stripped.chars().take(300).collect());
        }
        if !was_comment {
            return None;
        }
    }
    None
}

pub(super) fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

pub(super) fn with_manifest(
    mut files: Vec<FileAt>,
    m: &str,
    schema: Option<&Value>,
) -> Vec<FileAt> {
    files.retain(|f| f.path != manifest::FILE_NAME && f.path != "input.schema.json");
    files.push(FileAt {
        path: manifest::FILE_NAME.into(),
        bytes: m.as_bytes().to_vec(),
        executable: false,
    });
    if let Some(s) = schema {
        files.push(FileAt {
            path: "input.schema.json".into(),
            bytes: serde_json::to_vec_pretty(s).unwrap_or_default(),
            executable: false,
        });
    }
    files
}
