//! Command-line scripts of a skill as tools: the arguments a Python script declares with
//! argparse, the input schema they make, and the wrapper that maps JSON arguments to the
//! script's command line.

use serde_json::{Value, json};

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
pub(super) fn literals(text: &str) -> Vec<String> {
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
pub(super) fn kw(call: &str, key: &str) -> Option<String> {
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
pub(super) fn cli_schema(args: &[CliArg]) -> Value {
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
pub(super) fn cli_wrapper(script: &str, language: &str, args: &[CliArg]) -> String {
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
}
