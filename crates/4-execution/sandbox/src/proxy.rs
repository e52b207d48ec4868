//! The filtering proxy of a tool whose manifest lists the domains it may reach
//! (`capabilities.network = ["api.github.com", "*.example.com"]`). One proxy per script
//! process, started with it and stopped when it ends; the process reaches it as
//! `HTTP(S)_PROXY` (see `sandbox::net`) and has no other way out of its network namespace.
//!
//! It speaks the two forms HTTP clients use through a proxy: `CONNECT host:port` (a tunnel,
//! for HTTPS and anything else over TCP) and an absolute-form request
//! (`GET http://host/path HTTP/1.1`, for plain HTTP, sent on with `Connection: close`). A host
//! no entry allows gets `403` with a message naming the tool and how a person adds the domain;
//! a listed name that resolves to a loopback, link-local or unspecified address is refused too
//! (unless the entry is that address or `localhost`), so DNS cannot point a listed name at
//! this machine's own services or a cloud metadata endpoint.

use crate::manifest::domain;
use crate::net::Endpoint;
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The most bytes of a request head.
const MAX_HEAD: usize = 32 * 1024;
/// How long a client may take to send its request head, and a host to accept the connection.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the proxy let through and refused (host names as asked for), for the audit log and
/// error messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// Hosts it let through.
    pub allowed: BTreeSet<String>,
    /// Hosts it refused.
    pub denied: BTreeSet<String>,
}

struct Ctx {
    tool: String,
    domains: Vec<String>,
    /// A dependency fetch while a tool is made (only the package registries), not a call.
    registries: bool,
    seen: Mutex<Seen>,
}

/// A running proxy; dropping it stops it and every connection through it.
pub struct Proxy {
    endpoint: Endpoint,
    ctx: Arc<Ctx>,
    task: tokio::task::JoinHandle<()>,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Start a proxy for `tool`, letting through only `domains`: on a unix socket in a new
    /// private directory (`unix`), else on a free port of 127.0.0.1.
    pub fn start(tool: &str, domains: &[String], unix: bool) -> std::io::Result<Proxy> {
        Proxy::start_with(tool, domains, unix, false)
    }

    /// Start a proxy for a dependency fetch (`what`: "cargo fetch for tool x"), letting
    /// through only the package registries' hosts.
    pub fn start_for_registries(
        what: &str,
        hosts: &[String],
        unix: bool,
    ) -> std::io::Result<Proxy> {
        Proxy::start_with(what, hosts, unix, true)
    }

    fn start_with(
        tool: &str,
        domains: &[String],
        unix: bool,
        registries: bool,
    ) -> std::io::Result<Proxy> {
        let ctx = Arc::new(Ctx {
            tool: tool.to_string(),
            domains: domains.to_vec(),
            registries,
            seen: Mutex::default(),
        });
        #[cfg(unix)]
        if unix {
            let dir = tempfile::Builder::new()
                .prefix("toolsmith-net-")
                .tempdir()?;
            let socket = dir.path().join("proxy.sock");
            let listener = Listener::Unix(tokio::net::UnixListener::bind(&socket)?);
            return Ok(Proxy {
                endpoint: Endpoint::Unix {
                    dir: dir.path().to_path_buf(),
                    socket,
                },
                task: tokio::spawn(accept_all(listener, ctx.clone())),
                ctx,
                _dir: Some(dir),
            });
        }
        let _ = unix;
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        std_listener.set_nonblocking(true)?;
        let port = std_listener.local_addr()?.port();
        let listener = Listener::Tcp(tokio::net::TcpListener::from_std(std_listener)?);
        Ok(Proxy {
            endpoint: Endpoint::Tcp(port),
            task: tokio::spawn(accept_all(listener, ctx.clone())),
            ctx,
            _dir: None,
        })
    }

