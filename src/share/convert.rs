//! Turn what a repository holds into a toolsmith tool directory: a tool.toml tool as it is, a
//! Skillz tool (`manifest.json`), an Agent Skill (`SKILL.md` with scripts) or a Gist's single
//! script, for which a manifest is inferred (and shown to the caller).

use super::ShareError;
use crate::history::FileAt;
use crate::manifest;
use serde_json::{Value, json};

/// A tool directory ready for validation.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The tool's own name (before any rename by the caller).
    pub name: String,
    pub files: Vec<FileAt>,
    /// None for a tool.toml tool; else "skillz", "agent-skill" or "gist-script".
    pub converted_from: Option<&'static str>,
    /// The tool.toml written by the conversion.
    pub inferred_manifest: Option<String>,
    pub notes: Vec<String>,
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

fn language_of(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    EXTENSIONS.iter().find(|(e, _)| *e == ext).map(|(_, l)| *l)
}

/// A valid tool name made from arbitrary text (lowercase, `_` for other characters).
pub(crate) fn sanitize(text: &str) -> String {
    let mut s: String = text
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        s.insert(0, 't');
    }
    s.truncate(crate::names::MAX_NAME_LEN);
    s
}

fn text_of(f: &FileAt) -> Option<&str> {
    std::str::from_utf8(&f.bytes).ok()
}

/// The first comment line or docstring line of a script, as a description.
fn leading_comment(text: &str) -> Option<String> {
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

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

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

/// Convert the files of one directory of a repository into a tool. `dir_name` is the
/// directory's name ("" for a repository root); `gist` allows the single-script shape.
pub fn convert(files: Vec<FileAt>, dir_name: &str, gist: bool) -> Result<Converted, ShareError> {
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
        return Ok(Converted {
            name,
            files,
            converted_from: None,
            inferred_manifest: None,
            notes: Vec::new(),
        });
    }
    if let Some(f) = find("manifest.json") {
        return skillz(&files, f, dir_name).map_err(not);
    }
    if let Some(f) = find("SKILL.md") {
        return agent_skill(&files, f, dir_name).map_err(not);
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
            return Ok(Converted {
                name,
                files,
                converted_from: Some("gist-script"),
                inferred_manifest: Some(m),
                notes: vec![
                    "the manifest was inferred: the script gets its arguments as JSON on stdin and any JSON it prints is the result; review the description and input schema".into(),
                ],
            });
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

fn with_manifest(mut files: Vec<FileAt>, m: &str, schema: Option<&Value>) -> Vec<FileAt> {
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
        inferred_manifest: Some(m),
        notes: vec!["converted from a Skillz manifest.json (kept beside the new tool.toml); the script gets its arguments as JSON on stdin".into()],
    })
}

/// The YAML front matter fields `name` and `description` of a SKILL.md (simple scalars).
fn front_matter(text: &str) -> (Option<String>, Option<String>) {
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("---") {
        return (None, None);
    }
    let (mut name, mut desc) = (None, None);
    for l in lines {
        if l.trim() == "---" {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            let v = v.trim().trim_matches(['"', '\'']).to_string();
            match k.trim() {
                "name" if !v.is_empty() => name = Some(v),
                "description" if !v.is_empty() && v != "|" && v != ">" => desc = Some(v),
                _ => {}
            }
        }
    }
    (name, desc)
}

/// The file a skill's instruction tool runs: it prints the skill's SKILL.md.
const INSTRUCTIONS_ENTRY: &str = "toolsmith_skill.sh";
/// The wrapper that maps a CLI script's JSON arguments to its command line.
const CLI_ENTRY: &str = "toolsmith_cli.py";

