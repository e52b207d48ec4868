//! `toolsmith console`: the person's own page, where the MCP client has no hand. A local web
//! server on 127.0.0.1 only, reached through a session the person opens with the one-time
//! login link printed in their terminal (`auth`). It shows and acts on what the CLI commands
//! do, through the same library functions: pending approvals (approve this version, deny),
//! direct references refused for a tool (allow, take back),
//! held tools (trust), secrets (set, remove), the audit log, each tool's history (rollback),
//! the toolbox's health (`health`: charts drawn as SVG on the server).
//! While it runs, its address is recorded in the private directory, so the MCP server's
//! elicitation can point the person to it (`personal::console_address`; the address holds no
//! credential).

mod auth;
mod health;
mod html;
mod pages;

use crate::app::App;
use crate::approval::Decision;
use auth::{Auth, Refusal};
use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;

/// The actor recorded in commits made from the console (rollbacks).
pub const ACTOR: &str = "console";

/// How the console is started.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The port on 127.0.0.1 (0: any free port).
    pub port: u16,
    /// Do not open the browser (print the link only).
    pub no_open: bool,
}

struct Console {
    app: App,
    auth: Auth,
}

type Shared = Arc<Console>;

/// A started console: its address and login link; `run` serves until Ctrl-C.
pub struct Started {
    pub url: String,
    pub login: String,
    listener: tokio::net::TcpListener,
    console: Shared,
}

/// Bind 127.0.0.1 and make the login link (the session's key, printed only on the terminal).
pub async fn start(app: App, opts: &Options) -> std::io::Result<Started> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", opts.port)).await?;
    let addr = listener.local_addr()?;
    let (auth, token) = Auth::new(addr.to_string())?;
    let url = auth.origin();
    Ok(Started {
        login: format!("{url}/login/{token}"),
        url,
        listener,
        console: Arc::new(Console { app, auth }),
    })
}

impl Started {
    /// Serve until `shutdown` resolves; the address is recorded while it runs.
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let personal = self.console.app.personal_dir().to_path_buf();
        crate::personal::record_console(&personal, &self.url)?;
        let router = Router::new()
            .route("/", get(|| async { redirect("/approvals") }))
            .route("/login/{token}", get(login))
            .route("/approvals", get(show))
            .route("/held", get(show))
            .route("/secrets", get(show))
            .route("/audit", get(show))
            .route("/tools", get(show))
            .route("/health", get(show))
            .route("/tools/{name}", get(show_tool))
            .route("/approve", post(approve))
            .route("/deny", post(deny))
            .route("/trust", post(trust))
            .route("/secrets/set", post(secret_set))
            .route("/secrets/remove", post(secret_remove))
            .route("/rollback", post(rollback))
            .route("/references/allow", post(reference_allow))
            .route("/references/remove", post(reference_remove))
            .fallback(|| async {
                refuse(StatusCode::NOT_FOUND, "Not found", "<p>No such page.</p>")
            })
            .with_state(self.console);
        let out = axum::serve(self.listener, router)
            .with_graceful_shutdown(shutdown)
            .await;
        crate::personal::forget_console(&personal);
        out
    }
}

/// Open `url` in the person's browser (best effort).
pub fn open_browser(url: &str) -> bool {
    open::that_detached(url).is_ok()
}

fn with_headers(mut r: Response) -> Response {
    let h = r.headers_mut();
    for (k, v) in [
        ("content-security-policy", html::CSP),
        ("cache-control", "no-store"),
        ("referrer-policy", "same-origin"),
        ("x-frame-options", "DENY"),
        ("x-content-type-options", "nosniff"),
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-resource-policy", "same-origin"),
    ] {
        h.insert(k, HeaderValue::from_static(v));
    }
    r
}

fn html_response(status: StatusCode, body: String) -> Response {
    with_headers(
        (
            status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            body,
        )
            .into_response(),
    )
}

fn refuse(status: StatusCode, title: &str, body: &str) -> Response {
    html_response(status, html::bare(title, body))
}

fn redirect(to: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    with_headers(r)
}

fn refusal(r: Refusal) -> Response {
    match r {
        Refusal::WrongHost => refuse(
            StatusCode::FORBIDDEN,
            "Refused",
            "<p>Wrong host: the console answers only at the address it printed.</p>",
        ),
        Refusal::NoSession => refuse(
            StatusCode::UNAUTHORIZED,
            "Not signed in",
            "<p>The console opens only through the one-time login link that <code>toolsmith console</code> printed in your terminal. Run it again for a new link.</p>",
        ),
        Refusal::CrossSite => refuse(
            StatusCode::FORBIDDEN,
            "Refused",
            "<p>This form was not sent from the console's own page. Reload the console and try again.</p>",
        ),
    }
}

/// Run `f` with the app on a blocking thread (git and file work), its index brought up to date.
async fn blocking<T: Send + 'static>(c: &Shared, f: impl FnOnce(&App) -> T + Send + 'static) -> T {
    let c = Arc::clone(c);
    match crate::platform::blocking(move || {
        c.app.refresh();
        f(&c.app)
    })
    .await
    {
        Ok(v) => v,
        // As before: a panic in the page's work continues in the request.
        Err(e) => panic!("{e}"),
    }
}

