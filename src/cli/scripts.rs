//! `toolsmith register`: store a script tool from a source file, with flags or a JSON spec
//! (the same fields as the MCP `register_script` tool).

use super::output::{self, UserError};
use crate::error::{HostCode, HostError};
use crate::manifest::{Example, Protocol, SandboxMode};
use crate::register::{self, ScriptSpec};
use crate::toolbox::Actor;
use anyhow::Result;
use serde_json::{Value, json};
use std::path::PathBuf;

/// The `register` command's arguments.
#[derive(Debug, clap::Args)]
pub struct RegisterArgs {
    /// Tool name.
    pub name: String,
    /// The source file of the tool ("-" reads stdin).
    #[arg(long, value_name = "FILE")]
    pub code: Option<PathBuf>,
    /// A JSON file with any register_script fields (flags given as well override it).
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,
    /// python, node, ruby, bash, perl, php (or other, with --interpreter).
    #[arg(long, short)]
    pub language: Option<String>,
    /// Interpreter command, e.g. "lua5.4" (repeat for leading arguments).
    #[arg(long)]
    pub interpreter: Vec<String>,
    /// What the tool does.
    #[arg(long, short)]
    pub description: Option<String>,
    /// Entry file name (default main.<ext>).
    #[arg(long)]
    pub entry: Option<String>,
    /// plain or jsonrpc (default: detected from the source).
    #[arg(long)]
    pub protocol: Option<String>,
    /// Keep a warm worker process.
    #[arg(long)]
    pub worker: bool,
    /// auto, required or none.
    #[arg(long)]
    pub sandbox: Option<String>,
    /// A pip requirement (repeatable), e.g. six==1.16.0.
    #[arg(long)]
    pub pip: Vec<String>,
    /// An npm package as name@version (repeatable), e.g. left-pad@1.3.0 or @scope/pkg@1.0.0.
    #[arg(long)]
    pub npm: Vec<String>,
    /// The input schema as JSON.
    #[arg(long, value_name = "JSON")]
    pub input_schema: Option<String>,
    /// The output schema as JSON.
    #[arg(long, value_name = "JSON")]
    pub output_schema: Option<String>,
    /// An example as JSON {"input": {...}, "output": ...} (repeatable).
    #[arg(long, value_name = "JSON")]
    pub example: Vec<String>,
    /// Wall-clock limit per call.
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Ask for network access to every host.
    #[arg(long, conflicts_with = "allow_domain")]
    pub network: bool,
    /// Ask for network access to this domain only (repeatable; `*.example.com` for its
    /// subdomains), through toolsmith's filtering proxy.
    #[arg(long, value_name = "DOMAIN")]
    pub allow_domain: Vec<String>,
}

fn bad(what: &str, e: impl std::fmt::Display, hint: &str) -> anyhow::Error {
    UserError::new(format!("{what}: {e}"), hint)
}

fn json_arg(what: &str, text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        bad(
            &format!("{what} is not valid JSON"),
            e,
            "quote the JSON for the shell, e.g. '{\"type\": \"object\"}'",
        )
    })
}

