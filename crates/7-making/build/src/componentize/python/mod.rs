//! What a Python component build adds to componentize-py's: the tool written as a person
//! writes Python first — a module-level function (the one named after the tool, else `call`,
//! else the only public one), its parameters from the input schema or its annotations,
//! returning any JSON value or raising — with toolsmith's module around it
//! (`.build/toolsmith_entry.py`, from `entry.py`): it gives the world's values to the function
//! as plain ones and back, and makes an exception the tool's error with its traceback. The
//! class form (`class WitWorld`) is kept, wrapped the same way for a generated world.
//!
//! A component finds at call time only the modules loaded when it was built (componentize-py
//! runs the module once and keeps that state; the standard library is not in the component),
//! so the module loads every module app.py imports, even inside a function, and the ones the
//! standard library itself imports lazily (`_strptime`, the text codecs). What app.py imports is
//! read first (`analyze.py`, on the host's Python, contained; nothing of app.py runs): a module
//! that cannot work in a component (sockets, processes, threads, native libraries it lacks) or
//! that is not in the standard library is refused by name before anything is built.

use super::Chain;
use crate::BuildError;
use crate::config::SandboxConfig;
use crate::manifest::Manifest;
use crate::sandbox::contained::{self, Job, Network};
use crate::wit_gen;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

mod modules;

/// The module componentize-py builds when toolsmith wraps app.py.
pub(super) const MODULE: &str = "toolsmith_entry";

/// Where it is written (inside the work directory, removed with `.build`).
const WRAPPED: &str = ".build/toolsmith_entry.py";

const ANALYZE: &str = include_str!("analyze.py");
const ENTRY: &str = include_str!("entry.py");

/// What app.py is, as `analyze.py` read it.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct Analysis {
    /// `class` (it defines `WitWorld`), `function`, or None (neither).
    form: Option<String>,
    /// The tool's function.
    function: Option<String>,
    /// Every module-level function.
    functions: Vec<String>,
    /// The function's parameters.
    params: Vec<Param>,
    /// Every module imported, anywhere in it.
    imports: Vec<modules::Import>,
    /// Why it could not be read (a syntax error).
    error: Option<String>,
    /// Its `**kwargs`, if any.
    kwargs: Option<String>,
}

/// A parameter of the tool's function.
#[derive(Debug, Clone, Deserialize)]
struct Param {
    name: String,
    /// The JSON Schema its annotation says.
    schema: Value,
    /// It has a default value.
    default: bool,
    /// That value, when it is a JSON literal (as a list of one).
    #[serde(default)]
    value: Vec<Value>,
    line: u64,
}

/// The interpreter componentize-py runs on: where `analyze.py` runs.
fn interpreter(chain: &Chain, tool: &str) -> Result<String, BuildError> {
    chain
        .python
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .ok_or_else(|| BuildError::Python {
            tool: tool.to_string(),
            message: format!(
                "the Python that runs componentize-py ({}) cannot be found from its first line, so app.py cannot be read",
                chain.exe.display()
            ),
            hint: "install componentize-py in a venv (`pip install componentize-py==0.25.1`) and point TOOLSMITH_COMPONENTIZE_PY at its bin/componentize-py".into(),
        })
}

