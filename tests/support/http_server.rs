//! `toolsmith serve --http` in a child process and a raw streamable-HTTP MCP client (ureq on
//! one kept-alive connection), shared by the HTTP and auth tests.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `serve --http` on a free loopback port; killed on drop.
pub struct HttpServer {
    pub child: Child,
    pub addr: String,
    pub url: String,
    /// Everything the server wrote on stderr (read after it exits) goes here.
    pub stderr: PathBuf,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An example toolbox in a temp dir.
pub fn example_box() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let tb = tmp.path().join("box");
    assert!(
        Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .args(["init", "--example"])
            .arg(&tb)
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success()
    );
    (tmp, tb)
}

impl HttpServer {
    /// Start `serve --http 127.0.0.1:PORT EXTRA...` and wait until it listens.
    pub fn start(toolbox: &Path, extra: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let addr = format!("127.0.0.1:{}", free_port());
        let stderr = toolbox
            .parent()
            .unwrap()
            .join(format!("serve-{}.log", free_port()));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        cmd.arg("--toolbox")
            .arg(toolbox)
            .args(["serve", "--http", &addr])
            .args(extra)
            .env("TOOLSMITH_CACHE", toolbox.parent().unwrap().join("cache"))
            // The person's approvals and secrets: beside the toolbox, never the real ones.
            .env("TOOLSMITH_DATA", toolbox.parent().unwrap().join("personal"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let up = (0..400).any(|_| {
            std::thread::sleep(Duration::from_millis(25));
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "serve exited with {status}: {}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
            std::net::TcpStream::connect(&addr).is_ok()
        });
        assert!(up, "serve --http did not listen on {addr}");
        HttpServer {
            child,
            url: format!("http://{addr}/mcp"),
            addr,
            stderr,
        }
    }

    pub fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

/// A streamable-HTTP MCP client (2025-11-25, one session) with an optional bearer token.
pub struct McpHttp {
    pub agent: ureq::Agent,
    pub url: String,
    pub session: Option<String>,
    pub token: Option<String>,
    next: u64,
}

/// status, headers, body of one response.
pub struct Reply {
    pub status: u16,
    pub headers: ureq::http::HeaderMap,
    pub body: String,
}

impl Reply {
    /// The JSON-RPC messages in the body (SSE `data:` lines or one JSON document).
    pub fn messages(&self) -> Vec<Value> {
        let mut v: Vec<Value> = self
            .body
            .lines()
            .filter_map(|l| l.strip_prefix("data:").map(str::trim))
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect();
        if v.is_empty()
            && let Ok(one) = serde_json::from_str(self.body.trim())
        {
            v.push(one);
        }
        v
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

impl McpHttp {
    pub fn new(url: &str, token: Option<&str>) -> McpHttp {
        McpHttp {
            agent: agent(),
            url: url.to_string(),
            session: None,
            token: token.map(str::to_string),
            next: 1,
        }
    }

    /// POST one raw body.
    pub fn post_raw(&self, body: &str, content_type: &str) -> Reply {
        let mut req = self
            .agent
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", content_type)
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if let Some(t) = &self.token {
            req = req.header("authorization", &format!("Bearer {t}"));
        }
        let resp = req.send(body.to_string()).expect("POST /mcp");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.into_body().read_to_string().unwrap_or_default();
        Reply {
            status,
            headers,
            body,
        }
    }

    /// `initialize` + `notifications/initialized`; the reply to `initialize`.
    pub fn initialize(&mut self, client_name: &str) -> Reply {
        self.initialize_with(client_name, json!({}))
    }

    /// `initialize` declaring `capabilities`, then `notifications/initialized`; the session id
    /// kept for the requests after it.
    pub fn initialize_with(&mut self, client_name: &str, capabilities: Value) -> Reply {
        let r = self.post_raw(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": client_name, "version": "1"}}}).to_string(),
            "application/json",
        );
        if r.status == 200 {
            self.session = r
                .headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            self.post_raw(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
                "application/json",
            );
        }
        r
    }

    /// One request; the reply (status and messages).
    pub fn request_reply(&mut self, method: &str, params: Value) -> Reply {
        let id = self.next;
        self.next += 1;
        self.post_raw(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
            "application/json",
        )
    }

    /// One request; its JSON-RPC response (panics on a non-200 reply).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        let r = self.request_reply(method, params);
        assert_eq!(r.status, 200, "{method}: {}", r.body);
        r.messages()
            .into_iter()
            .find(|m| m.get("id") == Some(&json!(id)))
            .unwrap_or_else(|| panic!("no response to {method} in {:?}", r.body))
    }
}

/// A 2025-11-25 session that declares (or not) the tasks extension.
pub fn session(url: &str, tasks: bool) -> McpHttp {
    let mut c = McpHttp::new(url, None);
    let caps = if tasks {
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    } else {
        json!({})
    };
    let r = c.initialize_with("tasks-test", caps);
    assert_eq!(r.status, 200, "{}", r.body);
    let init = &r.messages()[0];
    assert!(
        init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "the server does not advertise tasks: {init}"
    );
    c
}

/// Poll tasks/get until the task is terminal (or 120 s pass); the last DetailedTask.
pub fn wait_terminal(c: &mut McpHttp, id: &str) -> Value {
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
