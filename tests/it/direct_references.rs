//! Direct references a person allows, and packages with only a source archive (issue 24):
//! through MCP (the official Python SDK) and the CLI, under bubblewrap and under the
//! in-process sandbox (bubblewrap hidden), with a fake key in a temporary HOME.
//!
//! - A pip `name @ file:///…` source tree and an npm `file:/….tgz` package are refused without
//!   the person's allowance, the hint naming the exact command; `toolsmith pending` lists
//!   them with that command.
//! - The person allows one with that command (CLI) and the other on the console's Approvals
//!   page (HTTP with the session of its one-time login link); both then install and run. Their
//!   build backend and postinstall script try to read the key, reach a loopback listener and
//!   write into HOME and `.git/hooks`: every attempt is denied, the person's own source tree
//!   is not written to, nothing appears in HOME, git or any result.
//! - A file changed behind an allowed `file:` reference is refused again, at registration and
//!   when the environment is rebuilt.
//! - A package on the (local) index with no wheel, only a source archive, is built contained.
//! - A wheel at a URL (served on 127.0.0.1) is not fetched before the allowance, then fetched
//!   through the proxy and pinned to its first download: other content behind the same URL is
//!   refused when the environment is rebuilt.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const KEY_MARK: &str = "toolsmith-fake-key-24b-5150";
const SECRET: &str = "hunter2-direct-reference-secret";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mech {
    Bwrap,
    InProcess,
}

struct Fixture {
    tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    personal: PathBuf,
    pkgs: PathBuf,
    listener: std::net::TcpListener,
}

fn fixture() -> Fixture {
    let (tmp, tb) = toolbox();
    let root = tb.root().to_path_buf();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let key = home.join(".ssh/id_rsa");
    std::fs::write(
        &key,
        format!("-----BEGIN FAKE KEY-----\n{KEY_MARK}\n-----END FAKE KEY-----\n"),
    )
    .unwrap();
    std::fs::write(home.join(".bashrc"), "# the person's own\n").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let pkgs = tmp.path().join("packages");
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/make_packages.py"))
        .arg(&pkgs)
        .arg(&key)
        .arg(listener.local_addr().unwrap().port().to_string())
        .arg(&home)
        .arg(root.join(".git/hooks"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    Fixture {
        personal: tmp.path().join("personal"),
        tmp,
        root,
        home,
        pkgs,
        listener,
    }
}

fn env(cmd: &mut Command, f: &Fixture, mech: Mech) {
    let wheels = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-wheels");
    cmd.env("HOME", &f.home)
        .env("TOOLSMITH_CACHE", f.tmp.path().join("cache"))
        .env("TOOLSMITH_DATA", &f.personal)
        .env("TOOLSMITH_HOME", f.tmp.path().join("toolsmith-home"))
        .env("XDG_DATA_HOME", f.tmp.path().join("xdg-data"))
        // The local index: the packages this test made, and the wheels setup.sh fetched.
        .env(
            "PIP_FIND_LINKS",
            format!("{} {}", f.pkgs.join("links").display(), wheels.display()),
        )
        .env("PIP_NO_INDEX", "1")
        .env("npm_config_cache", f.tmp.path().join("npm-cache"))
        .env("TOOLSMITH_TEST_SECRET_4711", SECRET)
        .env("TOOLSMITH_SPARES", "0")
        .env_remove("TOOLSMITH_ALLOW_UNSANDBOXED")
        .env_remove("TOOLSMITH_SANDBOX_NO_FALLBACK");
    match mech {
        Mech::Bwrap => cmd.env_remove("TOOLSMITH_BWRAP"),
        Mech::InProcess => cmd.env("TOOLSMITH_BWRAP", "/nonexistent/bwrap"),
    };
}

fn toolsmith(f: &Fixture, mech: Mech) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    cmd.arg("--toolbox").arg(&f.root);
    env(&mut cmd, f, mech);
    cmd
}

fn cli(f: &Fixture, mech: Mech, args: &[&str]) -> (bool, String, String) {
    let o = toolsmith(f, mech).args(args).output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// One MCP session through the official Python SDK: each call's `is_error`, text and
/// structured content.
fn mcp(f: &Fixture, mech: Mech, calls: &[Value]) -> Vec<Value> {
    let file = f.tmp.path().join("calls.json");
    std::fs::write(&file, serde_json::to_string(calls).unwrap()).unwrap();
    let mut cmd = Command::new(python());
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/contained_builds.py"))
        .arg("--toolsmith")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(&f.root)
        .arg("--calls")
        .arg(&file);
    env(&mut cmd, f, mech);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{mech:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Vec<Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let all = serde_json::to_string(&r).unwrap();
    assert!(
        !all.contains(KEY_MARK),
        "{mech:?}: the key reached the model: {all}"
    );
    assert!(
        !all.contains(SECRET),
        "{mech:?}: the server's environment reached the model"
    );
    r
}

fn register(name: &str, language: &str, source: &str, deps: Value) -> Value {
    json!({"tool": "register_script", "args": {
        "name": name, "description": "Uses a package from elsewhere", "language": language,
        "protocol": "plain", "source": source, "dependencies": deps,
    }})
}

fn call(name: &str) -> Value {
    json!({"tool": name, "args": {}})
}

/// A Python tool printing the build report of `module` (environment names kept only when
/// they look like the server's secret).
fn report_py(module: &str) -> String {
    format!(
        "import json\nfrom {module}.report import REPORT\nREPORT['env'] = [e for e in REPORT['env'] if 'SECRET' in e]\nprint(json.dumps(REPORT))\n"
    )
}

const REPORT_JS: &str = "const r = require('npmx');\nconsole.log(JSON.stringify({key: r.key, net: r.net, home: r.home, hook: r.hook, env: r.env.filter((e) => e.includes('SECRET'))}));\n";

/// Every attempt of a hostile build or install script, denied.
fn assert_denied(mech: Mech, what: &str, report: &Value) {
    for k in ["key", "net", "home", "hook"] {
        let v = report[k]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: {report}"));
        assert!(v.starts_with("denied"), "{mech:?} {what}: {k} = {v}");
    }
    assert_eq!(report["env"], json!([]), "{mech:?} {what}: {report}");
}

/// The files of a tree, each with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<(PathBuf, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| {
            let bytes = if e.file_type().is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (e.path().to_path_buf(), bytes)
        })
        .collect();
    v.sort();
    v
}

