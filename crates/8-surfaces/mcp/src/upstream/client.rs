//! toolsmith as the client of one entry's server: what it declares (no roots, no sampling,
//! no elicitation: the server's questions never reach the person unlabelled), progress
//! notifications routed to the call that asked for them, log messages to the calls in flight
//! (each call's host labels both as the entry's: `tool ENTRY`), and `tools/list_changed` heard.
//!
//! Progress and logs are routed where messages are read ([`Heard`]), not in a notification
//! handler:
//! rmcp runs each notification's handler in a task of its own, so a server's last report,
//! sent before its answer, could reach the handler after the call had its answer and had
//! stopped listening. Read in order, every report sent before the answer is in the call's
//! channel when the answer arrives.

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, JsonRpcMessage, LoggingLevel,
    LoggingMessageNotificationParam, NumberOrString, ProgressNotificationParam, ProgressToken,
    ServerNotification,
};
use rmcp::service::{NotificationContext, RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, ErrorData as McpError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// A progress report for a call: (progress, total, message).
pub type Progress = (f64, Option<f64>, Option<String>);
/// A log message of the server: (level, text).
pub type Log = (String, String);
/// Longest log message passed on, in characters.
const MAX_LOG: usize = 4096;

/// The handler of one connection.
#[derive(Clone)]
pub struct Client {
    pub state: Arc<State>,
}

/// What the handler shares with the pool.
pub struct State {
    pub entry: String,
    progress: Mutex<HashMap<String, mpsc::UnboundedSender<Progress>>>,
    /// The calls in flight, each told the server's log messages.
    logs: Mutex<HashMap<String, mpsc::UnboundedSender<Log>>>,
    /// Told when the server says its tool list changed.
    pub list_changed: mpsc::UnboundedSender<()>,
}

impl Client {
    pub fn new(entry: &str, list_changed: mpsc::UnboundedSender<()>) -> Client {
        Client {
            state: Arc::new(State {
                entry: entry.to_string(),
                progress: Mutex::default(),
                logs: Mutex::default(),
                list_changed,
            }),
        }
    }
}

/// The reports the server sends under a call's progress token, and its log messages while
/// the call runs; dropping it forgets the token.
pub struct ProgressRoute {
    state: Arc<State>,
    key: String,
    pub reports: mpsc::UnboundedReceiver<Progress>,
    pub logs: mpsc::UnboundedReceiver<Log>,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        if let Ok(mut m) = self.state.progress.lock() {
            m.remove(&self.key);
        }
        if let Ok(mut m) = self.state.logs.lock() {
            m.remove(&self.key);
        }
    }
}

impl State {
    /// Route the reports under `token` (the one rmcp put into a call's request) to the call.
    pub fn route(self: &Arc<Self>, token: ProgressToken) -> ProgressRoute {
        let key = token_key(&token);
        let (tx, rx) = mpsc::unbounded_channel();
        if let Ok(mut m) = self.progress.lock() {
            m.insert(key.clone(), tx);
        }
        let (log_tx, log_rx) = mpsc::unbounded_channel();
        if let Ok(mut m) = self.logs.lock() {
            m.insert(key.clone(), log_tx);
        }
        ProgressRoute {
            state: Arc::clone(self),
            key,
            reports: rx,
            logs: log_rx,
        }
    }

    /// Hand a log message to every call in flight (none: it goes to toolsmith's log only).
    fn heard_log(&self, params: &LoggingMessageNotificationParam) {
        let text = match &params.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let text: String = text.chars().take(MAX_LOG).collect();
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "info".into());
        if let Ok(m) = self.logs.lock() {
            for tx in m.values() {
                let _ = tx.send((level.clone(), text.clone()));
            }
        }
    }

    /// Hand a report to the call whose token it carries; a report for no call is dropped.
    fn heard_progress(&self, params: &ProgressNotificationParam) {
        let key = token_key(&params.progress_token);
        if let Ok(m) = self.progress.lock()
            && let Some(tx) = m.get(&key)
        {
            let _ = tx.send((params.progress, params.total, params.message.clone()));
        }
    }
}

/// A connection's transport, read in the order the server wrote: progress reports are routed
/// as they are read, before any later message (the call's answer) reaches rmcp.
pub struct Heard<T> {
    inner: T,
    state: Arc<State>,
}

impl<T> Heard<T> {
    pub fn new(inner: T, client: &Client) -> Heard<T> {
        Heard {
            inner,
            state: Arc::clone(&client.state),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Heard<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let Heard { inner, state } = self;
        let next = inner.receive();
        async move {
            let message = next.await?;
            if let JsonRpcMessage::Notification(n) = &message {
                match &n.notification {
                    ServerNotification::ProgressNotification(p) => state.heard_progress(&p.params),
                    ServerNotification::LoggingMessageNotification(l) => state.heard_log(&l.params),
                    _ => {}
                }
            }
            Some(message)
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

fn token_key(t: &ProgressToken) -> String {
    match &t.0 {
        NumberOrString::String(s) => s.to_string(),
        NumberOrString::Number(n) => n.to_string(),
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolsmith", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _ctx: NotificationContext<RoleClient>) {
        let _ = self.state.list_changed.send(());
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        let text = match &params.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match params.level {
            LoggingLevel::Error
            | LoggingLevel::Critical
            | LoggingLevel::Alert
            | LoggingLevel::Emergency => {
                tracing::warn!(server = %self.state.entry, "log: {text}")
            }
            _ => tracing::debug!(server = %self.state.entry, "log: {text}"),
        }
    }

    async fn list_roots(
        &self,
        _ctx: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, McpError> {
        // No roots: what a server may touch is its grants, not the client's workspace.
        Ok(rmcp::model::ListRootsResult::default())
    }
}
