//! `toolsmith serve`: its flags (transport, exposure, HTTP limits and authentication) and the
//! start-up of the server.

use super::output::UserError;
use crate::config::Config;
use crate::toolbox::Toolbox;
use anyhow::Result;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long the start-up waits for the client's first `tools/list` before it starts the
/// processes the tools used most will need anyway.
const PRESTART_AFTER: Duration = Duration::from_secs(2);
/// The longest a start-up step waits for the calls running to end.
const START_YIELD: Duration = Duration::from_secs(2);
/// How long after the client's first list the pre-start waits for a call made at once.
const PRESTART_SETTLE: Duration = Duration::from_millis(50);
/// How long the start-up steps wait, once the index is built, for a call the client sent at
/// once to be under way (they then wait until it is over).
const START_SETTLE: Duration = Duration::from_millis(100);

/// Flags of `toolsmith serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP on this address instead of stdio, e.g. 127.0.0.1:8080 (path /mcp).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Allow a non-loopback --http address (authentication is then required).
    #[arg(long)]
    pub allow_remote: bool,
    /// Which stored tools appear as MCP tools of their own.
    #[arg(long, value_enum, env = "TOOLSMITH_EXPOSE", default_value_t = super::Exposure::All)]
    pub expose: super::Exposure,
    /// HTTP: seconds allowed to send a request's headers, and again its body; an idle
    /// kept-alive connection is closed after as long.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub read_timeout: f64,
    /// HTTP: most live MCP sessions; one more closes the least recently used.
    #[arg(long, value_name = "N", default_value_t = 512)]
    pub max_sessions: usize,
    /// HTTP: require `Authorization: Bearer <token>` with the token in this file. Beyond
    /// loopback a token is required; without this flag one is generated on first start.
    #[arg(long, value_name = "FILE", conflicts_with = "oauth_issuer")]
    pub token_file: Option<PathBuf>,
    /// HTTP: require a bearer token on loopback too (other local users can reach loopback);
    /// generated on first start unless --token-file is given.
    #[arg(long)]
    pub require_token: bool,
    /// HTTP: accept JWT access tokens from this OAuth 2.1 authorization server (its JWKS is
    /// found through its metadata), e.g. https://login.example.com/realms/team.
    #[arg(long, value_name = "URL")]
    pub oauth_issuer: Option<String>,
    /// HTTP: this server's public URL, as in the server card and the audience OAuth tokens
    /// must carry (default http://ADDR/mcp).
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// HTTP with --oauth-issuer: the token claim naming the person, recorded as the commits'
    /// `Actor:` trailer.
    #[arg(long, value_name = "CLAIM", default_value = "sub")]
    pub actor_claim: String,
}

