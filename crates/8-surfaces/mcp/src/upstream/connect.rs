//! Opening a connection to an entry's server: over stdio to a process started in the sandbox
//! (`runner::server`), or over streamable HTTP to the entry's URL, reached by toolsmith itself
//! with only that host: the name resolved here, an address of this machine or a link-local
//! one refused unless the URL names it, no proxy, no redirects, the declared secrets put into
//! the headers that name them.

use super::client::{Client, Heard};
use crate::config::Config;
use crate::runner::RunError;
use crate::runner::server::{self, ServerProcess};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ServiceExt, service::ClientInitializeError};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// Longest a server may take to start and answer `initialize`.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// An open connection: the protocol's service, and the process for a stdio server.
pub struct Opened {
    pub service: RunningService<RoleClient, Client>,
    pub process: Option<ServerProcess>,
}

fn server_err(entry: &str, message: String, hint: &str) -> RunError {
    RunError::Server {
        entry: entry.to_string(),
        message,
        hint: hint.to_string(),
    }
}

/// Start the stdio server of `entry` and initialize it.
pub async fn stdio(
    dir: &Path,
    entry: &crate::runner::Granted,
    config: &Config,
    client: Client,
) -> Result<Opened, RunError> {
    let name = entry.manifest.name.clone();
    let mut process = server::start(dir, entry, config).await?;
    let Some(io) = process.take_io() else {
        return Err(server_err(
            &name,
            "its pipes could not be opened".into(),
            "this is a bug; run with -v to see more",
        ));
    };
    let io = rmcp::transport::IntoTransport::<RoleClient, std::io::Error, _>::into_transport(io);
    let heard = Heard::new(io, &client);
    let started = tokio::time::timeout(START_TIMEOUT, client.serve(heard)).await;
    match started {
        Ok(Ok(service)) => Ok(Opened {
            service,
            process: Some(process),
        }),
        Ok(Err(e)) => {
            // Give an exiting process a moment, so its status and last words are known.
            for _ in 0..20 {
                if process.exited().is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            let how = process
                .exited()
                .map(|h| format!(" (it ended: {h})"))
                .unwrap_or_default();
            let tail = process.stderr_tail(4000);
            Err(server_err(
                &name,
                format!(
                    "it did not complete the MCP handshake: {}{how}{}",
                    init_error(&e),
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!("; its stderr (what it wrote in its sandbox) ends with:\n{tail}")
                    }
                ),
                &handshake_hint(&name, &tail),
            ))
        }
        Err(_) => Err(server_err(
            &name,
            format!(
                "it did not answer `initialize` within {} s",
                START_TIMEOUT.as_secs()
            ),
            "check that its command starts an MCP server on stdin/stdout",
        )),
    }
}

/// What to do when a stdio server ended before its handshake: a file or module it could not
/// find is most often one outside its sandbox (the entry's directory, its packages and its
/// read grants are all it sees), not a wrong argument.
fn handshake_hint(name: &str, stderr: &str) -> String {
    const NOT_FOUND: &[&str] = &[
        "Cannot find module",
        "MODULE_NOT_FOUND",
        "ModuleNotFoundError",
        "No such file or directory",
        "can't open file",
        "ENOENT",
        "EACCES",
        "Permission denied",
        "cannot open",
    ];
    if NOT_FOUND.iter().any(|m| stderr.contains(m)) {
        format!(
            "the server runs in a sandbox that sees only tools/{name}, the packages it installs and the paths it may read: a file outside them is not there. Install the server as a package (`toolsmith add-mcp {name} --npm PKG@VERSION` or `--pip REQUIREMENT`), put its files in tools/{name}, or ask to read the path (`--read PATH`, [capabilities] read, approved by a person)"
        )
    } else {
        "check [mcp] command and args in its tool.toml: the program must speak MCP over stdin/stdout (some servers need an argument such as `stdio`)".into()
    }
}

fn init_error(e: &ClientInitializeError) -> String {
    crate::error::chain(e)
}

/// Whether an address is this machine or a link-local service (cloud metadata).
fn is_local(ip: std::net::IpAddr) -> bool {
    crate::sandbox::proxy::is_local(ip)
}