    /// Where the tool's process reaches the proxy.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The hosts let through and refused so far.
    pub fn seen(&self) -> Seen {
        self.ctx
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Where the proxy listens.
enum Listener {
    #[cfg(unix)]
    Unix(tokio::net::UnixListener),
    Tcp(tokio::net::TcpListener),
}

/// Serve every connection until the listener fails or the proxy is dropped.
async fn accept_all(listener: Listener, ctx: Arc<Ctx>) {
    let mut conns = tokio::task::JoinSet::new();
    loop {
        match &listener {
            #[cfg(unix)]
            Listener::Unix(l) => match l.accept().await {
                Ok((s, _)) => conns.spawn(serve(s, ctx.clone())),
                Err(_) => return,
            },
            Listener::Tcp(l) => match l.accept().await {
                Ok((s, _)) => conns.spawn(serve(s, ctx.clone())),
                Err(_) => return,
            },
        };
        while conns.try_join_next().is_some() {}
    }
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(mut client: S, ctx: Arc<Ctx>) {
    let _ = handle(&mut client, &ctx).await;
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

async fn reply<S: AsyncWrite + Unpin>(
    client: &mut S,
    status: &str,
    body: &str,
) -> std::io::Result<()> {
    let msg = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len() + 1
    );
    client.write_all(msg.as_bytes()).await?;
    client.write_all(b"\n").await?;
    client.shutdown().await
}

/// Where a request goes, and what to send there first.
struct Target {
    host: String,
    port: u16,
    /// For absolute-form requests: the head rewritten for the origin server.
    head: Option<Vec<u8>>,
}

fn parse_target(head: &[u8]) -> Result<Target, String> {
    let mut headers = [httparse::EMPTY_HEADER; 96];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err("incomplete request head".into()),
        Err(e) => return Err(format!("not an HTTP request: {e}")),
    }
    let method = req.method.unwrap_or_default();
    let target = req.path.unwrap_or_default();
    if method.eq_ignore_ascii_case("CONNECT") {
        let auth: http::uri::Authority = target
            .parse()
            .map_err(|e| format!("CONNECT target {target:?} is not host:port: {e}"))?;
        let port = auth
            .port_u16()
            .ok_or_else(|| format!("CONNECT target {target:?} has no port"))?;
        return Ok(Target {
            host: auth.host().to_string(),
            port,
            head: None,
        });
    }
    let uri: http::Uri = target
        .parse()
        .map_err(|e| format!("request target {target:?} is not a URL: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!(
            "request target {target:?} is not an http:// URL (HTTPS goes through CONNECT)"
        ));
    }
    let host = uri
        .host()
        .ok_or_else(|| format!("request target {target:?} has no host"))?
        .to_string();
    let port = uri.port_u16().unwrap_or(80);
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let mut out = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
    for h in req.headers.iter() {
        let skip = [
            "proxy-connection",
            "proxy-authorization",
            "connection",
            "keep-alive",
        ]
        .iter()
        .any(|n| h.name.eq_ignore_ascii_case(n));
        if !skip {
            out.extend_from_slice(h.name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(h.value);
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Target {
        host,
        port,
        head: Some(out),
    })
}

/// Whether an address is this machine or a link-local service (cloud metadata).
pub fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback() || v4.is_link_local() || v4.is_unspecified() || v4.is_broadcast()
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| is_local(IpAddr::V4(v4)))
        }
    }
}