/// `toolsmith serve`.
pub(super) fn serve(tb: Toolbox, args: ServeArgs, config: Arc<Config>) -> Result<i32> {
    let exposure = match args.expose {
        super::Exposure::All => crate::mcp::Exposure::All,
        super::Exposure::Pinned => crate::mcp::Exposure::Pinned,
        super::Exposure::None => crate::mcp::Exposure::None,
    };
    let http = match &args.http {
        None => {
            if args.token_file.is_some()
                || args.require_token
                || args.oauth_issuer.is_some()
                || args.public_url.is_some()
            {
                return Err(UserError::new(
                    "--token-file, --require-token, --oauth-issuer and --public-url apply to --http only",
                    "stdio needs no authentication: the client started this process",
                ));
            }
            None
        }
        Some(a) => Some(http_options(a, &args)?),
    };
    // OpenTelemetry, when the standard OTEL_* variables name an endpoint.
    let telemetry =
        crate::telemetry::Settings::from_env(config.telemetry_content, config.data_dir.clone());
    match &telemetry.export {
        crate::telemetry::settings::Export::Invalid(e) => {
            tracing::warn!(
                "telemetry: {e}; nothing is exported{}",
                UserError::hint_suffix(e)
            );
        }
        crate::telemetry::settings::Export::To { .. } => {
            let line = telemetry.describe();
            match crate::telemetry::install(telemetry) {
                Ok(_) => tracing::info!("telemetry {line}"),
                Err(e) => tracing::warn!(
                    "telemetry: {e}; nothing is exported{}",
                    UserError::hint_suffix(&e)
                ),
            }
        }
        crate::telemetry::settings::Export::Off(_) => {}
    }
    let rt = super::runtime(None)?;
    let out = rt.block_on(async move {
        // The index builds in the background so `initialize` is answered at once; the
        // start-up line follows as soon as the tool count is known, then WASM modules are
        // loaded from the compiled-code cache so a first call only instantiates.
        crate::sandbox::log_status(&config.sandbox);
        // Interpreters found behind version managers' shims are not asked for again at every
        // start (the first call after a restart would wait for it).
        crate::sandbox::interp::keep_in(&config.cache_dir);
        let app = crate::app::App::new_deferred(tb, config);
        // A server keeps spares for its script tools; one-shot commands do not.
        app.scripts().spares.set_enabled(true);
        let root = app.toolbox.root().to_path_buf();
        let shared = crate::mcp::start(app, exposure)?;
        let stop = Arc::clone(&shared);
        let transport = match &http {
            Some(o) => format!("streamable HTTP at http://{}/mcp", o.addr),
            None => "stdio".to_string(),
        };
        let warm = std::sync::Arc::clone(&shared);
        crate::platform::detached(move || {
            let idx = warm.app.index();
            let (ok, broken) = (idx.tools().count(), idx.broken().count());
            eprintln!(
                "toolsmith {}: serving {} ({ok} tools, {broken} broken) over {transport}",
                env!("CARGO_PKG_VERSION"),
                root.display()
            );
            // Each step waits while calls run (a client that calls at once has the
            // processor first; at most START_YIELD a step). First a moment for a call sent
            // right after `initialize`, which waited for the index as these steps did, to
            // be under way: it then runs alone (on 2 cores, loading WASM tools and embedding
            // the tools beside it took a third of its time).
            std::thread::sleep(START_SETTLE);
            warm.app.wait_no_calls(START_YIELD);
            warm.app.prepare_wasm();
            // The search tokens, so the first search_tools does not pay for them; then the
            // tools' embeddings, in the background (lexical search answers meanwhile).
            warm.app.wait_no_calls(START_YIELD);
            idx.search_index();
            drop(idx);
            warm.app.wait_no_calls(START_YIELD);
            warm.app.start_search();
            warm.app.wait_no_calls(START_YIELD);
            // The history memo, so the first tool_history does not read the whole history
            // (a fresh clone of a long history takes seconds; a call meanwhile waits for it).
            // A long build runs in a child process first: the memory it takes (readers'
            // delta caches, malloc arenas that are not handed back) leaves with the child,
            // and this server then only loads the memo it wrote.
            let root = warm.app.toolbox.root().to_path_buf();
            let apart = || build_memo_apart(&root);
            if let Err(e) = crate::history::prepare_apart(&warm.app.toolbox, apart) {
                tracing::warn!(error = %e, "cannot prepare the history memo; tool_history reads history when called");
            }
            // Start-up (parsing every manifest on several threads, the memo) leaves freed
            // pages in malloc's arenas: hand them back.
            crate::platform::release_free_memory();
        });
        // What the tools used most will need (their fork servers or spares), once the index
        // is ready and the client had its first tool list (or a moment passed without one).
        let pre = Arc::clone(&shared);
        tokio::spawn(async move {
            let idx = Arc::clone(&pre);
            let _ = crate::platform::blocking(move || drop(idx.app.index())).await;
            let mut listed = pre.listed.subscribe();
            let _ = tokio::time::timeout(PRESTART_AFTER, listed.wait_for(|l| *l)).await;
            // A client that calls right after its list: the call comes first and runs alone
            // (what starts for it then waits until it is over).
            tokio::time::sleep(PRESTART_SETTLE).await;
            pre.app.prestart().await;
        });
        let served = match http {
            Some(o) => crate::mcp::http::serve(shared, o).await,
            None => crate::mcp::serve_stdio(shared).await,
        };
        stop.app.stop_all();
        stop.app.usage().flush();
        served
    });
    // What is still buffered is exported before the process ends (outside the runtime: the
    // exporters' threads are waited for).
    drop(rt);
    crate::telemetry::shutdown();
    out?;
    Ok(0)
}