/// One HTTP/1.1 exchange with the console: (status, head, body).
fn http(host: &str, request: String) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The value of the hidden input `name` after `from` on `page`.
fn hidden(page: &str, from: usize, name: &str) -> String {
    let needle = format!("name=\"{name}\" value=\"");
    let at = from
        + page[from..]
            .find(&needle)
            .unwrap_or_else(|| panic!("{name}: {page}"));
    let rest = &page[at + needle.len()..];
    unescape(&rest[..rest.find('"').unwrap()])
}

/// The person allows `tool`'s refused reference on the console's Approvals page: the login
/// link printed by `toolsmith console`, then the page's form (its CSRF token) posted.
fn allow_in_console(f: &Fixture, mech: Mech, tool: &str) -> String {
    let mut child = toolsmith(f, mech)
        .args(["--json", "console", "--no-open"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // `--json` prints {"url", "login"} (over several lines) once it listens.
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut text = String::new();
    let started: Value = loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the console stopped: {text}"
        );
        text.push_str(&line);
        if let Ok(v) = serde_json::from_str(&text) {
            break v;
        }
    };
    let url = started["url"].as_str().unwrap();
    let host = url.trim_start_matches("http://").to_string();
    let login = started["login"].as_str().unwrap().trim_start_matches(url);
    let get = |path: &str, cookie: &str| {
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{cookie}Connection: close\r\n\r\n")
    };
    let (status, head, _) = http(&host, get(login, ""));
    assert_eq!(status, 303, "{head}");
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .unwrap_or_else(|| panic!("a session cookie: {head}"))
        .to_string();
    let with = format!("Cookie: {cookie}\r\n");
    let (status, _, page) = http(&host, get("/approvals", &with));
    assert_eq!(status, 200, "{page}");
    let at = page
        .find(&format!("id=\"reference-{tool}\""))
        .unwrap_or_else(|| panic!("{tool} waits on the page: {page}"));
    assert!(page[at..].contains(&format!("Allow for {tool}")), "{page}");
    let form = |csrf: &str| -> String {
        form_urlencoded::Serializer::new(String::new())
            .append_pair("csrf", csrf)
            .append_pair("tool", &hidden(&page, at, "tool"))
            .append_pair("ecosystem", &hidden(&page, at, "ecosystem"))
            .append_pair("spec", &hidden(&page, at, "spec"))
            .finish()
    };
    let post = |cookie: &str, body: String| {
        format!(
            "POST /references/allow HTTP/1.1\r\nHost: {host}\r\n{cookie}Origin: {url}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    // Without the session, or without its CSRF token: refused, nothing allowed.
    let csrf = hidden(&page, at, "csrf");
    assert_eq!(http(&host, post("", form(&csrf))).0, 401);
    assert_eq!(http(&host, post(&with, form("0000"))).0, 403);
    let (_, out, _) = cli(f, mech, &["--json", "pending"]);
    assert!(
        out.contains(&format!("\"name\": \"{tool}\"")),
        "still waiting: {out}"
    );
    let (status, head, body) = http(&host, post(&with, form(&csrf)));
    assert_eq!(status, 303, "{head}{body}");
    let location = head
        .lines()
        .find_map(|l| l.strip_prefix("location: "))
        .unwrap()
        .to_string();
    let (_, _, page) = http(&host, get(&location, &with));
    let _ = child.kill();
    let _ = child.wait();
    page
}

fn scenario(mech: Mech) {
    let f = fixture();
    let tree = f.pkgs.join("refpkg");
    let tree_before = snapshot(&tree);
    let home_before = snapshot(&f.home);
    let pip_spec = format!("refpkg @ file://{}", tree.display());
    let npm_path = f.pkgs.join("npmx-1.0.0.tgz");
    let npm_spec = format!("file:{}", npm_path.display());
    let pip_tool = register(
        "uses_tree",
        "python",
        &report_py("refpkg"),
        json!({"pip": [pip_spec]}),
    );
    let npm_tool = register(
        "uses_tgz",
        "node",
        REPORT_JS,
        json!({"npm": {"npmx": npm_spec}}),
    );

    // 1. Refused without an allowance, the hint naming the command; an index package that
    // has only a source archive builds contained.
    let r = mcp(
        &f,
        mech,
        &[
            pip_tool.clone(),
            npm_tool.clone(),
            register(
                "uses_sdist",
                "python",
                &report_py("sdonly"),
                json!({"pip": ["sdonly==1.0"]}),
            ),
            call("uses_sdist"),
        ],
    );
    let pip_cmd = format!("toolsmith allow uses_tree pip '{pip_spec}'");
    let npm_cmd = format!("toolsmith allow uses_tgz npm npmx@{npm_spec}");
    for (i, cmd) in [(0, &pip_cmd), (1, &npm_cmd)] {
        assert!(
            r[i]["is_error"].as_bool().unwrap(),
            "{mech:?} {i}: {}",
            r[i]["text"]
        );
        let t = r[i]["text"].as_str().unwrap();
        assert!(
            t.contains("direct reference") && t.contains("not allowed") && t.contains(cmd.as_str()),
            "{mech:?} {i}: {t}"
        );
    }
    assert!(
        !r[2]["is_error"].as_bool().unwrap(),
        "{mech:?}: {}",
        r[2]["text"]
    );
    assert_denied(mech, "the sdist's build", &r[3]["structured"]);
    let lock = std::fs::read_to_string(f.root.join("tools/uses_sdist/requirements.lock")).unwrap();
    assert!(lock.contains("sdonly==1.0"), "{lock}");

    // 2. `toolsmith pending` lists both, with the same commands.
    let (ok, out, err) = cli(&f, mech, &["--json", "pending"]);
    assert!(ok, "{err}");
    let pending: Value = serde_json::from_str(&out).unwrap();
    let allow = |tool: &str| {
        pending
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == tool && p.get("reference").is_some())
            .unwrap_or_else(|| panic!("{tool} in {pending}"))["allow"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(allow("uses_tree"), pip_cmd);
    assert_eq!(allow("uses_tgz"), npm_cmd);

    // 3. The person allows the pip reference with exactly that command, and the npm one in
    // the console.
    let bin = env!("CARGO_BIN_EXE_toolsmith");
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(format!(
        "{bin} --toolbox {} {}",
        f.root.display(),
        pip_cmd.trim_start_matches("toolsmith ")
    ));
    env(&mut sh, &f, mech);
    let o = sh.output().unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("tree-sha256:"),
        "{o:?}"
    );
    let page = allow_in_console(&f, mech, "uses_tgz");
    assert!(page.contains("Allowed npm npmx@file:"), "{page}");

    // 4. Both install and run, contained; get_tool shows the allowance.
    let r = mcp(
        &f,
        mech,
        &[
            pip_tool.clone(),
            call("uses_tree"),
            npm_tool.clone(),
            call("uses_tgz"),
            json!({"tool": "get_tool", "args": {"name": "uses_tree"}}),
        ],
    );
    for i in [0, 2] {
        assert!(
            !r[i]["is_error"].as_bool().unwrap(),
            "{mech:?} {i}: {}",
            r[i]["text"]
        );
    }
    assert_denied(mech, "the source tree's build", &r[1]["structured"]);
    assert_denied(mech, "the npm postinstall", &r[3]["structured"]);
    let refs = &r[4]["structured"]["references"]["allowed"];
    assert_eq!(
        refs[0]["spec"],
        format!("refpkg @ file://{}", tree.display()),
        "{refs}"
    );
    assert!(
        refs[0]["digest"]
            .as_str()
            .unwrap()
            .starts_with("tree-sha256:"),
        "{refs}"
    );
    let lock = std::fs::read_to_string(f.root.join("tools/uses_tree/requirements.lock")).unwrap();
    assert!(
        lock.contains(&format!("refpkg @ file://{}", tree.display())),
        "{lock}"
    );
    assert_eq!(
        snapshot(&tree),
        tree_before,
        "{mech:?}: the person's source tree was written"
    );
    let (ok, out, _) = cli(&f, mech, &["--json", "doctor"]);
    let _ = ok;
    assert!(out.contains("uses_tgz: npm npmx@file:"), "{out}");

    // 5. The source tree changes: refused again, at registration and at a rebuild.
    std::fs::write(tree.join("refpkg/__init__.py"), "ANSWER = 43\n").unwrap();
    std::fs::remove_dir_all(f.root.join(".toolsmith/env/uses_tree")).unwrap();
    let r = mcp(&f, mech, &[pip_tool, call("uses_tree")]);
    for i in [0, 1] {
        assert!(
            r[i]["is_error"].as_bool().unwrap(),
            "{mech:?} {i}: {}",
            r[i]["text"]
        );
        let t = r[i]["text"].as_str().unwrap();
        assert!(
            t.contains("changed since a person allowed it") && t.contains(&pip_cmd),
            "{t}"
        );
    }

    // The CLI's register: the same refusal and hint; `disallow` takes an allowance back.
    let code = f.tmp.path().join("cli.js");
    std::fs::write(&code, REPORT_JS).unwrap();
    let npm_flag = format!("--npm=npmx@{npm_spec}");
    let args = [
        "register",
        "cli_tgz",
        "--language",
        "node",
        "-d",
        "d",
        &npm_flag,
        "--code",
        code.to_str().unwrap(),
    ];
    let (ok, _, err) = cli(&f, mech, &args);
    assert!(
        !ok && err.contains("toolsmith allow cli_tgz npm npmx@file:"),
        "{err}"
    );
    let (ok, _, err) = cli(
        &f,
        mech,
        &["allow", "cli_tgz", "npm", &format!("npmx@{npm_spec}")],
    );
    assert!(ok, "{err}");
    let (ok, _, err) = cli(&f, mech, &args);
    assert!(ok, "{mech:?}: {err}");
    let (ok, out, err) = cli(&f, mech, &["call", "cli_tgz", "--args", "{}"]);
    assert!(ok, "{err}");
    assert_denied(
        mech,
        "the CLI's npm install",
        &serde_json::from_str(&out).unwrap(),
    );
    let (ok, _, err) = cli(
        &f,
        mech,
        &["disallow", "cli_tgz", "npm", &format!("npmx@{npm_spec}")],
    );
    assert!(ok, "{err}");
    let (ok, _, err) = cli(&f, mech, &["call", "cli_tgz", "--args", "{}"]);
    assert!(!ok && err.contains("not allowed"), "taken back: {err}");

    // Nothing escaped: HOME as it was, no hook, the key nowhere, no connection, git clean;
    // every decision audited.
    assert_eq!(snapshot(&f.home), home_before, "{mech:?}: HOME changed");
    assert!(
        !f.root.join(".git/hooks/pre-commit").exists(),
        "{mech:?}: a hook was planted"
    );
    assert!(
        f.listener.accept().is_err(),
        "{mech:?}: the listener was reached"
    );
    let objects = Command::new("git")
        .arg("-C")
        .arg(&f.root)
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .output()
        .unwrap()
        .stdout;
    assert!(
        !objects
            .windows(KEY_MARK.len())
            .any(|w| w == KEY_MARK.as_bytes())
    );
    for e in walkdir::WalkDir::new(&f.root)
        .into_iter()
        .filter_map(Result::ok)
    {
        if e.file_type().is_file() {
            let b = std::fs::read(e.path()).unwrap();
            assert!(
                !b.windows(KEY_MARK.len()).any(|w| w == KEY_MARK.as_bytes()),
                "{mech:?}: the key is in {}",
                e.path().display()
            );
        }
    }
    assert_clean(&f.root);
    let (_, audit, _) = cli(&f, mech, &["--json", "audit"]);
    let audit: Value = serde_json::from_str(&audit).unwrap();
    let vias: Vec<(String, String)> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["event"]
                .as_str()
                .is_some_and(|s| s.starts_with("reference"))
        })
        .map(|e| {
            (
                e["event"].as_str().unwrap().into(),
                e["via"].as_str().unwrap().into(),
            )
        })
        .collect();
    for want in [
        ("reference allowed", "cli"),
        ("reference allowed", "console"),
        ("reference disallowed", "cli"),
    ] {
        assert!(
            vias.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} in {vias:?}"
        );
    }
}

