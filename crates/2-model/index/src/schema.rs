//! A tool's input schema compiled once: the validator lives beside the index entry and is
//! built on the tool's first call (not while indexing, so a large toolbox indexes fast), then
//! reused by every later call until the entry is re-read.

use serde_json::{Map, Value};
use std::sync::{Arc, OnceLock};

/// The compiled validator of one input schema (or why the schema does not compile).
#[derive(Clone, Default)]
pub struct CompiledSchema(Arc<OnceLock<Result<Arc<jsonschema::Validator>, String>>>);

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.0.get() {
            None => "not compiled yet",
            Some(Ok(_)) => "compiled",
            Some(Err(_)) => "invalid",
        };
        f.write_str(state)
    }
}

impl CompiledSchema {
    /// The validator for `schema`, compiled on first use. `schema` must be the schema this
    /// value was made for (the owning `Tool`'s `input_schema`).
    pub fn get(&self, schema: &Map<String, Value>) -> Result<Arc<jsonschema::Validator>, String> {
        self.0
            .get_or_init(|| {
                jsonschema::validator_for(&Value::Object(schema.clone()))
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_once_and_shared_by_clones() {
        let schema = serde_json::json!({"type": "object", "required": ["x"]});
        let schema = schema.as_object().cloned().unwrap_or_default();
        let c = CompiledSchema::default();
        let a = c.get(&schema).expect("compiles");
        let b = c.clone().get(&schema).expect("compiles");
        assert!(Arc::ptr_eq(&a, &b), "a clone reuses the compiled validator");
        assert!(!a.is_valid(&serde_json::json!({})));
        assert!(a.is_valid(&serde_json::json!({"x": 1})));
    }

    #[test]
    fn an_invalid_schema_says_why() {
        let schema = serde_json::json!({"type": 12});
        let schema = schema.as_object().cloned().unwrap_or_default();
        let err = CompiledSchema::default().get(&schema).unwrap_err();
        assert!(!err.is_empty());
    }
}
