//! Script call latency through MCP (a real `toolsmith serve` over stdio, raw JSON-RPC) with the
//! sandbox on, beside the bare interpreter start measured in the same run:
//! - a fresh echo call in Python, Node, Ruby, Bash, Perl and PHP, through a waiting spare (calls
//!   spaced 300 ms apart, one per request as an AI calls, so the replacement spare is up), and
//!   the same without spares (`TOOLSMITH_SPARES=0`: every call starts its process);
//! - Bash with builtins only (no `cat`: what a Bash call costs apart from starting a program);
//! - Python back to back (no pause: the next call waits for the spare still starting), and
//!   under the in-process sandbox (`TOOLSMITH_BWRAP=/nonexistent`);
//! - a burst of 20 concurrent calls to one tool (p50/p95);
//! - the resident memory of each waiting spare (all its processes: sandbox and interpreter);
//! - call rates (issue 27): Python, Node and Bash echo calls spaced 300, 150 and 80 ms apart
//!   and back to back (p50/p90/p95), a burst of 20 concurrent calls, the first call after a
//!   restart of a server whose toolbox had used the tool, and the memory of what waits
//!   between calls, under bubblewrap and with it hidden (the in-process sandbox);
//! - first calls (issue 41), Python, beside a bare `python3 -c 'import json,sys'` start measured
//!   in the same run: the first call right after a restart (the client calls at once, before
//!   any pre-start), the first call after the pre-start finished, the first call of a tool just
//!   registered over MCP (and the registration), and 200 calls back to back (after 10), under
//!   both mechanisms.
//!
//! - Skillz, a peer, with the same Python echo (`-- skillz`, with `BENCH_SKILLZ_BIN=PATH`): the
//!   first call after a restart, the first calls of a tool just registered, back to back.
//!
//! Run with `cargo bench --bench scripts` (every table), `-- langs`, `-- rates` or `-- first`
//! (one; `-- rates python node`: those languages only);
//! prints tables. `BENCH_TOOLSMITH_BIN=PATH` runs another build of the server (the code
//! before a change) through the same bench.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};
use toolsmith::app::App;
use toolsmith::register::{self, ScriptSpec};
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::{Actor, Toolbox};

const PAUSE: Duration = Duration::from_millis(300);

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    fn spawn(toolbox: &Path, cache: &Path, env: &[(&str, &str)]) -> Server {
        // BENCH_TOOLSMITH_BIN: another build of the server (the code before a change).
        let bin = std::env::var_os("BENCH_TOOLSMITH_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_toolsmith").into());
        let mut cmd = Command::new(bin);
        cmd.arg("--toolbox")
            .arg(toolbox)
            .arg("serve")
            .env("TOOLSMITH_CACHE", cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // BENCH_SERVER_LOG=FILE: the servers' stderr appended there (with TOOLSMITH_LOG).
        if let Some(f) = std::env::var_os("BENCH_SERVER_LOG") {
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(f)
                .expect("the server log");
            cmd.stderr(log);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        Server::start(cmd)
    }

    /// Start `cmd` (an MCP server over stdio) and go through the initialize handshake.
    fn start(mut cmd: Command) -> Server {
        let mut child = cmd.spawn().expect("spawn the server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Server {
            child,
            stdin: Some(stdin),
            stdout,
            next: 1,
        };
        s.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}));
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().expect("the server's stdin is open");
        writeln!(stdin, "{v}").expect("write");
        stdin.flush().expect("flush");
    }

    fn read(&mut self) -> Value {
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "the server closed its stdout");
            // A peer's own debug line on stdout (Skillz prints some) is not a message.
            match serde_json::from_str(&line) {
                Ok(v) => return v,
                Err(_) if !line.trim_start().starts_with('{') => continue,
                Err(e) => panic!("bad line {line:?}: {e}"),
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self.read();
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
        }
    }

    fn call(&mut self, tool: &str, i: usize) -> Duration {
        let t = Instant::now();
        let r = self.request(
            "tools/call",
            json!({"name": tool, "arguments": {"text": format!("hi {i}")}}),
        );
        let d = t.elapsed();
        check(tool, &r);
        d
    }

    /// `n` calls, each after `pause` (and one first call to start the tool's spare).
    fn calls(&mut self, tool: &str, n: usize, pause: Duration) -> Vec<Duration> {
        self.call(tool, 0);
        (0..n)
            .map(|i| {
                std::thread::sleep(pause);
                self.call(tool, i)
            })
            .collect()
    }

    /// `n` calls sent at once; each one's time from the send to its response.
    fn burst(&mut self, tool: &str, n: usize) -> Vec<Duration> {
        let t = Instant::now();
        let first = self.next;
        for i in 0..n {
            let id = self.next;
            self.next += 1;
            self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {"text": format!("hi {i}")}}}));
        }
        let mut out = Vec::new();
        while out.len() < n {
            let v = self.read();
            if v.get("id")
                .and_then(Value::as_u64)
                .is_some_and(|id| id >= first)
            {
                check(tool, &v);
                out.push(t.elapsed());
            }
        }
        out
    }
}

