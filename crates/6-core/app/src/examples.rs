//! Running a tool's `[[examples]]` (input → expected output) — the gate before a build or a
//! registration is committed, and `toolsmith test NAME` for people. Expected and actual
//! results are compared as JSON values (`1` equals `1.0`), and a failure names the path where
//! they differ.

use crate::App;
use crate::index::Tool;
use crate::runner::script::Host;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// One example that did not produce what it promised.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ExampleFailure {
    /// 1-based position in `[[examples]]`.
    pub index: usize,
    /// The example's description.
    pub description: Option<String>,
    /// Its input.
    pub input: Value,
    /// What the example expects (structured output, or text).
    pub expected: Option<Value>,
    /// What the tool produced, or its error.
    pub actual: Value,
    /// Where the two differ, e.g. `$.items[2].price: expected 1.5, got 1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difference: Option<String>,
}

impl std::fmt::Display for ExampleFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "example {}", self.index)?;
        if let Some(d) = &self.description {
            write!(f, " ({d})")?;
        }
        write!(f, ": input {}", self.input)?;
        match &self.expected {
            Some(e) => write!(f, ", expected {e}, got {}", self.actual)?,
            None => write!(f, ", expected success, got {}", self.actual)?,
        }
        if let Some(d) = &self.difference {
            write!(f, " (differs at {d})")?;
        }
        Ok(())
    }
}

/// Whether two numbers are the same value, however they are spelled (`1`, `1.0`, `1e0`).
fn same_number(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x == y;
    }
    a.as_f64() == b.as_f64()
}

fn child(path: &str, key: &str) -> String {
    let plain = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", Value::String(key.to_string()))
    }
}

/// The first place where `got` differs from `want`, as `path: expected X, got Y` (the path in
/// JSONPath style from `$`); None when they are equal as JSON values.
pub fn difference(want: &Value, got: &Value) -> Option<String> {
    diff_at(want, got, "$")
}

fn diff_at(want: &Value, got: &Value, path: &str) -> Option<String> {
    let short = |v: &Value| {
        let t = v.to_string();
        if t.chars().count() > 80 {
            format!("{}…", t.chars().take(80).collect::<String>())
        } else {
            t
        }
    };
    let differ = || {
        Some(format!(
            "{path}: expected {}, got {}",
            short(want),
            short(got)
        ))
    };
    match (want, got) {
        (Value::Number(a), Value::Number(b)) => (!same_number(a, b)).then(differ).flatten(),
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if let Some(d) = diff_at(x, y, &format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            (a.len() != b.len())
                .then(|| format!("{path}: expected {} items, got {}", a.len(), b.len()))
        }
        (Value::Object(a), Value::Object(b)) => {
            for (k, x) in a {
                match b.get(k) {
                    Some(y) => {
                        if let Some(d) = diff_at(x, y, &child(path, k)) {
                            return Some(d);
                        }
                    }
                    None => {
                        return Some(format!(
                            "{}: expected {}, missing",
                            child(path, k),
                            short(x)
                        ));
                    }
                }
            }
            b.keys()
                .find(|k| !a.contains_key(*k))
                .map(|k| format!("{}: not expected, got {}", child(path, k), short(&b[k])))
        }
        _ => (want != got).then(differ).flatten(),
    }
}

/// Run every example of the candidate `tool` (staged in `dir`, not stored yet) and report the
/// ones that fail.
pub async fn check(app: &App, dir: &Path, tool: &Tool, host: &dyn Host) -> Vec<ExampleFailure> {
    let mut failures = Vec::new();
    for (i, ex) in tool.manifest.examples.iter().enumerate() {
        let callee = crate::index::Callee::staged(dir, tool.clone());
        let out = app.run(callee, ex.input.clone(), host).await;
        let fail = |expected: Option<Value>, actual: Value| ExampleFailure {
            index: i + 1,
            description: ex.description.clone(),
            input: ex.input.clone(),
            difference: match (&expected, &actual) {
                (Some(w), a) if !a.is_string() || w.is_string() => difference(w, a),
                _ => None,
            },
            expected,
            actual,
        };
        match out {
            Err(e) => {
                let expected = ex
                    .output
                    .clone()
                    .or_else(|| ex.output_text.clone().map(Value::String));
                failures.push(fail(expected, Value::String(format!("error: {e}"))));
            }
            Ok(o) => {
                if let Some(want) = &ex.output {
                    let got = o
                        .structured
                        .clone()
                        .unwrap_or_else(|| Value::String(o.text.clone()));
                    if difference(want, &got).is_some() {
                        failures.push(fail(Some(want.clone()), got));
                    }
                } else if let Some(want) = &ex.output_text
                    && o.text.trim_end() != want.trim_end()
                {
                    failures.push(fail(
                        Some(Value::String(want.clone())),
                        Value::String(o.text.clone()),
                    ));
                }
            }
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::difference;
    use serde_json::json;

    #[test]
    fn values_not_spellings() {
        assert_eq!(difference(&json!({"x": 1}), &json!({"x": 1.0})), None);
        assert_eq!(difference(&json!([1.5, 2]), &json!([1.5, 2.0])), None);
        assert_eq!(
            difference(&json!({"a": {"b": [1, 2]}}), &json!({"a": {"b": [1, 3]}})).as_deref(),
            Some("$.a.b[1]: expected 2, got 3")
        );
        assert_eq!(
            difference(&json!({"a": 1}), &json!({"a": 1, "my key": 2})).as_deref(),
            Some("$[\"my key\"]: not expected, got 2")
        );
        assert_eq!(
            difference(&json!({"a": 1}), &json!({})).as_deref(),
            Some("$.a: expected 1, missing")
        );
        assert_eq!(
            difference(&json!([1]), &json!([1, 2])).as_deref(),
            Some("$: expected 1 items, got 2")
        );
        assert!(difference(&json!("1"), &json!(1)).is_some());
    }
}
