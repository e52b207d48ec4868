//! The person's own channel (issue 25): against an MCP client that accepts every elicitation,
//! the AI obtains no secret, environment variable, write root, unsandboxed run or network; the
//! console (`toolsmith console`, driven in headless Chromium by tests/py/console.py) refuses a
//! foreign Host, a link without a session, a reused login link and cross-site posts, and the
//! approval the person clicks there lets the waiting call through — in both protocol eras.
//! The console's handlers are also driven directly over HTTP (no browser): a foreign Host, a
//! page or a form post without the session, a reused login link, a cross-site post and a
//! post without the session's CSRF token are refused and change nothing; words in a link's
//! query are never shown as the console's notice (only what a post did, once).

use crate::common;

use common::{assert_clean, python};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn scenario(mode: &str) -> (Value, Vec<u8>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("box");
    let personal = tmp.path().join("personal");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let shot = tmp.path().join("console.png");
    let bin = env!("CARGO_BIN_EXE_toolsmith");
    let out = Command::new(bin)
        .args(["init", root.to_str().unwrap()])
        .env("TOOLSMITH_DATA", &personal)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/console.py"))
        .args(["--toolsmith", bin, "--mode", mode])
        .arg("--toolbox")
        .arg(&root)
        .arg("--work")
        .arg(&work)
        .arg("--screenshot")
        .arg(&shot)
        .env("TOOLSMITH_DATA", &personal)
        .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
        .env("TOOLSMITH_ROOTS", tmp.path())
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "console.py --mode {mode}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean(&root);
    let s = serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary");
    (s, std::fs::read(&shot).expect("the screenshot"))
}

fn text<'a>(s: &'a Value, key: &str) -> &'a str {
    s[key].as_str().unwrap_or_else(|| panic!("{key} in {s}"))
}