/// Whether a skill's file is a script meant to be called: a known language, not an example
/// or a test, and either in `scripts/` or `bin/`, or a program (a `__main__` guard or a
/// shebang) at the skill's root.
fn callable(f: &FileAt) -> bool {
    let Some(language) = language_of(&f.path) else {
        return false;
    };
    let parts: Vec<&str> = f.path.split('/').collect();
    if parts
        .iter()
        .any(|p| matches!(*p, "examples" | "example" | "tests" | "test" | "templates"))
    {
        return false;
    }
    let text = text_of(f).unwrap_or("");
    if parts.len() == 2 && matches!(parts[0], "scripts" | "bin") {
        return true;
    }
    parts.len() == 1
        && (text.starts_with("#!")
            || (language == "python" && text.contains("__name__") && text.contains("__main__")))
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

/// One command-line argument of a script, as `argparse` declares it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct CliArg {
    /// The JSON property.
    pub prop: String,
    /// The option (`--port`); None for a positional argument.
    pub flag: Option<String>,
    /// "value", "append", "flag" (store_true), "list" (nargs: *, +, REMAINDER).
    pub kind: &'static str,
    /// The JSON type of one value.
    pub ty: &'static str,
    pub required: bool,
    pub help: Option<String>,
}

/// The string literal values in `text` (single or double quoted).
fn literals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c == '\'' || c == '"' {
            let mut v = String::new();
            for (_, d) in chars.by_ref() {
                if d == c {
                    break;
                }
                v.push(d);
            }
            out.push(v);
        }
    }
    out
}

/// The value of `key=...` in an `add_argument(...)` call: a literal or a bare word.
fn kw(call: &str, key: &str) -> Option<String> {
    let i = call.find(&format!("{key}="))? + key.len() + 1;
    let rest = call[i..].trim_start();
    if rest.starts_with(['\'', '"']) {
        return literals(rest).into_iter().next();
    }
    Some(
        rest.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            .collect(),
    )
}

/// The arguments a Python script declares with argparse's `add_argument` (best effort: a
/// script it cannot read still gets `argv`).
pub(crate) fn argparse_args(text: &str) -> Vec<CliArg> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("add_argument(") {
        let start = i + "add_argument(".len();
        let mut depth = 1;
        let mut end = start;
        for (j, c) in text[start..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + j;
                        break;
                    }
                }
                _ => {}
            }
        }
        let call = &text[start..end];
        // The names are the leading string literals, before any keyword.
        let head = call.split('=').next().unwrap_or("");
        let names: Vec<String> = literals(head)
            .into_iter()
            .filter(|n| !n.is_empty())
            .collect();
        let Some(first) = names.first() else { continue };
        let flag = names
            .iter()
            .find(|n| n.starts_with("--"))
            .or_else(|| names.iter().find(|n| n.starts_with('-')))
            .cloned();
        let prop = kw(call, "dest").unwrap_or_else(|| {
            flag.as_deref()
                .unwrap_or(first)
                .trim_start_matches('-')
                .replace('-', "_")
        });
        let action = kw(call, "action").unwrap_or_default();
        let nargs = kw(call, "nargs").unwrap_or_default();
        let kind = match (action.as_str(), nargs.as_str()) {
            ("store_true" | "store_false", _) => "flag",
            ("append", _) => "append",
            (_, "*" | "+" | "argparse.REMAINDER" | "REMAINDER") => "list",
            _ => "value",
        };
        let ty = match kw(call, "type").as_deref() {
            Some("int") => "integer",
            Some("float") => "number",
            _ if kind == "flag" => "boolean",
            _ => "string",
        };
        let required = flag.is_none()
            && !matches!(nargs.as_str(), "*" | "?" | "argparse.REMAINDER")
            || kw(call, "required").as_deref() == Some("True");
        out.push(CliArg {
            prop,
            flag: if first.starts_with('-') { flag } else { None },
            kind,
            ty,
            required,
            help: kw(call, "help"),
        });
    }
    out
}

