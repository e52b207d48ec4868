//! Agent Skills (`SKILL.md` with instructions, and maybe scripts, examples or a package) as
//! toolsmith tools: the instructions stay beside the tool (a resource and part of the guide),
//! a callable script becomes what the tool runs, with a schema mapping arguments to its command
//! line, and Python dependencies are inferred or reported as missing. Nothing is run here.

use super::convert::{
    Converted, SkillScript, front_matter, language_of, sanitize, text_of, toml_str, with_manifest,
};
use crate::history::FileAt;
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
#[rustfmt::skip]
const PY_STDLIB: &[&str] = &[
    "__future__", "abc", "argparse", "array", "ast", "asyncio", "base64", "binascii", "bisect",
    "builtins", "bz2", "calendar", "cmath", "codecs", "collections", "colorsys", "concurrent",
    "configparser", "contextlib", "copy", "csv", "ctypes", "dataclasses", "datetime", "decimal",
    "difflib", "email", "enum", "errno", "fnmatch", "fractions", "functools", "gc", "getpass",
    "glob", "gzip", "hashlib", "heapq", "hmac", "html", "http", "importlib", "inspect", "io",
    "ipaddress", "itertools", "json", "keyword", "logging", "lzma", "math", "mimetypes",
    "multiprocessing", "numbers", "operator", "os", "pathlib", "pickle", "platform", "pprint",
    "queue", "random", "re", "secrets", "select", "shlex", "shutil", "signal", "socket",
    "sqlite3", "ssl", "stat", "statistics", "string", "struct", "subprocess", "sys", "tarfile",
    "tempfile", "textwrap", "threading", "time", "timeit", "tomllib", "traceback", "types",
    "typing", "unicodedata", "unittest", "urllib", "uuid", "warnings", "weakref", "xml",
    "zipfile", "zlib", "zoneinfo",
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

/// Python module names a file of the skill provides (`helper` for `scripts/helper.py`, `core`
/// for `core/…`).
fn module_names(f: &FileAt) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = f.path.strip_suffix(".py") {
        out.push(p.rsplit('/').next().unwrap_or(p).to_string());
    }
    if let Some((dir, _)) = f.path.split_once('/') {
        out.push(dir.to_string());
    }
    out
}

/// The skill's Python files `script` imports, directly or through each other (itself first).
fn local_code<'a>(files: &'a [FileAt], script: &'a FileAt) -> Vec<&'a FileAt> {
    let mut out = vec![script];
    let mut i = 0;
    while i < out.len() {
        let imports = if language_of(&out[i].path) == Some("python") {
            py_imports(text_of(out[i]).unwrap_or(""))
        } else {
            Vec::new()
        };
        for f in files {
            if language_of(&f.path) == Some("python")
                && !out.iter().any(|o| o.path == f.path)
                && module_names(f).iter().any(|m| imports.contains(m))
            {
                out.push(f);
            }
        }
        i += 1;
    }
    out
}

/// What a script says it does: argparse's `description=`, else its leading comment or docstring.
fn script_summary(text: &str) -> Option<String> {
    text.find("ArgumentParser(")
        .and_then(|i| kw(&text[i..text.len().min(i + 600)], "description"))
        .filter(|d| !d.is_empty())
        .or_else(|| super::convert::leading_comment(text))
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

    #[test]
    fn argparse_arguments_become_properties() {
        let src = "p.add_argument('--server', action='append', dest='servers', required=True, help='Server command')\np.add_argument('--port', action='append', dest='ports', type=int, required=True)\np.add_argument('--timeout', type=int, default=30)\np.add_argument('command', nargs=argparse.REMAINDER)\np.add_argument('-v', '--verbose', action='store_true')\n";
        let args = argparse_args(src);
        let got: Vec<(&str, Option<&str>, &str, &str, bool)> = args
            .iter()
            .map(|a| (a.prop.as_str(), a.flag.as_deref(), a.kind, a.ty, a.required))
            .collect();
        assert_eq!(
            got,
            [
                ("servers", Some("--server"), "append", "string", true),
                ("ports", Some("--port"), "append", "integer", true),
                ("timeout", Some("--timeout"), "value", "integer", false),
                ("command", None, "list", "string", false),
                ("verbose", Some("--verbose"), "flag", "boolean", false),
            ]
        );
    }

    #[test]
    fn python_dependencies_are_inferred_or_missing() {
        let f = |p: &str, t: &str| FileAt {
            path: p.into(),
            bytes: t.as_bytes().to_vec(),
            executable: false,
        };
        let files = vec![
            f(
                "scripts/a.py",
                "import json, os\nfrom PIL import Image\nimport helper\nimport weirdlib\n",
            ),
            f("scripts/helper.py", "import numpy as np\n"),
        ];
        let code: Vec<&FileAt> = files.iter().collect();
        let (declared, missing) = python_dependencies(&files, &code);
        assert_eq!(declared, ["pillow", "numpy"]);
        assert_eq!(missing, ["weirdlib"]);
    }

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
