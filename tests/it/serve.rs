//! `toolsmith serve` over stdio with raw JSON-RPC lines: the start-up line on stderr, exposure
//! modes, pagination, resource subscriptions and updates, completion, and remote binds refused.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    next: u64,
}

impl Client {
    fn start(toolbox: &Path, extra: &[&str]) -> (Client, String) {
        Client::start_with(toolbox, extra, true)
    }

    /// With `startup_line`, wait for the start-up line on stderr (printed once the index is
    /// built) before `initialize`.
    fn start_with(toolbox: &Path, extra: &[&str], startup_line: bool) -> (Client, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("--toolbox")
            .arg(toolbox)
            .arg("serve")
            .args(extra)
            .env("TOOLSMITH_CACHE", toolbox.parent().unwrap().join("cache"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let mut first = Vec::new();
        let mut byte = [0u8; 1];
        while startup_line && stderr.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            first.push(byte[0]);
        }
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let mut c = Client {
            child,
            stdin,
            lines: rx,
            next: 1,
        };
        let init = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "1"}}));
        assert_eq!(init["result"]["serverInfo"]["name"], "toolsmith", "{init}");
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (c, String::from_utf8_lossy(&first).into_owned())
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .expect("a response");
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// Notifications with this method that arrive within `wait`.
    fn notifications(&mut self, method: &str, wait: Duration) -> usize {
        let deadline = std::time::Instant::now() + wait;
        let mut n = 0;
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(v) if v["method"] == method => n += 1,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        n
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn example_box() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("box");
    assert!(
        Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .args(["init", "--example"])
            .arg(&dir)
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success()
    );
    (tmp, dir)
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn startup_line_and_exposure_modes() {
    let (_tmp, tb) = example_box();
    let (mut c, line) = Client::start(&tb, &[]);
    assert!(
        line.contains(&tb.display().to_string())
            && line.contains("7 tools")
            && line.contains("stdio"),
        "{line}"
    );
    let all = tool_names(&c.request("tools/list", json!({})));
    assert!(all.contains(&"word_count".to_string()) && all.contains(&"list_tools".to_string()));
    drop(c);

    let (mut c, _) = Client::start(&tb, &["--expose", "none"]);
    let none = tool_names(&c.request("tools/list", json!({})));
    assert!(
        none.contains(&"call_tool".to_string()) && !none.iter().any(|n| n == "word_count"),
        "{none:?}"
    );
    // Unlisted tools are still callable through call_tool.
    let r = c.request("tools/call", json!({"name": "call_tool", "arguments": {"name": "word_count", "arguments": {"text": "a b"}}}));
    assert_eq!(r["result"]["structuredContent"]["words"], 2, "{r}");
    drop(c);

    // Pin one tool by hand: only it is exposed with --expose pinned.
    let path = tb.join("tools/slugify/tool.toml");
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "kind = \"script\"",
        "kind = \"script\"\npinned = true",
        1,
    );
    std::fs::write(&path, text).unwrap();
    let (mut c, _) = Client::start(&tb, &["--expose", "pinned"]);
    let pinned = tool_names(&c.request("tools/list", json!({})));
    assert!(
        pinned.contains(&"slugify".to_string()) && !pinned.contains(&"word_count".to_string()),
        "{pinned:?}"
    );
    // An unknown tool called by its own name and bad arguments are isError results with a hint.
    let r = c.request("tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    let r = c.request(
        "tools/call",
        json!({"name": "slugify", "arguments": {"txt": "x"}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hint:")
    );
}

#[test]
fn list_tools_pages_and_filters() {
    let (_tmp, tb) = example_box();
    let (mut c, _) = Client::start(&tb, &[]);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"limit": 3});
        if let Some(cur) = &cursor {
            args["cursor"] = json!(cur);
        }
        let r = c.request(
            "tools/call",
            json!({"name": "list_tools", "arguments": args}),
        );
        let page = &r["result"]["structuredContent"];
        seen.extend(
            page["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        match page["next_cursor"].as_str() {
            Some(n) => cursor = Some(n.to_string()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 7, "{seen:?}");
    let r = c.request(
        "tools/call",
        json!({"name": "list_tools", "arguments": {"kind": "wasm"}}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["tools"][0]["name"],
        "word_count"
    );
    let r = c.request(
        "tools/call",
        json!({"name": "list_tools", "arguments": {"tag": "slug"}}),
    );
    let names: Vec<&str> = r["result"]["structuredContent"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["count_slug", "slugify"]);
    let r = c.request(
        "tools/call",
        json!({"name": "get_tool", "arguments": {"name": "word_count", "include_source": true}}),
    );
    let v = &r["result"]["structuredContent"];
    assert_eq!(v["kind"], "wasm");
    assert_eq!(v["sandbox"]["mechanism"], "wasm", "{v}");
    assert!(v["version"]["commit"].as_str().unwrap().len() == 40, "{v}");
    assert!(
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "src/main.rs")
    );
}

#[test]
fn guide_subscription_gets_updates_and_names_complete() {
    let (_tmp, tb) = example_box();
    let (mut c, _) = Client::start(&tb, &[]);
    let r = c.request("resources/subscribe", json!({"uri": "toolsmith://guide"}));
    assert!(r.get("error").is_none(), "{r}");
    // The server answers before its recursive watch of tools/ is in place (that is set up in
    // the background); an edit in that moment is seen only with the next change. Under load
    // the moment can be long: give the watch time to be set up first.
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(
        tb.join("tools/word_count/tool.toml"),
        std::fs::read_to_string(tb.join("tools/word_count/tool.toml"))
            .unwrap()
            .replace("Count the words", "Count all the words"),
    )
    .unwrap();
    assert_eq!(
        c.notifications("notifications/resources/updated", Duration::from_secs(5)),
        1
    );
    let r = c.request("resources/read", json!({"uri": "toolsmith://guide"}));
    assert!(
        r["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Count all the words")
    );
    let r = c.request("completion/complete", json!({"ref": {"type": "ref/resource", "uri": "toolsmith://tools/{name}"}, "argument": {"name": "name", "value": "s"}}));
    assert_eq!(
        r["result"]["completion"]["values"],
        json!(["slugify", "system_info"]),
        "{r}"
    );
    let r = c.request(
        "resources/read",
        json!({"uri": "toolsmith://tools/../../etc/passwd"}),
    );
    assert!(r.get("error").is_some(), "{r}");
}

#[test]
fn remote_binds_need_an_explicit_flag() {
    let (_tmp, tb) = example_box();
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(&tb)
        .args(["serve", "--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a loopback address") && err.contains("--allow-remote"),
        "{err}"
    );
}

#[test]
fn pipelines_and_execute_code_over_mcp() {
    let (_tmp, tb) = example_box();
    let (mut c, _) = Client::start(&tb, &[]);
    let r = c.request(
        "tools/call",
        json!({"name": "pipeline", "arguments": {
            "action": "create", "name": "shout_slug", "description": "Slugify, then count the slug",
            "input_schema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
            "steps": [
                {"name": "s", "tool": "slugify", "args": {"text": "Hello $input.text"}},
                {"tool": "word_count", "args": {"text": "$steps.s.slug"}}
            ],
            "examples": [{"input": {"text": "World"}, "output": {"words": 1, "lines": 1, "chars": 11}}]
        }}),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(
        c.notifications("notifications/tools/list_changed", Duration::from_secs(2)),
        1
    );
    assert!(tool_names(&c.request("tools/list", json!({}))).contains(&"shout_slug".to_string()));
    let r = c.request(
        "tools/call",
        json!({"name": "shout_slug", "arguments": {"text": "Big World"}}),
    );
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"words": 1, "lines": 1, "chars": 15}),
        "{r}"
    );
    let r = c.request("tools/call", json!({"name": "pipeline", "arguments": {"action": "create", "name": "bad", "description": "x", "steps": [{"tool": "missing_tool"}]}}));
    assert_eq!(r["result"]["isError"], true);
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("step 1: tool \"missing_tool\" does not exist"),
        "{r}"
    );
    let r = c.request("tools/call", json!({"name": "execute_code", "arguments": {"language": "python", "code": "return sum(tools.word_count(text=t)['words'] for t in args['texts'])", "args": {"texts": ["a b", "c d e"]}}}));
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"result": 5, "tool_calls": 2}),
        "{r}"
    );
}

