//! Meta-tool arguments: input schemas generated from typed Rust structs (schemars), made
//! strict (`additionalProperties: false` wherever an object lists its properties), and the
//! check every call goes through before its handler runs: old spellings renamed to the
//! current ones (aliases kept for one release), then validation against the same schema, with
//! a "did you mean" for unknown keys. Also the compact output schemas.

use super::result::error_result;
use crate::register::LANGUAGE_ALIASES;
use rmcp::model::{CallToolResult, JsonObject};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The strict input schema of an argument struct.
pub fn schema_of<T: JsonSchema>() -> Arc<JsonObject> {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut v = serde_json::to_value(schema).unwrap_or_else(|_| json!({"type": "object"}));
    if let Value::Object(o) = &mut v {
        o.remove("$schema");
        o.remove("title");
        o.remove("description");
    }
    tidy(&mut v, 0);
    match v {
        Value::Object(o) => Arc::new(o),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The input schema as sent: `schema` without its `additionalProperties: false` (about 900 of
/// the definitions' 12,000-byte budget, given to typed output schemas instead). Arguments are
/// still checked against the closed schema (`Entry::checked_schema`), so an unknown key is
/// refused all the same, with a "did you mean".
pub fn as_sent(schema: &JsonObject) -> Arc<JsonObject> {
    fn open(v: &mut Value) {
        match v {
            Value::Object(o) => {
                if o.get("additionalProperties") == Some(&Value::Bool(false)) {
                    o.remove("additionalProperties");
                }
                for (k, x) in o.iter_mut() {
                    match (k.as_str(), x) {
                        // A map of names to schemas: a property's name is no keyword.
                        ("properties" | "$defs" | "patternProperties", Value::Object(m)) => {
                            m.values_mut().for_each(open)
                        }
                        (_, x) => open(x),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(open),
            _ => {}
        }
    }
    let mut v = Value::Object(schema.clone());
    open(&mut v);
    match v {
        Value::Object(o) => Arc::new(o),
        _ => Arc::new(JsonObject::new()),
    }
}

/// Drop what a client does not need (nulls of optional fields, integer formats, nested
/// descriptions: the guide has the details) and close every object that lists properties.
fn tidy(v: &mut Value, depth: usize) {
    // `true` (any value) as `{}`: some clients only accept object schemas.
    if *v == Value::Bool(true) {
        *v = json!({});
    }
    if let Value::Object(o) = v {
        crate::manifest::drop_null(o);
        // A oneOf of string constants (a documented Rust enum) is an enum.
        let consts: Option<Vec<Value>> = o.get("oneOf").and_then(Value::as_array).map(|alts| {
            alts.iter()
                .filter_map(|a| a.get("const").filter(|c| c.is_string()).cloned())
                .collect()
        });
        if let Some(c) = consts
            .filter(|c| Some(c.len()) == o.get("oneOf").and_then(Value::as_array).map(Vec::len))
        {
            o.remove("oneOf");
            o.insert("type".into(), json!("string"));
            o.insert("enum".into(), Value::Array(c));
        }
        if o.get("default")
            .is_some_and(|d| d.is_null() || d == &json!([]) || d == &json!({}))
        {
            o.remove("default");
        }
        if o.get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("int") || f.starts_with("uint"))
        {
            o.remove("format");
            if o.get("minimum") == Some(&json!(0)) {
                o.remove("minimum");
            }
        }
        // Descriptions of top-level properties stay (depth 2 = properties.<name>), except
        // on objects and enums whose own keys or values say what they are (limits, capabilities, ...).
        if depth > 2 || o.contains_key("properties") || o.contains_key("enum") {
            o.remove("description");
        }
        if o.contains_key("properties") && !o.contains_key("additionalProperties") {
            o.insert("additionalProperties".into(), Value::Bool(false));
        }
        if o.get("additionalProperties") == Some(&Value::Bool(true)) {
            o.remove("additionalProperties");
        }
        if let Some(Value::Array(e)) = o.get_mut("enum") {
            e.retain(|x| !x.is_null());
            // An enum of strings says its type.
            if e.iter().all(Value::is_string) && o.get("type") == Some(&json!("string")) {
                o.remove("type");
            }
        }
        for (k, x) in o.iter_mut() {
            match (k.as_str(), x) {
                ("properties" | "$defs" | "patternProperties", Value::Object(m)) => {
                    // A map of names to schemas: a property named `description` is no keyword.
                    m.values_mut().for_each(|s| tidy(s, depth + 2));
                }
                ("items" | "additionalProperties" | "not" | "if" | "then" | "else", s) => {
                    tidy(s, depth + 2)
                }
                ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(a)) => {
                    a.iter_mut().for_each(|s| tidy(s, depth + 2))
                }
                _ => {}
            }
        }
    }
}

/// Old spellings of top-level argument names, per meta-tool: (tool, old, current).
const ALIASES: &[(&str, &str, &str)] = &[
    ("register_script", "code", "source"),
    ("memory", "tool", "name"),
];

/// The compiled validator of a meta-tool's input schema (built once per tool).
fn validator(tool: &str, schema: &JsonObject) -> Option<Arc<jsonschema::Validator>> {
    static CACHE: OnceLock<std::sync::Mutex<HashMap<String, Arc<jsonschema::Validator>>>> =
        OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(v) = cache.get(tool) {
        return Some(Arc::clone(v));
    }
    let v = Arc::new(jsonschema::validator_for(&Value::Object(schema.clone())).ok()?);
    cache.insert(tool.to_string(), Arc::clone(&v));
    Some(v)
}

/// The closest of `allowed` to `word`, when it is close enough to be a likely typo.
pub fn closest<'a>(word: &str, allowed: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    allowed
        .into_iter()
        .map(|a| {
            let lower = a.to_ascii_lowercase();
            let mut score = strsim::jaro_winkler(&w, &lower);
            if w.contains(&lower) || lower.contains(&w) {
                score = score.max(0.9);
            }
            (a, score)
        })
        .filter(|(_, s)| *s >= 0.7)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(a, _)| a)
}

/// The spellings of `language` a meta-tool accepts besides its own names: each meta-tool's
/// `language` names different things (a script's interpreter, a component's language).
fn language_aliases(tool: &str) -> &'static [(&'static str, &'static str)] {
    match tool {
        "build_tool" => crate::build::LANGUAGE_ALIASES,
        _ => LANGUAGE_ALIASES,
    }
}

/// The subschema at a JSON pointer.
fn at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    schema.pointer(pointer)
}

