//! Input-required rounds for 2026-07-28 clients: a script that asks for elicitation or sampling
//! mid-call cannot reach the client (the protocol forbids server→client requests), so the call
//! ends with an input-required result naming the question; the client answers and retries the
//! call, and the script runs again with the answers known. Earlier answers ride along in a
//! sealed (HMAC-protected) request state, so a script may ask several questions in turn.

use rmcp::ErrorData as McpError;
use rmcp::model::{InputRequests, InputRequiredResult, InputResponses, RequestStateCodec};
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The process's request-state sealer (keyed per process: state does not survive a restart,
/// and the client then simply starts the call over).
pub fn codec() -> &'static RequestStateCodec {
    static CODEC: OnceLock<RequestStateCodec> = OnceLock::new();
    CODEC.get_or_init(|| {
        let mut key = [0u8; 32];
        if let Err(e) = getrandom::fill(&mut key) {
            // Without OS randomness the key would be guessable; no sealed state is better
            // than forgeable state, so refuse to run rather than fall back.
            panic!("the operating system's random source failed ({e}); cannot seal request state");
        }
        RequestStateCodec::new_unchecked(key.to_vec())
    })
}

/// The answers and questions of one call attempt.
#[derive(Debug, Default)]
pub struct Rounds {
    answers: Map<String, Value>,
    next: AtomicUsize,
    pending: Mutex<Option<(String, Value)>>,
}

impl Rounds {
    /// Rebuild what is known from a retry's sealed state and input responses.
    pub fn from_request(
        state: Option<&String>,
        responses: Option<&InputResponses>,
    ) -> Result<Rounds, McpError> {
        let mut answers = match state {
            Some(s) => {
                let v: Value = codec().open_json(s).map_err(|e| {
                    McpError::invalid_params(
                        format!("requestState failed its integrity check: {e}"),
                        None,
                    )
                })?;
                v.get("answers")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default()
            }
            None => Map::new(),
        };
        for (k, v) in responses.into_iter().flatten() {
            answers.insert(k.clone(), v.clone());
        }
        Ok(Rounds {
            answers,
            ..Default::default()
        })
    }

    /// The answer to the script's next question, or None after recording it as the question
    /// this attempt ends with. `request` is the MCP input request (`{"method", "params"}`).
    pub fn ask(&self, request: Value) -> Option<Value> {
        let n = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let key = format!("input-{n}");
        if let Some(a) = self.answers.get(&key) {
            return Some(a.clone());
        }
        if let Ok(mut p) = self.pending.lock()
            && p.is_none()
        {
            *p = Some((key, request));
        }
        None
    }

    /// Like `ask`, for toolsmith's own question under its own key (`toolsmith-…`; a script's
    /// questions are `input-N`, so neither can answer the other).
    pub fn ask_keyed(&self, key: &str, request: Value) -> Option<Value> {
        if let Some(a) = self.answers.get(key) {
            return Some(a.clone());
        }
        if let Ok(mut p) = self.pending.lock()
            && p.is_none()
        {
            *p = Some((key.to_string(), request));
        }
        None
    }

    /// The input-required result this attempt ends with, if the script asked something new.
    pub fn input_required(&self) -> Result<Option<InputRequiredResult>, McpError> {
        let Some((key, request)) = self.pending.lock().ok().and_then(|mut p| p.take()) else {
            return Ok(None);
        };
        let reqs: InputRequests = serde_json::from_value(json!({ key: request })).map_err(|e| {
            McpError::internal_error(
                format!("cannot express the script's question as an MCP input request: {e}"),
                None,
            )
        })?;
        let state = codec()
            .seal_json(&json!({ "answers": self.answers }))
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        Ok(Some(InputRequiredResult::new(Some(reqs), Some(state))))
    }
}
