//! What ships works on a first attempt (issue 40): the built binary in its own process, driven
//! by the official Python SDK (tests/py/shipped.py), with nothing installed by another test
//! first — an HTTP MCP entry (a streamable-HTTP server made with the SDK on 127.0.0.1)
//! imported, approved in the terminal and called; `build_tool` building JavaScript components
//! by the language's name and a spelling of it; JSON objects keeping their key order to a
//! script tool and back, and through the HTTP entry. Also the CLI's own words: a schema error
//! of `toolsmith call` names `toolsmith show`, not a meta-tool.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn http_entries_javascript_builds_and_key_order_work_from_the_binary() {
    let (tmp, tb) = toolbox();
    let out = Command::new(python())
        .arg(manifest_dir().join("tests/py/shipped.py"))
        .arg("--toolsmith")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb.root())
        .arg("--server")
        .arg(manifest_dir().join("tests/fixtures/mcp-http/server.py"))
        .env("TOOLSMITH_DATA", tmp.path().join("personal"))
        .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
        .env("TOOLSMITH_LOG", "toolsmith=info")
        .output()
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "shipped.py failed:\n{stdout}\n{stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "the server panicked:\n{stderr}"
    );
    let s: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no summary ({e}):\n{stdout}\n{stderr}"));

    // The HTTP entry: imported (it waits for a person), approved, called.
    assert_eq!(s["import"]["is_error"], false, "{s}");
    assert_eq!(s["http_call"]["is_error"], false, "{s}");
    assert!(
        s["http_call"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("over http")),
        "{s}"
    );
    assert_eq!(
        s["http_tools"],
        json!(["remote__echo", "remote__keys"]),
        "{s}"
    );

    // Key order, as sent, both ways, in text and structured content.
    let order = json!(["p", "A", "B", "_", "a"]);
    assert_eq!(s["script_keys"]["order"], order, "{s}");
    assert_eq!(s["script_keys"]["structured_d"], order, "{s}");
    assert_eq!(s["script_keys"]["structured"], json!(["order", "d"]), "{s}");
    assert_eq!(
        s["script_keys"]["structured_inner"],
        json!(["z", "b", "a"]),
        "{s}"
    );
    let text_keys = &s["script_keys"]["text"];
    assert!(
        text_keys
            .as_array()
            .is_some_and(|objs| objs.contains(&order)),
        "{s}"
    );
    assert_eq!(s["http_keys"]["structured"], order, "{s}");
    assert_eq!(s["http_keys"]["structured_d"], order, "{s}");

    // build_tool: its languages as an enum, its description naming what it makes.
    assert_eq!(
        s["build_language_schema"]["enum"],
        json!(["rust", "python", "javascript"]),
        "{s}"
    );
    let d = s["build_description"].as_str().unwrap_or_default();
    assert!(
        d.contains("Rust") && d.contains("Python") && d.contains("JavaScript"),
        "{d}"
    );
    for (name, want) in [("js_add", "9"), ("js_sub", "5")] {
        assert_eq!(s[format!("build_{name}")]["is_error"], false, "{s}");
        assert_eq!(s[format!("call_{name}")]["is_error"], false, "{s}");
        assert!(
            s[format!("call_{name}")]["text"]
                .as_str()
                .is_some_and(|t| t.contains(want)),
            "{s}"
        );
    }
    // A language it does not build: refused, naming the ones it does.
    assert_eq!(s["build_cobol"]["is_error"], true, "{s}");
    let t = s["build_cobol"]["text"].as_str().unwrap_or_default();
    assert!(t.contains("javascript") && t.contains("python"), "{t}");
    // The history family, from the binary: rolled back to the first version, deleted and
    // restored, the session undone.
    let h = &s["history"];
    assert_eq!(h["versions"], 2, "{s}");
    for step in ["rollback", "delete", "restore", "undo"] {
        assert_eq!(h[step]["is_error"], false, "{step}: {s}");
    }
    assert_eq!(h["after_rollback"], json!({"v": 1}), "{s}");
    assert_eq!(h["listed_after_delete"], false, "{s}");
    assert_eq!(h["after_restore"], json!({"v": 1}), "{s}");
    assert_eq!(h["listed_after_undo"], false, "{s}");
}

#[test]
fn the_clis_hints_name_its_own_commands() {
    let (tmp, tb) = toolbox();
    let tool = tb.tools_dir().join("half");
    std::fs::create_dir_all(&tool).unwrap();
    for f in script_files("half", "Echoes its text") {
        std::fs::write(tool.join(&f.path), &f.contents).unwrap();
    }
    git(tb.root(), &["add", "-A"]);
    git(tb.root(), &["commit", "-q", "-m", "half by hand"]);
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb.root())
        .args(["call", "half", "--args", "{\"text\": 4}"])
        .env("TOOLSMITH_DATA", tmp.path().join("personal"))
        .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("hint: `toolsmith show half`"), "{stderr}");
    assert!(!stderr.contains("get_tool"), "{stderr}");
}
