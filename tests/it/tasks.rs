//! Long work as MCP tasks over streamable HTTP (the `io.modelcontextprotocol/tasks`
//! extension): a stored tool whose tool.toml says `long = true` runs as a task for a client
//! that declared the extension (created at once, polled with tasks/get, result inlined) and
//! as a plain call for one that did not; a cancelled `build_tool` task ends `cancelled`,
//! leaves no cargo process and commits nothing (the git CLI as oracle).

use crate::common;
use crate::support;

use serde_json::json;
use std::time::{Duration, Instant};
use support::{HttpServer, example_box, session, wait_terminal};

/// A long script tool: waits a second, then greets (telemetry's task test uses it too).
pub(crate) const SLOW_HELLO: &str = "name = \"slow_hello\"\ndescription = \"Waits a moment, then greets\"\nkind = \"script\"\n\n[run]\nlanguage = \"bash\"\nentry = \"main.sh\"\nprotocol = \"plain\"\nlong = true\n\n[input_schema]\ntype = \"object\"\n";
pub(crate) const SLOW_HELLO_SH: &str = "cat > /dev/null\nsleep 1\necho '{\"hello\": \"world\"}'\n";

#[test]
fn a_long_stored_tool_is_a_task_only_for_clients_that_opt_in() {
    let (_tmp, tb) = example_box();
    common::commit_tool(
        &tb,
        "slow_hello",
        &[("tool.toml", SLOW_HELLO), ("main.sh", SLOW_HELLO_SH)],
    );
    let server = HttpServer::start(&tb, &[], &[]);

    let mut opted = session(&server.url, true);
    let r = opted.request("tools/call", json!({"name": "slow_hello", "arguments": {}}));
    let created = &r["result"];
    assert_eq!(created["resultType"], "task", "{r}");
    let id = created["taskId"].as_str().expect("a taskId").to_string();
    assert!(created.get("content").is_none(), "{r}");
    let task = wait_terminal(&mut opted, &id);
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["structuredContent"]["hello"], "world",
        "{task}"
    );

    // A client that did not opt in gets the plain result, and cannot use tasks/*.
    let mut plain = session(&server.url, false);
    let r = plain.request("tools/call", json!({"name": "slow_hello", "arguments": {}}));
    assert!(r["result"].get("taskId").is_none(), "{r}");
    assert_eq!(r["result"]["structuredContent"]["hello"], "world", "{r}");
    let r = plain.request("tasks/get", json!({"taskId": id}));
    assert_eq!(r["error"]["code"], -32021, "{r}");

    // Cancelling a long tool's task kills its process.
    common::commit_tool(
        &tb,
        "slow_forever",
        &[
            (
                "tool.toml",
                "name = \"slow_forever\"\ndescription = \"Sleeps far too long\"\nkind = \"script\"\n\n[run]\nlanguage = \"bash\"\nentry = \"main.sh\"\nprotocol = \"plain\"\nlong = true\n\n[limits]\ntimeout_ms = 120000\n\n[input_schema]\ntype = \"object\"\n",
            ),
            ("main.sh", "cat > /dev/null\nsleep 37.25\necho '{}'\n"),
        ],
    );
    // A person approves its long time limit (the server's personal directory, see support).
    let approved = std::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["--toolbox", tb.to_str().unwrap(), "approve", "slow_forever"])
        .env("TOOLSMITH_DATA", tb.parent().unwrap().join("personal"))
        .output()
        .unwrap();
    assert!(approved.status.success(), "{approved:?}");
    let start = Instant::now();
    let id = loop {
        let r = opted.request(
            "tools/call",
            json!({"name": "slow_forever", "arguments": {}}),
        );
        if let Some(id) = r["result"]["taskId"].as_str() {
            break id.to_string();
        }
        // The watcher has not indexed the new tool yet.
        assert!(start.elapsed() < Duration::from_secs(10), "{r}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let start = Instant::now();
    while processes_mentioning("sleep 37.25").is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the tool never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    opted.request("tasks/cancel", json!({"taskId": id}));
    assert_eq!(wait_terminal(&mut opted, &id)["status"], "cancelled");
    let start = Instant::now();
    while !processes_mentioning("sleep 37.25").is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "the tool's process outlived the cancel: {:?}",
            processes_mentioning("sleep 37.25")
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Ordinary tools stay ordinary for the opted-in client.
    let r = opted.request(
        "tools/call",
        json!({"name": "word_count", "arguments": {"text": "a b c"}}),
    );
    assert_eq!(r["result"]["structuredContent"]["words"], 3, "{r}");
    let r = opted.request("tasks/get", json!({"taskId": "no-such-task"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if !e
            .file_name()
            .to_string_lossy()
            .chars()
            .all(|c| c.is_ascii_digit())
        {
            continue;
        }
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) && !cmd.contains("toolsmith") {
                found.push(cmd);
            }
        }
    }
    found
}

#[test]
fn a_cancelled_build_task_kills_cargo_and_commits_nothing() {
    let (tmp, tb) = example_box();
    let server = HttpServer::start(&tb, &[], &[]);
    let before = common::commit_count(&tb);
    let mut c = session(&server.url, true);
    // A dependency that takes a while to compile in a fresh cache.
    let r = c.request(
        "tools/call",
        json!({"name": "build_tool", "arguments": {
            "name": "never_built", "description": "Never finishes building",
            "source": "fn main() { println!(\"{}\", serde_json::json!({\"ok\": true})); }\n",
            "crates": {"serde_json": "1"}
        }}),
    );
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    let id = r["result"]["taskId"].as_str().unwrap().to_string();
    let cache = tmp.path().join("cache").to_string_lossy().into_owned();
    // Wait until cargo runs for this server's cache.
    let start = Instant::now();
    while processes_mentioning(&cache).is_empty() {
        let t = c.request("tasks/get", json!({"taskId": id}));
        assert_eq!(
            t["result"]["status"], "working",
            "the build ended before it could be cancelled: {t}"
        );
        assert!(
            t["result"]["statusMessage"].is_string(),
            "no status while working: {t}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "cargo never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let ack = c.request("tasks/cancel", json!({"taskId": id}));
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let task = wait_terminal(&mut c, &id);
    assert_eq!(task["status"], "cancelled", "{task}");
    let start = Instant::now();
    while !processes_mentioning(&cache).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "cargo still runs after the cancel: {:?}",
            processes_mentioning(&cache)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        common::commit_count(&tb),
        before,
        "a cancelled build committed"
    );
    assert!(!tb.join("tools/never_built").exists());
    common::assert_clean(&tb);
}