impl Server {
    /// Stop as a client leaving does: stdin closed, the server exits (and writes what it
    /// remembers, such as the tools' use).
    fn stop(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn check(tool: &str, r: &Value) {
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        r["result"]["isError"] != json!(true) && text.contains("hi"),
        "{tool}: {r}"
    );
}

fn template_helper(lang: &str, file: &str, marker: &str) -> String {
    let t = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("templates/{lang}/{file}")),
    )
    .expect("the template");
    t[t.find(marker).expect("helper")..].to_string()
}

async fn add(app: &App, v: Value) {
    let spec: ScriptSpec = serde_json::from_value(v).expect("spec");
    register::register(app, &spec, &Actor::from("bench"), &NoHost, &|_, _, _| {})
        .await
        .expect("register");
}

fn register_tools(root: &Path) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let tb = Toolbox::init(root, &[], "bench").expect("toolbox");
    let app = App::new(tb, toolsmith::config::Config::from_env().expect("config"));
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let py = format!(
        "def run(args, ctx):\n    return {{\"echo\": args.get(\"text\")}}\n{}",
        template_helper("python", "main.py", "# --- toolsmith jsonrpc helper")
    );
    let js = format!(
        "'use strict';\nasync function run(args) {{ return {{ echo: args.text }}; }}\n{}",
        template_helper("node", "main.js", "// --- toolsmith jsonrpc helper")
    );
    let rb = format!(
        "require 'json'\ndef run(args, _ctx)\n  {{ 'echo' => args['text'] }}\nend\n{}",
        template_helper("ruby", "main.rb", "# --- toolsmith jsonrpc helper")
    );
    let pl = "use JSON::PP;\nmy $a = decode_json(do { local $/; <STDIN> });\nprint encode_json({echo => $a->{text}}), \"\\n\";\n";
    let php = "<?php $a = json_decode(stream_get_contents(STDIN), true); echo json_encode(['echo' => $a['text']]), \"\\n\";\n";
    rt.block_on(async {
        for (name, lang, protocol, code) in [
            ("py_echo", "python", "jsonrpc", py.as_str()),
            ("js_echo", "node", "jsonrpc", js.as_str()),
            ("rb_echo", "ruby", "jsonrpc", rb.as_str()),
            ("sh_echo", "bash", "plain", "cat\n"),
            // The same without starting a program: what a Bash call costs apart from `cat`.
            ("sh_echo_builtin", "bash", "plain", "IFS= read -r -d '' input\nprintf '%s\\n' \"$input\"\n"),
            ("pl_echo", "perl", "plain", pl),
            ("php_echo", "php", "plain", php),
        ] {
            add(&app, json!({"name": name, "language": lang, "protocol": protocol, "description": "echo", "code": code, "input_schema": schema})).await;
        }
    });
}

fn bare(cmd: &[String], n: usize) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            let s = Command::new(&cmd[0])
                .args(&cmd[1..])
                .stdin(Stdio::null())
                .status()
                .expect("runs");
            assert!(s.success(), "{cmd:?}");
            t.elapsed()
        })
        .collect()
}

fn pct(v: &[Duration], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0
}