/// Connect to the HTTP server of `entry` (admitted: its secrets set when approved).
pub async fn http(entry: &crate::runner::Granted, client: Client) -> Result<Opened, RunError> {
    let name = entry.manifest.name.clone();
    let server = entry.manifest.mcp.as_ref();
    let url = server.and_then(|s| s.url.clone()).unwrap_or_default();
    let host = server
        .and_then(|s| s.url_host())
        .ok_or_else(|| server_err(&name, format!("{url:?} has no host"), "fix [mcp] url"))?;
    // Network to the URL's host is what the entry asks for (`approval::requested`): granted
    // only when a person approved this version (`admit` then records the directory it saw).
    if entry.admitted.is_none() {
        return Err(server_err(
            &name,
            format!("reaching {host} is network access, and it was not granted"),
            &format!(
                "a person approves the entry in their terminal: `toolsmith approve {name}` (or `toolsmith console`)"
            ),
        ));
    }
    let port = url
        .split("://")
        .nth(1)
        .and_then(|r| r.split(['/', '?', '#']).next())
        .and_then(|a| {
            a.rsplit_once(':')
                .filter(|(h, _)| !h.ends_with(']') || a.starts_with('['))
        })
        .and_then(|(_, p)| p.parse::<u16>().ok())
        .unwrap_or(if url.starts_with("https://") { 443 } else { 80 });
    let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| {
            server_err(
                &name,
                format!("{host} cannot be resolved: {e}"),
                "check the URL and this machine's network",
            )
        })?
        .collect();
    let local_ok = crate::manifest::domain::names_local(&host);
    let Some(addr) = addrs
        .iter()
        .find(|a| local_ok || !is_local(a.ip()))
        .copied()
    else {
        return Err(server_err(
            &name,
            format!("{host} resolves only to addresses of this machine (loopback or link-local)"),
            "a host name may not lead to this machine's own services; write the address itself (http://127.0.0.1:PORT/...) in [mcp] url to mean it",
        ));
    };
    let mut headers = HashMap::new();
    let secrets: HashMap<&str, &str> = entry.secrets.vars().collect();
    for (k, v) in server.map(|s| &s.headers).into_iter().flatten() {
        let mut value = v.clone();
        for r in crate::manifest::secret_refs(v) {
            let Some(s) = secrets.get(r) else {
                return Err(server_err(
                    &name,
                    format!("the header {k} needs the secret {r}, which it was not given"),
                    &format!(
                        "a person approves the entry (`toolsmith approve {name}`) and sets the secret (`toolsmith secret set {r}`)"
                    ),
                ));
            };
            value = value.replace(&format!("${{{r}}}"), s);
        }
        let hn = http::HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| server_err(&name, format!("header {k:?}: {e}"), "fix [mcp] headers"))?;
        let mut hv = http::HeaderValue::from_str(&value).map_err(|_| {
            server_err(
                &name,
                format!("the value of header {k} is not a valid header value"),
                "fix [mcp] headers (or the secret's value)",
            )
        })?;
        hv.set_sensitive(true);
        headers.insert(hn, hv);
    }
    // reqwest is built without a crypto provider: choose the process's before building one.
    toolsmith_platform::tls::install();
    let http_client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .resolve(&host, addr)
        .pool_max_idle_per_host(0)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| {
            server_err(
                &name,
                format!("no HTTP client: {e}"),
                "this is a bug; run with -v",
            )
        })?;
    let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).custom_headers(headers);
    let transport = StreamableHttpClientTransport::with_client(http_client, config);
    let heard = Heard::new(transport, &client);
    match tokio::time::timeout(START_TIMEOUT, client.serve(heard)).await {
        Ok(Ok(service)) => Ok(Opened {
            service,
            process: None,
        }),
        Ok(Err(e)) => Err(server_err(
            &name,
            format!(
                "{url} did not complete the MCP handshake: {}",
                init_error(&e)
            ),
            "check the URL (the streamable HTTP endpoint, often ending in /mcp) and its headers",
        )),
        Err(_) => Err(server_err(
            &name,
            format!(
                "{url} did not answer `initialize` within {} s",
                START_TIMEOUT.as_secs()
            ),
            "check that the server runs and the URL is its MCP endpoint",
        )),
    }
}

#[cfg(test)]
mod hint_tests {
    #[test]
    fn a_file_outside_the_sandbox_is_named_as_the_cause() {
        let h = super::handshake_hint("fs", "Error: Cannot find module '/home/me/server/index.js'");
        assert!(h.contains("sandbox") && h.contains("--npm"), "{h}");
        let h = super::handshake_hint("fs", "usage: server [stdio|sse]");
        assert!(h.contains("stdio") && !h.contains("sandbox"), "{h}");
    }
}