/// Read `dir/app.py` (contained, as the build runs: no network, nothing writable).
pub(super) async fn analyze(
    chain: &Chain,
    tool: &str,
    dir: &Path,
    sandbox: &SandboxConfig,
    cancel: &CancellationToken,
) -> Result<Analysis, BuildError> {
    let python = interpreter(chain, tool)?;
    let job = Job {
        what: format!("reading app.py of {tool}"),
        argv: vec![
            python,
            "-I".into(),
            "-S".into(),
            "-c".into(),
            ANALYZE.into(),
            tool.into(),
        ],
        env: vec![
            ("PATH".into(), contained::path_with(&[])),
            ("LANG".into(), "C.UTF-8".into()),
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        ],
        cwd: dir.to_path_buf(),
        read: chain
            .visible
            .iter()
            .cloned()
            .chain([dir.to_path_buf()])
            .collect(),
        write: Vec::new(),
        network: Network::None,
        config: sandbox,
    };
    let out = tokio::select! {
        _ = cancel.cancelled() => return Err(BuildError::Cancelled { tool: tool.to_string() }),
        out = contained::output(&job, Duration::from_secs(60)) => out.map_err(|e| {
            use toolsmith_error::Hint;
            BuildError::Sandbox { tool: tool.to_string(), hint: e.hint().unwrap_or_default(), message: e.to_string() }
        })?,
    };
    if !out.success {
        return Err(BuildError::Internal {
            message: format!(
                "reading app.py failed ({}): {}",
                out.status,
                out.stderr.trim()
            ),
        });
    }
    serde_json::from_str(&out.stdout).map_err(|e| BuildError::Internal {
        message: format!(
            "reading app.py gave no analysis ({e}): {}",
            out.stdout.trim()
        ),
    })
}

/// Read `source` as app.py in a directory of its own (before the build's work directory
/// exists: for the schema its annotations say).
pub(super) async fn analyze_source(
    chain: &Chain,
    tool: &str,
    source: &str,
    sandbox: &SandboxConfig,
    cancel: &CancellationToken,
) -> Result<Analysis, BuildError> {
    let dir = tempfile::tempdir().map_err(BuildError::io("create", Path::new("(temp)")))?;
    let path = dir.path().join("app.py");
    std::fs::write(&path, source).map_err(BuildError::io("write", &path))?;
    analyze(chain, tool, dir.path(), sandbox, cancel).await
}

