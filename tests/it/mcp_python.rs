//! End to end through the official MCP Python SDK (a client nobody here wrote), over stdio and
//! streamable HTTP, in both protocol eras: list, call, guide, list_changed after CLI and hand edits.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn example_toolbox(tmp: &Path) -> PathBuf {
    let dir = tmp.join("box");
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["init", "--example"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

fn scenario(toolbox: &Path, mode: &str, url: Option<&str>) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/scenario.py");
    let mut cmd = Command::new(python());
    cmd.arg(script)
        .args([
            "--toolsmith",
            env!("CARGO_BIN_EXE_toolsmith"),
            "--mode",
            mode,
            "--toolbox",
        ])
        .arg(toolbox);
    if let Some(u) = url {
        cmd.args(["--url", u]);
    }
    let out = cmd
        .env("TOOLSMITH_CACHE", toolbox.parent().unwrap().join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scenario ({mode}, {url:?}) failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary")
}

fn check(summary: &Value, toolbox: &Path) {
    assert_eq!(summary["word_count"]["words"], 3, "{summary}");
    assert_eq!(summary["slugify"]["slug"], "hello-world", "{summary}");
    assert_eq!(summary["missing_is_error"], true);
    assert!(
        summary["missing_text"].as_str().unwrap().contains("hint:"),
        "{summary}"
    );
    assert_eq!(summary["search_first"], "word_count");
    assert_eq!(summary["guide_has_word_count"], true);
    assert_eq!(summary["edited_description"], "Edited by hand");
    assert_eq!(summary["deleted_gone"], true);
    // The CLI change and the delete are commits; the hand edit is not (git shows it as a change).
    let log = git(toolbox, &["log", "--format=%s"]);
    assert!(
        log.contains("add fresh_tool") && log.contains("delete fresh_tool"),
        "{log}"
    );
    assert!(git(toolbox, &["log", "-1", "--format=%B"]).contains("Actor: "));
}

#[test]
fn python_sdk_legacy_over_stdio() {
    let tmp = tempfile::tempdir().unwrap();
    let tb = example_toolbox(tmp.path());
    let s = scenario(&tb, "legacy", None);
    check(&s, &tb);
    assert_eq!(s["protocol"], "2025-11-25");
    // Legacy peers get exactly one list_changed per settled change.
    assert_eq!(s["cli_change_notifications"], 1, "{s}");
    assert_eq!(s["hand_edit_notifications"], 1, "{s}");
}

#[test]
fn python_sdk_auto_over_stdio() {
    let tmp = tempfile::tempdir().unwrap();
    let tb = example_toolbox(tmp.path());
    let s = scenario(&tb, "auto", None);
    check(&s, &tb);
    assert_eq!(s["protocol"], "2026-07-28");
    assert_eq!(s["cli_change_notifications"], 1, "{s}");
    assert_eq!(s["hand_edit_notifications"], 1, "{s}");
}

struct HttpServer(std::process::Child);
impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve_http(toolbox: &Path) -> (HttpServer, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["--toolbox"])
        .arg(toolbox)
        .args(["serve", "--http", &addr])
        .env("TOOLSMITH_CACHE", toolbox.parent().unwrap().join("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let server = HttpServer(child);
    for _ in 0..200 {
        if std::net::TcpStream::connect(&addr).is_ok() {
            return (server, format!("http://{addr}/mcp"));
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("serve --http did not start listening on {addr}");
}

#[test]
fn python_sdk_both_eras_over_http() {
    let tmp = tempfile::tempdir().unwrap();
    let tb = example_toolbox(tmp.path());
    let (_server, url) = serve_http(&tb);
    let s = scenario(&tb, "legacy", Some(&url));
    check(&s, &tb);
    assert_eq!(s["protocol"], "2025-11-25");
    let s = scenario(&tb, "auto", Some(&url));
    check(&s, &tb);
    assert_eq!(s["protocol"], "2026-07-28");
}

/// build_tool through the Python SDK: progress and log notifications while cargo runs, the new
/// tool callable by its own name, a broken build answered with located compiler errors, and the
/// store-example WASM tool beside it.
#[test]
fn python_sdk_builds_a_wasm_tool_with_progress() {
    let tmp = tempfile::tempdir().unwrap();
    let tb = example_toolbox(tmp.path());
    let script = tmp.path().join("build.py");
    std::fs::write(
        &script,
        r#"import asyncio, json, os, sys
from mcp import Client, StdioServerParameters

SRC = 'use std::io::Read;\nfn main() {\n    let mut s = String::new();\n    std::io::stdin().read_to_string(&mut s).unwrap();\n    println!("{{\\"got\\":{}}}", s.trim());\n}\n'

async def main():
    exe, box = sys.argv[1], sys.argv[2]
    progress, logs, out = [], [], {}
    async def on_log(params):
        logs.append(str(params.data))
    async def on_progress(p, total, message):
        progress.append(message or "")
    server = StdioServerParameters(command=exe, args=["--toolbox", box, "serve"], env={**os.environ})
    async with Client(server, mode="legacy", logging_callback=on_log, read_timeout_seconds=600) as client:
        defs = {t.name: t for t in (await client.list_tools()).tools}
        out["schema_required"] = defs["build_tool"].input_schema.get("required")
        r = await client.call_tool("build_tool", {
            "name": "mcp_echo", "description": "Echoes its arguments", "source": SRC, "crates": {},
            "examples": [{"input": {"text": "x"}, "output": {"got": {"text": "x"}}}],
        }, progress_callback=on_progress)
        out["build_error"] = r.is_error
        out["build"] = r.structured_content
        out["build_text"] = [c.text for c in r.content if hasattr(c, "text")]
        bad = await client.call_tool("build_tool", {"name": "mcp_echo", "source": "fn main() {\n    let x: u32 = \"no\";\n}\n"})
        out["broken_error"] = bad.is_error
        out["broken_text"] = "\n".join(c.text for c in bad.content if hasattr(c, "text"))
        out["listed"] = "mcp_echo" in [t.name for t in (await client.list_tools()).tools]
        out["call"] = (await client.call_tool("mcp_echo", {"text": "hey"})).structured_content
        out["word_count"] = (await client.call_tool("word_count", {"text": "a b"})).structured_content
    out["progress"], out["logs"] = progress, logs
    print(json.dumps(out))

asyncio.run(main())
"#,
    )
    .unwrap();
    let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/wasm-test-cache");
    let out = Command::new(python())
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg(&tb)
        .env("TOOLSMITH_CACHE", &cache)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "build scenario failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("JSON");
    assert_eq!(s["schema_required"], serde_json::json!(["name"]), "{s}");
    assert_eq!(s["build_error"], false, "{s}");
    assert_eq!(s["build"]["action"], "add", "{s}");
    assert_eq!(s["build"]["examples_run"], 1, "{s}");
    let progress: Vec<&str> = s["progress"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(progress.iter().any(|m| m.contains("cargo build")), "{s}");
    assert!(
        s["logs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap_or("").contains("cargo:")),
        "{s}"
    );
    assert_eq!(s["broken_error"], true, "{s}");
    let broken = s["broken_text"].as_str().unwrap();
    assert!(
        broken.contains("src/main.rs:2") && broken.contains("hint:"),
        "{broken}"
    );
    assert_eq!(s["listed"], true, "{s}");
    assert_eq!(
        s["call"],
        serde_json::json!({"got": {"text": "hey"}}),
        "{s}"
    );
    assert_eq!(s["word_count"]["words"], 2, "{s}");
    let log = git(&tb, &["log", "--format=%s", "--", "tools/mcp_echo"]);
    assert_eq!(log.trim(), "add mcp_echo: Echoes its arguments", "{log}");
    assert_clean(&tb);
}