fn spec_of(a: &RegisterArgs) -> Result<ScriptSpec> {
    let mut v = match &a.spec {
        Some(p) => json_arg(
            "--spec",
            &std::fs::read_to_string(p)
                .map_err(|e| bad(&format!("cannot read {}", p.display()), e, "check the path"))?,
        )?,
        None => json!({}),
    };
    if !v.is_object() {
        return Err(UserError::new(
            "--spec must hold a JSON object",
            "see `register_script`'s fields",
        ));
    }
    v["name"] = json!(a.name);
    if let Some(p) = &a.code {
        let code = if p.as_os_str() == "-" {
            std::io::read_to_string(std::io::stdin())
                .map_err(|e| bad("cannot read stdin", e, "pipe the source in"))?
        } else {
            std::fs::read_to_string(p)
                .map_err(|e| bad(&format!("cannot read {}", p.display()), e, "check the path"))?
        };
        v["code"] = json!(code);
        if a.entry.is_none()
            && v.get("entry").is_none()
            && a.language.is_none()
            && v.get("language").is_none()
            && let Some(ext) = p.extension().and_then(|e| e.to_str())
            && let Some((l, _, _)) = crate::manifest::LANGUAGES
                .iter()
                .find(|(_, _, x)| *x == ext)
        {
            v["language"] = json!(l);
        }
    }
    let set = |v: &mut Value, k: &str, x: Option<Value>| {
        if let Some(x) = x {
            v[k] = x;
        }
    };
    set(&mut v, "language", a.language.clone().map(Value::from));
    set(
        &mut v,
        "description",
        a.description.clone().map(Value::from),
    );
    set(&mut v, "entry", a.entry.clone().map(Value::from));
    if !a.interpreter.is_empty() {
        v["interpreter"] = json!(a.interpreter);
    }
    if let Some(p) = &a.protocol {
        let p: Protocol = serde_json::from_value(json!(p))
            .map_err(|e| bad("--protocol", e, "use jsonrpc or plain"))?;
        v["protocol"] = json!(p);
    }
    if let Some(s) = &a.sandbox {
        let s: SandboxMode = serde_json::from_value(json!(s))
            .map_err(|e| bad("--sandbox", e, "use auto, required or none"))?;
        v["sandbox"] = json!(s);
    }
    if a.worker {
        v["worker"] = json!(true);
    }
    if !a.pip.is_empty() {
        v["dependencies"]["pip"] = json!(a.pip);
    }
    if !a.npm.is_empty() {
        // The same shape register_script accepts: ["name@version", "@scope/name@version"].
        v["dependencies"]["npm"] = json!(a.npm);
    }
    if let Some(s) = &a.input_schema {
        v["input_schema"] = json_arg("--input-schema", s)?;
    }
    if let Some(s) = &a.output_schema {
        v["output_schema"] = json_arg("--output-schema", s)?;
    }
    if !a.example.is_empty() {
        let ex: Vec<Value> = a
            .example
            .iter()
            .map(|e| json_arg("--example", e))
            .collect::<Result<_>>()?;
        let _check: Vec<Example> = serde_json::from_value(json!(ex))
            .map_err(|e| bad("--example", e, "give {\"input\": {...}, \"output\": ...}"))?;
        v["examples"] = json!(ex);
    }
    if let Some(t) = a.timeout_ms {
        v["limits"]["timeout_ms"] = json!(t);
    }
    if a.network {
        v["capabilities"]["network"] = json!(true);
    }
    if !a.allow_domain.is_empty() {
        v["capabilities"]["network"] = json!(a.allow_domain);
    }
    if v.get("code").is_none() {
        return Err(UserError::new(
            "no code given",
            "pass --code FILE (or \"code\" in --spec)",
        ));
    }
    if v.get("description").is_none() {
        return Err(UserError::new(
            "no description given",
            "pass --description TEXT",
        ));
    }
    serde_json::from_value(v).map_err(|e| {
        bad(
            "invalid tool spec",
            e,
            "see docs/tool-toml.md for the fields",
        )
    })
}

/// Progress of the install, on stderr.
pub(super) struct StderrHost;

impl crate::runner::script::Host for StderrHost {
    fn log(&self, _level: &str, message: &str) {
        eprintln!("{message}");
    }
    fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) {}
    fn request(
        &self,
        request: crate::runner::script::ToolRequest,
    ) -> futures::future::BoxFuture<'_, Result<Value, HostError>> {
        Box::pin(async move {
            Err(HostError::new(
                HostCode::MethodNotFound,
                format!("the command line does not offer {}", request.method()),
            ))
        })
    }
}

/// `toolsmith register NAME --code FILE ...`.
pub fn register(app: crate::app::App, args: &RegisterArgs, as_json: bool) -> Result<i32> {
    let spec = spec_of(args)?;
    let rt = super::runtime(Some(2))?;
    let progress = |_: f64, _: f64, m: String| eprintln!("{m}");
    let actor = Actor::from(super::CLI_ACTOR);
    let out = rt.block_on(register::register(
        &app,
        &spec,
        &actor,
        &StderrHost,
        &progress,
    ));
    match out {
        Ok(r) => {
            if as_json {
                output::json(&json!(r));
            } else {
                for w in &r.warnings {
                    eprintln!("warning: {w}");
                }
                println!(
                    "{} {} ({} example(s) passed){}",
                    if r.action == "add" {
                        "added"
                    } else {
                        "updated"
                    },
                    r.name,
                    r.examples_passed,
                    r.commit
                        .as_deref()
                        .map(|c| format!(", commit {}", &c[..c.len().min(12)]))
                        .unwrap_or_else(|| ", unchanged".into())
                );
            }
            Ok(0)
        }
        Err(e) => Err(UserError::wrap(&e)),
    }
}
