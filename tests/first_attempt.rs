//! An AI's first attempt works (issue 11), through the official MCP Python SDK: the natural
//! first script in every language, truthful errors, strict and consistent meta-tools, Agent
//! Skills imported as what they are, and a tool list without a cliff.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> PathBuf {
    let p = std::env::var_os("TOOLSMITH_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-venv/bin/python")
        });
    assert!(
        p.exists(),
        "the Python venv with the mcp SDK is missing at {}: run ./scripts/setup.sh",
        p.display()
    );
    p
}

/// The real Agent Skills fixtures: `shared/fixtures/agent-skills` beside the repository (CI
/// copies `shared/` next to its clone), found by walking up from the crate; or
/// `TOOLSMITH_SKILL_FIXTURES`. A missing fixture fails the test, it never skips it.
pub fn skill_fixtures() -> PathBuf {
    if let Some(p) = std::env::var_os("TOOLSMITH_SKILL_FIXTURES") {
        return PathBuf::from(p);
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|a| a.join("shared/fixtures/agent-skills"))
        .find(|p| p.join("brand-guidelines/SKILL.md").is_file())
        .unwrap_or_else(|| {
            panic!(
                "the Agent Skills fixtures are missing: expected shared/fixtures/agent-skills beside the repository (looked upwards from {}); copy shared/ next to the clone or set TOOLSMITH_SKILL_FIXTURES",
                here.display()
            )
        })
}

/// Run one scenario of tests/py/first_attempt.py against `toolsmith serve` on `toolbox`.
fn scenario(toolbox: &Path, name: &str, extra: &[&str]) -> Value {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python())
        .arg(base.join("tests/py/first_attempt.py"))
        .args([
            "--toolsmith",
            env!("CARGO_BIN_EXE_toolsmith"),
            "--scenario",
            name,
        ])
        .arg("--toolbox")
        .arg(toolbox)
        .args(extra)
        // Share the wasm test cache so the Rust build reuses compiled crates.
        .env("TOOLSMITH_CACHE", base.join("target/wasm-test-cache"))
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "first_attempt.py {name} failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary")
}

#[test]
fn a_naive_agent_succeeds_on_the_first_try() {
    let (_tmp, tb) = toolbox();
    let s = scenario(tb.root(), "naive", &[]);
    for lang in ["python", "node", "bash", "ruby", "perl", "php"] {
        let t = &s["naive"][lang];
        assert_eq!(t["protocol"], "plain", "{lang}: {t}");
        assert_eq!(t["protocol_from"], "detected", "{lang}: {t}");
        assert_eq!(t["get_tool_protocol"], "plain", "{lang}: {t}");
        assert_eq!(t["result"]["sum"], 42, "{lang}: {t}");
    }
    assert_eq!(s["helper_protocol"], "jsonrpc", "{s}");
    assert_eq!(s["mean"]["mean"], 1.5, "{s}");
    assert_clean(tb.root());
}

#[test]
fn failures_say_what_really_went_wrong() {
    let (_tmp, tb) = toolbox();
    let s = scenario(tb.root(), "errors", &[]);
    let mismatch = s["mismatch"]["text"].as_str().unwrap();
    assert_eq!(s["mismatch"]["is_error"], true, "{s}");
    assert!(mismatch.contains("protocol mismatch"), "{mismatch}");
    assert!(mismatch.contains("protocol \"plain\""), "{mismatch}");
    assert!(!mismatch.contains("timeout_ms"), "{mismatch}");
    let stderr = s["stderr"]["text"].as_str().unwrap();
    assert!(
        stderr.contains("exit code 3") && stderr.contains("the input has no field `city`"),
        "{stderr}"
    );
    let stdout = s["stdout"]["text"].as_str().unwrap();
    assert!(
        stdout.contains("exit code 2") && stdout.contains("usage: give a positive number"),
        "{stdout}"
    );
}

#[test]
fn examples_compare_values_and_unknown_keys_are_refused() {
    let (_tmp, tb) = toolbox();
    let before = commit_count(tb.root());
    let s = scenario(tb.root(), "strict", &[]);
    let typo = s["unknown_example_key"]["text"].as_str().unwrap();
    assert_eq!(s["unknown_example_key"]["is_error"], true, "{s}");
    assert!(
        typo.contains("expected_output") && typo.contains("did you mean `output`"),
        "{typo}"
    );
    let field = s["unknown_field"]["text"].as_str().unwrap();
    assert!(
        field.contains("timeout_ms") && field.contains("limits"),
        "{field}"
    );
    let wrong = s["wrong_example"]["text"].as_str().unwrap();
    assert_eq!(s["wrong_example"]["is_error"], true, "{s}");
    assert!(wrong.contains("1 of 2 examples failed"), "{wrong}");
    assert!(wrong.contains("$.items[1]: expected 4, got 3"), "{wrong}");
    assert_eq!(commit_count(tb.root()), before, "nothing was committed");
}
