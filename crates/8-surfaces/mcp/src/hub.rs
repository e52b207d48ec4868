//! Every connected client: 2025 peers (from `initialize`) and 2026 `subscriptions/listen`
//! sinks, and broadcasting list_changed / resource-updated notifications to all of them.

use super::Session;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{SubscriptionSendError, SubscriptionSink};
use rmcp::{Peer, RoleServer};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long one client may take to accept a notification before it is skipped.
const SEND_TIMEOUT: Duration = Duration::from_secs(2);

type Peers = Vec<(Peer<RoleServer>, Arc<Session>)>;

#[derive(Default)]
pub struct Hub {
    legacy: Mutex<Peers>,
    sinks: Mutex<HashMap<u64, SubscriptionSink>>,
    next: AtomicU64,
}

impl Hub {
    pub fn add_legacy(&self, peer: Peer<RoleServer>, session: Arc<Session>) {
        if let Ok(mut v) = self.legacy.lock() {
            v.retain(|(p, _)| !p.is_transport_closed());
            v.push((peer, session));
        }
    }

    pub fn add_sink(&self, sink: SubscriptionSink) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut s) = self.sinks.lock() {
            s.insert(id, sink);
        }
        id
    }

    pub fn remove_sink(&self, id: u64) {
        if let Ok(mut s) = self.sinks.lock() {
            s.remove(&id);
        }
    }

    fn snapshot(&self) -> (Peers, Vec<(u64, SubscriptionSink)>) {
        let peers = match self.legacy.lock() {
            Ok(mut v) => {
                v.retain(|(p, _)| !p.is_transport_closed());
                v.clone()
            }
            Err(_) => Vec::new(),
        };
        let sinks = self
            .sinks
            .lock()
            .map(|s| s.iter().map(|(k, v)| (*k, v.clone())).collect())
            .unwrap_or_default();
        (peers, sinks)
    }

    /// Number of connected clients that can receive notifications.
    pub fn len(&self) -> usize {
        let (p, s) = self.snapshot();
        p.len() + s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tell every client the tool list changed.
    pub async fn tools_changed(&self) {
        let (peers, sinks) = self.snapshot();
        for (p, _) in &peers {
            let _ = tokio::time::timeout(SEND_TIMEOUT, p.notify_tool_list_changed()).await;
        }
        for (id, s) in sinks {
            match tokio::time::timeout(SEND_TIMEOUT, s.notify_tool_list_changed()).await {
                Ok(Ok(())) | Ok(Err(SubscriptionSendError::NotificationNotAccepted(_))) => {}
                Ok(Err(_)) => self.remove_sink(id),
                Err(_) => {}
            }
        }
    }

    /// Tell subscribed clients a resource changed.
    pub async fn resource_updated(&self, uri: &str) {
        let (peers, sinks) = self.snapshot();
        for (p, s) in &peers {
            let wanted = s
                .subscribed
                .lock()
                .map(|set| set.contains(uri))
                .unwrap_or(false);
            if wanted {
                let _ = tokio::time::timeout(
                    SEND_TIMEOUT,
                    p.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)),
                )
                .await;
            }
        }
        for (id, s) in sinks {
            match tokio::time::timeout(SEND_TIMEOUT, s.notify_resource_updated(uri)).await {
                Ok(Ok(())) | Ok(Err(SubscriptionSendError::NotificationNotAccepted(_))) => {}
                Ok(Err(_)) => self.remove_sink(id),
                Err(_) => {}
            }
        }
    }
}
