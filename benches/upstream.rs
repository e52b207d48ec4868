//! Other MCP servers as toolsmith tools (issue 28), with raw JSON-RPC over stdio; prints a
//! table. Run: `cargo bench --bench upstream` (needs the packages scripts/setup.sh pre-fetches).
//!
//! The first call of an upstream tool after `serve` starts (cold: its server starts in the
//! sandbox), a warm `everything__echo` call through toolsmith beside the same call made to the
//! same server started directly over stdio (the difference is what toolsmith adds), and
//! tools/list with 5 upstream servers in the toolbox.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Peer {
    fn spawn(mut cmd: Command) -> Peer {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut p = Peer {
            child,
            stdin,
            stdout,
            next: 1,
        };
        p.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}));
        writeln!(
            p.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        p
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
            assert!(!line.is_empty(), "the peer closed its output");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("id") == Some(&json!(id)) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v;
            }
        }
    }

    fn echo(&mut self, tool: &str) -> Duration {
        let t = Instant::now();
        let v = self.request(
            "tools/call",
            json!({"name": tool, "arguments": {"message": "bench"}}),
        );
        let d = t.elapsed();
        assert!(
            v["result"]["isError"] != true,
            "{tool} failed: {}",
            v["result"]
        );
        d
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    vars: Vec<(String, PathBuf)>,
}

impl Env {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        c.arg("--toolbox").arg(&self.root).args(args);
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    fn ok(&self, args: &[&str]) {
        let out = self.cmd(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn main() {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("box");
    let vars = vec![
        ("TOOLSMITH_DATA".into(), tmp.path().join("personal")),
        ("TOOLSMITH_CACHE".into(), tmp.path().join("cache")),
        ("TOOLSMITH_HOME".into(), tmp.path().join("home")),
        ("PIP_FIND_LINKS".into(), target.join("test-wheels")),
        ("npm_config_cache".into(), target.join("npm-cache")),
    ];
    let e = Env {
        _tmp: tmp,
        root,
        vars,
    };
    e.ok(&["init"]);
    let everything = "@modelcontextprotocol/server-everything@2026.8.31";
    let files = "@modelcontextprotocol/server-filesystem@2026.8.31";
    e.ok(&["add-mcp", "everything", "--npm", everything]);
    e.ok(&["add-mcp", "everything2", "--npm", everything]);
    e.ok(&[
        "add-mcp",
        "files",
        "--npm",
        files,
        "--",
        "mcp-server-filesystem",
        ".",
    ]);
    e.ok(&[
        "add-mcp",
        "files2",
        "--npm",
        files,
        "--",
        "mcp-server-filesystem",
        ".",
    ]);
    e.ok(&["add-mcp", "time", "--pip", "mcp-server-time==2026.10.19"]);

    let serve = || e.cmd(&["serve"]);
    const N: usize = 300;

    // Cold: the first call after serve starts (its server starts in the sandbox).
    let mut cold = Vec::new();
    for _ in 0..3 {
        let mut s = Peer::spawn(serve());
        cold.push(s.echo("everything__echo"));
    }

    // Warm, through toolsmith.
    let mut s = Peer::spawn(serve());
    s.echo("everything__echo");
    let mut through: Vec<Duration> = (0..N).map(|_| s.echo("everything__echo")).collect();

    // tools/list with 5 upstream servers.
    let mut list: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            let v = s.request("tools/list", json!({}));
            let d = t.elapsed();
            let n = v["result"]["tools"].as_array().map_or(0, Vec::len);
            assert!(n > 40, "tools/list lists the upstream tools: {n}");
            d
        })
        .collect();
    drop(s);

    // Warm, the same server directly over stdio (no toolsmith, no sandbox).
    let envs = e.root.join(".toolsmith/env/everything");
    let node_env = std::fs::read_dir(&envs)
        .expect("the everything entry's environment")
        .flatten()
        .map(|d| d.path())
        .find(|p| p.join("node_modules/.bin/mcp-server-everything").exists())
        .expect("mcp-server-everything in the entry's environment");
    let mut direct_cmd = Command::new(node_env.join("node_modules/.bin/mcp-server-everything"));
    direct_cmd.current_dir(&node_env);
    let mut d = Peer::spawn(direct_cmd);
    d.echo("echo");
    let mut direct: Vec<Duration> = (0..N).map(|_| d.echo("echo")).collect();

    let (tp50, tp95) = (pct(&mut through, 0.5), pct(&mut through, 0.95));
    let (dp50, dp95) = (pct(&mut direct, 0.5), pct(&mut direct, 0.95));
    println!("| upstream (issue 28) | p50 | p95 |");
    println!("|---|---|---|");
    println!(
        "| first call after serve starts (cold server start), 3 runs | {} | max {} |",
        ms(pct(&mut cold, 0.5)),
        ms(pct(&mut cold, 1.0))
    );
    println!(
        "| warm everything__echo through toolsmith ({N} calls) | {} | {} |",
        ms(tp50),
        ms(tp95)
    );
    println!(
        "| warm echo, server directly over stdio ({N} calls) | {} | {} |",
        ms(dp50),
        ms(dp95)
    );
    println!(
        "| added by toolsmith (through − direct) | {} | {} |",
        ms(tp50.saturating_sub(dp50)),
        ms(tp95.saturating_sub(dp95))
    );
    println!(
        "| tools/list, 5 upstream servers (50 lists) | {} | {} |",
        ms(pct(&mut list, 0.5)),
        ms(pct(&mut list, 0.95))
    );
}