/// Resident memory of every process under `pid` (children first), by each direct child: its
/// total RSS in KiB and the name of its deepest process (the interpreter).
fn spare_rss(server: u32) -> Vec<(String, u64)> {
    let mut parent: HashMap<u32, u32> = HashMap::new();
    let mut info: HashMap<u32, (String, u64)> = HashMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
        let field = |k: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
        let ppid = field("PPid:").and_then(|v| v.parse().ok()).unwrap_or(0);
        let rss = field("VmRSS:")
            .and_then(|v| v.trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0);
        parent.insert(pid, ppid);
        info.insert(pid, (field("Name:").unwrap_or_default(), rss));
    }
    let mut out = Vec::new();
    for (&child, _) in parent.iter().filter(|(_, p)| **p == server) {
        // Every process whose chain of parents reaches `child`.
        let mut total = 0;
        let mut deepest = (0usize, String::new());
        for (&pid, (name, rss)) in &info {
            let mut p = pid;
            let mut depth = 0;
            while p != child && p > 1 && depth < 64 {
                p = parent.get(&p).copied().unwrap_or(0);
                depth += 1;
            }
            if p == child {
                total += rss;
                if depth >= deepest.0 {
                    deepest = (depth, name.clone());
                }
            }
        }
        out.push((deepest.1, total));
    }
    out.sort();
    out
}

/// The row label of a spacing between calls.
fn spacing(pause: Duration) -> String {
    if pause.is_zero() {
        "back to back".into()
    } else {
        format!("{} ms apart", pause.as_millis())
    }
}

/// One server per language and mechanism: calls at each spacing (after one call that starts
/// what the tool keeps waiting), a burst of 20, the memory of what then waits; then the first
/// call after each of `restarts` restarts (the toolbox remembers the tool was used).
fn rates(root: &Path, cache: &Path, langs: &[String]) {
    const SPACINGS: [(u64, usize); 4] = [(300, 100), (150, 100), (80, 200), (0, 200)];
    let mut rows: Vec<(String, Vec<Duration>)> = Vec::new();
    let mut memory: Vec<(String, Vec<(String, u64)>)> = Vec::new();
    let mechanisms: [(&str, &[(&str, &str)]); 2] = [
        ("bubblewrap", &[]),
        ("in-process", &[("TOOLSMITH_BWRAP", "/nonexistent/bwrap")]),
    ];
    for (mech, env) in mechanisms {
        for (lang, tool) in [
            ("python", "py_echo"),
            ("node", "js_echo"),
            ("bash", "sh_echo"),
        ] {
            if !langs.is_empty() && !langs.iter().any(|l| l == lang) {
                continue;
            }
            let mut s = Server::spawn(root, cache, env);
            for (ms, n) in SPACINGS {
                let pause = Duration::from_millis(ms);
                let v = s.calls(tool, n, pause);
                rows.push((format!("{lang}, {mech}, {}", spacing(pause)), v));
            }
            std::thread::sleep(Duration::from_secs(1));
            let mut b = Vec::new();
            for _ in 0..3 {
                b.extend(s.burst(tool, 20));
                std::thread::sleep(Duration::from_millis(500));
            }
            rows.push((format!("{lang}, {mech}, 20 concurrent (3 bursts)"), b));
            std::thread::sleep(Duration::from_secs(2));
            memory.push((format!("{lang}, {mech}"), spare_rss(s.child.id())));
            s.stop();
            // Restarts: the first call of a server that starts on a toolbox where the tool was
            // used (its client lists the tools first, then calls after a pause, as a person
            // would; the server's start-up work is over by then).
            let mut first = Vec::new();
            for _ in 0..8 {
                let mut s = Server::spawn(root, cache, env);
                s.request("tools/list", json!({}));
                std::thread::sleep(Duration::from_millis(1500));
                first.push(s.call(tool, 0));
                s.stop();
            }
            rows.push((format!("{lang}, {mech}, first call after a restart"), first));
        }
    }
    println!("\ncall rates through MCP (stdio, `toolsmith serve`), echo tools");
    println!(
        "{:<52} {:>5} {:>8} {:>8} {:>8}",
        "case", "calls", "p50 ms", "p90 ms", "p95 ms"
    );
    for (name, v) in &rows {
        println!(
            "{:<52} {:>5} {:>8.2} {:>8.2} {:>8.2}",
            name,
            v.len(),
            pct(v, 0.5),
            pct(v, 0.9),
            pct(v, 0.95)
        );
    }
    println!(
        "\nresident memory of what waits between calls (after the rows above), per process tree:"
    );
    for (case, trees) in memory {
        let total: u64 = trees.iter().map(|(_, k)| k).sum();
        let each: Vec<String> = trees
            .iter()
            .map(|(n, k)| format!("{n} {:.1}", *k as f64 / 1024.0))
            .collect();
        println!(
            "  {case:<24} {:>7.1} MiB in all: {}",
            total as f64 / 1024.0,
            each.join(", ")
        );
    }
}

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("box");
    register_tools(&root);
    let cache = tmp.path().join("cache");
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a == "langs" || a == "rates" || a == "first" || a == "skillz")
        .collect();
    let wants = |s: &str| only.is_empty() || only.iter().any(|o| o == s);
    if wants("langs") {
        langs(&root, &cache);
    }
    if wants("rates") {
        // `-- rates python node`: only those languages.
        let langs: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| ["python", "node", "bash"].contains(&a.as_str()))
            .collect();
        rates(&root, &cache, &langs);
    }
    if wants("first") {
        first_calls(&root, &cache);
    }
    // Skillz beside it (issue 41): `BENCH_SKILLZ_BIN=PATH cargo bench --bench scripts -- first
    // skillz` (Skillz 0.8.4: `cargo install skillz --version 0.8.4 --root DIR`).
    if only.iter().any(|o| o == "skillz") {
        match std::env::var_os("BENCH_SKILLZ_BIN") {
            Some(bin) => skillz(Path::new(&bin)),
            None => panic!("`-- skillz` needs BENCH_SKILLZ_BIN=PATH (the skillz binary)"),
        }
    }
}