async fn handle<S: AsyncRead + AsyncWrite + Unpin>(
    client: &mut S,
    ctx: &Ctx,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    let end = loop {
        if let Some(end) = find_head_end(&buf) {
            break end;
        }
        if buf.len() > MAX_HEAD {
            return reply(
                client,
                "431 Request Header Fields Too Large",
                "toolsmith proxy: the request head is too large",
            )
            .await;
        }
        match tokio::time::timeout(HEAD_TIMEOUT, client.read_buf(&mut buf)).await {
            Ok(Ok(0)) | Err(_) => return Ok(()),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(e),
        }
    };
    let target = match parse_target(&buf[..end]) {
        Ok(t) => t,
        Err(why) => {
            return reply(
                client,
                "400 Bad Request",
                &format!("toolsmith proxy: {why}"),
            )
            .await;
        }
    };
    let seen = |allowed: bool| {
        let mut s = ctx.seen.lock().unwrap_or_else(|p| p.into_inner());
        let set = if allowed {
            &mut s.allowed
        } else {
            &mut s.denied
        };
        set.insert(target.host.clone());
    };
    let Some(entry) = domain::allowing(&ctx.domains, &target.host) else {
        seen(false);
        tracing::info!(tool = %ctx.tool, host = %target.host, "network: refused a host the tool does not list");
        let body = if ctx.registries {
            format!(
                "toolsmith: the {} may reach only the package registries ({}); {} is not one of them.\nA dependency is fetched only from a registry; a person can configure another registry in the package manager's own settings (cargo: ~/.cargo/config.toml [registries]/[source]; pip: PIP_INDEX_URL; npm: its registry setting).",
                ctx.tool,
                ctx.domains.join(", "),
                target.host,
            )
        } else {
            format!(
                "toolsmith: tool {:?} may reach only {}; {} is not listed.\nA person can add it to capabilities.network in tools/{}/tool.toml; the changed tool then waits for their approval (`toolsmith approve {}`).",
                ctx.tool,
                ctx.domains.join(", "),
                target.host,
                ctx.tool,
                ctx.tool
            )
        };
        return reply(client, "403 Forbidden", &body).await;
    };
    let host = target
        .host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let addrs: Vec<SocketAddr> = match tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::lookup_host((host.as_str(), target.port)),
    )
    .await
    {
        Ok(Ok(a)) => a.collect(),
        Ok(Err(e)) => {
            return reply(
                client,
                "502 Bad Gateway",
                &format!("toolsmith proxy: cannot resolve {host}: {e}"),
            )
            .await;
        }
        Err(_) => {
            return reply(
                client,
                "504 Gateway Timeout",
                &format!("toolsmith proxy: resolving {host} timed out"),
            )
            .await;
        }
    };
    let local_ok = domain::names_local(entry);
    let usable: Vec<SocketAddr> = addrs
        .into_iter()
        .filter(|a| local_ok || !is_local(a.ip()))
        .collect();
    if usable.is_empty() {
        seen(false);
        return reply(
            client,
            "403 Forbidden",
            &format!("toolsmith: {host} resolves only to addresses of this machine (loopback or link-local), which a listed name may not reach; list the address itself to allow it"),
        )
        .await;
    }
    let mut upstream = None;
    let mut last_err = String::new();
    for a in usable {
        match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(a)).await {
            Ok(Ok(s)) => {
                upstream = Some(s);
                break;
            }
            Ok(Err(e)) => last_err = format!("{a}: {e}"),
            Err(_) => last_err = format!("{a}: timed out"),
        }
    }
    let Some(mut upstream) = upstream else {
        return reply(
            client,
            "502 Bad Gateway",
            &format!(
                "toolsmith proxy: cannot connect to {host}:{} ({last_err})",
                target.port
            ),
        )
        .await;
    };
    let _ = upstream.set_nodelay(true);
    seen(true);
    match &target.head {
        None => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await?
        }
        Some(head) => upstream.write_all(head).await?,
    }
    upstream.write_all(&buf[end..]).await?;
    tokio::io::copy_bidirectional(client, &mut upstream).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_form_targets_are_parsed() {
        let t = parse_target(
            b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.head.is_none()),
            ("api.github.com", 443, true)
        );
        let t = parse_target(b"GET http://example.com/a?b=1 HTTP/1.1\r\nHost: example.com\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("example.com", 80));
        let head = String::from_utf8(t.head.unwrap()).unwrap();
        assert_eq!(
            head,
            "GET /a?b=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        assert!(parse_target(b"GET /relative HTTP/1.1\r\n\r\n").is_err());
        assert!(parse_target(b"GET https://x.com/ HTTP/1.1\r\n\r\n").is_err());
        assert!(parse_target(b"CONNECT nohost HTTP/1.1\r\n\r\n").is_err());
    }

    #[test]
    fn loopback_link_local_and_metadata_addresses_are_local() {
        for a in [
            "127.0.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_local(a.parse().unwrap()), "{a}");
        }
        for a in ["10.0.0.1", "140.82.112.3", "2606:4700::1111"] {
            assert!(!is_local(a.parse().unwrap()), "{a}");
        }
    }
}
