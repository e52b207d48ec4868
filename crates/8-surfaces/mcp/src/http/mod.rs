//! MCP over streamable HTTP: the connection loop (TCP_NODELAY and a header read timeout on
//! every accepted socket), the rmcp streamable-HTTP service mounted at `/mcp` behind
//! authentication (`auth`) and the hygiene checks (`limits`), the `/.well-known/` documents,
//! and graceful shutdown on Ctrl-C.

pub mod auth;
pub mod discovery;
pub mod limits;

use super::{Server, Shared};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use limits::{BoundedSessions, Limits};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How one HTTP listener is set up.
pub struct Options {
    /// Where to listen.
    pub addr: SocketAddr,
    /// Sessions, body sizes and request rates.
    pub limits: Limits,
    /// How requests are authenticated.
    pub auth: Arc<auth::Auth>,
    /// The URL clients use for `/mcp` (behind a proxy, or on 0.0.0.0); default http://ADDR/mcp.
    pub public_url: Option<String>,
}

/// The axum application: `/mcp` with its checks.
fn router(
    shared: Arc<Shared>,
    opts: &Options,
    ct: &tokio_util::sync::CancellationToken,
) -> axum::Router {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(ct.child_token())
        .with_max_request_body_bytes(opts.limits.max_body_bytes);
    if opts.addr.ip().is_loopback() {
        config = config
            .with_allowed_hosts(["localhost", "127.0.0.1", "::1", "[::1]"])
            .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]);
    } else {
        config = config.disable_allowed_hosts();
    }
    let for_sessions = Arc::clone(&shared);
    let service = StreamableHttpService::new(
        move || {
            Ok(crate::traced::Traced::new(
                Server::new(Arc::clone(&for_sessions)),
                crate::telemetry::Transport::Tcp,
            ))
        },
        Arc::new(BoundedSessions::new(opts.limits.max_sessions)),
        config,
    );
    let public = match &*opts.auth {
        auth::Auth::OAuth(o) => Some(o.resource.clone()),
        _ => opts.public_url.clone(),
    };
    let base = match public {
        Some(u) => u.trim_end_matches('/').trim_end_matches("/mcp").to_string(),
        None => format!("http://{}", opts.addr),
    };
    let card = axum::Json(discovery::server_card(&shared, &opts.auth, &base));
    let mut app = axum::Router::new()
        .route(
            discovery::CARD_PATH,
            axum::routing::get(move || async move { card }),
        )
        .nest_service("/mcp", service);
    if let auth::Auth::OAuth(o) = &*opts.auth {
        // RFC 9728: the metadata of the resource `/mcp` (path-suffixed) and of the host.
        let doc = axum::Json(o.metadata());
        let doc2 = doc.clone();
        app = app
            .route(
                &format!("{}/mcp", auth::METADATA_PATH),
                axum::routing::get(move || async move { doc }),
            )
            .route(
                auth::METADATA_PATH,
                axum::routing::get(move || async move { doc2 }),
            );
    }
    app.layer(axum::middleware::from_fn_with_state(
        opts.limits,
        limits::check_body,
    ))
    .layer(axum::middleware::from_fn_with_state(
        Arc::clone(&opts.auth),
        auth::require,
    ))
}

/// Serve MCP over streamable HTTP (path `/mcp`) until interrupted.
pub async fn serve(shared: Arc<Shared>, opts: Options) -> anyhow::Result<()> {
    let ct = tokio_util::sync::CancellationToken::new();
    let app = router(shared, &opts, &ct);
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    // Connections watch this; a send asks each to finish its current request and close.
    let (closing, closed) = tokio::sync::watch::channel(false);
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        let (tcp, _peer) = tokio::select! {
            _ = &mut interrupted => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!("accepting an HTTP connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Without TCP_NODELAY every response on a kept-alive connection waits ~40 ms:
        // Nagle's algorithm holds the body until the client's delayed ACK of the headers.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("could not set TCP_NODELAY on an accepted socket: {e}");
        }
        let service = TowerToHyperService::new(app.clone());
        let read_timeout = opts.limits.read_timeout;
        let mut closed = closed.clone();
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            // A client that does not finish its headers in time (or leaves a kept-alive
            // connection idle that long) is disconnected.
            http.timer(TokioTimer::new())
                .header_read_timeout(read_timeout);
            let conn = http
                .serve_connection(TokioIo::new(tcp), service)
                .with_upgrades();
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!("HTTP connection ended: {e}");
                    }
                }
                _ = closed.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    drop(closed);
    ct.cancel();
    let _ = closing.send(true);
    // Give open requests a moment to finish.
    let _ = tokio::time::timeout(Duration::from_secs(5), closing.closed()).await;
    Ok(())
}