/// The same Python echo measured through Skillz, a peer that starts a process per call: the
/// first call right after a restart, the first and second call of a tool just registered
/// over MCP, and 200 calls back to back (after 10), beside a bare interpreter start.
fn skillz(bin: &Path) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tools = tmp.path().join("tools");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&tools).expect("tools dir");
    std::fs::create_dir_all(&home).expect("home");
    let spawn = || {
        let mut cmd = Command::new(bin);
        cmd.env("TOOLS_DIR", &tools)
            .env("HOME", &home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        Server::start(cmd)
    };
    let code = "import json, sys\nreq = json.loads(sys.stdin.readline())\nprint(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'result': {'echo': req['params']['arguments'].get('text')}}))\nsys.stdout.flush()\n";
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    // The real interpreter, as toolsmith's runners resolve it (through a version manager's
    // shim, every start of Skillz's would cost the shim's ~100 ms more here).
    let python = toolsmith::sandbox::interp::resolve("python3")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| "python3".into());
    let register = |s: &mut Server, name: &str| {
        let r = s.request(
            "tools/call",
            json!({"name": "register_script", "arguments": {
                "name": name, "description": "echo", "code": code, "interpreter": python,
                "extension": "py", "input_schema": schema}}),
        );
        assert!(
            r["result"]["isError"] != json!(true),
            "register {name}: {r}"
        );
    };
    let mut rows: Vec<(String, Vec<Duration>)> = Vec::new();
    rows.push((
        "bare python3 -c 'import json,sys'".into(),
        bare(&[python.clone(), "-c".into(), "import json,sys".into()], 20),
    ));
    let mut s = spawn();
    register(&mut s, "py_echo");
    s.call("py_echo", 0);
    s.stop();
    let mut at_once = Vec::new();
    for _ in 0..10 {
        let mut s = spawn();
        at_once.push(s.call("py_echo", 0));
        s.stop();
    }
    rows.push(("skillz, first call right after a restart".into(), at_once));
    let mut s = spawn();
    let (mut reg, mut first, mut second) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..10 {
        let name = format!("py_new_{i}");
        let t = Instant::now();
        register(&mut s, &name);
        reg.push(t.elapsed());
        first.push(s.call(&name, 0));
        second.push(s.call(&name, 1));
    }
    rows.push(("skillz, register_script".into(), reg));
    rows.push(("skillz, first call after register_script".into(), first));
    rows.push(("skillz, second call after register_script".into(), second));
    s.calls("py_echo", 9, Duration::ZERO);
    let b2b = s.calls("py_echo", 200, Duration::ZERO);
    rows.push(("skillz, back to back (200, after 10)".into(), b2b));
    s.stop();
    let title = format!(
        "Skillz ({}), the same Python echo through MCP (stdio)",
        bin.display()
    );
    print_rows(&title, &rows);
}

