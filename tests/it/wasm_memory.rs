//! Loaded WASM tools within the memory budget (`TOOLSMITH_WASM_MEMORY`, issue 41): a server
//! whose budget holds no two components unloads the one used least recently and loads it
//! again at its next call, every call answering as before; `doctor` shows the setting.

use crate::common::*;
use crate::components::{component, manifest};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use toolsmith::toolbox::FileSpec;

/// Runs `calls` through `toolsmith serve` (the Python SDK as client) with `env`: the client's
/// output (its calls' results) and the server's log.
fn serve(root: &Path, env: &[(&str, &str)], calls: &[Value]) -> (Value, String) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("calls.json");
    std::fs::write(&file, serde_json::to_string(calls).expect("json")).expect("write");
    let mut c = Command::new(python());
    c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/components_mcp.py"))
        .arg("--toolsmith")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(root)
        .arg("--calls")
        .arg(&file)
        .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
        .env("TOOLSMITH_DATA", tmp.path().join("data"))
        .env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("python runs");
    let log = plain(&String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{log}");
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (v, log)
}

/// `text` without its terminal colours.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ ... letter
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The log lines about `tool` that contain `what`.
fn lines<'a>(log: &'a str, tool: &str, what: &str) -> Vec<&'a str> {
    log.lines()
        .filter(|l| l.contains(what) && l.contains(&format!("tool={tool}")))
        .collect()
}

#[test]
fn a_tool_unloaded_for_the_memory_budget_is_loaded_again_at_its_next_call() {
    let (_tmp, tb) = toolbox();
    for (name, export) in [("measure", "measure"), ("probe", "probe")] {
        tb.write_tool(
            name,
            &[
                FileSpec::new("tool.toml", manifest(name, export, "")),
                FileSpec::new("tool.wasm", component().to_vec()),
            ],
            "test",
        )
        .expect("write the tool");
    }
    let measure = json!({"tool": "measure", "args": {"at": {"x": 1, "y": 1}, "shape": {"rect": {"x": 2, "y": 3}}, "scale": 1}});
    let probe = json!({"tool": "probe", "args": {"mode": "echo", "text": "hello"}});
    let calls = [measure.clone(), probe, measure.clone(), measure];
    let check = |out: &Value| {
        let calls = out["calls"].as_array().expect("calls");
        for c in calls {
            assert_eq!(c["is_error"], false, "{}", c["text"]);
        }
        for i in [0, 2, 3] {
            assert_eq!(calls[i]["structured"]["area"], 6, "{}", calls[i]);
        }
        assert!(
            calls[1]["text"].as_str().unwrap_or("").contains("hello"),
            "{}",
            calls[1]
        );
    };
    let log_env = ("TOOLSMITH_LOG", "toolsmith_wasm=debug");

    // No two components fit in 0 MiB: each load unloads the other one.
    let (out, log) = serve(
        tb.root(),
        &[log_env, ("TOOLSMITH_WASM_MEMORY", "0")],
        &calls,
    );
    check(&out);
    assert_eq!(
        lines(&log, "measure", "WASM tool unloaded").len(),
        1,
        "measure is unloaded once, when probe is loaded:\n{log}"
    );
    assert_eq!(
        lines(&log, "measure", "WASM tool loaded again").len(),
        1,
        "measure's third call loads it again, its fourth finds it loaded:\n{log}"
    );
    assert!(
        lines(&log, "probe", "WASM tool loaded again").is_empty(),
        "{log}"
    );
    // Its artifact unchanged, it was made again from its compiled-code entry (MAC-checked),
    // without reading and hashing the artifact a second time.
    assert_eq!(
        lines(&log, "measure", "loaded again from its compiled code").len(),
        1,
        "{log}"
    );

    // With the default budget both stay loaded: nothing is unloaded.
    let (out, log) = serve(tb.root(), &[log_env], &calls);
    check(&out);
    assert!(
        !log.contains("WASM tool unloaded") && !log.contains("WASM tool loaded again"),
        "{log}"
    );
}

#[test]
fn doctor_shows_the_memory_budget_of_loaded_wasm_tools() {
    let (_tmp, tb) = toolbox();
    let doctor = |value: Option<&str>| -> Value {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        c.arg("--toolbox").arg(tb.root()).args(["doctor", "--json"]);
        c.env_remove("TOOLSMITH_WASM_MEMORY");
        if let Some(v) = value {
            c.env("TOOLSMITH_WASM_MEMORY", v);
        }
        let out = c.output().expect("doctor runs");
        let checks: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        checks
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["check"] == "wasm memory")
            .cloned()
            .unwrap_or_else(|| panic!("no wasm memory check: {checks}"))
    };
    let default = doctor(None);
    let detail = default["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains(&format!(
            "at most {} MiB",
            toolsmith::config::DEFAULT_WASM_MEMORY_MB
        )) && detail.contains("TOOLSMITH_WASM_MEMORY"),
        "{default}"
    );
    let set = doctor(Some("64"));
    assert!(
        set["detail"]
            .as_str()
            .unwrap_or("")
            .contains("at most 64 MiB"),
        "{set}"
    );
    // A value that is not a number is an error naming the variable.
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    c.arg("--toolbox").arg(tb.root()).arg("doctor");
    let out = c
        .env("TOOLSMITH_WASM_MEMORY", "lots")
        .output()
        .expect("doctor runs");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("TOOLSMITH_WASM_MEMORY"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