/// A toolbox too large to index within the first `tools/list`: the list answers at once with
/// the meta-tools and the recently used tools, then one `list_changed` announces the whole
/// list (capped and ranked as usual).
#[test]
fn a_large_toolbox_lists_at_once_then_announces_the_whole_list() {
    let (_tmp, dir) = example_box();
    for i in 0..6000 {
        let d = dir.join("tools").join(format!("gen_{i:05}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("tool.toml"),
            format!("name = \"gen_{i:05}\"\ndescription = \"Generated tool {i}\"\nkind = \"script\"\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\n"),
        )
        .unwrap();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    std::fs::create_dir_all(dir.join(".toolsmith")).unwrap();
    std::fs::write(
        dir.join(".toolsmith/usage.json"),
        json!({"slugify": now, "gen_04321": now - 1000}).to_string(),
    )
    .unwrap();
    let (mut c, _) = Client::start_with(&dir, &[], false);
    let first = tool_names(&c.request("tools/list", json!({})));
    assert!(first.contains(&"search_tools".to_string()), "{first:?}");
    assert!(first.contains(&"slugify".to_string()), "{first:?}");
    let stored_first = first.iter().filter(|n| n.starts_with("gen_")).count();
    if stored_first < 2 {
        // Answered before the index was built: the recently used tools only, then the news.
        assert!(first.contains(&"gen_04321".to_string()), "{first:?}");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline
                .checked_duration_since(std::time::Instant::now())
                .expect("list_changed once the index is built");
            let v = c.lines.recv_timeout(left).expect("list_changed");
            if v["method"] == "notifications/tools/list_changed" {
                break;
            }
        }
        assert_eq!(
            c.notifications(
                "notifications/tools/list_changed",
                Duration::from_millis(500)
            ),
            0,
            "announced once"
        );
    }
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = c.request("tools/list", params);
        all.extend(tool_names(&page));
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    let stored = all.iter().filter(|n| n.starts_with("gen_")).count();
    assert!(
        stored > 150,
        "the whole ranked list: {stored} generated tools"
    );
    assert!(all.contains(&"slugify".to_string()));
}

/// The history memo follows HEAD without being asked: built when the server starts, caught up
/// after a `git pull` brings a teammate's commit, before any `tool_history` call.
#[test]
fn the_history_memo_follows_head_in_the_background() {
    let (tmp, tb) = example_box();
    let memo = tb.join(".toolsmith/history-v2.bin");
    let git = |dir: &Path, args: &[&str]| {
        let ok = Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    let other = tmp.path().join("other");
    git(
        tmp.path(),
        &["clone", "-q", tb.to_str().unwrap(), other.to_str().unwrap()],
    );
    let (mut c, _) = Client::start(&tb, &[]);
    let stamp = || {
        std::fs::metadata(&memo)
            .ok()
            .map(|m| (m.len(), m.modified().ok()))
    };
    let wait_for = |pred: &dyn Fn() -> bool| {
        (0..200).any(|_| {
            let done = pred();
            if !done {
                std::thread::sleep(Duration::from_millis(50));
            }
            done
        })
    };
    assert!(
        wait_for(&|| stamp().is_some()),
        "the server built the memo at start"
    );
    let before = stamp();
    // A teammate's commit, pulled by hand.
    let toml = other.join("tools/word_count/tool.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text.replace("Count the words", "Count every word")).unwrap();
    git(&other, &["commit", "-qam", "by a teammate"]);
    std::thread::sleep(Duration::from_millis(20));
    git(&tb, &["pull", "-q", "--ff-only", other.to_str().unwrap()]);
    assert!(
        wait_for(&|| stamp() != before),
        "the memo was caught up with the pulled HEAD without a tool_history call"
    );
    let r = c.request(
        "tools/call",
        json!({"name": "tool_history", "arguments": {"name": "word_count"}}),
    );
    assert!(r.to_string().contains("by a teammate"), "{r}");
}

/// The use of a tool is remembered across restarts (it ranks the first `tools/list`): a call
/// made right before the client goes away is on disk once the server has stopped.
#[test]
fn a_call_just_before_the_client_leaves_is_remembered() {
    let (_tmp, tb) = example_box();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(&tb)
        .arg("serve")
        .env("TOOLSMITH_CACHE", tb.parent().unwrap().join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for m in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slugify", "arguments": {"text": "Hello World"}}}),
    ] {
        writeln!(stdin, "{m}").unwrap();
    }
    stdin.flush().unwrap();
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the server answered"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == json!(2) {
            assert_eq!(v["result"]["isError"], false, "{v}");
            break;
        }
    }
    drop(stdin);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server stops when stdin ends"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let usage: Value =
        serde_json::from_slice(&std::fs::read(tb.join(".toolsmith/usage.json")).unwrap()).unwrap();
    // Its last use and how often it was called (what `App::prestart` ranks by after a restart).
    assert!(
        usage["slugify"]["last"].is_u64() && usage["slugify"]["calls"] == json!(1),
        "{usage}"
    );
}