async fn login(State(c): State<Shared>, headers: HeaderMap, Path(token): Path<String>) -> Response {
    if let Err(r) = c.auth.check_host(&headers) {
        return refusal(r);
    }
    match c.auth.login(&token) {
        Some(id) => {
            let mut r = redirect("/approvals");
            if let Ok(v) = HeaderValue::from_str(&Auth::cookie(&id)) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            r
        }
        None => refuse(
            StatusCode::GONE,
            "This link is used or expired",
            "<p>A login link opens one session, once. Run <code>toolsmith console</code> in your terminal again for a new one.</p>",
        ),
    }
}

/// A page's query: what the audit log shows. Nothing in it is shown as the console's words.
#[derive(Deserialize)]
struct Filter {
    tool: Option<String>,
    since: Option<String>,
}

async fn show(
    State(c): State<Shared>,
    headers: HeaderMap,
    uri: axum::http::Uri,
    Query(q): Query<Filter>,
) -> Response {
    let session = match c
        .auth
        .check_host(&headers)
        .and_then(|()| c.auth.session(&headers))
    {
        Ok(s) => s,
        Err(r) => return refusal(r),
    };
    let path = uri.path().to_string();
    let (title, active) = pages::title(&path);
    let msg = c.auth.take_notice(&session);
    let body = blocking(&c, move |app| match path.as_str() {
        "/approvals" => pages::approvals(app, &session.csrf),
        "/held" => pages::held(app, &session.csrf),
        "/secrets" => pages::secrets(app, &session.csrf),
        "/audit" => pages::audit(app, q.tool.as_deref(), q.since.as_deref()),
        "/health" => health::page(app),
        _ => pages::tools(app),
    })
    .await;
    html_response(
        StatusCode::OK,
        html::page(title, active, msg.as_deref(), &body),
    )
}

async fn show_tool(
    State(c): State<Shared>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    let session = match c
        .auth
        .check_host(&headers)
        .and_then(|()| c.auth.session(&headers))
    {
        Ok(s) => s,
        Err(r) => return refusal(r),
    };
    if crate::names::validate(&name).is_err() {
        return refuse(StatusCode::NOT_FOUND, "Not found", "<p>No such tool.</p>");
    }
    let title = format!("History of {name}");
    let msg = c.auth.take_notice(&session);
    let body = blocking(&c, move |app| pages::tool(app, &name, &session.csrf)).await;
    html_response(
        StatusCode::OK,
        html::page(&title, "/tools", msg.as_deref(), &body),
    )
}

type Fields = HashMap<String, String>;

/// A form post's checks, then `act` (on a blocking thread): Ok(message) is kept as the
/// session's notice (shown once by the next page) and redirects to `back`; Err(message) is
/// shown with status 409.
async fn act(
    c: Shared,
    headers: HeaderMap,
    form: Fields,
    back: impl FnOnce(&Fields) -> String,
    act: impl FnOnce(&App, &Fields) -> Result<String, String> + Send + 'static,
) -> Response {
    let csrf = form.get("csrf").cloned().unwrap_or_default();
    let session = match c
        .auth
        .check_host(&headers)
        .and_then(|()| c.auth.check_post(&headers, &csrf))
    {
        Ok(s) => s,
        Err(r) => return refusal(r),
    };
    let back = back(&form);
    match blocking(&c, move |app| act(app, &form)).await {
        Ok(msg) => {
            c.auth.tell(&session, msg);
            redirect(&back)
        }
        Err(e) => refuse(
            StatusCode::CONFLICT,
            "Not done",
            &format!(
                "<p class=\"err\">{}</p><p><a href=\"{}\">Back</a></p>",
                html::escape(&e),
                html::escape(&back)
            ),
        ),
    }
}

fn field<'a>(f: &'a Fields, k: &str) -> &'a str {
    f.get(k).map(String::as_str).unwrap_or("")
}

fn told(e: &(impl std::fmt::Display + crate::error::Hint)) -> String {
    match e.hint() {
        Some(h) => format!("{e} (hint: {h})"),
        None => e.to_string(),
    }
}

fn decide(app: &App, f: &Fields, decision: Decision) -> Result<String, String> {
    let name = field(f, "name");
    let tool = app.tool(name).map_err(|e| told(&e))?;
    let s = crate::approval::status::decide(
        &app.gate(),
        &tool,
        Some(field(f, "content")),
        decision,
        "console",
    )
    .map_err(|e| told(&e))?;
    Ok(match decision {
        Decision::Approved => format!(
            "Approved this version of {name}: {}. Any change asks again.",
            s.lines().join("; ")
        ),
        Decision::Denied => format!("Denied {name}: it runs with the default grants only."),
    })
}

async fn approve(State(c): State<Shared>, headers: HeaderMap, Form(f): Form<Fields>) -> Response {
    act(
        c,
        headers,
        f,
        |_| "/approvals".into(),
        |app, f| decide(app, f, Decision::Approved),
    )
    .await
}

