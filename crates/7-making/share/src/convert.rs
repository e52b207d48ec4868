//! Turn what a repository holds into a toolsmith tool directory: a tool.toml tool as it is, a
//! Skillz tool (`manifest.json`), an Agent Skill (`SKILL.md`, converted in `skill`) or a Gist's
//! single script, for which a manifest is inferred (and shown to the caller).

use super::ShareError;
use crate::history::FileAt;
use crate::manifest;
use serde_json::{Value, json};

use super::converted::{Converted, language_of, leading_comment, text_of, toml_str, with_manifest};
use crate::names::sanitize;

/// The tool.toml of a plain-protocol script tool; the input schema lives in
/// `input.schema.json` when one is given (JSON may hold null, TOML cannot).
pub fn infer_script_manifest(
    name: &str,
    description: &str,
    entry: &str,
    language: &str,
    schema_file: bool,
) -> String {
    let mut t = format!(
        "format = 1\nname = {}\ndescription = {}\nkind = \"script\"\ntags = [\"imported\"]\n",
        toml_str(name),
        toml_str(description),
    );
    if schema_file {
        t.push_str("input_schema_file = \"input.schema.json\"\n");
    }
    t.push_str(&format!(
        "\n[run]\nlanguage = {}\nentry = {}\nprotocol = \"plain\"\n",
        toml_str(language),
        toml_str(entry)
    ));
    if !schema_file {
        t.push_str("\n[input_schema]\ntype = \"object\"\nadditionalProperties = true\n");
    }
    t
}

/// Convert the files of one directory of a repository into its tools: one, except for an Agent
/// Skill with several callable scripts (a tool per script). `dir_name` is the directory's name
/// ("" for a repository root); `gist` allows the single-script shape.
pub fn convert(
    files: Vec<FileAt>,
    dir_name: &str,
    gist: bool,
) -> Result<Vec<Converted>, ShareError> {
    let shown = if dir_name.is_empty() {
        "(repository root)"
    } else {
        dir_name
    };
    let not = |reason: String| ShareError::NotATool {
        path: shown.to_string(),
        reason,
    };
    let find = |p: &str| files.iter().find(|f| f.path == p);
    if let Some(f) = find(manifest::FILE_NAME) {
        let text = text_of(f).ok_or_else(|| not("tool.toml is not UTF-8".into()))?;
        let name = toml_name(text).unwrap_or_else(|| sanitize(dir_name));
        return Ok(vec![Converted {
            name,
            files,
            converted_from: None,
            inferred_manifest: None,
            notes: Vec::new(),
            script: None,
        }]);
    }
    if let Some(f) = find("manifest.json") {
        return skillz(&files, f, dir_name).map(|c| vec![c]).map_err(not);
    }
    if let Some(f) = find("SKILL.md") {
        return super::skill::agent_skill(&files, f, dir_name).map_err(not);
    }
    if gist {
        let scripts: Vec<&FileAt> = files
            .iter()
            .filter(|f| language_of(&f.path).is_some() && !f.path.contains('/'))
            .collect();
        if scripts.len() == 1 {
            let s = scripts[0];
            let language = language_of(&s.path).unwrap_or("python");
            let stem = s.path.rsplit_once('.').map_or(s.path.as_str(), |(a, _)| a);
            let name = sanitize(stem);
            let description = text_of(s)
                .and_then(leading_comment)
                .unwrap_or_else(|| format!("The script {} imported from a Gist", s.path));
            let m = infer_script_manifest(&name, &description, &s.path, language, false);
            let mut files = files.clone();
            files.push(FileAt {
                path: manifest::FILE_NAME.into(),
                bytes: m.clone().into_bytes(),
                executable: false,
            });
            return Ok(vec![Converted {
                name,
                files,
                script: None,
                converted_from: Some("gist-script"),
                inferred_manifest: Some(m),
                notes: vec![
                    "the manifest was inferred: the script gets its arguments as JSON on stdin and any JSON it prints is the result; review the description and input schema".into(),
                ],
            }]);
        }
        return Err(not(format!(
            "it has no tool.toml and {} script files (a single script can be imported)",
            scripts.len()
        )));
    }
    Err(not("it has no tool.toml, manifest.json or SKILL.md".into()))
}

/// The `name` of a tool.toml, when it parses.
pub(crate) fn toml_name(text: &str) -> Option<String> {
    let doc: toml_edit::DocumentMut = text.parse().ok()?;
    doc.get("name")?.as_str().map(str::to_string)
}

/// A Skillz tool: `manifest.json` with name, description, an input schema (`input_schema`,
/// `inputSchema` or `parameters`) and a script (`entry`, `main` or `script`).
fn skillz(files: &[FileAt], f: &FileAt, dir_name: &str) -> Result<Converted, String> {
    let text = text_of(f).ok_or("manifest.json is not UTF-8")?;
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("manifest.json is not valid JSON: {e}"))?;
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    let name = sanitize(s("name").unwrap_or(dir_name));
    let description = s("description").ok_or("manifest.json has no `description`")?;
    let entry = ["entry", "main", "script"]
        .iter()
        .find_map(|k| s(k))
        .map(str::to_string)
        .or_else(|| {
            files
                .iter()
                .find(|f| language_of(&f.path).is_some())
                .map(|f| f.path.clone())
        })
        .ok_or("manifest.json names no script (`entry`) and the directory has none")?;
    let language = s("language")
        .or_else(|| s("runtime"))
        .map(|l| match l {
            "python3" => "python",
            "nodejs" | "javascript" => "node",
            "sh" | "shell" => "bash",
            other => other,
        })
        .or_else(|| language_of(&entry))
        .ok_or_else(|| format!("cannot tell the language of {entry}"))?;
    let schema = ["input_schema", "inputSchema", "parameters"]
        .iter()
        .find_map(|k| v.get(*k))
        .filter(|s| s.is_object())
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    let m = infer_script_manifest(&name, description, &entry, language, true);
    Ok(Converted {
        name,
        files: with_manifest(files.to_vec(), &m, Some(&schema)),
        converted_from: Some("skillz"),
        script: None,
        inferred_manifest: Some(m),
        notes: vec!["converted from a Skillz manifest.json (kept beside the new tool.toml); the script gets its arguments as JSON on stdin".into()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_comments() {
        assert_eq!(sanitize("My Script"), "my_script");
        assert_eq!(sanitize("2fast"), "t2fast");
        assert_eq!(
            leading_comment("#!/usr/bin/env python3\n# Reverse a text\nimport sys\n").as_deref(),
            Some("Reverse a text")
        );
        assert_eq!(leading_comment("import sys\n"), None);
        let (n, d) = crate::guide::skill_front_matter(
            "---\nname: pdf-tools\ndescription: \"Work with PDFs\"\n---\n# x\n",
        );
        assert_eq!(
            (n.as_deref(), d.as_deref()),
            (Some("pdf-tools"), Some("Work with PDFs"))
        );
    }
}