/// The input schema of a command-line script: its argparse arguments, plus `argv` (more
/// command-line arguments, appended as they are).
fn cli_schema(args: &[CliArg]) -> Value {
    let mut props = serde_json::Map::new();
    let mut required = Vec::new();
    for a in args {
        let one = json!({"type": a.ty});
        let mut p = match a.kind {
            "append" | "list" => json!({"type": "array", "items": one}),
            _ => one,
        };
        let how = match (&a.flag, a.kind) {
            (Some(f), "append") => format!("{f} once per item"),
            (Some(f), "flag") => format!("{f} when true"),
            (Some(f), _) => f.clone(),
            (None, _) => "positional".into(),
        };
        let help = a
            .help
            .clone()
            .map(|h| format!("{h} ({how})"))
            .unwrap_or(how);
        p["description"] = json!(help);
        if a.required {
            required.push(a.prop.clone());
        }
        props.insert(a.prop.clone(), p);
    }
    props.insert(
        "argv".into(),
        json!({"type": "array", "items": {"type": "string"}, "description": "More command-line arguments, appended as given"}),
    );
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// The Python wrapper that turns JSON arguments into the script's command line and runs it.
fn cli_wrapper(script: &str, language: &str, args: &[CliArg]) -> String {
    let interpreter = match language {
        "python" => "[sys.executable]".to_string(),
        other => {
            let cmd = crate::manifest::default_interpreter(other)
                .unwrap_or_else(|| vec![other.to_string()]);
            serde_json::to_string(&cmd).unwrap_or_default()
        }
    };
    let spec = serde_json::to_string(args).unwrap_or_else(|_| "[]".into());
    format!(
        r#"# Written by toolsmith when it imported this Agent Skill: runs {script} with the JSON
# arguments (stdin) mapped to its command line; its output and exit status are the result.
import json, os, subprocess, sys
SCRIPT = {script:?}
SPEC = json.loads({spec:?})
raw = sys.stdin.read()
args = json.loads(raw) if raw.strip() else {{}}
argv, rest = [], []
for a in SPEC:
    if a["prop"] not in args or args[a["prop"]] is None:
        continue
    v = args[a["prop"]]
    values = v if isinstance(v, list) else [v]
    if a["flag"] is None:
        rest += [str(x) for x in values]
    elif a["kind"] == "flag":
        if v:
            argv.append(a["flag"])
    else:
        for x in values if a["kind"] == "append" else [values]:
            argv.append(a["flag"])
            argv += [str(y) for y in (x if isinstance(x, list) else [x])]
if rest and any(x.startswith("-") for x in rest):
    rest = ["--"] + rest
argv += rest + [str(x) for x in args.get("argv", [])]
here = os.path.dirname(os.path.abspath(__file__))
r = subprocess.run({interpreter} + [os.path.join(here, SCRIPT)] + argv)
sys.exit(r.returncode)
"#
    )
}

/// Python modules of the standard library (for telling dependencies from stdlib imports).
const PY_STDLIB: &[&str] = &[
    "__future__",
    "abc",
    "argparse",
    "array",
    "ast",
    "asyncio",
    "base64",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "calendar",
    "cmath",
    "codecs",
    "collections",
    "colorsys",
    "concurrent",
    "configparser",
    "contextlib",
    "copy",
    "csv",
    "ctypes",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "email",
    "enum",
    "errno",
    "fnmatch",
    "fractions",
    "functools",
    "gc",
    "getpass",
    "glob",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "logging",
    "lzma",
    "math",
    "mimetypes",
    "multiprocessing",
    "numbers",
    "operator",
    "os",
    "pathlib",
    "pickle",
    "platform",
    "pprint",
    "queue",
    "random",
    "re",
    "secrets",
    "select",
    "shlex",
    "shutil",
    "signal",
    "socket",
    "sqlite3",
    "ssl",
    "stat",
    "statistics",
    "string",
    "struct",
    "subprocess",
    "sys",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "time",
    "timeit",
    "tomllib",
    "traceback",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "uuid",
    "warnings",
    "weakref",
    "xml",
    "zipfile",
    "zlib",
    "zoneinfo",
];

/// pip packages of well-known imports whose names differ or are certain.
const PY_PACKAGES: &[(&str, &str)] = &[
    ("PIL", "pillow"),
    ("yaml", "pyyaml"),
    ("cv2", "opencv-python"),
    ("bs4", "beautifulsoup4"),
    ("sklearn", "scikit-learn"),
    ("numpy", "numpy"),
    ("pandas", "pandas"),
    ("requests", "requests"),
    ("playwright", "playwright"),
    ("imageio", "imageio"),
];

/// The top-level modules a Python source imports.
fn py_imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let names: Vec<&str> = if let Some(rest) = l.strip_prefix("import ") {
            rest.split(',')
                .map(|m| m.split_whitespace().next().unwrap_or(""))
                .collect()
        } else if let Some(rest) = l.strip_prefix("from ") {
            vec![rest.split_whitespace().next().unwrap_or("")]
        } else {
            continue;
        };
        for n in names {
            let top = n.split('.').next().unwrap_or("").to_string();
            if !top.is_empty() && !out.contains(&top) {
                out.push(top);
            }
        }
    }
    out
}

