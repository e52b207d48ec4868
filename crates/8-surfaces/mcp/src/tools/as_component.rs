//! `register_script` with `component = true`: the script spec as the `build_tool` request
//! that makes it a WebAssembly component. The surface composes the two (registration and
//! build stay apart: neither crate knows the other).

use crate::build::BuildRequest;
use crate::build::componentize::Language;
use crate::register::{self, ExampleSpec, RegisterError, ScriptSpec};

/// A Python or JavaScript script registered with `component = true`, as the `build_tool`
/// request that makes it a WebAssembly component (`language = "python"` or
/// `"javascript"`): the source must be the component form (a module-level function or a
/// `WitWorld` class; an ES module exporting `call`), and nothing a component cannot have may be asked for (packages, an
/// interpreter, a protocol, a worker, a sandbox mode).
pub fn as_component(spec: &ScriptSpec) -> Result<BuildRequest, RegisterError> {
    let language = match spec
        .language
        .as_deref()
        .map(register::canonical_language)
        .as_deref()
    {
        Some("python") => Some(Language::Python),
        Some("node") => Some(Language::JavaScript),
        _ => None,
    };
    let form = match language {
        Some(Language::Python) => {
            "a component's Python is a module-level function (named after the tool, `call`, or the only one) returning any JSON value, or `class WitWorld(wit_world.WitWorld)` with a method `call` (toolsmith://guide, Python as a component)"
        }
        Some(Language::JavaScript) => {
            "a component's JavaScript is an ES module with `export function call(…)` (toolsmith://guide, JavaScript as a component)"
        }
        None => "components are built from `language = \"python\"` or `\"javascript\"`",
    };
    let bad = |why: &str| RegisterError::Invalid(format!("`component = true` {why}; {form}"));
    let Some(language) = language else {
        return Err(bad("is for Python and JavaScript only"));
    };
    if spec.dependencies.is_some() {
        return Err(bad(
            "takes no `dependencies` (a component has only what its runtime brings)",
        ));
    }
    if spec.interpreter.is_some()
        || spec.protocol.is_some()
        || spec.worker.is_some()
        || spec.sandbox.is_some()
        || spec.entry.is_some()
    {
        return Err(bad(
            "takes no interpreter, entry, protocol, worker or sandbox",
        ));
    }
    let component_form = match language {
        Language::Python => {
            spec.source.contains("class WitWorld")
                || spec
                    .source
                    .lines()
                    .any(|l| l.starts_with("def ") || l.starts_with("async def "))
        }
        Language::JavaScript => [
            "export function call",
            "export async function call",
            "export const call",
            "export { call",
            "export {call",
        ]
        .iter()
        .any(|f| spec.source.contains(f)),
    };
    if !component_form {
        return Err(bad("needs the source in the component form"));
    }
    Ok(BuildRequest {
        name: spec.name.clone(),
        source: Some(spec.source.clone()),
        description: Some(spec.description.clone()),
        version: spec.version.clone(),
        tags: (!spec.tags.is_empty()).then(|| spec.tags.clone()),
        language: Some(language.name().into()),
        declared: spec.declared.clone(),
        examples: (!spec.examples.is_empty())
            .then(|| spec.examples.iter().map(ExampleSpec::to_manifest).collect()),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// A build request refuses an unknown key, as a script spec does.
    #[test]
    fn a_build_request_refuses_unknown_keys() {
        let e = serde_json::from_value::<super::BuildRequest>(json!({
            "name": "t", "capabilitiez": {},
        }))
        .unwrap_err();
        assert!(e.to_string().contains("capabilitiez"), "{e}");
    }
}
