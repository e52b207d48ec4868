//! Running a tool's `[[examples]]` (input → expected output) — the gate before a build or a
//! registration is committed, and `toolsmith test NAME` for people.

use crate::app::App;
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
    pub description: Option<String>,
    pub input: Value,
    /// What the example expects (structured output, or text).
    pub expected: Option<Value>,
    /// What the tool produced, or its error.
    pub actual: Value,
}

impl std::fmt::Display for ExampleFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "example {}", self.index)?;
        if let Some(d) = &self.description {
            write!(f, " ({d})")?;
        }
        write!(f, ": input {}", self.input)?;
        match &self.expected {
            Some(e) => write!(f, ", expected {e}, got {}", self.actual),
            None => write!(f, ", expected success, got {}", self.actual),
        }
    }
}

/// Run every example of `tool` (living in `dir`) and report the ones that fail.
pub async fn check(app: &App, dir: &Path, tool: &Tool, host: &dyn Host) -> Vec<ExampleFailure> {
    let mut failures = Vec::new();
    for (i, ex) in tool.manifest.examples.iter().enumerate() {
        let out = app.run_tool(dir, tool, ex.input.clone(), host).await;
        let fail = |expected: Option<Value>, actual: Value| ExampleFailure {
            index: i + 1,
            description: ex.description.clone(),
            input: ex.input.clone(),
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
                    if &got != want {
                        failures.push(fail(Some(want.clone()), got));
                    }
                } else if let Some(want) = &ex.output_text {
                    if o.text.trim_end() != want.trim_end() {
                        failures.push(fail(
                            Some(Value::String(want.clone())),
                            Value::String(o.text.clone()),
                        ));
                    }
                }
            }
        }
    }
    failures
}
