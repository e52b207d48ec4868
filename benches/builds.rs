//! What making a tool costs, per sandbox mechanism: a cold build (a fresh cache: cargo compiles
//! serde_json and its dependencies), a second tool with serde_json (the compiled dependencies
//! reused), and `register_script` with one pip dependency (a fresh toolbox, so its environment
//! is installed anew). Each row runs under bubblewrap and under the in-process sandbox
//! (bubblewrap hidden, as `TOOLSMITH_BWRAP=/nonexistent` does).
//!
//! Run: `cargo bench --bench builds`; prints a table.

use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use toolsmith::app::App;
use toolsmith::build;
use toolsmith::register::{self, ScriptSpec};
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::{Actor, Toolbox};

fn source(greeting: &str) -> String {
    format!(
        r#"use serde_json::{{json, Value}};
use std::io::Read;
fn main() {{
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let v: Value = serde_json::from_str(&s).unwrap_or(json!({{}}));
    let text = v["text"].as_str().unwrap_or("");
    println!("{{}}", json!({{"message": format!("{greeting}, {{text}}!")}}));
}}
"#
    )
}

fn request(name: &str, greeting: &str) -> Value {
    json!({
        "name": name,
        "description": "Greets a text (benchmark)",
        "source": source(greeting),
        "crates": {"serde_json": "1"},
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "examples": [{"input": {"text": "x"}, "output": {"message": format!("{greeting}, x!")}}]
    })
}

fn make_app(dir: &Path, mechanism: &str) -> App {
    let tb = Toolbox::init(&dir.join("box"), &[], "bench").expect("init");
    let mut config = toolsmith::config::Config::from_env().expect("config");
    config.cache_dir = dir.join("cache");
    if mechanism == "in-process" {
        config.sandbox.bwrap = "/nonexistent/bwrap".into();
    }
    App::new(tb, config)
}

fn build_once(rt: &tokio::runtime::Runtime, app: &App, req: Value) -> Duration {
    let opts = build::Options::new(&NoHost, "bench");
    let req = serde_json::from_value(req).expect("a build request");
    let t = Instant::now();
    let out = rt
        .block_on(build::build(app, req, &opts))
        .unwrap_or_else(|e| panic!("build failed: {e}"));
    assert!(out.compiled);
    t.elapsed()
}

fn register_once(rt: &tokio::runtime::Runtime, app: &App) -> Duration {
    let spec: ScriptSpec = serde_json::from_value(json!({
        "name": "six_version", "language": "python", "description": "The version of six",
        "dependencies": {"pip": ["six==1.16.0"]},
        "source": "import json, six\nprint(json.dumps({\"six\": six.__version__}))\n",
        "protocol": "plain",
        "examples": [{"input": {}, "output": {"six": "1.16.0"}}],
    }))
    .expect("a spec");
    let t = Instant::now();
    rt.block_on(register::register(
        app,
        &spec,
        &Actor::from("bench"),
        &NoHost,
        &|_, _, _| {},
    ))
    .unwrap_or_else(|e| panic!("register failed: {e}"));
    t.elapsed()
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut rows: Vec<(String, String, String)> = Vec::new();
    for mechanism in ["bubblewrap", "in-process"] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let app = make_app(tmp.path(), mechanism);
        let cold = build_once(&rt, &app, request("first", "Hello"));
        let second = build_once(&rt, &app, request("second", "Hi"));
        let tmp2 = tempfile::tempdir().expect("tempdir");
        let app2 = make_app(tmp2.path(), mechanism);
        let reg = register_once(&rt, &app2);
        rows.push((
            "cold build, a tool with serde_json".into(),
            mechanism.into(),
            ms(cold),
        ));
        rows.push((
            "second tool with serde_json".into(),
            mechanism.into(),
            ms(second),
        ));
        rows.push((
            "register_script, one pip dependency".into(),
            mechanism.into(),
            ms(reg),
        ));
    }
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    println!("| {:w$} | mechanism  | time |", "what");
    println!("|{}|------------|------|", "-".repeat(w + 2));
    for (what, mech, time) in rows {
        println!("| {what:w$} | {mech:10} | {time} |");
    }
}
