//! A component's network: the `wasi:http` outgoing handler behind a host filter. There are no
//! sockets and no name lookups in a component (wasi:sockets is denied); its one way out is an
//! HTTP request, which the host sends only to a host the tool's approved
//! `capabilities.network` lets through, by the rules scripts' proxy keeps
//! (`manifest::domain::allowing`: exact names, `*.` wildcards, addresses; every port; a listed
//! name that resolves only to this machine or link-local addresses is refused). Every other
//! request is answered `ErrorCode::HttpRequestDenied`, which the guest sees. A request also
//! ends at the call's time limit (the guest waits in the host there, where no epoch reaches).

use crate::manifest::domain;
use crate::sandbox::proxy::{Seen, is_local};
use bytes::Bytes;
use http::uri::Scheme;
use http_body_util::BodyExt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

/// What a call's requests may reach.
#[derive(Debug, Clone)]
pub(super) enum Reach {
    /// No network (nothing declared, or the grant not in force).
    Nothing,
    /// `network = true`, approved.
    Anywhere,
    /// `network = [...]`, approved.
    Listed(Vec<String>),
}

/// The outgoing handler's hooks of one call.
pub(super) struct Filter {
    tool: String,
    reach: Reach,
    deadline: Instant,
    seen: Arc<Mutex<Seen>>,
}

type Sent = Box<
    dyn Future<
            Output = Result<
                (
                    http::Response<WasiBody>,
                    Box<dyn Future<Output = Result<(), Error>> + Send>,
                ),
                Error,
            >,
        > + Send,
>;

impl Filter {
    pub(super) fn new(tool: &str, reach: Reach, limit: Duration) -> Filter {
        Filter {
            tool: tool.to_string(),
            reach,
            deadline: Instant::now() + limit,
            seen: Arc::default(),
        }
    }

    /// The hosts reached and refused, for the audit entry (None when the tool has no network).
    pub(super) fn seen(&self) -> Option<Seen> {
        let s = self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let none = s.allowed.is_empty() && s.denied.is_empty();
        (!none || !matches!(self.reach, Reach::Nothing)).then_some(s)
    }

    /// What the AI is told when the filter refused hosts (None when it refused none).
    pub(super) fn refused(&self) -> Option<String> {
        let s = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if s.denied.is_empty() {
            return None;
        }
        let hosts: Vec<&str> = s.denied.iter().map(String::as_str).collect();
        let may = match &self.reach {
            Reach::Nothing => "no host".to_string(),
            Reach::Anywhere => "any host".to_string(),
            Reach::Listed(l) => format!("only {}", l.join(", ")),
        };
        Some(format!(
            "the wasi:http filter refused {} ({} may reach {may}); a person can list more domains in capabilities.network in tools/{}/tool.toml, which then waits for their approval",
            hosts.join(", "),
            self.tool,
            self.tool
        ))
    }

    /// Whether the tool may reach `host`, and if it may, whether a local address is allowed.
    fn verdict(&self, host: &str) -> Option<bool> {
        match &self.reach {
            Reach::Nothing => None,
            Reach::Anywhere => Some(true),
            Reach::Listed(list) => domain::allowing(list, host).map(domain::names_local),
        }
    }
}

fn note(seen: &Mutex<Seen>, host: &str, allowed: bool) {
    let mut s = seen.lock().unwrap_or_else(|p| p.into_inner());
    if allowed {
        s.allowed.insert(host.to_string());
    } else {
        s.denied.insert(host.to_string());
    }
}

impl WasiHttpHooks for Filter {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Sent {
        let uri = request.uri();
        let https = uri.scheme() == Some(&Scheme::HTTPS);
        let Some(host) = uri
            .host()
            .map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase())
        else {
            return Box::new(async { Err(Error::HttpRequestUriInvalid) });
        };
        if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
            return Box::new(async { Err(Error::HttpRequestUriInvalid) });
        }
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let Some(local_ok) = self.verdict(&host) else {
            note(&self.seen, &host, false);
            tracing::info!(tool = %self.tool, host = %host, "network: refused a host the component may not reach");
            return Box::new(async { Err(Error::HttpRequestDenied) });
        };
        let seen = Arc::clone(&self.seen);
        let deadline = self.deadline;
        let tool = self.tool.clone();
        Box::new(async move {
            match tokio::time::timeout_at(
                deadline,
                send(request, options, &host, port, https, local_ok, deadline),
            )
            .await
            {
                Ok(Ok(sent)) => {
                    note(&seen, &host, true);
                    Ok(sent)
                }
                Ok(Err(e)) => {
                    if matches!(e, Error::DestinationIpProhibited) {
                        note(&seen, &host, false);
                        tracing::info!(tool = %tool, host = %host, "network: refused a listed name that resolves only to this machine");
                    }
                    Err(e)
                }
                Err(_) => Err(Error::ConnectionTimeout),
            }
        })
    }
}

trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// Resolve, keep only the addresses the entry allows, connect, TLS for https, send.
async fn send(
    mut request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
    host: &str,
    port: u16,
    https: bool,
    local_ok: bool,
    deadline: Instant,
) -> Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), Error>> + Send>,
    ),
    Error,
> {
    let connect_limit = options
        .as_ref()
        .and_then(|o| o.connect_timeout)
        .unwrap_or(Duration::from_secs(600));
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| Error::DnsError {
            rcode: Some(e.to_string()),
            info_code: None,
        })?
        .collect();
    let usable: Vec<SocketAddr> = addrs
        .into_iter()
        .filter(|a| local_ok || !is_local(a.ip()))
        .collect();
    if usable.is_empty() {
        return Err(Error::DestinationIpProhibited);
    }
    let mut tcp = None;
    for a in usable {
        if let Ok(Ok(s)) =
            tokio::time::timeout(connect_limit, tokio::net::TcpStream::connect(a)).await
        {
            tcp = Some(s);
            break;
        }
    }
    let tcp = tcp.ok_or(Error::ConnectionRefused)?;
    let _ = tcp.set_nodelay(true);
    let stream: Box<dyn Stream> = if https {
        toolsmith_platform::tls::install();
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        let config = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from(host.to_string())
            .map_err(|_| Error::HttpRequestUriInvalid)?;
        let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
            .map_err(Error::Tls)?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    let (mut sender, conn) = hyper::client::conn::http1::Builder::new()
        .handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .map_err(Error::from)?;
    // The request line carries the path only (the authority went into the Host header).
    let path = request
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    *request.uri_mut() = http::Uri::builder()
        .path_and_query(path)
        .build()
        .map_err(|_| Error::HttpRequestUriInvalid)?;
    let conn = tokio::spawn(async move { conn.await.map_err(Error::from) });
    let response = sender.send_request(request).await.map_err(Error::from)?;
    let response = response.map(|body| {
        Deadline {
            body,
            sleep: Box::pin(tokio::time::sleep_until(deadline)),
        }
        .boxed_unsync()
    });
    let io: Box<dyn Future<Output = Result<(), Error>> + Send> = Box::new(async move {
        match tokio::time::timeout_at(deadline, conn).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(Error::ConnectionTerminated),
            Err(_) => Err(Error::ConnectionReadTimeout),
        }
    });
    Ok((response, io))
}

/// A response body that ends in an error at the call's time limit.
struct Deadline {
    body: hyper::body::Incoming,
    sleep: Pin<Box<tokio::time::Sleep>>,
}

impl http_body::Body for Deadline {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Error>>> {
        if self.sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Error::ConnectionReadTimeout)));
        }
        Pin::new(&mut self.body).poll_frame(cx).map_err(Error::from)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
