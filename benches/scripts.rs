//! Script call latency through `App::call` (argument validation, runner, sandbox, JSON-RPC):
//! the sandbox rows compare bubblewrap, the in-process fallback and unsandboxed, plus the
//! fallback's set-up before the fork (`sandbox::prepare`, target ≤ 2 ms added per call);
//! a Python echo as a fresh process (sandboxed and not) and as a warm worker, Bash and Node,
//! next to the bare interpreter start. Prints a table; run with `cargo bench --bench scripts`.

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use toolsmith::app::App;
use toolsmith::register::{self, ScriptSpec};
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::{Actor, Toolbox};

fn pct(mut v: Vec<Duration>, p: f64) -> f64 {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1000.0
}

fn python_echo() -> String {
    let t = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/templates/python/main.py"
    ))
    .expect("the python template");
    let helper = &t[t.find("# --- toolsmith jsonrpc helper").expect("helper")..];
    format!("def run(args, ctx):\n    return {{\"echo\": args.get(\"text\")}}\n{helper}")
}

fn node_echo() -> String {
    let t = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/templates/node/main.js"
    ))
    .expect("the node template");
    let helper = &t[t.find("// --- toolsmith jsonrpc helper").expect("helper")..];
    format!("'use strict';\nasync function run(args) {{ return {{ echo: args.text }}; }}\n{helper}")
}

async fn add(app: &App, v: Value) {
    let spec: ScriptSpec = serde_json::from_value(v).expect("spec");
    register::register(app, &spec, &Actor::from("bench"), &NoHost, &|_, _, _| {})
        .await
        .expect("register");
}

fn bare(cmd: &[&str], n: usize) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            let s = std::process::Command::new(cmd[0])
                .args(&cmd[1..])
                .status()
                .expect("runs");
            assert!(s.success());
            t.elapsed()
        })
        .collect()
}

async fn calls(app: &App, name: &str, n: usize) -> Vec<Duration> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        let r = app
            .call(name, json!({"text": format!("hi {i}")}), &NoHost)
            .await;
        out.push(t.elapsed());
        let o = r.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(o.text.contains("hi"), "{name}: {}", o.text);
    }
    out
}

/// The sandbox's own set-up before the fork (grants, Landlock ruleset, seccomp program or
/// bwrap's command line), without starting a process.
fn prepare_times(app: &App, n: usize) -> Vec<Duration> {
    use toolsmith::runner::sandbox;
    let dir = app.toolbox.tools_dir().join("py_echo");
    let scratch = tempfile::tempdir().expect("scratch");
    (0..n)
        .map(|_| {
            let spec = sandbox::Spec {
                mode: toolsmith::manifest::SandboxMode::Auto,
                network: false,
                scratch: scratch.path(),
                visible: vec![dir.clone()],
                read: &[],
                write: &[],
                roots: &[],
            };
            let t = Instant::now();
            let p = sandbox::prepare(vec!["python3".into(), "main.py".into()], &spec)
                .expect("a sandbox");
            let e = t.elapsed();
            drop(p);
            e
        })
        .collect()
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let tmp = tempfile::tempdir().expect("tempdir");
    let tb = Toolbox::init(&tmp.path().join("box"), &[], "bench").expect("toolbox");
    let app = App::new(tb);
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    // The person's opt-out, for the unsandboxed row only (`sandbox = "none"`).
    toolsmith::runner::sandbox::set_allow_unsandboxed(true);
    let mechanism = toolsmith::runner::sandbox::choose(toolsmith::manifest::SandboxMode::Required)
        .map(|m| m.as_str())
        .unwrap_or("unavailable");
    rt.block_on(async {
        add(&app, json!({"name": "py_echo", "language": "python", "description": "echo", "code": python_echo(), "input_schema": schema})).await;
        add(&app, json!({"name": "py_echo_nosandbox", "language": "python", "sandbox": "none", "description": "echo", "code": python_echo(), "input_schema": schema})).await;
        add(&app, json!({"name": "py_worker", "language": "python", "worker": true, "description": "echo", "code": python_echo(), "input_schema": schema})).await;
        add(&app, json!({"name": "sh_echo", "language": "bash", "protocol": "plain", "description": "echo", "code": "cat\n", "input_schema": schema})).await;
        add(&app, json!({"name": "js_echo", "language": "node", "description": "echo", "code": node_echo(), "input_schema": schema})).await;
    });
    let rows: Vec<(&str, Vec<Duration>)> = vec![
        (
            "python3 -u -c pass (bare start)",
            bare(&["python3", "-u", "-c", "pass"], 30),
        ),
        (
            "python echo, fresh process",
            rt.block_on(calls(&app, "py_echo", 30)),
        ),
        (
            "python echo, fresh, unsandboxed",
            rt.block_on(calls(&app, "py_echo_nosandbox", 30)),
        ),
        ("python echo, fresh, in-process fallback", {
            // SAFETY: no other thread reads the environment between calls here (the runtime
            // is idle outside block_on); the runner reads TOOLSMITH_BWRAP at each call.
            unsafe { std::env::set_var("TOOLSMITH_BWRAP", "/nonexistent/bwrap") };
            let v = rt.block_on(calls(&app, "py_echo", 30));
            unsafe { std::env::remove_var("TOOLSMITH_BWRAP") };
            v
        }),
        ("sandbox::prepare, in-process fallback", {
            unsafe { std::env::set_var("TOOLSMITH_BWRAP", "/nonexistent/bwrap") };
            let v = prepare_times(&app, 200);
            unsafe { std::env::remove_var("TOOLSMITH_BWRAP") };
            v
        }),
        ("sandbox::prepare, bubblewrap", prepare_times(&app, 200)),
        ("python echo, warm worker", {
            rt.block_on(calls(&app, "py_worker", 5)); // start it
            rt.block_on(calls(&app, "py_worker", 500))
        }),
        (
            "bash -c true (bare start)",
            bare(&["bash", "-c", "true"], 30),
        ),
        (
            "bash echo (plain), fresh",
            rt.block_on(calls(&app, "sh_echo", 30)),
        ),
        ("node -e 0 (bare start)", bare(&["node", "-e", "0"], 20)),
        (
            "node echo, fresh process",
            rt.block_on(calls(&app, "js_echo", 20)),
        ),
    ];
    println!("script calls through App::call (sandbox: {})", mechanism);
    println!(
        "{:<40} {:>6} {:>9} {:>9}",
        "case", "calls", "p50 ms", "p95 ms"
    );
    for (name, v) in rows {
        println!(
            "{:<40} {:>6} {:>9.2} {:>9.2}",
            name,
            v.len(),
            pct(v.clone(), 0.5),
            pct(v, 0.95)
        );
    }
}
