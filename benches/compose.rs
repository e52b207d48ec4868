//! Composition benchmarks; prints a table. Run: `cargo bench --bench compose`.
//!
//! Overhead of a 3-step pipeline over the sum of its steps (three warm WASM calls), and
//! execute_code making 100 tool calls.

use serde_json::json;
use std::time::{Duration, Instant};
use toolsmith::app::App;
use toolsmith::compose::execute::{self, Language};
use toolsmith::compose::pipeline::{self, PipelineSpec};
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::{Actor, Toolbox};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let tb = Toolbox::init(
        &tmp.path().join("box"),
        &toolsmith::toolbox::seed_files(),
        "bench",
    )
    .unwrap();
    let app = App::new(tb, toolsmith::config::Config::from_env().expect("config"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let spec: PipelineSpec = serde_json::from_value(json!({
        "name": "wc3", "description": "three word counts",
        "steps": [
            {"tool": "word_count", "args": {"text": "$input.text"}},
            {"tool": "word_count", "args": {"text": "$input.text $prev.words"}},
            {"tool": "word_count", "args": {"text": "$input.text $prev.words"}}
        ]
    }))
    .unwrap();
    rt.block_on(pipeline::create(
        &app,
        &spec,
        &Actor::from("bench"),
        &NoHost,
        false,
    ))
    .unwrap();
    let args = json!({"text": "the quick brown fox"});
    // Warm up the module cache.
    for _ in 0..20 {
        rt.block_on(app.call("word_count", args.clone(), &NoHost))
            .unwrap();
        rt.block_on(app.call("wc3", args.clone(), &NoHost)).unwrap();
    }
    let runs = 300;
    let steps = median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..3 {
                    rt.block_on(app.call("word_count", args.clone(), &NoHost))
                        .unwrap();
                }
                t.elapsed()
            })
            .collect(),
    );
    let pipe = median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                rt.block_on(app.call("wc3", args.clone(), &NoHost)).unwrap();
                t.elapsed()
            })
            .collect(),
    );
    let overhead = pipe.saturating_sub(steps) / 3;

    let code =
        "n = 0\nfor i in range(100):\n    n += tools.word_count(text='a b c')['words']\nreturn n";
    // Alternate the two runs so machine load affects both alike.
    let (mut with_calls, mut without) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let t = Instant::now();
        rt.block_on(execute::run(
            &app,
            Language::Python,
            "return 1",
            json!({}),
            None,
            None,
            &NoHost,
        ))
        .unwrap();
        without.push(t.elapsed());
        let t = Instant::now();
        let done = rt
            .block_on(execute::run(
                &app,
                Language::Python,
                code,
                json!({}),
                None,
                None,
                &NoHost,
            ))
            .unwrap();
        assert_eq!(done.tool_calls, 100);
        with_calls.push(t.elapsed());
    }
    let (exec, one) = (median(with_calls), median(without));

    println!("\n| benchmark | median | target |\n|---|---|---|");
    println!("| 3 × word_count called one by one | {} | |", ms(steps));
    println!("| pipeline of the same 3 steps | {} | |", ms(pipe));
    println!("| pipeline overhead per step | {} | ≤ 1 ms |", ms(overhead));
    println!(
        "| execute_code (python) with 0 tool calls | {} | |",
        ms(one)
    );
    println!(
        "| execute_code (python) with 100 tool calls | {} | |",
        ms(exec)
    );
    println!(
        "| execute_code per tool call | {} | |",
        ms((exec.saturating_sub(one)) / 100)
    );
}
