//! The one-time secret page: when a tool needs a secret that is not set and the MCP client
//! supports URL-mode elicitation, toolsmith offers `http://127.0.0.1:PORT/secret/<token>` — a
//! random, single-use path that expires — where the person pastes the value. It is stored like
//! `toolsmith secret set` does; it never passes through the client or the model.
//!
//! The listener binds 127.0.0.1 only (started on first use). A POST is accepted only with the
//! page's own `Host`, and with an `Origin` (when sent) equal to the page's origin and
//! `Sec-Fetch-Site` (when sent) `same-origin`; everything else is refused. Responses forbid
//! caching, framing and cross-origin referrers, and the page runs no script.

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How long an offered page stays valid.
pub const TTL: Duration = Duration::from_secs(600);
/// Largest form body accepted.
const MAX_BODY: usize = 64 * 1024;

struct Pending {
    secret: String,
    personal: PathBuf,
    expires: Instant,
    done: Arc<Notify>,
}

struct Pages {
    addr: SocketAddr,
    offers: Mutex<HashMap<String, Pending>>,
}

static PAGES: OnceLock<Result<Arc<Pages>, String>> = OnceLock::new();

/// One page offered for one secret.
pub struct Offer {
    pub url: String,
    /// An id for the elicitation (not the token).
    pub id: String,
    done: Arc<Notify>,
    token: String,
}

/// A random id (16 hex digits) for an elicitation.
pub fn random_id() -> String {
    random_hex(8).unwrap_or_else(|_| format!("{:016x}", crate::personal::now_secs()))
}

fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut b = vec![0u8; bytes];
    getrandom::fill(&mut b).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(hex::encode(b))
}

fn pages() -> Result<Arc<Pages>, String> {
    PAGES
        .get_or_init(|| {
            let std_listener = std::net::TcpListener::bind("127.0.0.1:0")
                .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
            std_listener
                .set_nonblocking(true)
                .map_err(|e| e.to_string())?;
            let addr = std_listener.local_addr().map_err(|e| e.to_string())?;
            let pages = Arc::new(Pages {
                addr,
                offers: Mutex::new(HashMap::new()),
            });
            let serving = Arc::clone(&pages);
            let handle = tokio::runtime::Handle::try_current()
                .map_err(|_| "the secret page needs the server's runtime".to_string())?;
            handle.spawn(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(std_listener) else {
                    return;
                };
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        continue;
                    };
                    let p = Arc::clone(&serving);
                    tokio::spawn(async move {
                        let svc = hyper::service::service_fn(move |req| {
                            let p = Arc::clone(&p);
                            async move {
                                Ok::<_, std::convert::Infallible>(handle_request(&p, req).await)
                            }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                            .await;
                    });
                }
            });
            Ok(pages)
        })
        .clone()
}

/// Offer a page for `secret`, stored in `personal` when the person submits it.
pub fn offer(personal: &Path, secret: &str) -> Result<Offer, String> {
    offer_for(personal, secret, TTL)
}

fn offer_for(personal: &Path, secret: &str, ttl: Duration) -> Result<Offer, String> {
    let pages = pages()?;
    let token = random_hex(32).map_err(|e| e.to_string())?;
    let done = Arc::new(Notify::new());
    let mut offers = pages.offers.lock().unwrap_or_else(|p| p.into_inner());
    let now = Instant::now();
    offers.retain(|_, o| o.expires > now);
    offers.insert(
        token.clone(),
        Pending {
            secret: secret.to_string(),
            personal: personal.to_path_buf(),
            expires: now + ttl,
            done: Arc::clone(&done),
        },
    );
    Ok(Offer {
        url: format!("http://{}/secret/{token}", pages.addr),
        id: random_hex(8).map_err(|e| e.to_string())?,
        done,
        token,
    })
}

impl Offer {
    /// Wait until the person submitted the page (true), or `timeout` passed.
    pub async fn wait(&self, timeout: Duration) -> bool {
        tokio::time::timeout(timeout, self.done.notified())
            .await
            .is_ok()
    }

    /// Withdraw the page (the person declined).
    pub fn cancel(&self) {
        if let Ok(p) = pages() {
            p.offers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&self.token);
        }
    }
}

fn reply(status: StatusCode, html: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(html)));
    *r.status_mut() = status;
    let h = r.headers_mut();
    for (k, v) in [
        ("content-type", "text/html; charset=utf-8"),
        ("cache-control", "no-store"),
        ("referrer-policy", "same-origin"),
        ("x-frame-options", "DENY"),
        ("x-content-type-options", "nosniff"),
        (
            "content-security-policy",
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        ),
    ] {
        if let Ok(v) = hyper::header::HeaderValue::from_str(v) {
            h.insert(k, v);
        }
    }
    r
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{t}</title>\
         <style>body{{font-family:sans-serif;max-width:40em;margin:3em auto}}input{{width:100%}}</style>\
         </head><body><h1>{t}</h1>{body}</body></html>",
        t = escape(title)
    )
}

