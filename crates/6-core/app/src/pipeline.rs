//! Pipeline references: `$input`, `$prev` and `$steps.<name>` with dotted paths, resolved in
//! step arguments. A string that is exactly one reference keeps the JSON type of the value;
//! references inside a longer string are interpolated as text. `$$` is a literal `$`.

use serde_json::{Map, Value};

/// What references can see while a pipeline runs.
#[derive(Debug, Default)]
pub struct Scope {
    /// The pipeline's arguments (`$input`).
    pub input: Value,
    /// The previous step's output (`$prev`).
    pub prev: Value,
    /// Each finished step's output by its id (`$steps.<id>`).
    pub steps: Map<String, Value>,
}

/// A reference that points at nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("reference {reference} does not resolve: {why}")]
pub struct RefError {
    /// The reference as written.
    pub reference: String,
    /// Why it does not resolve.
    pub why: String,
}

const ROOTS: [&str; 3] = ["input", "prev", "steps"];

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'
}

/// Find `$root.path` references in a string: (start, end) byte ranges, `$` included.
fn find_refs(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' {
            if bytes.get(i + 1) == Some(&b'$') {
                i += 2;
                continue;
            }
            let rest = &s[i + 1..];
            if ROOTS.iter().any(|r| {
                rest.starts_with(r)
                    && !rest[r.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            }) {
                let len = rest.find(|c: char| !is_path_char(c)).unwrap_or(rest.len());
                let end = i + 1 + rest[..len].trim_end_matches('.').len();
                out.push((i, end));
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Names of the steps a string refers to via `$steps.<name>` (for validation).
pub fn step_refs(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk_strings(v, &mut |s| {
        for (a, b) in find_refs(s) {
            if let Some(rest) = s[a + 1..b].strip_prefix("steps.") {
                out.push(rest.split('.').next().unwrap_or("").to_string());
            }
        }
    });
    out
}

/// Whether a value refers to `$prev` anywhere.
pub fn uses_prev(v: &Value) -> bool {
    let mut found = false;
    walk_strings(v, &mut |s| {
        found |= find_refs(s)
            .iter()
            .any(|(a, b)| s[a + 1..*b].starts_with("prev"))
    });
    found
}

fn walk_strings(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().for_each(|x| walk_strings(x, f)),
        Value::Object(o) => o.values().for_each(|x| walk_strings(x, f)),
        _ => {}
    }
}

/// Look up one reference (without the `$`).
pub fn lookup(scope: &Scope, reference: &str) -> Result<Value, RefError> {
    let err = |why: String| RefError {
        reference: format!("${reference}"),
        why,
    };
    let mut parts = reference.split('.');
    let root = parts.next().unwrap_or("");
    let mut cur: &Value = match root {
        "input" => &scope.input,
        "prev" => &scope.prev,
        "steps" => {
            let name = parts
                .next()
                .ok_or_else(|| err("name a step: $steps.<name>".into()))?;
            scope
                .steps
                .get(name)
                .ok_or_else(|| err(format!("no earlier step named {name:?} has run")))?
        }
        other => {
            return Err(err(format!(
                "unknown root {other:?}; use $input, $prev or $steps.<name>"
            )));
        }
    };
    for p in parts {
        cur = match cur {
            Value::Object(o) => o.get(p).ok_or_else(|| err(format!("no field {p:?}")))?,
            Value::Array(a) => p
                .parse::<usize>()
                .ok()
                .and_then(|i| a.get(i))
                .ok_or_else(|| err(format!("no element {p:?}")))?,
            other => return Err(err(format!("cannot take {p:?} of {other}"))),
        };
    }
    Ok(cur.clone())
}

fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Resolve every reference in a value.
pub fn resolve(v: &Value, scope: &Scope) -> Result<Value, RefError> {
    Ok(match v {
        Value::String(s) => {
            let refs = find_refs(s);
            if refs.len() == 1 && refs[0] == (0, s.len()) {
                return lookup(scope, &s[1..]);
            }
            let mut out = String::new();
            let mut last = 0;
            for (a, b) in refs {
                out.push_str(&s[last..a].replace("$$", "$"));
                out.push_str(&as_text(&lookup(scope, &s[a + 1..b])?));
                last = b;
            }
            out.push_str(&s[last..].replace("$$", "$"));
            Value::String(out)
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| resolve(x, scope))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| Ok((k.clone(), resolve(x, scope)?)))
                .collect::<Result<_, RefError>>()?,
        ),
        other => other.clone(),
    })
}

/// JSON truthiness for `when`: null, false, 0, "" , [] and {} are false.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty() && s != "false",
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scope() -> Scope {
        let mut steps = Map::new();
        steps.insert("first".into(), json!({"slug": "a-b", "n": 2}));
        Scope {
            input: json!({"text": "Hi", "list": [1, 2], "name": "Ada"}),
            prev: json!({"slug": "x-y"}),
            steps,
        }
    }

    #[test]
    fn resolves_whole_references_with_their_type_and_interpolates_strings() {
        let s = scope();
        assert_eq!(resolve(&json!("$input.list"), &s).unwrap(), json!([1, 2]));
        assert_eq!(resolve(&json!("$steps.first.n"), &s).unwrap(), json!(2));
        assert_eq!(
            resolve(&json!({"t": "Hello $input.name, slug $prev.slug."}), &s).unwrap(),
            json!({"t": "Hello Ada, slug x-y."})
        );
        assert_eq!(
            resolve(&json!("costs $$5 for $input.list.1"), &s).unwrap(),
            json!("costs $5 for 2")
        );
        assert_eq!(resolve(&json!("$inputs"), &s).unwrap(), json!("$inputs"));
        let e = resolve(&json!("$steps.nope.x"), &s).unwrap_err();
        assert!(e.to_string().contains("nope"));
        assert!(resolve(&json!("$input.missing"), &s).is_err());
    }

    #[test]
    fn finds_step_references_and_truthiness() {
        assert_eq!(
            step_refs(&json!({"a": "$steps.one.x and $steps.two"})),
            vec!["one", "two"]
        );
        assert!(uses_prev(&json!(["$prev"])));
        assert!(
            !truthy(&json!(0))
                && !truthy(&json!(""))
                && truthy(&json!("yes"))
                && !truthy(&json!(null))
        );
    }
}