/// The pip requirements of a skill's code (requirements.txt, else the known packages its
/// Python imports), and the imports it could not map to a package.
fn python_dependencies(files: &[FileAt], code: &[&FileAt]) -> (Vec<String>, Vec<String>) {
    let local: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let p = f.path.strip_suffix(".py")?;
            Some(p.rsplit('/').next().unwrap_or(p).to_string())
        })
        .chain(
            files
                .iter()
                .filter_map(|f| f.path.split_once('/').map(|(d, _)| d.to_string())),
        )
        .collect();
    let requirements: Vec<String> = files
        .iter()
        .find(|f| f.path == "requirements.txt")
        .and_then(text_of)
        .map(|t| {
            t.lines()
                .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
                .filter(|l| !l.is_empty() && !l.starts_with('-'))
                .collect()
        })
        .unwrap_or_default();
    let mut declared = requirements.clone();
    let mut missing = Vec::new();
    for f in code {
        for m in py_imports(text_of(f).unwrap_or("")) {
            if PY_STDLIB.contains(&m.as_str()) || local.contains(&m) {
                continue;
            }
            let in_requirements = requirements
                .iter()
                .any(|r| r.to_ascii_lowercase().starts_with(&m.to_ascii_lowercase()));
            match PY_PACKAGES.iter().find(|(i, _)| *i == m) {
                _ if in_requirements => {}
                Some((_, pkg))
                    if !requirements
                        .iter()
                        .any(|r| r.to_ascii_lowercase().starts_with(pkg)) =>
                {
                    if !declared.iter().any(|d| d == pkg) {
                        declared.push(pkg.to_string());
                    }
                }
                Some(_) => {}
                None => {
                    if !missing.contains(&m) {
                        missing.push(m);
                    }
                }
            }
        }
    }
    (declared, missing)
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