fn check(s: &Value, shot: &[u8]) {
    // 1. An always-accepting client obtains nothing.
    let tools = ["env_t", "net_t", "secret_t", "unsandboxed_t", "write_t"];
    for t in tools {
        assert_eq!(s["obtained"][t], false, "{t}: {s}");
    }
    assert_eq!(s["wrote"], false, "{s}");
    assert!(s["told"].as_u64() >= Some(5), "the client was told: {s}");
    assert_eq!(s["told_how"], true, "each message names the console: {s}");
    assert_eq!(s["pending"], json!(tools), "{s}");
    assert_eq!(s["approved_events"], json!([]), "{s}");

    // 2. The console's refusals.
    assert_eq!(s["loopback"], true);
    assert_eq!(s["foreign_host"], 403, "{s}");
    assert_eq!(s["foreign_host_login"], 403, "{s}");
    assert_eq!(s["no_session_post"], 401, "no session: {s}");
    assert!(text(s, "stolen_link_text").contains("Not signed in"), "{s}");
    assert!(
        text(s, "reused_login_text").contains("used or expired"),
        "{s}"
    );
    assert!(text(s, "stranger_after").contains("Not signed in"), "{s}");
    let approvals = text(s, "approvals_text");
    for part in [
        "env_t",
        "the environment variable TOOLSMITH_TEST_CONSOLE_ENV",
        "the secret CONSOLE_TOKEN",
        "running without a sandbox",
        "network access to any host",
        "Approve this version",
        "os.environ.get('TOOLSMITH_TEST_CONSOLE_ENV')",
    ] {
        assert!(approvals.contains(part), "{part}: {approvals}");
    }
    assert!(
        !approvals.contains("console-token-8d2f6a1b"),
        "no secret value"
    );
    for k in ["cross_site_guess", "cross_site_token"] {
        let t = text(s, k);
        assert!(
            t.contains("Refused") || t.contains("Not signed in"),
            "{k}: {t}"
        );
        assert!(!t.contains("Approved"), "{k}: {t}");
    }
    assert_eq!(s["pending_after_cross_site"], json!(tools), "{s}");

    // The screenshot shows the pending item: a PNG of the window, the item inside it.
    assert!(shot.starts_with(b"\x89PNG\r\n\x1a\n") && shot.len() > 10_000);
    let r = &s["screenshot_item"];
    assert!(r["width"].as_f64() > Some(300.0), "{r}");
    assert!(
        r["y"].as_f64() < Some(900.0) && r["height"].as_f64() > Some(50.0),
        "{r}"
    );

    // 3. Approved in the console while the call waited: the same call goes through.
    assert_eq!(
        s["env_after"],
        json!({"seen": "visible-env-value-31"}),
        "{s}"
    );
    assert_eq!(
        s["secret_after"],
        json!({"token": "[secret CONSOLE_TOKEN]", "len": 22}),
        "{s}"
    );
    assert_eq!(s["secret_value_in_result"], false);
    assert!(
        s["url_asks"].as_array().unwrap().iter().all(|m| m == "url"),
        "{s}"
    );
    for c in s["clicked"].as_array().unwrap() {
        assert!(
            c.as_str().unwrap().contains("Approved this version of"),
            "{c}"
        );
    }
    assert!(
        text(s, "denied_text").contains("Denied net_t"),
        "{}",
        s["denied_text"]
    );
    assert_eq!(
        s["net_after"],
        json!([false, {"connected": false}, true]),
        "{s}"
    );
    assert!(
        text(s, "secret_set_text").contains("NEW_ONE is set."),
        "{s}"
    );
    assert_eq!(s["secret_value_shown"], false);
    assert_eq!(s["secrets"]["NEW_ONE"], json!([true, []]), "{s}");
    assert_eq!(
        s["secrets"]["CONSOLE_TOKEN"],
        json!([true, ["secret_t"]]),
        "{s}"
    );
    let audit = text(s, "audit_text");
    assert!(
        audit.contains("approved") && audit.contains("via console"),
        "{audit}"
    );
    assert!(!audit.contains("secret_t"), "filtered by tool: {audit}");
    assert!(text(s, "audit_bad_since").contains("is not a time"), "{s}");
    let history = text(s, "history_text");
    assert!(history.contains("Roll back to this version"), "{history}");
    assert!(
        text(s, "rollback_text").contains("Rolled write_t back"),
        "{s}"
    );
    assert!(text(s, "held_text").contains("No tool is held"), "{s}");
    assert_eq!(s["console_file_left"], false, "{s}");
}

#[test]
fn the_person_approves_in_the_console_and_an_accepting_client_obtains_nothing() {
    for mode in ["legacy", "auto"] {
        let (s, shot) = scenario(mode);
        check(&s, &shot);
    }
}

