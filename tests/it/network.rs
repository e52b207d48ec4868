//! Network limited to listed domains (issue 12): a tool whose manifest says
//! `capabilities.network = ["127.0.0.1"]` reaches that host — plain HTTP and CONNECT tunnels —
//! through toolsmith's filtering proxy once a person approved it, is refused every other host
//! with a message naming the tool, cannot go around the proxy, and the audit log records the
//! hosts. Under bubblewrap and under the in-process sandbox. Loopback only: the "other host" is
//! `localhost`, which the proxy refuses by name before resolving anything.

use crate::common;

use common::assert_clean;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

/// A loopback HTTP server that answers every request with the request line it got.
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

fn server() -> Server {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { continue };
            let s = s.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match c.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&buf).into_owned();
                let line = text.lines().next().unwrap_or_default().to_string();
                s.lock().unwrap().push(text);
                let body = format!("reached: {line}");
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    Server { port, seen }
}

/// Fetches `plain` (absolute-form through HTTP_PROXY), opens a CONNECT tunnel to
/// `tunnel_host:port`, fetches `refused`, and tries the server directly, around the proxy.
const FETCH: &str = r#"
import http.client, json, os, socket, sys, urllib.request
a = json.load(sys.stdin)
out = {"proxy": os.environ.get("HTTPS_PROXY")}
def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        return "HTTP %d: %s" % (e.code, e.read().decode())
    except Exception as e:
        return "failed: %s" % e
out["plain"] = get(a["plain"])
out["refused"] = get(a["refused"])
try:
    proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
    c = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=10)
    c.set_tunnel("127.0.0.1", a["port"])
    c.request("GET", "/tunnelled")
    out["tunnel"] = c.getresponse().read().decode()
except Exception as e:
    out["tunnel"] = "failed: %s" % e
try:
    socket.create_connection(("127.0.0.1", a["port"]), timeout=3)
    out["direct"] = "connected"
except Exception as e:
    out["direct"] = "failed: %s" % e
print(json.dumps(out))
"#;

struct Env {
    tmp: tempfile::TempDir,
    root: PathBuf,
    bwrap: bool,
}

