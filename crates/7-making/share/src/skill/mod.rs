//! Agent Skills (`SKILL.md` with instructions, and maybe scripts, examples or a package) as
//! toolsmith tools: the instructions stay beside the tool (a resource and part of the guide),
//! a callable script becomes what the tool runs, with a schema mapping arguments to its command
//! line, and Python dependencies are inferred or reported as missing. Nothing is run here.

mod cli;
mod python;

use super::converted::{
    Converted, SkillScript, language_of, leading_comment, text_of, toml_str, with_manifest,
};
use crate::guide::skill_front_matter as front_matter;
use crate::history::FileAt;
use crate::names::sanitize;
use cli::{argparse_args, cli_schema, cli_wrapper, kw};
use python::{local_code, module_names, py_imports, python_dependencies};
use serde_json::{Value, json};

/// The file a skill's instruction tool runs: it prints the skill's SKILL.md.
const INSTRUCTIONS_ENTRY: &str = "toolsmith_skill.sh";
/// The wrapper that maps a CLI script's JSON arguments to its command line.
const CLI_ENTRY: &str = "toolsmith_cli.py";

/// Whether a skill's file is a script meant to be called: a known language, not an example,
/// a test or a package's `__init__`, and either in `scripts/` or `bin/`, or a program (a
/// `__main__` guard or a shebang) at the skill's root. A Python module in `scripts/` that
/// another file of the skill imports and that is no program itself is a helper, not a script.
fn callable(f: &FileAt, files: &[FileAt]) -> bool {
    let Some(language) = language_of(&f.path) else {
        return false;
    };
    let parts: Vec<&str> = f.path.split('/').collect();
    if parts
        .iter()
        .any(|p| matches!(*p, "examples" | "example" | "tests" | "test" | "templates"))
        || parts.last().is_some_and(|p| p.starts_with("__"))
    {
        return false;
    }
    let text = text_of(f).unwrap_or("");
    let program = text.starts_with("#!")
        || (language == "python" && text.contains("__name__") && text.contains("__main__"));
    if parts.len() == 2 && matches!(parts[0], "scripts" | "bin") {
        let helper = language == "python"
            && !program
            && files.iter().any(|o| {
                o.path != f.path
                    && language_of(&o.path) == Some("python")
                    && module_names(f)
                        .first()
                        .is_some_and(|m| py_imports(text_of(o).unwrap_or("")).contains(m))
            });
        return !helper;
    }
    parts.len() == 1 && program
}

/// Whether a script reads its arguments as JSON on stdin (then it is a plain tool as it is).
fn reads_json_stdin(text: &str) -> bool {
    let stdin = [
        "sys.stdin",
        "readFileSync(0",
        "process.stdin",
        "STDIN",
        "$stdin",
    ]
    .iter()
    .any(|s| text.contains(s));
    stdin && (text.contains("json") || text.contains("JSON"))
}

