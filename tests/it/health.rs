//! The toolbox's health (issue 43), over a toolbox made for it through a real MCP session: a
//! near-duplicate pair (`add` and `sum_numbers`), a tool never called (`weather`) and one that
//! always fails (`to_fahrenheit`). `register_script` answers the second of the pair with the
//! first (similarity, what differs) and still commits it; the report — the
//! `toolsmith://health` resource, `toolsmith stats` and the console's Health page in headless
//! Chromium — names the unused tool, the failing one and the pair, with per-tool figures.

use crate::common::{assert_clean, python};
use crate::telemetry::{Env, Session};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

const ADD: &str =
    "import json, sys\na = json.load(sys.stdin)\nprint(json.dumps({'sum': a['a'] + a['b']}))\n";
const FAIL: &str = "import sys\nsys.stderr.write('no converter here\\n')\nsys.exit(3)\n";

fn register(s: &mut Session, name: &str, description: &str, source: &str, props: Value) -> Value {
    register_with(s, name, description, source, props, json!({}))
}

fn register_with(
    s: &mut Session,
    name: &str,
    description: &str,
    source: &str,
    props: Value,
    extra: Value,
) -> Value {
    let mut args = json!({
        "name": name, "description": description, "language": "python", "protocol": "plain",
        "source": source, "input_schema": {"type": "object", "properties": props}});
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    let r = s.request(
        "tools/call",
        json!({"name": "register_script", "arguments": args}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    r["result"]["structuredContent"].clone()
}

fn call(s: &mut Session, name: &str, args: Value) -> Value {
    s.request("tools/call", json!({"name": name, "arguments": args}))["result"].clone()
}

/// The toolbox of the scenario; the session's answers to the last registration.
fn toolbox(e: &Env) -> Value {
    let mut s = Session::start(e.command());
    let numbers = json!({"a": {"type": "number"}, "b": {"type": "number"}});
    let first = register(&mut s, "add", "Add two numbers", ADD, numbers.clone());
    assert!(
        first.get("similar").is_none(),
        "nothing like it yet: {first}"
    );
    let weather = register(
        &mut s,
        "weather",
        "Fetch the weather forecast for a city",
        ADD,
        json!({"city": {"type": "string"}}),
    );
    assert!(weather.get("similar").is_none(), "unrelated: {weather}");
    register(
        &mut s,
        "to_fahrenheit",
        "Convert a temperature from Celsius to Fahrenheit",
        FAIL,
        json!({"celsius": {"type": "number"}}),
    );
    let dup = register_with(
        &mut s,
        "sum_numbers",
        "Add two numbers and return their sum",
        ADD,
        numbers,
        json!({"output_schema": {"type": "object", "properties": {"sum": {"type": "number"}}}}),
    );
    for _ in 0..2 {
        assert_eq!(
            call(&mut s, "add", json!({"a": 1, "b": 2}))["structuredContent"]["sum"],
            3
        );
        assert_eq!(
            call(&mut s, "to_fahrenheit", json!({"celsius": 1}))["isError"],
            true
        );
    }
    let read = s.request("resources/read", json!({"uri": "toolsmith://health"}));
    let listed = s.request("resources/list", json!({}));
    assert!(
        listed["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["uri"] == "toolsmith://health"),
        "{listed}"
    );
    s.end();
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "application/json", "{read}");
    let report: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
    json!({"dup": dup, "report": report})
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {report}"))
}

fn check_report(report: &Value) {
    assert_eq!(
        report["never_called"],
        json!(["sum_numbers", "weather"]),
        "{report}"
    );
    assert_eq!(report["failing"], json!(["to_fahrenheit"]), "{report}");
    let pairs = report["near_duplicates"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "{report}");
    assert_eq!(
        (pairs[0]["a"].as_str(), pairs[0]["b"].as_str()),
        (Some("add"), Some("sum_numbers"))
    );
    assert!(pairs[0]["similarity"].as_f64() >= Some(0.75), "{report}");
    let add = tool(report, "add");
    assert_eq!(
        (add["calls"].as_u64(), add["errors"].as_u64()),
        (Some(2), Some(0)),
        "{add}"
    );
    assert!(
        add["p50_ms"].as_u64().is_some() && add["p95_ms"].as_u64() >= add["p50_ms"].as_u64(),
        "{add}"
    );
    assert!(add["last_used"].is_string(), "{add}");
    assert_eq!(add["made_by"], "otel-test", "the MCP client made it: {add}");
    assert!(
        add["made_at"].as_str().is_some_and(|d| d.ends_with('Z')),
        "{add}"
    );
    let bad = tool(report, "to_fahrenheit");
    assert_eq!(
        (bad["calls"].as_u64(), bad["errors"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(bad["error_rate"], 1.0);
    assert!(
        bad["last_error"]
            .as_str()
            .is_some_and(|m| m.contains("no converter here")),
        "{bad}"
    );
    let unused = tool(report, "weather");
    assert_eq!(unused["calls"], 0);
    assert_eq!(unused["last_used"], Value::Null);
}

#[test]
fn the_report_and_the_duplicate_hint_over_a_toolbox_made_for_it() {
    let e = Env::new();
    let v = toolbox(&e);
    // The hint: the near-duplicate is named with what differs, and the tool is committed.
    let dup = &v["dup"];
    assert_eq!(dup["action"], "add", "nothing refused: {dup}");
    assert!(dup["commit"].is_string(), "{dup}");
    let similar = dup["similar"].as_array().unwrap_or_else(|| panic!("{dup}"));
    assert_eq!(similar[0]["name"], "add", "{dup}");
    assert!(similar[0]["similarity"].as_f64() >= Some(0.7), "{dup}");
    assert_eq!(similar[0]["description"], "Add two numbers");
    assert!(
        similar[0]["differs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d == "only sum_numbers declares an output schema"),
        "{dup}"
    );
    assert!(
        dup["similar_note"]
            .as_str()
            .is_some_and(|n| n.contains("update it"))
    );
    assert!(similar.iter().all(|s| s["name"] != "weather"), "{dup}");
    check_report(&v["report"]);

    // The same report on the command line, as JSON and as a table.
    let out = e.cli(&["--json", "stats"], None);
    assert!(out.status.success(), "{out:?}");
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_report(&cli);
    let table = String::from_utf8(e.cli(&["stats"], None).stdout).unwrap();
    for part in [
        "never called: sum_numbers, weather",
        "failing (more failures than successes): to_fahrenheit",
        "add ~ sum_numbers",
        "2 (100%)",
    ] {
        assert!(table.contains(part), "{part}: {table}");
    }
    // Kept outside git: the toolbox is clean; the record is in the personal directory.
    assert_clean(&e.root);
    assert!(e.personal.join("health").is_dir());

    // The console's Health page, in headless Chromium.
    let shot = e.tmp.path().join("health.png");
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/health_console.py"))
        .args(["--toolsmith", env!("CARGO_BIN_EXE_toolsmith")])
        .arg("--toolbox")
        .arg(&e.root)
        .arg("--screenshot")
        .arg(&shot)
        .env("TOOLSMITH_DATA", &e.personal)
        .env("TOOLSMITH_CACHE", e.tmp.path().join("cache"))
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "health_console.py: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap();
    let text = page["text"].as_str().unwrap();
    for part in [
        "Failing more than they succeed",
        "to_fahrenheit",
        "2 of 2",
        "no converter here",
        "Never called since they were made",
        "weather",
        "Near-duplicates",
        "sum_numbers",
        "only sum_numbers declares an output schema",
        "Calls per tool",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    assert_eq!(page["nav_active"], "Health", "{page}");
    assert_eq!(page["svg_charts"], 2, "{page}");
    assert!(page["bars"].as_u64() >= Some(3), "{page}");
    let titles = page["bar_titles"].to_string();
    assert!(titles.contains("to_fahrenheit: 2 failed"), "{titles}");
    assert!(titles.contains("add: 2 succeeded"), "{titles}");
    assert_eq!(
        (page["scripts"].as_u64(), page["external"].as_u64()),
        (Some(0), Some(0))
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000);
}