impl Env {
    fn new(bwrap: bool) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("box");
        let e = Env { tmp, root, bwrap };
        let out = e.run(&["init", e.root.to_str().unwrap()]);
        assert!(out.status.success(), "{out:?}");
        std::fs::write(e.tmp.path().join("fetch.py"), FETCH).unwrap();
        e
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        cmd.args(["--toolbox", self.root.to_str().unwrap()])
            .args(args)
            .env("TOOLSMITH_DATA", self.tmp.path().join("personal"))
            .env("TOOLSMITH_CACHE", self.tmp.path().join("cache"))
            .stdin(Stdio::null());
        if !self.bwrap {
            cmd.env("TOOLSMITH_BWRAP", "/nonexistent");
        }
        cmd.output().expect("the CLI runs")
    }

    fn register(&self, name: &str, network: &[&str]) -> Output {
        let code = self.tmp.path().join("fetch.py");
        let mut args = vec![
            "register",
            name,
            "--language",
            "python",
            "--description",
            "Fetches URLs",
            "--code",
            code.to_str().unwrap(),
        ];
        for d in network {
            args.extend(["--allow-domain", d]);
        }
        self.run(&args)
    }

    fn call(&self, name: &str, args: Value) -> Output {
        self.run(&["--json", "call", name, "--args", &args.to_string()])
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn reaches_only_listed_domains(bwrap: bool) {
    let srv = server();
    let e = Env::new(bwrap);
    let out = e.register("fetch", &["127.0.0.1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("network access to 127.0.0.1 only"),
        "the registration says what waits for approval: {}",
        text(&out.stderr)
    );
    let port = srv.port;
    let args = json!({
        "plain": format!("http://127.0.0.1:{port}/plain?x=1"),
        "refused": format!("http://localhost:{port}/refused"),
        "port": port,
    });

    // Not approved yet: nothing runs.
    let out = e.call("fetch", args.clone());
    assert!(!out.status.success(), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains("network access to 127.0.0.1 only") && err.contains("toolsmith approve fetch"),
        "{err}"
    );
    assert!(
        srv.seen.lock().unwrap().is_empty(),
        "nothing reached the server"
    );

    let out = e.run(&["approve", "fetch"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = e.call("fetch", args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["structured"];
    assert_eq!(r["plain"], "reached: GET /plain?x=1 HTTP/1.1", "{v}");
    assert_eq!(r["tunnel"], "reached: GET /tunnelled HTTP/1.1", "{v}");
    let refused = r["refused"].as_str().unwrap();
    assert!(
        refused.starts_with("HTTP 403")
            && refused.contains("\"fetch\" may reach only 127.0.0.1")
            && refused.contains("localhost is not listed"),
        "{refused}"
    );
    let direct = r["direct"].as_str().unwrap();
    assert!(
        direct.starts_with("failed"),
        "went around the proxy: {direct}"
    );
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .contains("the network proxy refused localhost"),
        "{v}"
    );
    {
        let seen = srv.seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(
            seen.iter()
                .all(|r| !r.to_ascii_lowercase().contains("proxy-connection")),
            "proxy headers are not passed on: {seen:?}"
        );
    }

    let out = e.run(&["--json", "audit", "--tool", "fetch"]);
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ok = log
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"] == "call" && e["outcome"] == "ok")
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(ok["hosts_reached"], json!(["127.0.0.1"]), "{ok}");
    assert_eq!(ok["hosts_refused"], json!(["localhost"]), "{ok}");
    assert_eq!(
        ok["grants"],
        json!(["network access to 127.0.0.1 only"]),
        "{ok}"
    );
    assert_clean(&e.root);
}

#[test]
fn bubblewrap_reaches_only_the_listed_domains() {
    reaches_only_listed_domains(true);
}

#[test]
fn the_in_process_sandbox_reaches_only_the_listed_domains() {
    reaches_only_listed_domains(false);
}

#[test]
fn a_denied_domain_list_runs_without_any_network() {
    let srv = server();
    let e = Env::new(true);
    assert!(e.register("fetch", &["127.0.0.1"]).status.success());
    let out = e.run(&["deny", "fetch"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let port = srv.port;
    let out = e.call(
        "fetch",
        json!({"plain": format!("http://127.0.0.1:{port}/"), "refused": format!("http://127.0.0.1:{port}/"), "port": port}),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["structured"]["proxy"], Value::Null, "no proxy: {v}");
    assert!(
        v["structured"]["plain"]
            .as_str()
            .unwrap()
            .starts_with("failed"),
        "{v}"
    );
    assert!(
        v["structured"]["direct"]
            .as_str()
            .unwrap()
            .starts_with("failed"),
        "{v}"
    );
    assert!(srv.seen.lock().unwrap().is_empty());
}

#[test]
fn a_domain_entry_that_is_not_a_host_is_refused_with_a_hint() {
    let e = Env::new(true);
    for bad in ["https://api.github.com/repos", "*", "api.github.com:443"] {
        let out = e.register("fetch", &[bad]);
        assert!(!out.status.success(), "{bad} was accepted");
        let err = text(&out.stderr);
        assert!(
            err.contains("capabilities.network") && err.contains("hint:"),
            "{bad}: {err}"
        );
    }
    let out = e.register("fetch", &["api.github.com", "*.githubusercontent.com"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let text_toml = std::fs::read_to_string(e.root.join("tools/fetch/tool.toml")).unwrap();
    let m: toml::Value = toml::from_str(&text_toml).unwrap();
    assert_eq!(
        m["capabilities"]["network"],
        toml::Value::Array(vec![
            "api.github.com".into(),
            "*.githubusercontent.com".into()
        ]),
        "{text_toml}"
    );
    let out = e.run(&["pending"]);
    assert!(
        text(&out.stdout)
            .contains("network access to api.github.com, *.githubusercontent.com only"),
        "{}",
        text(&out.stdout)
    );
}

/// tests/py/network_mcp.py: approval through elicitation (the person opted network grants in
/// with `[approvals] elicitation` in their personal config.toml), and calls through spares keep
/// the proxy (each process has its own, started with it).
#[test]
fn over_mcp_the_person_approves_the_domains_and_every_call_is_filtered() {
    let srv = server();
    let e = Env::new(true);
    let personal = e.tmp.path().join("personal");
    std::fs::create_dir_all(&personal).unwrap();
    std::fs::write(
        personal.join("config.toml"),
        "[approvals]\nelicitation = [\"network\"]\n",
    )
    .unwrap();
    let out = Command::new(common::python())
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/network_mcp.py"))
        .args(["--toolsmith", env!("CARGO_BIN_EXE_toolsmith"), "--toolbox"])
        .arg(&e.root)
        .args(["--port", &srv.port.to_string()])
        .env("TOOLSMITH_DATA", e.tmp.path().join("personal"))
        .env("TOOLSMITH_CACHE", e.tmp.path().join("cache"))
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["register_says"], true, "{v}");
    let asked = v["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "asked once for this version: {v}");
    assert!(
        asked[0]
            .as_str()
            .unwrap()
            .contains("network access to 127.0.0.1 only"),
        "{v}"
    );
    assert!(
        v["denied"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d.as_str().unwrap().starts_with("every host but 127.0.0.1")),
        "{v}"
    );
    for r in v["results"].as_array().unwrap() {
        assert_eq!(r["listed"], "reached: GET /listed HTTP/1.1", "{v}");
        assert_eq!(r["other"], "HTTP 403", "{v}");
    }
    assert_eq!(v["warning"], true, "{v}");
    assert_eq!(srv.seen.lock().unwrap().len(), 3);
    assert_clean(&e.root);
}