/// The input schema the function's parameters say: each a property (its annotation's schema,
/// its default), required when it has no default. None for the class form or no function.
pub(super) fn input_schema(a: &Analysis) -> Option<Map<String, Value>> {
    if a.form.as_deref() != Some("function") {
        return None;
    }
    let mut props = Map::new();
    let mut required = Vec::new();
    for p in &a.params {
        let mut s = p.schema.clone();
        if let (Value::Object(o), Some(v)) = (&mut s, p.value.first()) {
            o.insert("default".into(), v.clone());
        }
        props.insert(p.name.clone(), s);
        if !p.default {
            required.push(Value::String(p.name.clone()));
        }
    }
    Some(
        json!({"type": "object", "properties": props, "required": required})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
}

/// For a Python function given as `source` with no `input_schema` and a WIT toolsmith
/// generates: the input schema its parameters' annotations say, into the request (so
/// tool.toml lists it and the WIT is generated from it). The previous version's schema is kept
/// when it names the same properties (its descriptions stay).
pub(crate) async fn declare_input(
    config: &crate::config::Config,
    req: &mut crate::BuildRequest,
    files: &std::collections::BTreeMap<String, Vec<u8>>,
    previous: Option<&Manifest>,
    cancel: &CancellationToken,
) -> Result<(), BuildError> {
    let generated = files
        .get(crate::WIT_FILE)
        .is_none_or(|w| w.starts_with(wit_gen::GENERATED.as_bytes()));
    let Some(source) = req.source.as_deref() else {
        return Ok(());
    };
    if req.wit.is_some() || req.declared.input_schema.is_some() || !generated {
        return Ok(());
    }
    let exe = config.componentize_py.clone();
    let sandbox = config.sandbox.clone();
    let chain =
        crate::blocking(move || super::resolve(super::Language::Python, &exe, &sandbox)).await?;
    let a = analyze_source(&chain, &req.name, source, &config.sandbox, cancel).await?;
    let Some(derived) = input_schema(&a) else {
        return Ok(());
    };
    // The same properties of the same types: the previous schema, with its descriptions.
    let types = |s: &Map<String, Value>| {
        s.get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .map(|(k, v)| {
                        let mut v = v.clone();
                        if let Some(o) = v.as_object_mut() {
                            for words in ["description", "title", "examples"] {
                                o.remove(words);
                            }
                        }
                        (k.clone(), v)
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let kept = previous
        .and_then(|m| m.input_schema.as_deref())
        .filter(|old| types(old) == types(&derived));
    if kept.is_none() {
        req.declared.input_schema = Some(derived);
    }
    Ok(())
}

/// Write the module componentize-py builds for the tool in `work` and say its name: app.py
/// itself when it does not parse (componentize-py then says where), else toolsmith's module
/// around it.
pub(super) async fn prepare(
    chain: &Chain,
    tool: &str,
    manifest: &Manifest,
    world: &str,
    work: &Path,
    sandbox: &SandboxConfig,
    cancel: &CancellationToken,
) -> Result<&'static str, BuildError> {
    let a = analyze(chain, tool, work, sandbox, cancel).await?;
    if a.error.is_some() {
        return Ok("app");
    }
    let (preload, optional) = modules::check(&a.imports, tool)?;
    let mut config = json!({
        "form": "plain",
        "preload": preload,
        "optional": optional,
        "params": [],
        "result": {"t": "text"},
    });
    if let Some(w) = crate::component::generated_world(manifest, world, work)? {
        config["result"] = serde_json::to_value(&w.result).unwrap_or_default();
        match a.form.as_deref() {
            Some("class") => config["form"] = json!("class"),
            Some("function") => {
                config["form"] = json!("function");
                config["function"] = json!(a.function);
                config["params"] = Value::Array(params(&a, &w.params, tool)?);
            }
            _ => return Err(no_function(&a, tool)),
        }
    }
    let text = ENTRY.replace(
        "__CONFIG__",
        &serde_json::to_string(&config.to_string()).unwrap_or_default(),
    );
    let path = work.join(WRAPPED);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(BuildError::io("create", dir))?;
    }
    std::fs::write(&path, text).map_err(BuildError::io("write", &path))?;
    Ok(MODULE)
}

/// Why app.py has no function to be the tool.
fn no_function(a: &Analysis, tool: &str) -> BuildError {
    let f = tool.replace('-', "_");
    let message = if a.functions.is_empty() {
        "app.py defines no module-level function".to_string()
    } else {
        format!(
            "app.py defines several functions ({}) and none is named `{f}` (after the tool) or `call`",
            a.functions.join(", ")
        )
    };
    BuildError::Python {
        tool: tool.to_string(),
        message,
        hint: format!(
            "write the tool as a function named after it, e.g. `def {f}(text: str) -> int:` returning any JSON value (helpers may start with `_`); toolsmith://guide, Python as a component"
        ),
    }
}

/// Each parameter of the world with the function's parameter it is given as: the property
/// named like it, or through `**kwargs`. Every parameter without a default needs a property.
fn params(a: &Analysis, world: &[wit_gen::Field], tool: &str) -> Result<Vec<Value>, BuildError> {
    let function = a.function.clone().unwrap_or_default();
    let names: Vec<&str> = a.params.iter().map(|p| p.name.as_str()).collect();
    let signature = format!("{function}({})", names.join(", "));
    let bad = |message: String| {
        BuildError::Python {
        tool: tool.to_string(),
        message,
        hint: "name the input schema's properties after the function's parameters (or leave input_schema out: the annotations give it)".into(),
    }
    };
    let mut out = Vec::new();
    for f in world {
        let param = a.params.iter().find(|p| p.name == f.key);
        let default = match (param, &a.kwargs) {
            (Some(p), _) => p.default,
            (None, Some(_)) if is_identifier(&f.key) => true,
            _ => {
                return Err(bad(format!(
                    "input_schema's property `{}` is no parameter of {signature}",
                    f.key
                )));
            }
        };
        let mut v = serde_json::to_value(f).unwrap_or_default();
        v["py"] = json!(f.key);
        v["default"] = json!(default);
        out.push(v);
    }
    if let Some(p) = a
        .params
        .iter()
        .find(|p| !p.default && !world.iter().any(|f| f.key == p.name))
    {
        return Err(bad(format!(
            "parameter `{}` of {signature} (app.py, line {}) has no default and no property in input_schema",
            p.name, p.line
        )));
    }
    Ok(out)
}

fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// analyze.py on the host's Python, as a build runs it (uncontained here).
    fn analysis(source: &str, tool: &str) -> Analysis {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("app.py"), source).expect("write");
        let out = std::process::Command::new("python3")
            .args(["-I", "-S", "-c", ANALYZE, tool])
            .current_dir(dir.path())
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("an analysis")
    }

    #[test]
    fn annotations_give_the_input_schema() {
        let a = analysis(
            "from typing import Optional, Any\n\ndef _helper():\n    pass\n\ndef pairs(a: int, b: tuple[int, str], c: Optional[dict[str, float]] = None, d: int | str = 1, e: Any = None, *, f: list[bool] = []) -> dict:\n    import hashlib\n    return {}\n",
            "other-name",
        );
        assert_eq!(
            a.function.as_deref(),
            Some("pairs"),
            "the only public function"
        );
        let s = Value::Object(input_schema(&a).expect("a schema"));
        assert_eq!(s["required"], json!(["a", "b"]));
        assert_eq!(s["properties"]["a"], json!({"type": "integer"}));
        assert_eq!(
            s["properties"]["b"],
            json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false, "minItems": 2, "maxItems": 2})
        );
        assert_eq!(
            s["properties"]["c"],
            json!({"anyOf": [{"type": "object", "additionalProperties": {"type": "number"}}, {"type": "null"}], "default": null})
        );
        assert_eq!(
            s["properties"]["d"],
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 1})
        );
        assert_eq!(s["properties"]["e"], json!({"default": null}));
        assert_eq!(
            s["properties"]["f"],
            json!({"type": "array", "items": {"type": "boolean"}, "default": []})
        );
        // Every form has WIT: the generator takes what the annotations say.
        let w = wit_gen::generate("tool", s.as_object(), None).expect("a world");
        assert!(w.wit.contains("%b: tuple<s64, string>"), "{}", w.wit);
        let hashlib = a
            .imports
            .iter()
            .find(|i| i.name == "hashlib")
            .expect("found");
        assert_eq!(hashlib.line, 7);
    }

    #[test]
    fn the_function_is_named_after_the_tool_or_call() {
        let two = "def add(a, b):\n    return a + b\n\ndef call(x):\n    return x\n";
        assert_eq!(analysis(two, "add").function.as_deref(), Some("add"));
        assert_eq!(analysis(two, "sum").function.as_deref(), Some("call"));
        let none = analysis("def a():\n    pass\n\ndef b():\n    pass\n", "sum");
        assert_eq!(none.form, None);
        let e = no_function(&none, "sum").to_string();
        assert!(e.contains("several functions (a, b)"), "{e}");
        let class = analysis("class WitWorld:\n    pass\n\ndef f():\n    pass\n", "x");
        assert_eq!(class.form.as_deref(), Some("class"));
        assert!(analysis("def f(:\n", "x").error.is_some());
    }

    #[test]
    fn the_entry_module_carries_its_configuration_as_a_python_string() {
        let config = json!({"form": "function", "s": "quote \" and \\ and é\n"});
        let text = ENTRY.replace(
            "__CONFIG__",
            &serde_json::to_string(&config.to_string()).expect("json"),
        );
        let line = text
            .lines()
            .find(|l| l.starts_with("CONFIG = "))
            .expect("the line");
        let out = std::process::Command::new("python3")
            .args([
                "-I",
                "-S",
                "-c",
                &format!("import json as _json\n{line}\nprint(_json.dumps(CONFIG))"),
            ])
            .output()
            .expect("python3 runs");
        let back: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(back, config);
    }
}
