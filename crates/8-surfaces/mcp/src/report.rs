//! The health report as a resource the AI reads (`toolsmith://health`, JSON: the report
//! `toolsmith stats --json` prints), and the similar tools a write's answer names
//! (`register_script`, `build_tool`, `import_tool`: `similar`), both from `toolsmith-health`.

use super::Shared;
use crate::health;
use rmcp::ErrorData as McpError;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents};
use serde_json::Value;
use std::sync::Arc;

/// The resource's listing.
pub fn resource() -> Resource {
    Resource::new(health::URI, "health")
        .with_description("The toolbox's health: per tool calls, error rate, p50/p95 duration, last use, who made it and when; tools never called, failing tools, near-duplicates")
        .with_mime_type("application/json")
}

/// Read the report now (it reads the audit log, git and the embeddings: off the scheduler).
pub async fn read(shared: &Arc<Shared>) -> Result<ReadResourceResult, McpError> {
    let s = Arc::clone(shared);
    let report = crate::platform::blocking(move || health::report(&s.app))
        .await
        .map_err(|e| McpError::internal_error(format!("the report failed: {e}"), None))?
        .map_err(|e| {
            McpError::internal_error(
                format!("cannot read the audit log or the health record: {e}; `toolsmith doctor` checks the personal directory"),
                None,
            )
        })?;
    let text = serde_json::to_string_pretty(&report).unwrap_or_default();
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, health::URI).with_mime_type("application/json"),
    ]))
}

/// The existing tools that look like `name` (just written), for its answer's `similar`; None
/// when there are none.
pub async fn similar(shared: &Arc<Shared>, name: &str) -> Option<Value> {
    let (s, n) = (Arc::clone(shared), name.to_string());
    let found = crate::platform::blocking(move || health::like(&s.app, &n))
        .await
        .ok()?;
    (!found.is_empty()).then(|| serde_json::to_value(found).unwrap_or(Value::Null))
}

/// Add `similar` (and a note on it) to a write's answer `v` for the tool `name`.
pub async fn add_similar(shared: &Arc<Shared>, name: &str, v: &mut Value) {
    if let Some(list) = similar(shared, name).await {
        v["similar"] = list;
        v["similar_note"] = Value::String(format!(
            "existing tools look like {name}: if one does the same job, update it (same name) and delete {name}, rather than keep both"
        ));
    }
}
