//! History at scale (issue 15): a toolbox of 10,000 tools and 100,000 commits, generated with
//! `git fast-import` and cached under `target/bench-scale/` (a re-run reuses it), then cold
//! index, `tool_history` of one tool (first call on a fresh clone without memo, with and
//! without git's commit-graph, `git log` for reference, a server building the memo at start),
//! `rollback_tool`, `search_tools`, and a server on it: RSS and the first `tools/list`.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use toolsmith::index::Index;
use toolsmith::toolbox::Toolbox;

pub const TOOLS: usize = 10_000;
pub const COMMITS: usize = 100_000;
/// The tool whose history is read: touched every 10,000 commits, so every version is found
/// only by walking the whole history.
pub const PROBE: &str = "tool_04242";

fn tool_name(i: usize) -> String {
    format!("tool_{i:05}")
}

fn manifest(name: &str, i: usize) -> String {
    format!(
        "format = 1\nname = \"{name}\"\ndescription = \"Benchmark tool number {i}: counts words in {} text\"\nkind = \"script\"\ntags = [\"bench\", \"text\", \"t{}\"]\n\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\n\n[input_schema]\ntype = \"object\"\nrequired = [\"text\"]\n[input_schema.properties.text]\ntype = \"string\"\ndescription = \"Input text\"\n",
        ["plain", "rich", "markdown", "html"][i % 4],
        i % 97
    )
}

fn data(out: &mut impl Write, bytes: &[u8]) {
    writeln!(out, "data {}", bytes.len()).unwrap();
    out.write_all(bytes).unwrap();
    writeln!(out).unwrap();
}

