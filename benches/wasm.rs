//! WASM build benchmarks through the library; prints a table.
//! Run: `cargo bench --bench wasm`.
//!
//! In a fresh cache (cold cargo target directory): the build of a first tool using serde_json,
//! of a second one using serde_json (sharing the compiled crate), a rebuild of an unchanged tool
//! (no cargo), a rebuild after a one-line edit, and in-process calls of the built tool.
//! Warm calls through MCP stdio are in `benches/mcp.rs`.

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use toolsmith::app::App;
use toolsmith::build::{self, BuildOutcome};
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::Toolbox;

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

fn timed(
    rt: &tokio::runtime::Runtime,
    app: &App,
    cache: &std::path::Path,
    req: Value,
) -> (Duration, BuildOutcome) {
    let mut opts = build::Options::new(&NoHost, "bench");
    opts.cache = Some(cache.to_path_buf());
    let req = serde_json::from_value(req).expect("a build request");
    let t = Instant::now();
    let out = rt
        .block_on(build::build(app, req, &opts))
        .unwrap_or_else(|e| panic!("build failed: {e}"));
    (t.elapsed(), out)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let tb = Toolbox::init(&tmp.path().join("box"), &[], "bench").expect("init");
    let app = App::new(tb, toolsmith::config::Config::from_env().expect("config"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");

    let mut rows: Vec<(String, String, String)> = Vec::new();
    let (d, o) = timed(&rt, &app, &cache, request("first", "Hello"));
    rows.push((
        "build: first tool with serde_json (cold target dir)".into(),
        ms(d),
        format!("cargo compiled {}", o.compiled_crates.join(", ")),
    ));
    let (d, o) = timed(&rt, &app, &cache, request("second", "Hi"));
    rows.push((
        "build: second tool with serde_json (shared target dir)".into(),
        ms(d),
        format!("cargo compiled {}", o.compiled_crates.join(", ")),
    ));
    let (d, o) = timed(&rt, &app, &cache, request("second", "Hi"));
    rows.push((
        "rebuild: unchanged tool".into(),
        ms(d),
        format!("cargo ran: {}, action: {}", o.compiled, o.action),
    ));
    let (d, o) = timed(&rt, &app, &cache, request("second", "Hey"));
    rows.push((
        "rebuild: one-line edit".into(),
        ms(d),
        format!("cargo compiled {}", o.compiled_crates.join(", ")),
    ));

    // In-process calls of the built tool (verification, instantiation, run).
    let args = json!({"text": "bench"});
    let n = 2000;
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let out = rt
            .block_on(app.call("second", args.clone(), &NoHost))
            .expect("call");
        times.push(t.elapsed());
        assert_eq!(out.structured, Some(json!({"message": "Hey, bench!"})));
    }
    times.sort();
    rows.push((
        format!("call in-process, warm ({n} calls)"),
        format!("p50 {}", ms(times[n / 2])),
        format!("p95 {}", ms(times[n * 95 / 100])),
    ));

    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    println!("{:w$}  {:>12}  notes", "what", "time");
    for (what, time, note) in rows {
        println!("{what:w$}  {time:>12}  {note}");
    }
}
