//! The process's TLS crypto provider, chosen once.
//!
//! rustls needs one process-wide provider when more than one could be compiled in; toolsmith's
//! HTTP clients (reqwest for MCP entries over HTTP, oci-client, the OTLP exporter, WASM tools'
//! outgoing HTTPS) are built without a default, and this build's is `ring`. Every path that
//! may open a TLS connection calls [`install`] first, and the binary calls it at start, so no
//! client depends on another having run before it.

use std::sync::Once;

/// Install `ring` as the process's rustls provider. Idempotent and cheap after the first call;
/// a provider installed earlier by someone else is kept.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means a provider is already installed: that one stays, which is what we want.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
