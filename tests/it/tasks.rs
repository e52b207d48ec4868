//! Long work as MCP tasks over streamable HTTP (the `io.modelcontextprotocol/tasks`
//! extension): a stored tool whose tool.toml says `long = true` runs as a task for a client
//! that declared the extension (created at once, polled with tasks/get, result inlined) and
//! as a plain call for one that did not; a cancelled `build_tool` task ends `cancelled`,
//! leaves no cargo process and commits nothing (the git CLI as oracle).

use crate::common;
use crate::support;

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{HttpServer, McpHttp, example_box};

/// A 2025-11-25 session that declares (or not) the tasks extension.
fn session(url: &str, tasks: bool) -> McpHttp {
    let mut c = McpHttp::new(url, None);
    let caps = if tasks {
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    } else {
        json!({})
    };
    let r = c.post_raw(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": {"name": "tasks-test", "version": "1"}}}).to_string(),
        "application/json",
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let init = &r.messages()[0];
    assert!(
        init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "the server does not advertise tasks: {init}"
    );
    c.session = r
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    c.post_raw(
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        "application/json",
    );
    c
}

/// Poll tasks/get until the task is terminal (or 120 s pass); the last DetailedTask.
fn wait_terminal(c: &mut McpHttp, id: &str) -> Value {
    let start = Instant::now();
    loop {
        let r = c.request("tasks/get", json!({"taskId": id}));
        let task = r["result"].clone();
        let status = task["status"].as_str().unwrap_or("").to_string();
        if ["completed", "failed", "cancelled"].contains(&status.as_str()) {
            return task;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "task {id} stuck: {task}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_long_stored_tool_is_a_task_only_for_clients_that_opt_in() {
    let (_tmp, tb) = example_box();
    let dir = tb.join("tools/slow_hello");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("tool.toml"),
        "name = \"slow_hello\"\ndescription = \"Waits a moment, then greets\"\nkind = \"script\"\n\n[run]\nlanguage = \"bash\"\nentry = \"main.sh\"\nprotocol = \"plain\"\nlong = true\n\n[input_schema]\ntype = \"object\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.sh"),
        "cat > /dev/null\nsleep 1\necho '{\"hello\": \"world\"}'\n",
    )
    .unwrap();
    common::git(&tb, &["add", "tools/slow_hello"]);
    common::git(
        &tb,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "add slow_hello",
        ],
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
    let dir = tb.join("tools/slow_forever");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("tool.toml"),
        "name = \"slow_forever\"\ndescription = \"Sleeps far too long\"\nkind = \"script\"\n\n[run]\nlanguage = \"bash\"\nentry = \"main.sh\"\nprotocol = \"plain\"\nlong = true\n\n[limits]\ntimeout_ms = 120000\n\n[input_schema]\ntype = \"object\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.sh"),
        "cat > /dev/null\nsleep 37.25\necho '{}'\n",
    )
    .unwrap();
    common::git(&tb, &["add", "tools/slow_forever"]);
    common::git(
        &tb,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "add slow_forever",
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