/// One HTTP/1.1 request to the console: (status, head, body).
async fn http(addr: &str, raw: String) -> (u16, String, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(raw.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let out = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

fn get(host: &str, path: &str, cookie: Option<&str>) -> String {
    let cookie = cookie
        .map(|c| format!("Cookie: {c}\r\n"))
        .unwrap_or_default();
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{cookie}Connection: close\r\n\r\n")
}

fn post(host: &str, path: &str, headers: &[(&str, &str)], body: &str) -> String {
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The value of the first hidden input `name` on a page.
fn hidden<'a>(page: &'a str, name: &str) -> &'a str {
    let at = page
        .find(&format!("name=\"{name}\" value=\""))
        .unwrap_or_else(|| panic!("{name} on the page: {page}"));
    let rest = &page[at + name.len() + 15..];
    &rest[..rest.find('"').unwrap()]
}

/// A toolbox with one tool waiting for approval, and its console started (not through a
/// browser): the app's personal directory, the console's host (`127.0.0.1:PORT`) and login.
async fn console() -> (tempfile::TempDir, PathBuf, PathBuf, String, String) {
    let (tmp, tb) = common::toolbox();
    let root = tb.root().to_path_buf();
    let personal = tmp.path().join("personal");
    let app = toolsmith::app::App::new(tb, toolsmith::config::Config::from_env().expect("config"))
        .with_personal_dir(&personal);
    let spec: toolsmith::register::ScriptSpec = serde_json::from_value(json!({
        "name": "env_t", "description": "Shows a variable", "language": "python", "protocol": "plain",
        "capabilities": {"env": ["HOME"]},
        "code": "import json, os\nprint(json.dumps({'home': os.environ.get('HOME')}))\n"}))
    .unwrap();
    toolsmith::register::register(
        &app,
        &spec,
        &toolsmith::toolbox::Actor::from("test"),
        &toolsmith::runner::script::NoHost,
        &|_, _, _| {},
    )
    .await
    .expect("register");
    let started = toolsmith::console::start(app, &Default::default())
        .await
        .expect("the console starts");
    let host = started.url.trim_start_matches("http://").to_string();
    let login = started.login.trim_start_matches(&started.url).to_string();
    tokio::spawn(started.run(std::future::pending()));
    // Serving once its address is recorded.
    for _ in 0..100 {
        if toolsmith::personal::console_address(&personal).is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    (tmp, personal, root, host, login)
}

fn decision(personal: &Path, root: &Path) -> Option<toolsmith::approval::Decision> {
    toolsmith::approval::Store::new(personal, root)
        .get("env_t")
        .unwrap()
        .map(|r| r.decision)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_consoles_handlers_refuse_what_does_not_come_from_the_persons_session() {
    let (_tmp, personal, root, host, login) = console().await;
    let origin = format!("http://{host}");
    let port = host.rsplit(':').next().unwrap().to_string();

    // A foreign Host (a name of the attacker's resolving here: DNS rebinding) is refused, on
    // the login link too, which stays unused.
    let foreign = format!("evil.example:{port}");
    let (status, _, body) = http(&host, get(&foreign, "/approvals", None)).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Wrong host"), "{body}");
    assert_eq!(http(&host, get(&foreign, &login, None)).await.0, 403);
    assert_eq!(
        http(&host, get(&format!("localhost:{port}"), "/approvals", None))
            .await
            .0,
        403
    );

    // The link the MCP client is given, without the session: nothing shown, nothing done.
    let (status, _, body) = http(&host, get(&host, "/approvals", None)).await;
    assert_eq!(status, 401);
    assert!(
        body.contains("Not signed in") && !body.contains("env_t"),
        "{body}"
    );
    for path in ["/secrets", "/audit", "/tools/env_t", "/held"] {
        assert_eq!(http(&host, get(&host, path, None)).await.0, 401, "{path}");
    }
    let stolen = post(
        &host,
        "/approve",
        &[("Origin", &origin)],
        "name=env_t&content=x&csrf=x",
    );
    assert_eq!(http(&host, stolen).await.0, 401);
    let forged = get(&host, "/approvals", Some("toolsmith_console=0000"));
    assert_eq!(http(&host, forged).await.0, 401, "a guessed session");

    // The login link opens one session (HttpOnly, SameSite=Strict), once.
    let (status, head, _) = http(&host, get(&host, &login, None)).await;
    assert_eq!(status, 303, "{head}");
    let set = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .unwrap_or_else(|| panic!("a cookie: {head}"));
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    let cookie = set.split(';').next().unwrap().to_string();
    let (status, _, body) = http(&host, get(&host, &login, None)).await;
    assert_eq!(status, 410, "reused: {body}");
    assert!(body.contains("used or expired"), "{body}");

    // Words in a link (one the AI could hand the person) are never shown as the console's.
    for path in [
        "/approvals?msg=toolsmith%3A+approved+by+the+person",
        "/tools/env_t?msg=toolsmith%3A+approved+by+the+person",
        "/held?msg=toolsmith%3A+approved+by+the+person",
    ] {
        let (status, _, page) = http(&host, get(&host, path, Some(&cookie))).await;
        assert_eq!(status, 200, "{path}");
        assert!(
            !page.contains("approved by the person") && !page.contains("class=\"msg\""),
            "{path}: {page}"
        );
    }

    // The person's page: what waits, with the form's CSRF token and the version shown.
    let (status, head, page) = http(&host, get(&host, "/approvals", Some(&cookie))).await;
    assert_eq!(status, 200);
    let head = head.to_lowercase();
    assert!(
        head.contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    assert!(head.contains("cache-control: no-store") && head.contains("x-frame-options: deny"));
    assert!(page.contains("the environment variable HOME"), "{page}");
    let csrf = hidden(&page, "csrf").to_string();
    let content = hidden(&page, "content").to_string();
    let form = format!("name=env_t&content={content}&csrf={csrf}");

    // Cross-site posts carry the cookie (SameSite counts the host, not the port) but come from
    // another origin, or say so: refused, even with the real token.
    for headers in [
        vec![
            ("Cookie", cookie.as_str()),
            ("Origin", "http://evil.example"),
        ],
        vec![
            ("Cookie", cookie.as_str()),
            ("Origin", "http://127.0.0.1:1"),
        ],
        vec![
            ("Cookie", cookie.as_str()),
            ("Sec-Fetch-Site", "cross-site"),
        ],
        vec![("Cookie", cookie.as_str()), ("Sec-Fetch-Site", "same-site")],
    ] {
        let (status, _, body) = http(&host, post(&host, "/approve", &headers, &form)).await;
        assert_eq!(status, 403, "{headers:?}: {body}");
    }
    // The session's own origin without its CSRF token, or with another's.
    for bad in ["", "csrf=", "csrf=0000"] {
        let body = format!("name=env_t&content={content}&{bad}");
        let (status, _, _) = http(
            &host,
            post(
                &host,
                "/approve",
                &[("Cookie", &cookie), ("Origin", &origin)],
                &body,
            ),
        )
        .await;
        assert_eq!(status, 403, "{bad}");
    }
    assert_eq!(decision(&personal, &root), None, "nothing was recorded");
    // A foreign Host with everything else right.
    let (status, _, _) = http(
        &host,
        post(
            &foreign,
            "/approve",
            &[("Cookie", &cookie), ("Origin", &origin)],
            &form,
        ),
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(decision(&personal, &root), None);

    // The person's own post: recorded, for the version shown.
    let (status, head, _) = http(
        &host,
        post(
            &host,
            "/approve",
            &[
                ("Cookie", &cookie),
                ("Origin", &origin),
                ("Sec-Fetch-Site", "same-origin"),
            ],
            &form,
        ),
    )
    .await;
    assert_eq!(status, 303, "{head}");
    assert!(
        head.contains("location: /approvals\r\n"),
        "nothing in the URL: {head}"
    );
    assert_eq!(
        decision(&personal, &root),
        Some(toolsmith::approval::Decision::Approved)
    );
    // What it did is the console's own notice, kept with the session and shown once.
    let (_, _, page) = http(&host, get(&host, "/approvals", Some(&cookie))).await;
    assert!(
        page.contains("<p class=\"msg\">Approved this version of env_t"),
        "{page}"
    );
    let (_, _, page) = http(&host, get(&host, "/approvals", Some(&cookie))).await;
    assert!(!page.contains("class=\"msg\""), "once: {page}");
    // A version other than the one shown is not approved.
    let stale = format!("name=env_t&content=sha256:00&csrf={csrf}");
    let (status, _, body) = http(
        &host,
        post(
            &host,
            "/deny",
            &[("Cookie", &cookie), ("Origin", &origin)],
            &stale,
        ),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("changed since it was shown"), "{body}");

    // A secret set here is stored, and never shown back.
    let value = "typed-here-4a7c9e1b";
    let (status, _, _) = http(
        &host,
        post(
            &host,
            "/secrets/set",
            &[("Cookie", &cookie), ("Origin", &origin)],
            &format!("name=NEW_ONE&value={value}&csrf={csrf}"),
        ),
    )
    .await;
    assert_eq!(status, 303);
    assert_eq!(
        toolsmith::secrets::Store::new(&personal).load().unwrap()["NEW_ONE"],
        value
    );
    let (_, _, page) = http(&host, get(&host, "/secrets", Some(&cookie))).await;
    assert!(page.contains("NEW_ONE") && !page.contains(value), "{page}");
}
