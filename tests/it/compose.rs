//! Composition with real runners: pipelines (create, validate, call, conditions, error policy)
//! and execute_code in Python and JavaScript calling real stored tools.

use crate::common;
use common::*;
use serde_json::{Value, json};
use toolsmith::app::App;
use toolsmith::compose::execute::{self, Language};
use toolsmith::compose::pipeline::{self, PipelineSpec};
use toolsmith::error::Hint;
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::{Actor, FileSpec, Toolbox};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The example toolbox plus a Python tool that calls itself through the host (for depth limits).
fn app() -> (tempfile::TempDir, App) {
    let tmp = tempfile::tempdir().unwrap();
    let tb = Toolbox::init(
        &tmp.path().join("box"),
        &toolsmith::toolbox::seed_files(),
        "test",
    )
    .unwrap();
    let manifest = "name = \"recurse\"\ndescription = \"Calls itself n times through the host\"\nkind = \"script\"\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\n[input_schema]\ntype = \"object\"\n[input_schema.properties.n]\ntype = \"integer\"\n";
    let code = r#"import json, sys
req = json.loads(sys.stdin.readline())
n = req["params"]["arguments"].get("n", 0)
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
if n <= 0:
    send({"jsonrpc": "2.0", "id": 0, "result": {"depth": 0}})
else:
    send({"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {"name": "recurse", "arguments": {"n": n - 1}}})
    resp = json.loads(sys.stdin.readline())
    if "error" in resp:
        send({"jsonrpc": "2.0", "id": 0, "error": {"code": -32000, "message": resp["error"]["message"]}})
    else:
        send({"jsonrpc": "2.0", "id": 0, "result": {"depth": resp["result"]["depth"] + 1}})
"#;
    tb.write_tool(
        "recurse",
        &[
            FileSpec::new("tool.toml", manifest),
            FileSpec::new("main.py", code),
        ],
        "test",
    )
    .unwrap();
    (
        tmp,
        App::new(tb, toolsmith::config::Config::from_env().expect("config")),
    )
}

fn spec(v: Value) -> PipelineSpec {
    serde_json::from_value(v).unwrap()
}

#[test]
fn a_pipeline_of_wasm_and_scripts_with_interpolation_and_named_steps() {
    let (_tmp, app) = app();
    let rt = rt();
    let s = spec(json!({
        "name": "title_report",
        "description": "Slugify a title, count the slug's words, and report text statistics",
        "input_schema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
        "steps": [
            {"name": "slug", "tool": "slugify", "args": {"text": "$input.text"}},
            {"name": "count", "tool": "word_count", "args": {"text": "slug: $steps.slug.slug, again $prev.slug"}},
            {"name": "stats", "tool": "text_stats", "args": {"text": "$input.text"}},
            {"tool": "json_format", "args": {"json": "{\"slug\": \"$steps.slug.slug\", \"words\": $steps.count.words}", "indent": 0}}
        ],
        "examples": [{"input": {"text": "Hello World"}, "output": {"formatted": "{\"slug\":\"hello-world\",\"words\":4}"}}]
    }));
    let out = rt
        .block_on(pipeline::create(
            &app,
            &s,
            &Actor::from("test"),
            &NoHost,
            false,
        ))
        .unwrap();
    assert_eq!(out.action, "add");
    assert_clean(app.toolbox.root());
    assert!(
        git(app.toolbox.root(), &["log", "-1", "--format=%s"]).starts_with("add title_report:")
    );
    // A tool like any other: indexed, callable by its name.
    let r = rt
        .block_on(app.call(
            "title_report",
            json!({"text": "Crème Brûlée Recipe"}),
            &NoHost,
        ))
        .unwrap();
    assert_eq!(
        r.structured.unwrap(),
        json!({"formatted": "{\"slug\":\"creme-brulee-recipe\",\"words\":4}"})
    );
    assert_eq!(app.tool("title_report").unwrap().manifest.steps.len(), 4);
}

#[test]
fn invalid_pipelines_are_refused_with_the_step_named() {
    let (_tmp, app) = app();
    let rt = rt();
    let before = commit_count(app.toolbox.root());
    let cases = [
        (
            json!([{"tool": "no_such_tool", "args": {}}]),
            "step 1: tool \"no_such_tool\" does not exist",
        ),
        (
            json!([{"tool": "slugify", "args": {"text": "$prev.slug"}}]),
            "$prev, but it is the first step",
        ),
        (
            json!([{"name": "a", "tool": "slugify", "args": {"text": "x"}}, {"tool": "word_count", "args": {"text": "$steps.b.slug"}}]),
            "step 2 refers to $steps.b",
        ),
        (
            json!([{"tool": "loop_me", "args": {}}]),
            "calls the pipeline itself",
        ),
    ];
    for (steps, want) in cases {
        let s = spec(json!({"name": "loop_me", "description": "bad", "steps": steps}));
        let err = rt
            .block_on(pipeline::create(
                &app,
                &s,
                &Actor::from("t"),
                &NoHost,
                false,
            ))
            .unwrap_err();
        assert!(err.to_string().contains(want), "{err} lacks {want}");
        assert!(err.hint().is_some());
    }
    // A cycle through two pipelines.
    let a = spec(
        json!({"name": "pa", "description": "a", "steps": [{"tool": "slugify", "args": {"text": "$input.text"}}]}),
    );
    rt.block_on(pipeline::create(&app, &a, &Actor::from("t"), &NoHost, true))
        .unwrap();
    let b = spec(json!({"name": "pb", "description": "b", "steps": [{"tool": "pa", "args": {}}]}));
    rt.block_on(pipeline::create(&app, &b, &Actor::from("t"), &NoHost, true))
        .unwrap();
    let a2 = spec(json!({"name": "pa", "description": "a", "steps": [{"tool": "pb", "args": {}}]}));
    let err = rt
        .block_on(pipeline::create(
            &app,
            &a2,
            &Actor::from("t"),
            &NoHost,
            true,
        ))
        .unwrap_err();
    assert!(err.to_string().contains("cycle: pa → pb → pa"), "{err}");
    assert_eq!(commit_count(app.toolbox.root()), before + 2);
    assert_clean(app.toolbox.root());
}

#[test]
fn conditions_and_continue_on_error() {
    let (_tmp, app) = app();
    let rt = rt();
    let s = spec(json!({
        "name": "roman_or_not",
        "description": "Roman numeral when asked; a failing step that continues",
        "steps": [
            {"name": "bad", "tool": "roman_numeral", "args": {"number": 0}, "on_error": "continue"},
            {"name": "roman", "tool": "roman_numeral", "args": {"number": "$input.number"}, "when": "$input.want_roman"},
            {"tool": "slugify", "args": {"text": "n $input.number"}}
        ]
    }));
    rt.block_on(pipeline::create(
        &app,
        &s,
        &Actor::from("t"),
        &NoHost,
        false,
    ))
    .unwrap();
    let r = rt
        .block_on(app.call(
            "roman_or_not",
            json!({"number": 14, "want_roman": true}),
            &NoHost,
        ))
        .unwrap();
    assert_eq!(r.structured.unwrap()["slug"], "n-14");
    // A step that fails without `continue` stops the pipeline with the step named.
    let s = spec(json!({"name": "stops", "description": "fails", "steps": [
        {"name": "boom", "tool": "roman_numeral", "args": {"number": 0}},
        {"tool": "slugify", "args": {"text": "never"}}
    ]}));
    rt.block_on(pipeline::create(
        &app,
        &s,
        &Actor::from("t"),
        &NoHost,
        false,
    ))
    .unwrap();
    let err = rt
        .block_on(app.call("stops", json!({}), &NoHost))
        .unwrap_err();
    assert!(
        err.to_string().contains("step boom (roman_numeral)"),
        "{err}"
    );
    // `when` false skips the step: the result is the last step that ran.
    let s = spec(json!({"name": "maybe", "description": "maybe", "steps": [
        {"tool": "slugify", "args": {"text": "A B"}},
        {"tool": "roman_numeral", "args": {"number": 3}, "when": "$input.go"}
    ]}));
    rt.block_on(pipeline::create(
        &app,
        &s,
        &Actor::from("t"),
        &NoHost,
        false,
    ))
    .unwrap();
    assert_eq!(
        rt.block_on(app.call("maybe", json!({"go": false}), &NoHost))
            .unwrap()
            .structured
            .unwrap(),
        json!({"slug": "a-b"})
    );
    assert_eq!(
        rt.block_on(app.call("maybe", json!({"go": true}), &NoHost))
            .unwrap()
            .structured
            .unwrap(),
        json!({"roman": "III"})
    );
}

#[test]
fn execute_code_calls_real_tools_in_python_and_javascript() {
    let (_tmp, app) = app();
    let rt = rt();
    let py = r#"
total = 0
slugs = []
for t in args["texts"]:
    total += tools.word_count({"text": t})["words"]
    slugs.append(tools.slugify(text=t)["slug"])
roman = tools.call("roman_numeral", {"number": len(slugs)})["roman"]
result = {"total_words": total, "slugs": slugs, "roman": roman}
"#;
    let data = json!({"texts": ["one two", "Three Four Five", "six"]});
    let done = rt
        .block_on(execute::run(
            &app,
            Language::Python,
            py,
            data.clone(),
            None,
            None,
            &NoHost,
        ))
        .unwrap();
    assert_eq!(
        done.output.structured.unwrap(),
        json!({"total_words": 6, "slugs": ["one-two", "three-four-five", "six"], "roman": "III"})
    );
    assert_eq!(done.tool_calls, 7);

    let js = r#"
let total = 0; const slugs = [];
for (const t of args.texts) {
  total += (await tools.word_count({ text: t })).words;
  slugs.push((await tools.slugify({ text: t })).slug);
}
const roman = (await tools.call('roman_numeral', { number: slugs.length })).roman;
return { total_words: total, slugs, roman };
"#;
    let done = rt
        .block_on(execute::run(
            &app,
            Language::JavaScript,
            js,
            data,
            None,
            None,
            &NoHost,
        ))
        .unwrap();
    assert_eq!(
        done.output.structured.unwrap(),
        json!({"total_words": 6, "slugs": ["one-two", "three-four-five", "six"], "roman": "III"})
    );
    assert_eq!(done.tool_calls, 7);

    // A failing tool surfaces as an exception the code can catch.
    let py = "try:\n    tools.roman_numeral({'number': 0})\n    result = 'no error'\nexcept ToolError as e:\n    result = 'caught: ' + str(e)[:40]\n";
    let done = rt
        .block_on(execute::run(
            &app,
            Language::Python,
            py,
            json!({}),
            None,
            None,
            &NoHost,
        ))
        .unwrap();
    assert!(
        done.output.text.starts_with("caught: "),
        "{}",
        done.output.text
    );
}

/// Run `f` on a thread with the stack the shipped binary's threads have (8 MiB, as
/// `cli::runtime` gives its workers), not libtest's 2 MiB: nested calls to the depth limit
/// (execute_code → a tool → the host → another call) poll deep futures in the unoptimised build.
fn on_binary_stack(f: fn()) {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(f)
        .expect("a thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

#[test]
fn execute_code_limits_depth_calls_and_time() {
    on_binary_stack(execute_code_limits_depth_calls_and_time_here);
}

fn execute_code_limits_depth_calls_and_time_here() {
    let (_tmp, app) = app();
    let rt = rt();
    // Depth: recurse calls itself through the host until the limit stops it.
    let done = rt
        .block_on(execute::run(
            &app,
            Language::Python,
            "return tools.recurse(n=2)",
            json!({}),
            None,
            None,
            &NoHost,
        ))
        .unwrap();
    assert_eq!(done.output.structured.unwrap(), json!({"depth": 2}));
    let err = rt
        .block_on(execute::run(
            &app,
            Language::Python,
            "return tools.recurse(n=10)",
            json!({}),
            None,
            None,
            &NoHost,
        ))
        .unwrap_err();
    assert!(err.to_string().contains("deep"), "{err}");
    // Total calls.
    let err = rt
        .block_on(execute::run(
            &app,
            Language::Python,
            "for i in range(5):\n    tools.slugify(text='x')\n",
            json!({}),
            None,
            Some(3),
            &NoHost,
        ))
        .unwrap_err();
    assert!(err.to_string().contains("at most 3 tool calls"), "{err}");
    // Time.
    let err = rt
        .block_on(execute::run(
            &app,
            Language::JavaScript,
            "while (true) {}",
            json!({}),
            Some(1500),
            None,
            &NoHost,
        ))
        .unwrap_err();
    assert!(err.to_string().contains("time limit"), "{err}");
    // Errors in the code come back with the exception.
    let err = rt
        .block_on(execute::run(
            &app,
            Language::Python,
            "raise ValueError('bad input')",
            json!({}),
            None,
            None,
            &NoHost,
        ))
        .unwrap_err();
    assert!(err.to_string().contains("ValueError: bad input"), "{err}");
}