/// Serves the file `file` holds at that moment to every request on 127.0.0.1 (in a thread),
/// counting the requests; returns the port.
fn serve(
    file: std::sync::Arc<std::sync::Mutex<PathBuf>>,
) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let body = std::fs::read(&*file.lock().unwrap()).unwrap();
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(&body);
        }
    });
    (port, hits)
}

/// A wheel at a URL (on 127.0.0.1): refused without an allowance, fetched through the proxy
/// once allowed and pinned to what that first download got; other content at the same URL
/// is refused again.
fn url_reference(mech: Mech) {
    let f = fixture();
    let file = std::sync::Arc::new(std::sync::Mutex::new(
        f.pkgs.join("served/urlpkg-1.0-py3-none-any.whl"),
    ));
    let (port, hits) = serve(file.clone());
    let spec = format!("urlpkg @ http://127.0.0.1:{port}/urlpkg-1.0-py3-none-any.whl");
    let code = f.tmp.path().join("url.py");
    std::fs::write(
        &code,
        "import urlpkg\nprint(\"answer=%d\" % urlpkg.ANSWER)\n",
    )
    .unwrap();
    let pip_flag = format!("--pip={spec}");
    let args = [
        "register",
        "uses_url",
        "--language",
        "python",
        "-d",
        "d",
        &pip_flag,
        "--code",
        code.to_str().unwrap(),
    ];
    let (ok, _, err) = cli(&f, mech, &args);
    let command = format!("toolsmith allow uses_url pip '{spec}'");
    assert!(!ok && err.contains(&command), "{mech:?}: {err}");
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "fetched before allowed"
    );
    let (ok, _, err) = cli(&f, mech, &["allow", "uses_url", "pip", &spec]);
    assert!(ok, "{err}");
    let (ok, _, err) = cli(&f, mech, &args);
    assert!(ok, "{mech:?}: {err}");
    assert!(hits.load(std::sync::atomic::Ordering::SeqCst) >= 1);
    let (ok, out, err) = cli(&f, mech, &["call", "uses_url", "--args", "{}"]);
    assert!(ok && out.contains("answer=1"), "{mech:?}: {out} {err}");
    let (_, doctor, _) = cli(&f, mech, &["--json", "doctor"]);
    assert!(
        doctor.contains("uses_url: pip urlpkg @ http://127.0.0.1"),
        "{doctor}"
    );

    // Other content behind the same URL: the rebuilt environment is refused.
    *file.lock().unwrap() = f.pkgs.join("served-v2/urlpkg-1.0-py3-none-any.whl");
    std::fs::remove_dir_all(f.root.join(".toolsmith/env/uses_url")).unwrap();
    let (ok, _, err) = cli(&f, mech, &["call", "uses_url", "--args", "{}"]);
    assert!(
        !ok && err.contains("changed since a person allowed it") && err.contains(&command),
        "{mech:?}: {err}"
    );
    assert_clean(&f.root);
}

#[test]
fn an_allowed_url_is_pinned_at_its_first_download_under_bubblewrap() {
    url_reference(Mech::Bwrap);
}

#[test]
fn an_allowed_url_is_pinned_at_its_first_download_under_the_in_process_sandbox() {
    url_reference(Mech::InProcess);
}

#[test]
fn allowed_direct_references_and_sdists_install_contained_under_bubblewrap() {
    assert!(
        Command::new("bwrap").arg("--version").output().is_ok(),
        "bubblewrap is not installed: run scripts/setup.sh"
    );
    scenario(Mech::Bwrap);
}

#[test]
fn allowed_direct_references_and_sdists_install_contained_under_the_in_process_sandbox() {
    scenario(Mech::InProcess);
}