/// Rename old spellings and check `args` against the meta-tool's input schema. An error
/// result names each problem, where it is, and for an unknown key the allowed keys and the
/// likely intended one.
pub fn check(tool: &str, schema: &JsonObject, args: &mut JsonObject) -> Result<(), CallToolResult> {
    for (t, old, new) in ALIASES {
        if *t == tool
            && !args.contains_key(*new)
            && let Some(v) = args.remove(*old)
        {
            args.insert((*new).to_string(), v);
        }
    }
    if let Some(Value::String(l)) = args.get_mut("language") {
        let lower = l.to_ascii_lowercase();
        let aliases = language_aliases(tool);
        if let Some((_, canonical)) = aliases.iter().find(|(a, _)| *a == lower) {
            *l = (*canonical).to_string();
        } else {
            *l = lower;
        }
    }
    let Some(validator) = validator(tool, schema) else {
        return Ok(());
    };
    let instance = Value::Object(args.clone());
    let root = Value::Object(schema.clone());
    let mut problems = Vec::new();
    let mut hints = Vec::new();
    for e in validator.iter_errors(&instance) {
        let path = e.instance_path().to_string();
        let place = if path.is_empty() {
            format!("{tool}'s arguments")
        } else {
            format!("`{}`", path.trim_start_matches('/').replace('/', "."))
        };
        if let jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } =
            e.kind()
        {
            let sp = e.schema_path().to_string();
            let parent = sp.strip_suffix("/additionalProperties").unwrap_or(&sp);
            let allowed: Vec<&str> = at(&root, &format!("{parent}/properties"))
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            for u in unexpected {
                let mut msg = format!("unknown key `{u}` in {place}");
                if let Some(c) = closest(u, allowed.iter().copied()) {
                    msg.push_str(&format!(": did you mean `{c}`?"));
                } else if let Some(owner) = owner_of(&root, u) {
                    msg.push_str(&format!(": `{u}` belongs inside `{owner}`"));
                }
                problems.push(msg);
            }
            hints.push(format!("allowed keys there: {}", allowed.join(", ")));
        } else {
            problems.push(format!("{place}: {e}"));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    hints.dedup();
    hints.push(format!(
        "{tool}'s input schema (tools/list) has every field"
    ));
    Err(error_result(
        format!("invalid {tool} arguments: {}", problems.join("; ")),
        Some(hints.join("; ")),
    ))
}

/// The top-level property whose object schema has a property named `key` (e.g. `timeout_ms`
/// belongs inside `limits`).
fn owner_of<'a>(root: &'a Value, key: &str) -> Option<&'a str> {
    root.get("properties")?
        .as_object()?
        .iter()
        .find(|(_, s)| {
            s.get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| p.contains_key(key))
        })
        .map(|(k, _)| k.as_str())
}

/// Parse checked arguments into their typed struct.
pub fn parse<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: JsonObject,
) -> Result<T, CallToolResult> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        error_result(
            format!("invalid {tool} arguments: {e}"),
            Some(format!(
                "{tool}'s input schema (tools/list) has every field"
            )),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_get_suggestions() {
        assert_eq!(
            closest(
                "expected_output",
                ["input", "output", "output_text", "description"]
            ),
            Some("output")
        );
        assert_eq!(
            closest("langauge", ["language", "source"]),
            Some("language")
        );
        assert_eq!(closest("zzz", ["language", "source"]), None);
    }
}