/// The tool.toml of an imported skill's tool.
fn skill_manifest(
    name: &str,
    description: &str,
    entry: &str,
    language: &str,
    pip: &[String],
    schema: &Value,
) -> String {
    let mut t = format!(
        "format = 1\nname = {}\ndescription = {}\nkind = \"script\"\ntags = [\"imported\", \"skill\"]\ninput_schema_file = \"input.schema.json\"\n\n[run]\nlanguage = {}\nentry = {}\nprotocol = \"plain\"\n",
        toml_str(name),
        toml_str(description),
        toml_str(language),
        toml_str(entry),
    );
    let _ = schema;
    if !pip.is_empty() {
        t.push_str(&format!(
            "\n[dependencies]\npip = [{}]\n",
            pip.iter()
                .map(|p| toml_str(p))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    t
}

/// The script a skill's tool runs, read from its files: its entry, or the script its
/// command-line wrapper runs. For tools imported before `[origin] script` was recorded (a
/// skill's only script); None for an instructions-only tool or an old multi-script dispatcher.
pub(super) fn script_run_by(entry: Option<&str>, files: &[FileAt]) -> Option<String> {
    match entry? {
        INSTRUCTIONS_ENTRY => None,
        CLI_ENTRY => {
            let wrapper = files.iter().find(|f| f.path == CLI_ENTRY)?;
            let line = text_of(wrapper)?
                .lines()
                .find_map(|l| l.strip_prefix("SCRIPT = "))?;
            serde_json::from_str(line.trim()).ok()
        }
        script => Some(script.to_string()),
    }
}

/// Longest suffix a script adds to its skill's name (`<skill>-<suffix>`).
const MAX_SUFFIX_LEN: usize = 40;

/// The name of the tool running one script of a skill with several: `<base>-<suffix>`, the
/// base shortened when both would pass the name limit (the suffix is kept whole: it tells the
/// tools apart).
pub(crate) fn script_tool_name(base: &str, suffix: &str) -> String {
    let room = crate::names::MAX_NAME_LEN.saturating_sub(suffix.len() + 1);
    let base: String = base.chars().take(room).collect();
    format!("{base}-{suffix}")
}

/// Unique name suffixes for a skill's scripts (sorted by path): the file's stem, else the
/// stem and extension, else a number added.
fn suffixes(scripts: &[&FileAt]) -> Vec<String> {
    let clean = |t: &str| -> String {
        let mut s: String = t
            .chars()
            .map(|c| match c.to_ascii_lowercase() {
                c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
                _ => '_',
            })
            .collect();
        s.truncate(MAX_SUFFIX_LEN);
        if s.is_empty() { "script".into() } else { s }
    };
    let file = |f: &FileAt| f.path.rsplit('/').next().unwrap_or(&f.path).to_string();
    let stem = |f: &FileAt| {
        let n = file(f);
        n.rsplit_once('.').map_or(n.clone(), |(a, _)| a.to_string())
    };
    let stems: Vec<String> = scripts.iter().map(|f| clean(&stem(f))).collect();
    let mut out: Vec<String> = Vec::new();
    for (i, f) in scripts.iter().enumerate() {
        let mut s = if stems.iter().filter(|x| **x == stems[i]).count() > 1 {
            clean(&file(f).replace('.', "-"))
        } else {
            stems[i].clone()
        };
        let mut n = 2;
        let first = s.clone();
        while out.contains(&s) {
            s = format!("{}-{n}", &first[..first.len().min(MAX_SUFFIX_LEN - 4)]);
            n += 1;
        }
        out.push(s);
    }
    out
}

/// What a script says it does: argparse's `description=`, else its leading comment or docstring.
fn script_summary(text: &str) -> Option<String> {
    text.find("ArgumentParser(")
        .and_then(|i| kw(&text[i..text.len().min(i + 600)], "description"))
        .filter(|d| !d.is_empty())
        .or_else(|| leading_comment(text))
}

/// The skill as a whole, for each of its tools.
struct Skill<'a> {
    name: String,
    description: String,
    files: &'a [FileAt],
}

/// The tool that runs one callable script with `files` (the script and what it needs).
fn script_tool(
    skill: &Skill,
    files: Vec<FileAt>,
    one: &FileAt,
    name: String,
    description: String,
    mut notes: Vec<String>,
) -> Converted {
    let language = language_of(&one.path).unwrap_or("python");
    let src = text_of(one).unwrap_or("");
    let (pip, missing) = if language == "python" {
        python_dependencies(skill.files, &local_code(skill.files, one))
    } else {
        (Vec::new(), Vec::new())
    };
    if !missing.is_empty() {
        notes.push(format!("missing dependencies (imports with no known package; add them with register_script or tool.toml): {}", missing.join(", ")));
    }
    let mut extra = Vec::new();
    let (entry, language, schema) = if reads_json_stdin(src) {
        notes.push(format!(
            "{} reads its JSON arguments on stdin: it is the tool as it is",
            one.path
        ));
        (one.path.clone(), language, json!({"type": "object"}))
    } else {
        let args = if language == "python" {
            argparse_args(src)
        } else {
            Vec::new()
        };
        notes.push(format!(
            "{} is a command-line script: the tool maps its arguments ({}) to the command line",
            one.path,
            args.iter()
                .map(|a| a.prop.clone())
                .chain(["argv".to_string()])
                .collect::<Vec<_>>()
                .join(", ")
        ));
        extra.push(FileAt {
            path: CLI_ENTRY.into(),
            bytes: cli_wrapper(&one.path, language, &args).into_bytes(),
            executable: false,
        });
        (CLI_ENTRY.to_string(), "python", cli_schema(&args))
    };
    let m = skill_manifest(&name, &description, &entry, language, &pip, &schema);
    let mut all = files;
    all.extend(extra);
    Converted {
        name,
        files: with_manifest(all, &m, Some(&schema)),
        converted_from: Some("agent-skill"),
        inferred_manifest: Some(m),
        notes,
        script: None,
    }
}

/// An Agent Skill, as what it is. Its SKILL.md stays beside each of its tools: its instructions
/// are a resource (`toolsmith://skills/<name>`) and part of the guide (once per skill). Each
/// script that can be called becomes a tool: a script reading JSON on stdin as it is, a
/// command-line script through a wrapper whose schema maps arguments to its command line
/// (argparse options are read from the source). A skill with one script is one tool named as
/// the skill; with several, each is `<skill>-<script stem>` and holds its script, the skill's
/// other files (SKILL.md, helpers, data) and any other script it imports. An instructions-only
/// skill becomes a tool that returns its instructions. Python dependencies are declared from
/// requirements.txt and the well-known imports of the script and the helpers it imports; other
/// imports are listed as missing.
pub(super) fn agent_skill(
    files: &[FileAt],
    f: &FileAt,
    dir_name: &str,
) -> Result<Vec<Converted>, String> {
    let text = text_of(f).ok_or("SKILL.md is not UTF-8")?;
    let (name, desc) = front_matter(text);
    let name = sanitize(name.as_deref().unwrap_or(dir_name));
    let description = desc.ok_or("SKILL.md has no `description` in its front matter")?;
    let mut scripts: Vec<&FileAt> = files.iter().filter(|f| callable(f, files)).collect();
    scripts.sort_by(|a, b| a.path.cmp(&b.path));
    let code: Vec<&FileAt> = files
        .iter()
        .filter(|f| language_of(&f.path) == Some("python"))
        .collect();
    let resource = format!(
        "imported from an Agent Skill: its instructions (SKILL.md) are the resource toolsmith://skills/{name} and part of toolsmith://guide"
    );
    let skill = Skill {
        name: name.clone(),
        description: description.clone(),
        files,
    };
    match scripts.as_slice() {
        [] => {
            let mut notes = vec![resource];
            notes
                .push("it has no script to call: calling the tool returns its instructions".into());
            if !code.is_empty() || files.iter().any(|f| f.path == "requirements.txt") {
                let (pip, missing) = python_dependencies(files, &code);
                notes.push(format!(
                    "its Python code is a library for code written from the instructions (kept with the skill); it needs: {}",
                    pip.iter().chain(missing.iter()).cloned().collect::<Vec<_>>().join(", ")
                ));
            }
            let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
            let m = skill_manifest(
                &name,
                &description,
                INSTRUCTIONS_ENTRY,
                "bash",
                &[],
                &schema,
            );
            let mut all = files.to_vec();
            all.push(FileAt {
                path: INSTRUCTIONS_ENTRY.into(),
                bytes: b"# Written by toolsmith: an instructions-only Agent Skill returns its instructions.\ncat \"$TOOLSMITH_TOOL_DIR/SKILL.md\"\n".to_vec(),
                executable: false,
            });
            Ok(vec![Converted {
                name,
                files: with_manifest(all, &m, Some(&schema)),
                converted_from: Some("agent-skill"),
                inferred_manifest: Some(m),
                notes,
                script: None,
            }])
        }
        [one] => {
            let mut c = script_tool(
                &skill,
                files.to_vec(),
                one,
                name.clone(),
                description.clone(),
                vec![resource],
            );
            c.script = Some(SkillScript {
                path: one.path.clone(),
                suffix: suffixes(&[one]).remove(0),
            });
            Ok(vec![c])
        }
        many => {
            let suffixes = suffixes(many);
            let all: Vec<String> = many.iter().map(|f| f.path.clone()).collect();
            let names: Vec<String> = suffixes
                .iter()
                .map(|s| script_tool_name(&skill.name, s))
                .collect();
            Ok(many
                .iter()
                .zip(&suffixes)
                .zip(&names)
                .map(|((one, suffix), tool)| {
                    // Its script, the scripts it imports, and everything that is not a script.
                    let needs: Vec<&str> = local_code(files, one)
                        .iter()
                        .map(|f| f.path.as_str())
                        .collect();
                    let own: Vec<FileAt> = files
                        .iter()
                        .filter(|f| !all.contains(&f.path) || needs.contains(&f.path.as_str()))
                        .cloned()
                        .collect();
                    let what = script_summary(text_of(one).unwrap_or(""))
                        .unwrap_or_else(|| format!("Run {}", one.path));
                    let mut desc = format!(
                        "{what} ({} of the Agent Skill `{}`: {})",
                        one.path, skill.name, skill.description
                    );
                    if desc.chars().count() > 4000 {
                        desc = desc.chars().take(3999).collect::<String>() + "…";
                    }
                    let others: Vec<&str> = names
                        .iter()
                        .filter(|n| *n != tool)
                        .map(String::as_str)
                        .collect();
                    let notes = vec![
                        format!("{resource} (also toolsmith://skills/{tool})"),
                        format!(
                            "the skill has {} scripts, each its own tool; this one runs {} (the others: {})",
                            many.len(),
                            one.path,
                            others.join(", ")
                        ),
                    ];
                    let mut c = script_tool(&skill, own, one, tool.clone(), desc, notes);
                    c.script = Some(SkillScript {
                        path: one.path.clone(),
                        suffix: suffix.clone(),
                    });
                    c
                })
                .collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(p: &str, t: &str) -> FileAt {
        FileAt {
            path: p.into(),
            bytes: t.as_bytes().to_vec(),
            executable: false,
        }
    }

    #[test]
    fn script_names_are_valid_unique_and_stable() {
        let files = [
            file("scripts/run.py", ""),
            file("bin/run.sh", ""),
            file("scripts/Make Report.py", ""),
        ];
        let refs: Vec<&FileAt> = files.iter().collect();
        assert_eq!(suffixes(&refs), ["run-py", "run-sh", "make_report"]);
        for s in suffixes(&refs) {
            let n = script_tool_name(&"a".repeat(80), &s);
            assert_eq!(n.len(), crate::names::MAX_NAME_LEN, "{n}");
            assert!(n.ends_with(&format!("-{s}")), "{n}");
            crate::names::validate(&n).unwrap();
        }
        assert_eq!(script_tool_name("pdf", "fill_form"), "pdf-fill_form");
    }

    #[test]
    fn a_helper_imported_by_a_script_is_not_a_tool() {
        let files = vec![
            file("scripts/a.py", "import helper\nhelper.go()\n"),
            file("scripts/helper.py", "def go():\n    pass\n"),
            file("scripts/b.py", "#!/usr/bin/env python3\nprint(1)\n"),
            file("scripts/__init__.py", ""),
            file("examples/c.py", "#!/usr/bin/env python3\n"),
        ];
        let callable: Vec<&str> = files
            .iter()
            .filter(|f| callable(f, &files))
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(callable, ["scripts/a.py", "scripts/b.py"]);
        let code: Vec<&str> = local_code(&files, &files[0])
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(code, ["scripts/a.py", "scripts/helper.py"]);
    }
}