/// An Agent Skill, as what it is. Its SKILL.md stays beside the tool: its instructions are a
/// resource (`toolsmith://skills/<name>`) and part of the guide. A skill with one script that
/// can be called becomes that tool: a script reading JSON on stdin as it is, a command-line
/// script through a wrapper whose schema maps arguments to its command line (argparse options
/// are read from the source). A skill with several scripts becomes one tool that takes the
/// `script` to run and its `argv`. An instructions-only skill becomes a tool that returns its
/// instructions. Python dependencies are declared from requirements.txt and well-known imports;
/// other imports are listed as missing.
fn agent_skill(files: &[FileAt], f: &FileAt, dir_name: &str) -> Result<Converted, String> {
    let text = text_of(f).ok_or("SKILL.md is not UTF-8")?;
    let (name, desc) = front_matter(text);
    let name = sanitize(name.as_deref().unwrap_or(dir_name));
    let description = desc.ok_or("SKILL.md has no `description` in its front matter")?;
    let scripts: Vec<&FileAt> = files.iter().filter(|f| callable(f)).collect();
    let code: Vec<&FileAt> = files
        .iter()
        .filter(|f| language_of(&f.path) == Some("python"))
        .collect();
    let mut notes = vec![format!(
        "imported from an Agent Skill: its instructions (SKILL.md) are the resource toolsmith://skills/{name} and part of toolsmith://guide"
    )];
    let mut extra: Vec<FileAt> = Vec::new();
    let (entry, language, schema, pip) = match scripts.as_slice() {
        [] => {
            extra.push(FileAt {
                path: INSTRUCTIONS_ENTRY.into(),
                bytes: b"# Written by toolsmith: an instructions-only Agent Skill returns its instructions.\ncat \"$TOOLSMITH_TOOL_DIR/SKILL.md\"\n".to_vec(),
                executable: false,
            });
            notes
                .push("it has no script to call: calling the tool returns its instructions".into());
            if !code.is_empty() || files.iter().any(|f| f.path == "requirements.txt") {
                let (pip, missing) = python_dependencies(files, &code);
                notes.push(format!(
                    "its Python code is a library for code written from the instructions (kept with the skill); it needs: {}",
                    pip.iter().chain(missing.iter()).cloned().collect::<Vec<_>>().join(", ")
                ));
            }
            (
                INSTRUCTIONS_ENTRY.to_string(),
                "bash",
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
                Vec::new(),
            )
        }
        [one] => {
            let language = language_of(&one.path).unwrap_or("python");
            let src = text_of(one).unwrap_or("");
            let (pip, missing) = if language == "python" {
                python_dependencies(files, &[*one])
            } else {
                (Vec::new(), Vec::new())
            };
            if !missing.is_empty() {
                notes.push(format!("missing dependencies (imports with no known package; add them with register_script or tool.toml): {}", missing.join(", ")));
            }
            if reads_json_stdin(src) {
                notes.push(format!(
                    "{} reads its JSON arguments on stdin: it is the tool as it is",
                    one.path
                ));
                (one.path.clone(), language, json!({"type": "object"}), pip)
            } else {
                let args = if language == "python" {
                    argparse_args(src)
                } else {
                    Vec::new()
                };
                notes.push(format!(
                    "{} is a command-line script: the tool maps its arguments ({}) to the command line",
                    one.path,
                    args.iter().map(|a| a.prop.clone()).chain(["argv".to_string()]).collect::<Vec<_>>().join(", ")
                ));
                extra.push(FileAt {
                    path: CLI_ENTRY.into(),
                    bytes: cli_wrapper(&one.path, language, &args).into_bytes(),
                    executable: false,
                });
                (CLI_ENTRY.to_string(), "python", cli_schema(&args), pip)
            }
        }
        many => {
            let paths: Vec<String> = many.iter().map(|f| f.path.clone()).collect();
            let (pip, missing) = python_dependencies(files, many);
            if !missing.is_empty() {
                notes.push(format!("missing dependencies: {}", missing.join(", ")));
            }
            notes.push(format!(
                "{} scripts: pass `script` (one of {}) and its `argv`",
                paths.len(),
                paths.join(", ")
            ));
            let wrapper = format!(
                "# Written by toolsmith: runs one of this Agent Skill's scripts with `argv`.\nimport json, os, subprocess, sys\nraw = sys.stdin.read()\nargs = json.loads(raw) if raw.strip() else {{}}\nSCRIPTS = {}\nscript = args.get(\"script\")\nif script not in SCRIPTS:\n    sys.exit(f\"script must be one of {{SCRIPTS}}, not {{script!r}}\")\nhere = os.path.dirname(os.path.abspath(__file__))\ncmd = [sys.executable] if script.endswith('.py') else ['bash'] if script.endswith('.sh') else ['node'] if script.endswith('.js') else []\nr = subprocess.run(cmd + [os.path.join(here, script)] + [str(a) for a in args.get(\"argv\", [])])\nsys.exit(r.returncode)\n",
                serde_json::to_string(&paths).unwrap_or_default()
            );
            extra.push(FileAt {
                path: CLI_ENTRY.into(),
                bytes: wrapper.into_bytes(),
                executable: false,
            });
            (
                CLI_ENTRY.to_string(),
                "python",
                json!({"type": "object", "required": ["script"], "additionalProperties": false, "properties": {
                    "script": {"type": "string", "enum": paths, "description": "The script to run"},
                    "argv": {"type": "array", "items": {"type": "string"}, "description": "Its command-line arguments"}}}),
                pip,
            )
        }
    };
    let m = skill_manifest(&name, &description, &entry, language, &pip, &schema);
    let mut all = files.to_vec();
    all.extend(extra);
    Ok(Converted {
        name,
        files: with_manifest(all, &m, Some(&schema)),
        converted_from: Some("agent-skill"),
        inferred_manifest: Some(m),
        notes,
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
        let (n, d) =
            front_matter("---\nname: pdf-tools\ndescription: \"Work with PDFs\"\n---\n# x\n");
        assert_eq!(
            (n.as_deref(), d.as_deref()),
            (Some("pdf-tools"), Some("Work with PDFs"))
        );
    }
}
