//! HTTP hygiene: read timeouts, a cap on live MCP sessions (the least recently used one is
//! reaped first), and JSON-RPC-shaped `400` answers for bodies that are not one JSON-RPC
//! message (malformed JSON → `-32700`, batches and other non-messages → `-32600`).
//!
//! The header read timeout lives in the connection loop (`http::serve`); the body read
//! timeout and the body checks are the axum middleware [`check_body`]; the session cap is the
//! [`BoundedSessions`] session manager around rmcp's `LocalSessionManager`.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::Stream;
use http_body_util::BodyExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::SessionId;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{RestoreOutcome, ServerSseMessage};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Limits of one HTTP listener.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Time allowed to receive a request's headers (also how long an idle kept-alive
    /// connection stays open) and, separately, its body.
    pub read_timeout: Duration,
    /// Most live 2025-era sessions; creating one more closes the least recently used.
    pub max_sessions: usize,
    /// Largest accepted request body.
    pub max_body_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            read_timeout: Duration::from_secs(30),
            max_sessions: 512,
            max_body_bytes: 4 * 1024 * 1024,
        }
    }
}

/// A JSON-RPC error response with HTTP status `status`.
pub fn rpc_error(status: StatusCode, code: i64, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn is_json(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim())
        .is_some_and(|v| v.eq_ignore_ascii_case("application/json"))
}

/// Middleware for POST bodies: read the body within the read timeout and the size cap, and
/// answer `400` with a JSON-RPC error unless it is exactly one JSON-RPC message. Other
/// requests (and bodies not labelled JSON, which rmcp answers with 415) pass unchanged.
pub async fn check_body(State(limits): State<Limits>, req: Request, next: Next) -> Response {
    if req.method() != Method::POST || !is_json(&req) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let limited = http_body_util::Limited::new(body, limits.max_body_bytes);
    let bytes = match tokio::time::timeout(limits.read_timeout, limited.collect()).await {
        Err(_) => {
            return rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                -32600,
                format!(
                    "the request body did not arrive within {} s; send the whole body at once",
                    limits.read_timeout.as_secs_f64()
                ),
            );
        }
        Ok(Err(e)) => {
            let too_large = e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some();
            return if too_large {
                rpc_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    -32600,
                    format!(
                        "the request body is larger than {} bytes",
                        limits.max_body_bytes
                    ),
                )
            } else {
                rpc_error(
                    StatusCode::BAD_REQUEST,
                    -32700,
                    format!("could not read the request body: {e}"),
                )
            };
        }
        Ok(Ok(c)) => c.to_bytes(),
    };
    if let Err(resp) = check_message(&bytes) {
        return *resp;
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Refuse anything but one JSON-RPC message.
fn check_message(bytes: &[u8]) -> Result<(), Box<Response>> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        Box::new(rpc_error(
            StatusCode::BAD_REQUEST,
            -32700,
            format!("parse error: the body is not valid JSON ({e})"),
        ))
    })?;
    if value.is_array() {
        return Err(Box::new(rpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "JSON-RPC batches are not supported by MCP; send one message per request".into(),
        )));
    }
    serde_json::from_value::<ClientJsonRpcMessage>(value).map_err(|e| {
        Box::new(rpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            format!("invalid request: not a JSON-RPC 2.0 request, notification or response ({e})"),
        ))
    })?;
    Ok(())
}

/// rmcp's in-memory session manager with a cap on live sessions: when a new session would
/// pass the cap, the least recently used session is closed first.
pub struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    last_used: Mutex<HashMap<SessionId, Instant>>,
}

impl BoundedSessions {
    /// A manager that keeps at most `max` sessions (at least one).
    pub fn new(max: usize) -> BoundedSessions {
        BoundedSessions {
            inner: LocalSessionManager::default(),
            max: max.max(1),
            last_used: Mutex::default(),
        }
    }

    fn touch(&self, id: &SessionId) {
        if let Ok(mut m) = self.last_used.lock()
            && let Some(t) = m.get_mut(id)
        {
            *t = Instant::now();
        }
    }

    /// Close the least recently used sessions until there is room for one more.
    async fn make_room(&self) {
        // Forget sessions rmcp already closed (idle keep-alive, DELETE).
        let known: Vec<SessionId> = match self.last_used.lock() {
            Ok(m) => m.keys().cloned().collect(),
            Err(_) => return,
        };
        for id in known {
            if !self.inner.has_session(&id).await.unwrap_or(false)
                && let Ok(mut m) = self.last_used.lock()
            {
                m.remove(&id);
            }
        }
        loop {
            let oldest = match self.last_used.lock() {
                Ok(m) if m.len() >= self.max => {
                    m.iter().min_by_key(|(_, t)| **t).map(|(id, _)| id.clone())
                }
                _ => None,
            };
            let Some(id) = oldest else { return };
            tracing::info!(session = %id, max = self.max, "closing the least recently used MCP session: the session cap is reached");
            let _ = self.inner.close_session(&id).await;
            if let Ok(mut m) = self.last_used.lock() {
                m.remove(&id);
            }
        }
    }

    /// Live sessions known to the cap.
    pub fn len(&self) -> usize {
        self.last_used.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Whether no session is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

type Inner = LocalSessionManager;

impl SessionManager for BoundedSessions {
    type Error = <Inner as SessionManager>::Error;
    type Transport = <Inner as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        if let Ok(mut m) = self.last_used.lock() {
            m.insert(id.clone(), Instant::now());
        }
        Ok((id, transport))
    }

    fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<ServerJsonRpcMessage, Self::Error>> + Send {
        self.touch(id);
        self.inner.initialize_session(id, message)
    }

    fn has_session(
        &self,
        id: &SessionId,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send {
        self.inner.has_session(id)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Ok(mut m) = self.last_used.lock() {
            m.remove(id);
        }
        self.inner.close_session(id).await
    }

    fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.touch(id);
        self.inner.create_stream(id, message)
    }

    fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.touch(id);
        self.inner.accept_message(id, message)
    }

    fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.touch(id);
        self.inner.create_standalone_stream(id)
    }

    fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.touch(id);
        self.inner.resume(id, last_event_id)
    }

    fn restore_session(
        &self,
        id: SessionId,
    ) -> impl Future<Output = Result<RestoreOutcome<Self::Transport>, Self::Error>> + Send {
        self.inner.restore_session(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<(), Box<Response>>) -> Option<StatusCode> {
        r.err().map(|r| r.status())
    }

    #[test]
    fn bodies_that_are_not_one_message_are_400() {
        assert_eq!(
            code(check_message(b"{not json")),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            code(check_message(
                br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#
            )),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            code(check_message(br#"{"hello":1}"#)),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            code(check_message(
                br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
            )),
            None
        );
    }
}
