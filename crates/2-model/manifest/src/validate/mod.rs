//! Semantic checks on a deserialized manifest: what serde's types cannot express.

use super::{
    FORMAT_VERSION, Kind, LANGUAGES, MAX_DESCRIPTION_CHARS, MAX_SCHEMA_BYTES, Manifest, Severity,
};
use serde_json::Value;
use toolsmith_error::Hint;
use toolsmith_names as names;

mod mcp;
use mcp::check_mcp;
pub use mcp::secret_refs;

/// One semantic problem, before it is located in the text.
pub(super) struct Issue {
    pub severity: Severity,
    pub field: String,
    pub message: String,
    pub hint: Option<String>,
}

fn err(field: impl Into<String>, message: impl Into<String>, hint: impl Into<String>) -> Issue {
    Issue {
        severity: Severity::Error,
        field: field.into(),
        message: message.into(),
        hint: Some(hint.into()),
    }
}

fn warn(field: impl Into<String>, message: impl Into<String>, hint: impl Into<String>) -> Issue {
    Issue {
        severity: Severity::Warning,
        field: field.into(),
        message: message.into(),
        hint: Some(hint.into()),
    }
}

/// A secret's name: an environment variable name (`A-Z`, `0-9`, `_`, starting with a letter).
pub fn is_secret_name(n: &str) -> bool {
    n.len() <= 64
        && n.starts_with(|c: char| c.is_ascii_uppercase())
        && n.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// A variable a tool or an entry asks for that steers a loader or an interpreter before its
/// program runs (`crate::env`): an error that says why.
fn check_env_name(field: String, name: &str, out: &mut Vec<Issue>) {
    if let Some(why) = crate::env::refusal(name) {
        out.push(err(field, why, crate::env::HINT));
    }
}

/// A relative path that stays inside the tool directory.
fn is_inner_path(p: &str) -> bool {
    let path = std::path::Path::new(p);
    !p.is_empty()
        && !path.is_absolute()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

pub(super) fn validate(m: &Manifest, dir_name: Option<&str>) -> Vec<Issue> {
    let mut out = Vec::new();
    if m.format > FORMAT_VERSION || m.format == 0 {
        out.push(err(
            "format",
            format!(
                "format {} is not supported; this toolsmith reads format {FORMAT_VERSION}",
                m.format
            ),
            "upgrade toolsmith, or write the manifest in format 1",
        ));
    }
    if let Err(e) = names::validate(&m.name) {
        out.push(err("name", e.to_string(), e.hint().unwrap_or_default()));
    } else if let Some(dir) = dir_name
        && dir != m.name
    {
        out.push(err(
            "name",
            format!("name {:?} differs from the directory name {dir:?}", m.name),
            format!("set name = \"{dir}\" or rename the directory"),
        ));
    }
    for name in m.secrets.keys() {
        if !is_secret_name(name) {
            out.push(err(
                format!("secrets.{name}"),
                format!("secret name {name:?} is not an environment variable name"),
                "use uppercase letters, digits and '_', starting with a letter (e.g. GITHUB_TOKEN), at most 64 characters",
            ));
        }
        check_env_name(format!("secrets.{name}"), name, &mut out);
    }
    for (i, name) in m.capabilities.env.iter().enumerate() {
        check_env_name(format!("capabilities.env.{i}"), name, &mut out);
    }
    if m.description.trim().is_empty() {
        out.push(err(
            "description",
            "description is empty",
            "say in a sentence what the tool does; clients show it to the model",
        ));
    }
    let chars = m.description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        out.push(err(
            "description",
            format!("description is {chars} characters long; the limit is {MAX_DESCRIPTION_CHARS}"),
            "keep the description short; put details in a README beside tool.toml",
        ));
    }
    if let Err(e) = names::check_text("description", &m.description) {
        out.push(err(
            "description",
            e,
            "remove invisible and bidirectional control characters: they can make text read differently than it is",
        ));
    }
    for (i, tag) in m.tags.iter().enumerate() {
        if let Err(e) = names::check_text(&format!("tags.{i}"), tag) {
            out.push(err(format!("tags.{i}"), e, "use plain visible characters"));
        }
    }
    for (i, tag) in m.tags.iter().enumerate() {
        if tag.trim().is_empty() || tag.len() > 64 {
            out.push(err(
                format!("tags.{i}"),
                format!("tag {tag:?} is empty or longer than 64 characters"),
                "use short keywords",
            ));
        }
    }
    check_run(m, &mut out);
    check_schema(
        "input_schema",
        m.input_schema.as_deref(),
        m.input_schema_file.as_deref(),
        true,
        &mut out,
    );
    check_schema(
        "output_schema",
        m.output_schema.as_deref(),
        m.output_schema_file.as_deref(),
        false,
        &mut out,
    );
    check_limits(m, &mut out);
    for (i, p) in m
        .capabilities
        .read
        .iter()
        .chain(m.capabilities.write.iter())
        .enumerate()
    {
        if !std::path::Path::new(p).is_absolute() {
            out.push(err(
                "capabilities",
                format!("path {p:?} (entry {i}) is not absolute"),
                "declare absolute paths inside the allowed roots (TOOLSMITH_ROOTS)",
            ));
        }
    }
    if let Some(domains) = m.capabilities.network.domains() {
        check_domains(domains, &mut out);
    }
    for (i, ex) in m.examples.iter().enumerate() {
        if ex.output.is_some() && ex.output_text.is_some() {
            out.push(err(
                format!("examples.{i}"),
                "an example sets both `output` and `output_text`",
                "keep one: `output` for structured results, `output_text` for text",
            ));
        }
    }
    for (field, value) in [
        ("hashes.source", &m.hashes.source),
        ("hashes.artifact", &m.hashes.artifact),
    ] {
        if let Some(v) = value {
            let ok = v
                .strip_prefix("sha256:")
                .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
            if !ok {
                out.push(err(field, format!("{v:?} is not a sha256 hash"), "the form is \"sha256:<64 hex digits>\"; toolsmith writes it, remove the line to have it recomputed"));
            }
        }
    }
    check_steps(m, &mut out);
    out
}

fn check_run(m: &Manifest, out: &mut Vec<Issue>) {
    match m.kind {
        Kind::Wasm => {
            if m.run.export.is_some() && m.run.world.is_none() {
                out.push(err(
                    "run.export",
                    "`export` names a component's function, but this tool has no `world` (it is a wasip1 module)",
                    "add `world = \"<the WIT world>\"` under [run] for a component, or remove `export`",
                ));
            }
            if let Some(w) = &m.run.world
                && (w.is_empty() || w.chars().any(|c| c.is_control()))
            {
                out.push(err(
                    "run.world",
                    format!("{w:?} is not a WIT world name"),
                    "use the world's name as the WIT file declares it, e.g. \"tool\"",
                ));
            }
            if !is_inner_path(m.artifact()) {
                out.push(err(
                    "run.artifact",
                    format!(
                        "{:?} is not a relative path inside the tool directory",
                        m.artifact()
                    ),
                    "use a plain relative path such as \"tool.wasm\"",
                ));
            }
        }
        Kind::Script => {
            match m.run.entry.as_deref() {
                None => out.push(err(
                    "run",
                    "a script tool needs `run.entry`",
                    "add `entry = \"main.py\"` (the script file) under [run]",
                )),
                Some(e) if !is_inner_path(e) => out.push(err(
                    "run.entry",
                    format!("{e:?} is not a relative path inside the tool directory"),
                    "use a plain relative path such as \"main.py\"",
                )),
                Some(_) => {}
            }
            match (m.run.language.as_deref(), &m.run.interpreter) {
                (None, None) => out.push(err(
                    "run",
                    "a script tool needs `run.language` or `run.interpreter`",
                    format!("set language to one of: {}", language_names()),
                )),
                (Some(l), None) if !LANGUAGES.iter().any(|(n, _, _)| *n == l) => out.push(err(
                    "run.language",
                    format!("unknown language {l:?}"),
                    format!(
                        "use one of: {}; or give `interpreter = [\"cmd\", \"args\"]`",
                        language_names()
                    ),
                )),
                (_, Some(cmd)) if cmd.is_empty() || cmd[0].trim().is_empty() => out.push(err(
                    "run.interpreter",
                    "the interpreter command is empty",
                    "give the command and its leading arguments, e.g. [\"python3\", \"-u\"]",
                )),
                (_, Some(cmd)) if !interpreter_command_ok(&cmd[0]) => out.push(err(
                    "run.interpreter",
                    format!(
                        "the interpreter {:?} is not an installed interpreter's command: it must be a command name found on PATH, or an absolute path under the system directories ({})",
                        cmd[0],
                        INTERPRETER_DIRS.join(", ")
                    ),
                    "name the command, e.g. [\"python3\"] or [\"node\"]: toolsmith finds it on the PATH the server was started with. A file inside a tool, a build's output or a temporary directory is never an interpreter",
                )),
                _ => {}
            }
            if m.run.worker && m.protocol() == super::Protocol::Plain {
                out.push(err(
                    "run.worker",
                    "a warm worker needs the jsonrpc protocol (a plain script serves one call)",
                    "set protocol = \"jsonrpc\", or worker = false",
                ));
            }
        }
        Kind::Mcp => {}
        Kind::Pipeline => {
            if m.steps.is_empty() {
                out.push(err(
                    "steps",
                    "a pipeline needs at least one [[steps]] entry",
                    "add [[steps]] with `tool = \"...\"` and `args = { ... }`",
                ));
            }
        }
    }
    if m.kind == Kind::Mcp {
        check_mcp(m, out);
    } else if m.mcp.is_some() {
        out.push(warn(
            "mcp",
            format!(
                "`[mcp]` is only used by kind = \"mcp\", not {:?}",
                m.kind.as_str()
            ),
            "remove [mcp] or set kind = \"mcp\"",
        ));
    }
    if m.kind != Kind::Pipeline && !m.steps.is_empty() {
        out.push(warn(
            "steps",
            format!(
                "`steps` is only used by kind = \"pipeline\", not {:?}",
                m.kind.as_str()
            ),
            "remove [[steps]] or set kind = \"pipeline\"",
        ));
    }
}

fn language_names() -> String {
    LANGUAGES
        .iter()
        .map(|(n, _, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_schema(
    field: &str,
    inline: Option<&serde_json::Map<String, Value>>,
    file: Option<&str>,
    input: bool,
    out: &mut Vec<Issue>,
) {
    if inline.is_some() && file.is_some() {
        out.push(err(
            field,
            format!("both `{field}` and `{field}_file` are set"),
            "keep one of them",
        ));
    }
    if let Some(f) = file
        && !is_inner_path(f)
    {
        out.push(err(
            format!("{field}_file"),
            format!("{f:?} is not a relative path inside the tool directory"),
            "name a file beside tool.toml",
        ));
    }
    if let Some(schema) = inline {
        let size = serde_json::to_string(schema).map(|t| t.len()).unwrap_or(0);
        if size > MAX_SCHEMA_BYTES {
            out.push(err(
                field,
                format!("the schema is {size} bytes as JSON; the limit is {MAX_SCHEMA_BYTES}"),
                "describe the arguments more compactly",
            ));
        }
        match schema.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            None if !input => {}
            Some(other) => out.push(err(
                format!("{field}.type"),
                format!("the schema's type is {other}; MCP requires \"object\""),
                "set type = \"object\" and describe fields under properties",
            )),
            None => out.push(err(
                field,
                "the schema has no `type`; MCP requires type = \"object\"",
                "add type = \"object\"",
            )),
        }
        if let Some(p) = schema.get("properties")
            && !p.is_object()
        {
            out.push(err(
                format!("{field}.properties"),
                "`properties` must be a table",
                "write [input_schema.properties.NAME] tables",
            ));
        }
    }
}

fn check_limits(m: &Manifest, out: &mut Vec<Issue>) {
    let l = &m.limits;
    if l.timeout_ms == Some(0) || l.timeout_ms.is_some_and(|t| t > 3_600_000) {
        out.push(err(
            "limits.timeout_ms",
            "timeout_ms must be between 1 and 3600000 (one hour)",
            "a typical value is 10000",
        ));
    }
    if l.memory_mb == Some(0) || l.memory_mb.is_some_and(|t| t > 16_384) {
        out.push(err(
            "limits.memory_mb",
            "memory_mb must be between 1 and 16384",
            "a typical value is 256",
        ));
    }
    if l.output_bytes == Some(0) || l.output_bytes.is_some_and(|t| t > 1 << 30) {
        out.push(err(
            "limits.output_bytes",
            "output_bytes must be between 1 and 1073741824 (1 GiB)",
            "a typical value is 1048576",
        ));
    }
}

fn check_steps(m: &Manifest, out: &mut Vec<Issue>) {
    let mut seen: Vec<&str> = Vec::new();
    for (i, step) in m.steps.iter().enumerate() {
        if let Err(e) = names::validate(&step.tool) {
            out.push(err(
                format!("steps.{i}.tool"),
                format!("step {}: {e}", i + 1),
                e.hint().unwrap_or_default(),
            ));
        }
        if step.tool == m.name {
            out.push(err(
                format!("steps.{i}.tool"),
                format!("step {} calls the pipeline itself", i + 1),
                "a pipeline cannot call itself",
            ));
        }
        if let Some(n) = step.name.as_deref() {
            if seen.contains(&n) {
                out.push(err(
                    format!("steps.{i}.name"),
                    format!("step name {n:?} is used twice"),
                    "give each step a distinct name",
                ));
            }
            seen.push(n);
        }
    }
}

/// The most domains one tool may list.
const MAX_DOMAINS: usize = 64;

/// Each entry of `capabilities.network = [...]` is a host name (`api.github.com`), a wildcard
/// for its subdomains (`*.github.com`) or an IP address — no scheme, port, path or bare `*`.
fn check_domains(domains: &[String], out: &mut Vec<Issue>) {
    if domains.len() > MAX_DOMAINS {
        out.push(err(
            "capabilities.network",
            format!(
                "{} domains are listed; at most {MAX_DOMAINS} are allowed",
                domains.len()
            ),
            "list fewer domains, or use wildcards (\"*.example.com\")",
        ));
    }
    for (i, d) in domains.iter().enumerate() {
        if let Err(why) = crate::domain::check(d) {
            out.push(err(
                "capabilities.network",
                format!("entry {i} ({d:?}) {why}"),
                "write a host name (\"api.github.com\"), \"*.github.com\" for its subdomains, or an IP address; `network = true` allows every host",
            ));
        }
    }
}

/// Where an interpreter named by an absolute path may live: the system's and the package
/// managers' install trees, which neither a tool nor a build can write.
pub const INTERPRETER_DIRS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/opt",
    "/nix/store",
    "/snap",
    "/System",
    "/Library/Frameworks",
];

/// Whether `cmd` may name a script tool's interpreter: a bare command name (found on the
/// person's PATH when the tool runs), or an absolute, `..`-free path under
/// [`INTERPRETER_DIRS`]. A path into a tool directory, a build's output or a temporary
/// directory (files the AI can write) is refused.
pub fn interpreter_command_ok(cmd: &str) -> bool {
    if cmd.chars().any(|c| c.is_control()) {
        return false;
    }
    if !cmd.contains('/') && !cmd.contains('\\') {
        return true;
    }
    let p = std::path::Path::new(cmd);
    p.is_absolute()
        && !p.components().any(|c| {
            matches!(
                c,
                std::path::Component::ParentDir | std::path::Component::CurDir
            )
        })
        && INTERPRETER_DIRS.iter().any(|d| p.starts_with(d))
}