/// The first calls of a Python tool (issue 41) and back to back, per mechanism, each beside a
/// bare interpreter start measured right before it.
fn first_calls(root: &Path, cache: &Path) {
    let python = toolsmith::sandbox::interp::resolve("python3")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| "python3".into());
    let bare_cmd = [python, "-c".into(), "import json,sys".into()];
    let mechanisms: [(&str, &[(&str, &str)]); 2] = [
        ("bubblewrap", &[]),
        ("in-process", &[("TOOLSMITH_BWRAP", "/nonexistent/bwrap")]),
    ];
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let py = format!(
        "def run(args, ctx):\n    return {{\"echo\": args.get(\"text\")}}\n{}",
        template_helper("python", "main.py", "# --- toolsmith jsonrpc helper")
    );
    let mut rows: Vec<(String, Vec<Duration>)> = Vec::new();
    for (round, (mech, env)) in mechanisms.into_iter().enumerate() {
        // The tool was used: a restarted server pre-starts it.
        let mut s = Server::spawn(root, cache, env);
        s.call("py_echo", 0);
        s.stop();
        rows.push((
            format!("bare python3 -c 'import json,sys' ({mech} rows)"),
            bare(&bare_cmd, 20),
        ));
        // A client that starts the server and calls at once (no tools/list first).
        let mut at_once = Vec::new();
        for _ in 0..10 {
            let mut s = Server::spawn(root, cache, env);
            at_once.push(s.call("py_echo", 0));
            s.stop();
        }
        rows.push((
            format!("python, {mech}, first call right after a restart"),
            at_once,
        ));
        // The client lists the tools, pauses, calls: the pre-start is over.
        let mut after = Vec::new();
        for _ in 0..10 {
            let mut s = Server::spawn(root, cache, env);
            s.request("tools/list", json!({}));
            std::thread::sleep(Duration::from_millis(1500));
            after.push(s.call("py_echo", 0));
            s.stop();
        }
        rows.push((
            format!("python, {mech}, first call after the pre-start"),
            after,
        ));
        rows.push((
            format!("bare python3 -c 'import json,sys' ({mech}, again)"),
            bare(&bare_cmd, 20),
        ));
        // A tool registered over MCP (one example), then called at once; in a toolbox of its
        // own, so the tools registered here are not pre-started by the restarts above.
        let reg = root.with_file_name(format!("box-register-{round}"));
        Toolbox::init(&reg, &[], "bench").expect("toolbox");
        let mut s = Server::spawn(&reg, cache, env);
        let (mut register, mut first, mut second) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..10 {
            let name = format!("py_new_{round}_{i}");
            let t = Instant::now();
            let r = s.request(
                "tools/call",
                json!({"name": "register_script", "arguments": {
                    "name": name, "language": "python", "protocol": "jsonrpc",
                    "description": "echo", "source": py, "input_schema": schema,
                    "examples": [{"input": {"text": "hi"}, "output": {"echo": "hi"}}]}}),
            );
            register.push(t.elapsed());
            assert!(
                r["result"]["isError"] != json!(true),
                "register {name}: {r}"
            );
            first.push(s.call(&name, 0));
            second.push(s.call(&name, 1));
        }
        rows.push((
            format!("python, {mech}, register_script (one example)"),
            register,
        ));
        rows.push((
            format!("python, {mech}, first call after register_script"),
            first,
        ));
        rows.push((
            format!("python, {mech}, second call after register_script"),
            second,
        ));
        s.stop();
        // Back to back: 10 calls, then 200 measured.
        let mut s = Server::spawn(root, cache, env);
        s.calls("py_echo", 9, Duration::ZERO);
        let b2b = s.calls("py_echo", 200, Duration::ZERO);
        rows.push((format!("python, {mech}, back to back (200, after 10)"), b2b));
        s.stop();
    }
    print_rows(
        "first calls and back to back through MCP (stdio, `toolsmith serve`), Python echo",
        &rows,
    );
}

/// A table of cases: calls, p50, p90 and p95 in milliseconds.
fn print_rows(title: &str, rows: &[(String, Vec<Duration>)]) {
    println!("\n{title}");
    println!(
        "{:<60} {:>5} {:>8} {:>8} {:>8}",
        "case", "calls", "p50 ms", "p90 ms", "p95 ms"
    );
    for (name, v) in rows {
        println!(
            "{:<60} {:>5} {:>8.2} {:>8.2} {:>8.2}",
            name,
            v.len(),
            pct(v, 0.5),
            pct(v, 0.9),
            pct(v, 0.95)
        );
    }
}