async fn handle_request(pages: &Pages, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let gone = || {
        reply(
            StatusCode::GONE,
            page(
                "This page is gone",
                "<p>It was used, it expired, or it never existed. Ask the tool again, or run <code>toolsmith secret set NAME</code> in a terminal.</p>",
            ),
        )
    };
    let Some(token) = req
        .uri()
        .path()
        .strip_prefix("/secret/")
        .map(str::to_string)
    else {
        return gone();
    };
    let origin = format!("http://{}", pages.addr);
    let header = |n: &str| {
        req.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    // DNS rebinding: only the address itself is this page's host.
    if header("host").as_deref() != Some(&pages.addr.to_string()) {
        return reply(StatusCode::FORBIDDEN, page("Refused", "<p>Wrong host.</p>"));
    }
    let secret = {
        let offers = pages.offers.lock().unwrap_or_else(|p| p.into_inner());
        match offers.get(&token) {
            Some(o) if o.expires > Instant::now() => o.secret.clone(),
            _ => return gone(),
        }
    };
    match *req.method() {
        Method::GET => reply(
            StatusCode::OK,
            page(
                &format!("toolsmith: set the secret {secret}"),
                &format!(
                    "<p>A tool on this computer needs the secret <b>{s}</b>. Paste its value; it is stored by toolsmith on this machine (mode 0600), never in git, and never shown to the AI.</p>\
                     <form method=\"post\"><input type=\"password\" name=\"value\" autocomplete=\"off\" autofocus required>\
                     <p><button type=\"submit\">Save {s}</button></p></form>",
                    s = escape(&secret)
                ),
            ),
        ),
        Method::POST => {
            let cross = header("origin").is_some_and(|o| o != origin)
                || header("sec-fetch-site").is_some_and(|s| s != "same-origin");
            if cross {
                return reply(
                    StatusCode::FORBIDDEN,
                    page("Refused", "<p>This form only accepts its own page.</p>"),
                );
            }
            let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
                Ok(b) => b.to_bytes(),
                Err(_) => return reply(StatusCode::PAYLOAD_TOO_LARGE, page("Too large", "")),
            };
            let value = form_urlencoded::parse(&body)
                .find(|(k, _)| k == "value")
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default();
            if value.trim().len() < super::redact::MIN_LEN {
                return reply(
                    StatusCode::BAD_REQUEST,
                    page(
                        "Too short",
                        "<p>Paste the whole value; go back and try again.</p>",
                    ),
                );
            }
            // Single use: the token is taken before the value is stored.
            let Some(offer) = pages
                .offers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&token)
            else {
                return gone();
            };
            match super::Store::new(&offer.personal).set(&offer.secret, value.trim()) {
                Ok(()) => {
                    crate::audit::Log::new(&offer.personal).append(&crate::audit::Entry::decision(
                        Path::new(""),
                        "",
                        "secret set",
                        "page",
                        vec![offer.secret.clone()],
                    ));
                    offer.done.notify_one();
                    reply(
                        StatusCode::OK,
                        page(
                            &format!("{} is saved", offer.secret),
                            "<p>You can close this page and go back to your editor.</p>",
                        ),
                    )
                }
                Err(e) => reply(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    page("Not saved", &format!("<p>{}</p>", escape(&e.to_string()))),
                ),
            }
        }
        _ => reply(StatusCode::METHOD_NOT_ALLOWED, page("Not allowed", "")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn send(url: &str, raw: impl Fn(&str, &str) -> String) -> String {
        let rest = url.trim_start_matches("http://");
        let (addr, path) = rest.split_at(rest.find('/').unwrap());
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(raw(addr, path).as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    fn get(host: &str, path: &str) -> String {
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
    }

    fn post(host: &str, path: &str, origin: &str) -> String {
        let body = "value=0123456789";
        format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    #[tokio::test]
    async fn the_page_refuses_other_hosts_and_origins_and_expires() {
        let tmp = tempfile::tempdir().unwrap();
        let o = offer(tmp.path(), "PAGE_KEY").unwrap();
        assert!(o.url.starts_with("http://127.0.0.1:"), "{}", o.url);
        // DNS rebinding: another Host is refused.
        let r = send(&o.url, |_, p| get("attacker.example", p)).await;
        assert!(r.starts_with("HTTP/1.1 403"), "{r}");
        let r = send(&o.url, get).await;
        assert!(
            r.starts_with("HTTP/1.1 200") && r.contains("PAGE_KEY"),
            "{r}"
        );
        assert!(
            r.contains("content-security-policy") && r.contains("no-store"),
            "{r}"
        );
        let r = send(&o.url, |h, p| post(h, p, "http://evil.example")).await;
        assert!(r.starts_with("HTTP/1.1 403"), "{r}");
        assert!(
            super::super::Store::new(tmp.path())
                .names()
                .unwrap()
                .is_empty()
        );
        // Its own origin saves the value, once.
        let r = send(&o.url, |h, p| post(h, p, &format!("http://{h}"))).await;
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(o.wait(Duration::from_secs(1)).await);
        assert_eq!(
            super::super::Store::new(tmp.path()).load().unwrap()["PAGE_KEY"],
            "0123456789"
        );
        let r = send(&o.url, get).await;
        assert!(r.starts_with("HTTP/1.1 410"), "{r}");
        // An expired page is gone; so is a path nobody was offered.
        let old = offer_for(tmp.path(), "OTHER_KEY", Duration::ZERO).unwrap();
        let r = send(&old.url, get).await;
        assert!(r.starts_with("HTTP/1.1 410"), "{r}");
        let r = send(&old.url, |h, _| get(h, "/secret/0000")).await;
        assert!(r.starts_with("HTTP/1.1 410"), "{r}");
    }
}