fn http_options(a: &str, args: &ServeArgs) -> Result<crate::mcp::http::Options> {
    let addr: std::net::SocketAddr = a.parse().map_err(|e| {
        UserError::new(
            format!("--http {a:?} is not an address: {e}"),
            "use IP:PORT, e.g. 127.0.0.1:8080",
        )
    })?;
    if !addr.ip().is_loopback() && !args.allow_remote {
        return Err(UserError::new(
            format!("{addr} is not a loopback address"),
            "serving beyond this machine exposes your tools to the network; add --allow-remote if you mean it",
        ));
    }
    if !(args.read_timeout.is_finite() && args.read_timeout > 0.0) {
        return Err(UserError::new(
            format!(
                "--read-timeout {} is not a positive number of seconds",
                args.read_timeout
            ),
            "e.g. --read-timeout 30",
        ));
    }
    let limits = crate::mcp::http::limits::Limits {
        read_timeout: Duration::from_secs_f64(args.read_timeout),
        max_sessions: args.max_sessions.max(1),
        ..Default::default()
    };
    let auth = Arc::new(http_auth(addr, args)?);
    Ok(crate::mcp::http::Options {
        addr,
        limits,
        auth,
        public_url: args.public_url.clone(),
    })
}

/// Where a generated token is kept.
fn auth_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("toolsmith-auth")
}

/// Authentication: OAuth, a token, or (loopback only) none.
fn http_auth(addr: std::net::SocketAddr, args: &ServeArgs) -> Result<crate::mcp::http::auth::Auth> {
    use crate::mcp::http::auth::{self, Auth};
    let user = |e: auth::AuthError| UserError::wrap(&e);
    if let Some(issuer) = &args.oauth_issuer {
        if addr.ip().is_unspecified() && args.public_url.is_none() {
            return Err(UserError::new(
                format!("--oauth-issuer needs this server's public URL: {addr} is not one"),
                "add --public-url https://HOST/mcp (the audience your identity provider puts in tokens)",
            ));
        }
        let resource = args
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{addr}/mcp"));
        let o = auth::OAuth::discover(issuer, &resource, &args.actor_claim).map_err(user)?;
        eprintln!(
            "toolsmith: accepting access tokens from {} for {resource} (actor claim {:?})",
            o.issuer, o.actor_claim
        );
        return Ok(Auth::OAuth(o));
    }
    if args.token_file.is_none() && !args.require_token && addr.ip().is_loopback() {
        return Ok(Auth::Open);
    }
    let (token, created) =
        auth::load_token(args.token_file.as_deref(), &auth_dir()).map_err(user)?;
    if let Some(file) = &args.token_file
        && std::fs::metadata(file).is_ok_and(|m| crate::platform::readable_by_others(&m))
    {
        eprintln!(
            "toolsmith: warning: {} is readable by other users; hint: chmod 600 {}",
            file.display(),
            file.display()
        );
    }
    match created {
        Some(path) => eprintln!(
            "toolsmith: generated the access token for HTTP clients (saved in {}, mode 0600; shown once):\n  {}\nclients send it as `Authorization: Bearer <token>`",
            path.display(),
            String::from_utf8_lossy(&token)
        ),
        None => eprintln!(
            "toolsmith: HTTP clients must send the token from {} as `Authorization: Bearer <token>`",
            args.token_file
                .clone()
                .unwrap_or_else(|| auth_dir().join("http-token"))
                .display()
        ),
    }
    Ok(Auth::Token(token))
}

/// Build the history memo of `root` in a child process (`toolsmith __history-memo`): true when
/// it did; any failure only leaves the work to the server itself.
fn build_memo_apart(root: &std::path::Path) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let status = std::process::Command::new(exe)
        .arg("--toolbox")
        .arg(root)
        .arg("__history-memo")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => return true,
        Ok(s) => tracing::debug!(status = %s, "the history memo child failed; building it here"),
        Err(e) => {
            tracing::debug!(error = %e, "cannot start the history memo child; building it here")
        }
    }
    false
}