/// The table per language: a call through a spare, without spares, the bare start.
fn langs(root: &Path, cache: &Path) {
    let config = toolsmith::config::Config::from_env().expect("config");
    let mechanism =
        toolsmith::sandbox::choose(toolsmith::manifest::SandboxMode::Required, &config.sandbox)
            .map(|m| m.as_str())
            .unwrap_or("unavailable");
    let resolve = |c: &str| {
        toolsmith::sandbox::interp::resolve(c)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| c.to_string())
    };
    let langs: [(&str, &str, Vec<String>, &str); 6] = [
        (
            "python",
            "py_echo",
            vec![resolve("python3"), "-u".into(), "-c".into(), "pass".into()],
            "≤ 5",
        ),
        (
            "node",
            "js_echo",
            vec![resolve("node"), "-e".into(), "0".into()],
            "≤ 8",
        ),
        (
            "ruby",
            "rb_echo",
            vec![resolve("ruby"), "-e".into(), "0".into()],
            "≤ 8",
        ),
        (
            "bash",
            "sh_echo",
            vec![resolve("bash"), "-c".into(), "true".into()],
            "≤ 3",
        ),
        (
            "perl",
            "pl_echo",
            vec![resolve("perl"), "-e".into(), "0".into()],
            "≤ 8",
        ),
        (
            "php",
            "php_echo",
            vec![resolve("php"), "-r".into(), "".into()],
            "≤ 8",
        ),
    ];
    let mut rows: Vec<(String, Vec<Duration>, &str)> = Vec::new();
    let rss;
    {
        let mut s = Server::spawn(root, cache, &[]);
        for (lang, tool, cmd, target) in &langs {
            let name = Path::new(&cmd[0])
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            rows.push((
                format!("{name} {} (bare start, no sandbox)", cmd[1..].join(" ")),
                bare(cmd, 20),
                "",
            ));
            rows.push((
                format!("{lang} echo via MCP, fresh process (spare)"),
                s.calls(tool, 20, PAUSE),
                target,
            ));
        }
        rows.push((
            "bash echo via MCP, builtins only (no `cat`), spare".into(),
            s.calls("sh_echo_builtin", 20, PAUSE),
            "",
        ));
        rows.push((
            "python echo via MCP, back to back".into(),
            s.calls("py_echo", 20, Duration::ZERO),
            "",
        ));
        std::thread::sleep(Duration::from_secs(1));
        rss = spare_rss(s.child.id());
        std::thread::sleep(PAUSE);
        let b = s.burst("py_echo", 20);
        rows.push((
            "python echo via MCP, burst of 20 concurrent".into(),
            b,
            "p95 ≤ 3× p50",
        ));
    }
    {
        let mut s = Server::spawn(root, cache, &[("TOOLSMITH_SPARES", "0")]);
        for (lang, tool, _, _) in &langs {
            rows.push((
                format!("{lang} echo via MCP, no spares (cold start)"),
                s.calls(tool, 10, Duration::ZERO),
                "",
            ));
        }
        let b = s.burst("py_echo", 20);
        rows.push(("python echo via MCP, burst of 20, no spares".into(), b, ""));
    }
    {
        let mut s = Server::spawn(root, cache, &[("TOOLSMITH_BWRAP", "/nonexistent/bwrap")]);
        rows.push((
            "python echo via MCP, spare, in-process sandbox".into(),
            s.calls("py_echo", 20, PAUSE),
            "",
        ));
    }
    println!("script calls through MCP (stdio, `toolsmith serve`), sandbox: {mechanism}");
    println!(
        "{:<58} {:>5} {:>8} {:>8}  target ms",
        "case", "calls", "p50 ms", "p95 ms"
    );
    for (name, v, target) in &rows {
        println!(
            "{:<58} {:>5} {:>8.2} {:>8.2}  {}",
            name,
            v.len(),
            pct(v, 0.5),
            pct(v, 0.95),
            target
        );
    }
    println!("\nresident memory of each waiting spare (sandbox + interpreter processes):");
    for (name, kib) in rss {
        println!("  {:<12} {:>7.1} MiB", name, kib as f64 / 1024.0);
    }
}