async fn deny(State(c): State<Shared>, headers: HeaderMap, Form(f): Form<Fields>) -> Response {
    act(
        c,
        headers,
        f,
        |_| "/approvals".into(),
        |app, f| decide(app, f, Decision::Denied),
    )
    .await
}

async fn trust(State(c): State<Shared>, headers: HeaderMap, Form(f): Form<Fields>) -> Response {
    act(
        c,
        headers,
        f,
        |_| "/held".into(),
        |app, f| {
            let name = field(f, "name");
            let tree = crate::trust::trust(&app.toolbox, name).map_err(|e| told(&e))?;
            Ok(format!(
                "Trusted {name} (version {}) on this machine.",
                &tree[..tree.len().min(10)]
            ))
        },
    )
    .await
}

async fn secret_set(
    State(c): State<Shared>,
    headers: HeaderMap,
    Form(f): Form<Fields>,
) -> Response {
    act(
        c,
        headers,
        f,
        |_| "/secrets".into(),
        |app, f| {
            let name = field(f, "name").trim();
            let value = field(f, "value");
            if value.trim_end_matches(['\r', '\n']).len() < crate::secrets::redact::MIN_LEN {
                return Err(format!(
                    "the value is shorter than {} characters: paste the whole value",
                    crate::secrets::redact::MIN_LEN
                ));
            }
            crate::secrets::Store::new(app.personal_dir())
                .set(name, value)
                .map_err(|e| told(&e))?;
            crate::audit::Log::new(app.personal_dir()).append(&crate::audit::Entry::decision(
                app.toolbox.root(),
                "",
                "secret set",
                "console",
                vec![name.to_string()],
            ));
            Ok(format!("{name} is set."))
        },
    )
    .await
}

async fn secret_remove(
    State(c): State<Shared>,
    headers: HeaderMap,
    Form(f): Form<Fields>,
) -> Response {
    act(
        c,
        headers,
        f,
        |_| "/secrets".into(),
        |app, f| {
            let name = field(f, "name");
            crate::secrets::Store::new(app.personal_dir())
                .remove(name)
                .map_err(|e| told(&e))?;
            crate::audit::Log::new(app.personal_dir()).append(&crate::audit::Entry::decision(
                app.toolbox.root(),
                "",
                "secret removed",
                "console",
                vec![name.to_string()],
            ));
            Ok(format!("{name} removed."))
        },
    )
    .await
}

async fn rollback(State(c): State<Shared>, headers: HeaderMap, Form(f): Form<Fields>) -> Response {
    act(
        c,
        headers,
        f,
        |f| match crate::names::validate(field(f, "name")) {
            Ok(_) => format!("/tools/{}", field(f, "name")),
            Err(_) => "/tools".into(),
        },
        |app, f| {
            let (name, rev) = (field(f, "name"), field(f, "revision"));
            let o = crate::history::rollback_tool(&app.toolbox, name, rev, ACTOR)
                .map_err(|e| told(&e))?;
            Ok(match o.commit {
                Some(c) => format!(
                    "Rolled {name} back to {} (new commit {}).",
                    &rev[..rev.len().min(10)],
                    &c[..c.len().min(10)]
                ),
                None => format!("{name} already is that version: nothing changed."),
            })
        },
    )
    .await
}

fn ecosystem(f: &Fields) -> Result<crate::deps::Ecosystem, String> {
    crate::deps::Ecosystem::parse(field(f, "ecosystem"))
        .ok_or_else(|| "the form names no package manager (pip or npm)".to_string())
}

async fn reference_allow(
    State(c): State<Shared>,
    headers: HeaderMap,
    Form(f): Form<Fields>,
) -> Response {
    act(
        c,
        headers,
        f,
        |_| "/approvals".into(),
        |app, f| {
            let (tool, spec) = (field(f, "tool"), field(f, "spec"));
            let a = crate::approval::references::allow(
                &app.gate(),
                tool,
                ecosystem(f)?,
                spec,
                "console",
            )
            .map_err(|e| told(&e))?;
            Ok(format!(
                "Allowed {} {} for {tool}{}. Register the tool again to use it.",
                a.ecosystem,
                a.spec,
                a.digest
                    .as_deref()
                    .map(|d| format!(", pinned to {d}"))
                    .unwrap_or_default()
            ))
        },
    )
    .await
}

async fn reference_remove(
    State(c): State<Shared>,
    headers: HeaderMap,
    Form(f): Form<Fields>,
) -> Response {
    act(
        c,
        headers,
        f,
        |_| "/approvals".into(),
        |app, f| {
            let (tool, spec) = (field(f, "tool"), field(f, "spec"));
            let removed = crate::approval::references::disallow(
                &app.gate(),
                tool,
                ecosystem(f)?,
                spec,
                "console",
            )
            .map_err(|e| told(&e))?;
            Ok(if removed {
                format!("{spec} is no longer allowed for {tool}.")
            } else {
                format!("{spec} was not allowed for {tool}: nothing changed.")
            })
        },
    )
    .await
}
