//! Why a call could not be made or failed, and the check of a call's arguments against the
//! tool's input schema.

use crate::index::Tool;
use crate::runner::RunError;
use serde_json::Value;
use thiserror::Error;

/// Why a call could not be made or failed.
#[derive(Debug, Error)]
pub enum CallError {
    /// No tool of that name.
    #[error("there is no tool named {name:?}")]
    NoSuchTool {
        /// The tool.
        name: String,
    },
    /// The tool does not parse or validate.
    #[error("tool {name:?} is broken: {errors}")]
    Broken {
        /// The tool.
        name: String,
        /// The diagnostics, joined.
        errors: String,
    },
    /// The arguments do not match its input schema.
    #[error("the arguments do not match the input schema of {name:?}: {problems}")]
    BadArguments {
        /// The tool.
        name: String,
        /// What does not match, per field.
        problems: String,
    },
    /// Its runner failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A pipeline step failed.
    #[error("pipeline {pipeline:?}, step {step} ({tool}): {message}")]
    Step {
        /// The pipeline.
        pipeline: String,
        /// The step.
        step: String,
        /// The tool the step calls.
        tool: String,
        /// What went wrong.
        message: String,
        /// What to do.
        hint: Option<String>,
    },
    /// Pipelines nested too deep.
    #[error("pipeline {name:?} nests pipelines deeper than {max}; is there a cycle?")]
    TooDeep {
        /// The tool.
        name: String,
        /// The most nesting allowed.
        max: usize,
    },
    /// The tool has uncommitted changes and the toolbox's policy refuses running them.
    #[error("refused: {details}, and this toolbox's policy refuses such calls")]
    Uncommitted {
        /// The tool.
        name: String,
        /// What is uncommitted.
        details: String,
    },
    /// The tool is held until a person trusts it.
    #[error("refused: {0}")]
    Held(#[from] Box<crate::trust::Held>),
    /// The approval gate refused the call.
    #[error(transparent)]
    Gate(#[from] crate::approval::GateError),
}

impl CallError {
    /// What kind of failure this is, in a word (telemetry's `error.type`: never the message,
    /// which may hold a tool's output).
    pub fn kind(&self) -> &'static str {
        match self {
            CallError::NoSuchTool { .. } => "no_such_tool",
            CallError::Broken { .. } => "broken_tool",
            CallError::BadArguments { .. } => "bad_arguments",
            CallError::Run(RunError::Timeout { .. }) => "timeout",
            CallError::Run(RunError::Memory { .. }) => "memory_limit",
            CallError::Run(RunError::OutputTooLarge { .. }) => "output_limit",
            CallError::Run(_) => "run_failed",
            CallError::Step { .. } => "pipeline_step",
            CallError::TooDeep { .. } => "too_deep",
            CallError::Uncommitted { .. } => "uncommitted",
            CallError::Held(_) => "held",
            CallError::Gate(_) => "refused",
        }
    }
}

impl crate::error::Hint for CallError {
    fn hint(&self) -> Option<String> {
        match self {
            CallError::NoSuchTool { .. } => {
                Some("`list_tools` or `search_tools` shows the tools there are".into())
            }
            CallError::Broken { name, .. } => Some(format!(
                "fix tools/{name}/tool.toml (`toolsmith lint` points at the line)"
            )),
            CallError::BadArguments { name, .. } => {
                Some(format!("`get_tool {name}` shows the input schema"))
            }
            CallError::Run(e) => e.hint(),
            CallError::Step { hint, .. } => hint.clone(),
            CallError::TooDeep { .. } => {
                Some("a pipeline must not call itself, directly or through other pipelines".into())
            }
            CallError::Uncommitted { name, .. } => Some(format!(
                "commit the change (`git add tools/{name} && git commit`) or drop it (`git checkout HEAD -- tools/{name}`); to allow such calls, set `[policy] uncommitted = \"warn\"` in {}",
                crate::toolbox::SETTINGS_FILE
            )),
            CallError::Held(h) => h.hint(),
            CallError::Gate(e) => e.hint(),
        }
    }
}

/// Validate arguments against the tool's input schema.
pub fn check_arguments(tool: &Tool, args: &Value) -> Result<(), CallError> {
    let name = tool.manifest.name.clone();
    if !args.is_object() {
        return Err(CallError::BadArguments {
            name,
            problems: format!("arguments must be a JSON object, not {args}"),
        });
    }
    let validator = match tool.validator.get(&tool.input_schema) {
        Ok(v) => v,
        Err(e) => {
            return Err(CallError::Broken {
                name,
                errors: format!("its input schema is not a valid JSON Schema: {e}"),
            });
        }
    };
    let problems: Vec<String> = validator
        .iter_errors(args)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(CallError::BadArguments {
            name,
            problems: problems.join("; "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: &str) -> Tool {
        let text = format!(
            "format = 1\nname = \"t\"\ndescription = \"A test tool\"\nkind = \"script\"\n\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\n\n{schema}"
        );
        let parsed = crate::manifest::parse(std::path::Path::new("tool.toml"), Some("t"), &text)
            .expect("a valid manifest");
        Tool {
            input_schema: parsed.manifest.input_schema.clone().unwrap_or_default(),
            output_schema: None,
            manifest: parsed.manifest,
            warnings: Vec::new(),
            validator: Default::default(),
            upstream: None,
        }
    }

    /// Arguments are an object that fits the input schema; a refusal names each problem and
    /// where it is.
    #[test]
    fn arguments_are_checked_against_the_input_schema() {
        let t = tool(
            "[input_schema]\ntype = \"object\"\nrequired = [\"n\"]\n[input_schema.properties.n]\ntype = \"integer\"\n",
        );
        assert!(check_arguments(&t, &json!({"n": 3})).is_ok());
        let e = check_arguments(&t, &json!([1])).unwrap_err().to_string();
        assert!(e.contains("must be a JSON object"), "{e}");
        let e = check_arguments(&t, &json!({"n": "three"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/n"), "the field is named: {e}");
        let e = check_arguments(&t, &json!({})).unwrap_err().to_string();
        assert!(e.contains("\"n\""), "the missing field is named: {e}");
    }
}
