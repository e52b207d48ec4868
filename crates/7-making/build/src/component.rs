//! The WIT side of a component build, whatever its language: the world and its WIT file
//! (generated from the schemas unless given), and the schemas the built component's
//! exported function gives back to tool.toml.

use super::{BuildError, BuildRequest, WIT_FILE, wit_gen};
use crate::app::App;
use crate::manifest::{self, Manifest};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Settle a component's world: the WIT file among `files` (given as `wit`, kept when a person
/// wrote it, else generated from the declared or previous schemas) and `[run]`'s `world` and
/// `export`.
pub(super) fn plan_world(
    req: &BuildRequest,
    previous: Option<&Manifest>,
    files: &mut BTreeMap<String, Vec<u8>>,
    run: &mut Map<String, Value>,
) -> Result<(), BuildError> {
    let world = req
        .world
        .clone()
        .or_else(|| previous.and_then(|m| m.run.world.clone()))
        .unwrap_or_else(|| "tool".into());
    let generated = files
        .get(WIT_FILE)
        .is_none_or(|w| w.starts_with(wit_gen::GENERATED.as_bytes()));
    match &req.wit {
        Some(w) => {
            files.insert(WIT_FILE.to_string(), w.clone().into_bytes());
        }
        None if generated => {
            let schema = |given: &Option<Map<String, Value>>, old: Option<&manifest::Schema>| {
                given.clone().or_else(|| old.map(|s| (**s).clone()))
            };
            let input = schema(
                &req.declared.input_schema,
                previous.and_then(|m| m.input_schema.as_ref()),
            );
            let output = schema(
                &req.declared.output_schema,
                previous.and_then(|m| m.output_schema.as_ref()),
            );
            let text = wit_gen::generate(&world, input.as_ref(), output.as_ref())
                .map_err(|e| BuildError::BadRequest {
                    message: format!(
                        "no WIT was given and the schema at {e}; fix that part of the schema, or give the WIT as `wit`"
                    ),
                })?
                .wit;
            files.insert(WIT_FILE.to_string(), text.into_bytes());
            run.insert("export".into(), Value::String(wit_gen::EXPORT.into()));
        }
        None => {}
    }
    run.insert("world".into(), Value::String(world));
    if let Some(e) = &req.export {
        run.insert("export".into(), Value::String(e.clone()));
    }
    Ok(())
}

/// A component's tool.toml with the schemas its exported function's WIT types give, where it
/// declares none (declared ones stay: they carry descriptions; the call converts arguments
/// to the WIT types either way).
pub(super) fn with_schemas(
    app: &App,
    name: &str,
    text: &str,
    m: &Manifest,
    bytes: &[u8],
) -> Result<String, BuildError> {
    let runner = app.wasm().map_err(|e| BuildError::Internal {
        message: e.to_string(),
    })?;
    let s = runner
        .component_schemas(bytes, m.run.export.as_deref())
        .map_err(|message| BuildError::Component {
            name: name.to_string(),
            message,
        })?;
    let mut m = m.clone();
    let mut changed = false;
    if m.input_schema.is_none() && m.input_schema_file.is_none() {
        m.input_schema = s.input.as_object().cloned().map(std::sync::Arc::new);
        changed = true;
    }
    if m.output_schema.is_none()
        && m.output_schema_file.is_none()
        && let Some(out) = s.output.as_ref().and_then(Value::as_object)
    {
        m.output_schema = Some(std::sync::Arc::new(out.clone()));
        changed = true;
    }
    if !changed {
        return Ok(text.to_string());
    }
    m.to_toml().map_err(|e| BuildError::Internal {
        message: format!("cannot write tool.toml: {e}"),
    })
}

/// A declared schema of the tool: inline in tool.toml, or in the file it names (in `work`).
fn declared(
    inline: Option<&Map<String, Value>>,
    file: Option<&String>,
    work: &Path,
) -> Option<Map<String, Value>> {
    inline.cloned().or_else(|| {
        let text = std::fs::read_to_string(work.join(file?)).ok()?;
        serde_json::from_str::<Value>(&text)
            .ok()?
            .as_object()
            .cloned()
    })
}

/// The world toolsmith generates for the component in `work` from its declared schemas, when
/// its WIT file is toolsmith's (None: a WIT the AI wrote). The file is rewritten when this
/// version of the generator writes it otherwise.
pub(super) fn generated_world(
    m: &Manifest,
    world: &str,
    work: &Path,
) -> Result<Option<wit_gen::World>, BuildError> {
    let path = work.join(WIT_FILE);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    if !text.starts_with(wit_gen::GENERATED) {
        return Ok(None);
    }
    let input = declared(
        m.input_schema.as_deref(),
        m.input_schema_file.as_ref(),
        work,
    );
    let output = declared(
        m.output_schema.as_deref(),
        m.output_schema_file.as_ref(),
        work,
    );
    let w = wit_gen::generate(world, input.as_ref(), output.as_ref()).map_err(|e| {
        BuildError::BadRequest {
            message: format!("the schema at {e}"),
        }
    })?;
    if text != w.wit {
        std::fs::write(&path, &w.wit).map_err(BuildError::io("write", &path))?;
    }
    Ok(Some(w))
}
