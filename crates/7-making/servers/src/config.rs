//! Editors' MCP configurations as entries: Claude Desktop's and Cursor's `mcpServers`, VS
//! Code's `servers` (also inside `"mcp"` of its settings). A value that is or looks like a
//! credential never reaches tool.toml: an environment variable named like one (TOKEN, KEY,
//! SECRET, PASSWORD, ...) or set from an input or variable (`${input:x}`, `${env:X}`) becomes
//! a declared secret, which a person sets with `toolsmith secret set`; a header carrying one
//! becomes `${NAME}` of such a secret.

use super::ServerSpec;
use crate::manifest::SecretsSpec;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One server found in a configuration.
#[derive(Debug, Clone)]
pub struct Found {
    /// Its key in the configuration.
    pub key: String,
    /// The entry it becomes (without credentials).
    pub spec: ServerSpec,
    /// What the person must know (secrets to set, settings left out).
    pub notes: Vec<String>,
}

/// Whether `text` is an MCP configuration (it has one of the server tables).
pub fn is_config(text: &str) -> bool {
    serde_json::from_str::<Value>(text)
        .ok()
        .is_some_and(|v| servers(&v).is_some())
}

fn servers(v: &Value) -> Option<&Map<String, Value>> {
    v.get("mcpServers")
        .or_else(|| v.get("servers"))
        .or_else(|| v.get("mcp").and_then(|m| m.get("servers")))
        .and_then(Value::as_object)
}

/// Words that make a variable's value a credential.
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "KEY",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PAT",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
];

fn looks_secret(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    up.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| SECRET_WORDS.contains(&w))
}

fn is_reference(v: &str) -> bool {
    v.contains("${")
}

/// A secret name made of parts (`ENTRY_AUTHORIZATION`).
fn secret_name(parts: &[&str]) -> String {
    let mut n: String = parts
        .join("_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if !n.starts_with(|c: char| c.is_ascii_uppercase()) {
        n.insert_str(0, "MCP_");
    }
    n.truncate(64);
    n
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| match x {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    Value::Bool(b) => Some(b.to_string()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

fn table(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter_map(|(k, x)| match x {
                    Value::String(s) => Some((k.clone(), s.clone())),
                    Value::Number(n) => Some((k.clone(), n.to_string())),
                    Value::Bool(b) => Some((k.clone(), b.to_string())),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The servers of an MCP configuration, each as a spec (named after its key, made a valid
/// tool name), with notes; an error when `text` is not one.
pub fn parse(text: &str) -> Result<Vec<Found>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("it is not valid JSON: {e}"))?;
    let all = servers(&v)
        .ok_or("it has no `mcpServers` (Claude Desktop, Cursor) or `servers` (VS Code) table")?;
    let mut out = Vec::new();
    for (key, s) in all {
        let mut notes = Vec::new();
        let mut name = crate::names::sanitize(key);
        while name.contains("__") {
            name = name.replace("__", "_");
        }
        if s.get("disabled").and_then(Value::as_bool) == Some(true) {
            notes.push(format!(
                "{key} is disabled in the configuration; imported anyway"
            ));
        }
        let mut secrets: BTreeMap<String, String> = BTreeMap::new();
        let mut env = BTreeMap::new();
        for (k, val) in table(s.get("env")) {
            if looks_secret(&k) || is_reference(&val) {
                let n = if crate::manifest::is_secret_name(&k) {
                    k.clone()
                } else {
                    secret_name(&[&k])
                };
                notes.push(format!(
                    "{key}: {k} became the secret {n}, set with `toolsmith secret set {n}` (its value is not imported)"
                ));
                secrets.insert(n, format!("{k} of the MCP server {key}"));
            } else {
                env.insert(k, val);
            }
        }
        if s.get("envFile").is_some() || s.get("cwd").is_some() {
            notes.push(format!(
                "{key}: `envFile` and `cwd` are not imported (a server starts in its own scratch directory)"
            ));
        }
        let mut headers = BTreeMap::new();
        for (k, val) in table(s.get("headers")) {
            let credential =
                looks_secret(&k) || k.eq_ignore_ascii_case("authorization") || is_reference(&val);
            if credential {
                let n = secret_name(&[&name, &k]);
                let shown = match val.split_once(' ') {
                    Some((scheme, _)) if scheme.eq_ignore_ascii_case("bearer") => {
                        format!("{scheme} ${{{n}}}")
                    }
                    _ => format!("${{{n}}}"),
                };
                notes.push(format!(
                    "{key}: the header {k} became `{shown}`: set {n} with `toolsmith secret set {n}`"
                ));
                secrets.insert(n, format!("the {k} header of the MCP server {key}"));
                headers.insert(k, shown);
            } else {
                headers.insert(k, val);
            }
        }
        let url = s
            .get("url")
            .or_else(|| s.get("serverUrl"))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(t) = s.get("type").and_then(Value::as_str)
            && t == "sse"
        {
            notes.push(format!(
                "{key}: the server speaks the old HTTP+SSE transport; toolsmith speaks streamable HTTP, which most such servers also serve"
            ));
        }
        let spec = ServerSpec {
            name,
            command: s.get("command").and_then(Value::as_str).map(str::to_string),
            args: strings(s.get("args")),
            url,
            env,
            headers,
            secrets: (!secrets.is_empty()).then_some(SecretsSpec::Purposes(secrets)),
            description: s
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
            ..Default::default()
        };
        out.push(Found {
            key: key.clone(),
            spec,
            notes,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_editors_configurations_become_specs_without_credentials() {
        let claude = r#"{"mcpServers": {
            "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                       "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abc", "LOG_LEVEL": "debug"}},
            "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer xyz"}}
        }}"#;
        let found = parse(claude).unwrap();
        assert_eq!(found.len(), 2);
        let gh = &found[0].spec;
        assert_eq!(gh.name, "github");
        assert_eq!(gh.env.get("LOG_LEVEL").map(String::as_str), Some("debug"));
        assert!(!format!("{gh:?}").contains("ghp_abc"));
        let r = &found[1].spec;
        assert_eq!(
            r.headers.get("Authorization").map(String::as_str),
            Some("Bearer ${REMOTE_AUTHORIZATION}")
        );
        assert!(!format!("{r:?}").contains("xyz"));
        let vscode = r#"{"inputs": [], "servers": {"Time Server": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"], "env": {"TZ_KEY": "${input:tz}"}}}}"#;
        let found = parse(vscode).unwrap();
        assert_eq!(found[0].spec.name, "time_server");
        assert!(is_config(vscode) && !is_config("{}") && !is_config("not json"));
    }
}