/// The generated toolbox (built once, then reused): commit 1 adds 10,000 tools, each later
/// commit changes one tool's `main.py`, cycling through the tools with a stride, in
/// toolsmith's own commit-message format.
pub fn toolbox() -> PathBuf {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-scale");
    let root = base.join("box");
    let done = base.join(format!("complete-{TOOLS}-{COMMITS}-v1"));
    if let Ok(tip) = std::fs::read_to_string(&done) {
        // Back to the generated history: an earlier run committed its rollbacks on top.
        let ok = Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(["reset", "--hard", "-q", tip.trim()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git reset --hard {tip} in {}", root.display());
        return root;
    }
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let t = Instant::now();
    eprintln!(
        "generating {TOOLS} tools and {COMMITS} commits under {} (once)",
        base.display()
    );
    let tb = Toolbox::init(&root, &[], "bench").unwrap();
    let branch = String::from_utf8(
        Command::new("git")
            .arg("-C")
            .arg(tb.root())
            .args(["symbolic-ref", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let mut child = Command::new("git")
        .arg("-C")
        .arg(tb.root())
        .args(["fast-import", "--quiet", "--done"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut w = BufWriter::with_capacity(1 << 20, child.stdin.take().unwrap());
        let when = 1_700_000_000u64;
        writeln!(w, "commit {branch}").unwrap();
        writeln!(w, "committer Bench <bench@example.com> {when} +0000").unwrap();
        data(&mut w, b"add 10000 tools\n\nActor: bench\n");
        writeln!(w, "from {branch}^0").unwrap();
        for i in 0..TOOLS {
            let n = tool_name(i);
            writeln!(w, "M 100644 inline tools/{n}/tool.toml").unwrap();
            data(&mut w, manifest(&n, i).as_bytes());
            writeln!(w, "M 100644 inline tools/{n}/main.py").unwrap();
            data(&mut w, b"import json, sys\nprint(json.dumps({'v': 0}))\n");
        }
        for k in 1..COMMITS {
            let i = (k * 7_919) % TOOLS;
            let n = tool_name(i);
            writeln!(w, "commit {branch}").unwrap();
            writeln!(
                w,
                "committer Bench <bench@example.com> {} +0000",
                when + k as u64
            )
            .unwrap();
            data(
                &mut w,
                format!("write {n}: version {k}\n\nTool: {n}\nActor: bench\n").as_bytes(),
            );
            writeln!(w, "M 100644 inline tools/{n}/main.py").unwrap();
            data(
                &mut w,
                format!("import json, sys\nprint(json.dumps({{'v': {k}}}))\n").as_bytes(),
            );
        }
        writeln!(w, "done").unwrap();
        w.flush().unwrap();
    }
    assert!(child.wait().unwrap().success(), "git fast-import failed");
    let ok = Command::new("git")
        .arg("-C")
        .arg(tb.root())
        .args(["reset", "--hard", "-q"])
        .status()
        .unwrap()
        .success();
    assert!(ok, "git reset --hard");
    let tip = Command::new("git")
        .arg("-C")
        .arg(tb.root())
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap()
        .stdout;
    std::fs::write(&done, tip).unwrap();
    eprintln!("generated in {:.1} s", t.elapsed().as_secs_f64());
    root
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<F: FnMut()>(runs: usize, mut f: F) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// A `toolsmith serve` over stdio, spoken to in raw JSON-RPC.
struct Server {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Server {
    fn spawn(root: &Path) -> Server {
        Server::spawn_with(root, "builtin")
    }

    /// A server whose search uses `embeddings` (`TOOLSMITH_EMBEDDINGS`); its embedding cache
    /// beside the toolbox.
    fn spawn_with(root: &Path, embeddings: &str) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("--toolbox")
            .arg(root)
            .arg("serve")
            .env("TOOLSMITH_EMBEDDINGS", embeddings)
            .env("TOOLSMITH_CACHE", root.parent().unwrap().join("cache"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            stdin,
            stdout,
            next: 1,
        }
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
            let mut line = String::new();
            self.stdout.read_line(&mut line).unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
        }
    }

    fn initialize(&mut self) {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
        );
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
    }

    fn rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The rows printed as they are measured (a long run shows its progress).
struct Rows;

impl Rows {
    fn push(&mut self, row: (String, String, &'static str)) {
        println!("| {} | {} | {} |", row.0, row.1, row.2);
    }
}

/// Measure and print the rows: what, measured, target. `search_only`: just the search and
/// server rows (`TOOLSMITH_BENCH_SCALE=search`).
pub fn rows(search_only: bool) {
    let root = toolbox();
    let mut rows = Rows;
    if !search_only {
        history_rows(&root, &mut rows);
    }
    search_rows(&root, &mut rows);
    if !search_only {
        sync_rows(&root, &mut rows);
    }
}

/// Index and history rows.
fn history_rows(root: &Path, rows: &mut Rows) {
    let root = root.to_path_buf();
    let tb = Toolbox::open(&root).unwrap();

    let cold = time(5, || {
        assert_eq!(Index::build(&root).tools().count(), TOOLS);
    });
    rows.push((
        format!("scale: cold index, {TOOLS} tools / {COMMITS} commits"),
        ms(cold),
        "≤ 1 s",
    ));

    if std::env::var_os("TOOLSMITH_BENCH_SCALE_BASELINE").is_some() {
        // The walk tool_history made before the memo: every commit's tools/ tree read.
        let t = Instant::now();
        let log = toolsmith::git::log(&root, Some(&format!("tools/{PROBE}")), 50).unwrap();
        assert_eq!(log.len(), COMMITS / TOOLS + 1);
        rows.push((
            format!("scale: tool_history {PROBE} by a full walk (before the memo)"),
            ms(t.elapsed()),
            "≤ 100 ms",
        ));
    }
    // A fresh clone: no memo, no commit-graph. Each first call is a new process, so no memo
    // of this one's helps it.
    let memo = root.join(".toolsmith/history-v2.bin");
    let graph = root.join(".git/objects/info/commit-graph");
    let _ = std::fs::remove_file(&graph);
    let _ = std::fs::remove_dir_all(root.join(".git/objects/info/commit-graphs"));
    let cli_history = || {
        let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("--toolbox")
            .arg(&root)
            .args(["history", PROBE, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v.as_array().map(Vec::len), Some(COMMITS / TOOLS + 1));
    };
    let git_log = |label: &str, rows: &mut Rows| {
        let t = Instant::now();
        let out = Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(["log", "--format=%H", "--", &format!("tools/{PROBE}")])
            .output()
            .unwrap();
        assert_eq!(
            out.stdout
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .count(),
            COMMITS / TOOLS + 1
        );
        rows.push((
            format!("scale: `git log -- tools/{PROBE}` ({label}), for reference"),
            ms(t.elapsed()),
            "—",
        ));
    };
    let _ = std::fs::remove_file(&memo);
    let t = Instant::now();
    cli_history();
    rows.push((
        format!("scale: first tool_history {PROBE} on a fresh clone (no memo, no commit-graph; builds the memo)"),
        ms(t.elapsed()),
        "≤ 100 ms",
    ));
    git_log("no commit-graph", rows);
    let t = Instant::now();
    let ok = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["commit-graph", "write", "--reachable", "--changed-paths"])
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git commit-graph write");
    rows.push((
        "scale: `git commit-graph write --reachable --changed-paths`, for reference".into(),
        ms(t.elapsed()),
        "—",
    ));
    git_log("with a commit-graph and Bloom filters", rows);
    let _ = std::fs::remove_file(&memo);
    let t = Instant::now();
    cli_history();
    rows.push((
        format!("scale: first tool_history {PROBE} on a fresh clone with a commit-graph (no memo)"),
        ms(t.elapsed()),
        "≤ 100 ms",
    ));
    let _ = std::fs::remove_file(&graph);
    // A server started on a clone without a memo builds it in the background.
    let _ = std::fs::remove_file(&memo);
    let t = Instant::now();
    let mut s = Server::spawn(&root);
    s.initialize();
    while !memo.exists() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let ready = t.elapsed();
    let t = Instant::now();
    let r = s.request(
        "tools/call",
        json!({"name": "tool_history", "arguments": {"name": PROBE}}),
    );
    assert!(r["result"].is_object(), "{r}");
    let after = t.elapsed();
    rows.push((
        "scale: server start on a fresh clone → history memo ready (background)".into(),
        ms(ready),
        "—",
    ));
    rows.push((
        format!("scale: tool_history {PROBE} over MCP once the memo is ready"),
        ms(after),
        "≤ 100 ms",
    ));
    rows.push((
        "scale: server RSS after building the memo".into(),
        format!("{:.0} MB", s.rss_mb()),
        "≤ 100 MB",
    ));
    drop(s);

    let t = Instant::now();
    let versions = toolsmith::history::tool_history(&tb, PROBE, 50).unwrap();
    let first = t.elapsed();
    assert_eq!(versions.len(), COMMITS / TOOLS + 1, "{PROBE}: {versions:?}");
    rows.push((
        format!("scale: tool_history {PROBE}, first call in a process (memo on disk)"),
        ms(first),
        "≤ 100 ms",
    ));
    let again = time(3, || {
        let v = toolsmith::history::tool_history(&tb, PROBE, 50).unwrap();
        assert_eq!(v.len(), versions.len());
    });
    rows.push((
        format!("scale: tool_history {PROBE}, memo in memory"),
        ms(again),
        "≤ 100 ms",
    ));

    let cli = time(5, || {
        let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("--toolbox")
            .arg(&root)
            .args(["history", PROBE, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success());
    });
    rows.push((
        format!("scale: `toolsmith history {PROBE}` (new process, memo on disk)"),
        ms(cli),
        "≤ 100 ms",
    ));

    let old = versions.last().unwrap().commit.clone();
    let newest = versions.first().unwrap().commit.clone();
    let mut flip = false;
    let rollback = time(5, || {
        flip = !flip;
        let rev = if flip { &old } else { &newest };
        let out = toolsmith::history::rollback_tool(&tb, PROBE, rev, "bench").unwrap();
        assert!(out.commit.is_some());
    });
    rows.push((
        format!("scale: rollback_tool {PROBE}"),
        ms(rollback),
        "≤ 200 ms",
    ));
    let t = Instant::now();
    toolsmith::history::tool_history(&tb, PROBE, 50).unwrap();
    let after = t.elapsed();
    rows.push((
        format!("scale: tool_history {PROBE} after the rollbacks (memo catches up)"),
        ms(after),
        "≤ 100 ms",
    ));
}

/// search_tools in the library and over MCP, and the server's memory.
fn search_rows(root: &Path, rows: &mut Rows) {
    let root = root.to_path_buf();
    let index = Index::build(&root);
    let off = toolsmith::search::Semantic::off();
    let lexical = time(21, || {
        let hits = toolsmith::search::search(&index, &off, "markdown words", 10);
        assert_eq!(hits.results.len(), 10);
    });
    rows.push((
        format!("scale: search_tools, {TOOLS} tools, lexical only (library)"),
        ms(lexical),
        "",
    ));
    let cache = tempfile::tempdir().unwrap();
    let builtin = toolsmith::search::Semantic::new(
        toolsmith::config::Embeddings::Builtin,
        cache.path(),
        Some(cache.path()),
    );
    let t = Instant::now();
    builtin.prepare(index.search_index());
    rows.push((
        format!("scale: embed {TOOLS} tools with the built-in table (library, cold cache)"),
        ms(t.elapsed()),
        "≤ 2 s",
    ));
    let again = toolsmith::search::Semantic::new(
        toolsmith::config::Embeddings::Builtin,
        cache.path(),
        Some(cache.path()),
    );
    let t = Instant::now();
    again.prepare(index.search_index());
    rows.push((
        format!("scale: load {TOOLS} tools' vectors from the embedding cache (library)"),
        ms(t.elapsed()),
        "",
    ));
    let search = time(21, || {
        let hits = toolsmith::search::search(&index, &builtin, "markdown words", 10);
        assert!(hits.ranking.starts_with("hybrid"), "{}", hits.ranking);
        assert_eq!(hits.results.len(), 10);
    });
    rows.push((
        format!("scale: search_tools, {TOOLS} tools, hybrid with the built-in table (library)"),
        ms(search),
        "≤ 5 ms",
    ));
    let other_words = time(21, || {
        let hits =
            toolsmith::search::search(&index, &builtin, "how many terms are in my notes", 10);
        assert_eq!(hits.results.len(), 10);
    });
    rows.push((
        format!("scale: search_tools, {TOOLS} tools, hybrid, a query in other words (library)"),
        ms(other_words),
        "≤ 5 ms",
    ));
    drop((builtin, again, index));

    let mut firsts = Vec::new();
    let mut rss = 0.0;
    let mut mcp_search = Vec::new();
    let search_call = json!({"name": "search_tools", "arguments": {"query": "markdown words"}});
    for _ in 0..3 {
        let t = Instant::now();
        let mut s = Server::spawn(&root);
        s.initialize();
        let list = s.request("tools/list", json!({}));
        firsts.push(t.elapsed());
        assert!(
            list["result"]["tools"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        );
        // The embeddings are made in the background; time searches once they are all there.
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let r = s.request("tools/call", search_call.clone());
            let ranking = r["result"]["structuredContent"]["ranking"]
                .as_str()
                .unwrap_or("");
            if ranking.starts_with("hybrid") && !ranking.contains("so far") {
                break;
            }
            assert!(Instant::now() < deadline, "embeddings never complete: {r}");
            std::thread::sleep(Duration::from_millis(100));
        }
        for _ in 0..11 {
            let t = Instant::now();
            let r = s.request("tools/call", search_call.clone());
            mcp_search.push(t.elapsed());
            assert!(r["result"].is_object(), "{r}");
        }
        std::thread::sleep(Duration::from_secs(1));
        rss = f64::max(rss, s.rss_mb());
    }
    rows.push((
        format!("scale: spawn → first tools/list answered, {TOOLS} tools"),
        ms(median(firsts)),
        "≤ 100 ms",
    ));
    rows.push((
        format!("scale: search_tools over MCP (round trip, hybrid), {TOOLS} tools"),
        ms(median(mcp_search)),
        "≤ 5 ms",
    ));
    rows.push((
        format!("scale: server RSS, {TOOLS} tools (after list and searches)"),
        format!("{rss:.0} MB"),
        "≤ 100 MB",
    ));
    // The same server with semantic search off: what the embeddings cost in memory.
    let mut s = Server::spawn_with(&root, "none");
    s.initialize();
    s.request("tools/list", json!({}));
    for _ in 0..11 {
        s.request("tools/call", search_call.clone());
    }
    std::thread::sleep(Duration::from_secs(1));
    let lexical_rss = s.rss_mb();
    drop(s);
    rows.push((
        format!("scale: server RSS growth from the built-in embeddings, {TOOLS} tools"),
        format!(
            "{:.0} MB ({rss:.0} vs {lexical_rss:.0} lexical only)",
            rss - lexical_rss
        ),
        "≤ 30 MB",
    ));
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `sync` of one changed tool between two clones of the generated toolbox through a bare
/// repository: a teammate's change pulled (fetch, fast-forward, work tree and index updated,
/// the new version's trust judged), and a change of this clone pushed.
fn sync_rows(root: &Path, rows: &mut Rows) {
    use toolsmith::sync::{SyncRequest, sync};
    let base = root.parent().unwrap().join("sync");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let remote = base.join("remote.git");
    let (here, there) = (base.join("here"), base.join("there"));
    let s = |p: &Path| p.to_string_lossy().into_owned();
    git(
        &base,
        &["clone", "-q", "--bare", "--local", &s(root), &s(&remote)],
    );
    for clone in [&here, &there] {
        git(&base, &["clone", "-q", "--local", &s(&remote), &s(clone)]);
        git(clone, &["config", "user.name", "Bench"]);
        git(clone, &["config", "user.email", "bench@example.com"]);
    }
    let tb = Toolbox::open(&here).unwrap();
    let actor = toolsmith::toolbox::Actor::from("bench");
    // One commit changing tool `i` in `clone`, in toolsmith's message format.
    let change = |clone: &Path, i: usize, k: usize| {
        let n = tool_name(i);
        std::fs::write(
            clone.join("tools").join(&n).join("main.py"),
            format!("import json, sys\nprint(json.dumps({{'sync': {k}}}))\n"),
        )
        .unwrap();
        git(clone, &["add", "-A", "tools"]);
        git(
            clone,
            &[
                "commit",
                "-q",
                "-m",
                &format!("write {n}: sync {k}\n\nTool: {n}\nActor: bench\n"),
            ],
        );
        n
    };
    let mut k = 0;
    let mut pulled = Vec::new();
    for _ in 0..5 {
        k += 1;
        let name = change(&there, 17 + k, k);
        git(&there, &["push", "-q", "origin", "HEAD"]);
        let t = Instant::now();
        let out = sync(&tb, &SyncRequest::default(), &actor).unwrap();
        let d = t.elapsed();
        assert_eq!(out.action, "fast-forward", "{out:?}");
        assert_eq!(out.changed_tools, vec![name]);
        pulled.push(d);
    }
    rows.push((
        "scale: sync pulling one changed tool (fetch, fast-forward)".into(),
        ms(median(pulled)),
        "≤ 300 ms",
    ));
    let mut pushed = Vec::new();
    for _ in 0..5 {
        k += 1;
        change(&here, 4_000 + k, k);
        let t = Instant::now();
        let out = sync(&tb, &SyncRequest::default(), &actor).unwrap();
        let d = t.elapsed();
        assert_eq!(out.action, "pushed", "{out:?}");
        assert!(out.pushed);
        pushed.push(d);
    }
    rows.push((
        "scale: sync pushing one changed tool".into(),
        ms(median(pushed)),
        "≤ 300 ms",
    ));
    assert_eq!(git(&here, &["status", "--porcelain"]), "");
}
