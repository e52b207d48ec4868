//! No call waits for a helper to start (issue 41), through `toolsmith serve` and the official
//! MCP client (tests/py/first_calls.py), under each mechanism (bubblewrap, and the in-process
//! sandbox with bubblewrap hidden). A registration runs its examples in a staged copy that
//! keeps nothing (no fork server is left for it) and answers with its tool's fork server up,
//! so the first call is forked; after a restart, the first call of a tool nothing was
//! pre-started for starts its own process at once (the audit log says `started`) while the fork
//! server starts beside it, and the calls after it are forked. The audit log's `process` says
//! how each call's process came.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// Run the client against a fresh toolbox under `mech`: its summary and the audit log's
/// `process` of each call, per tool, in order.
fn run(mech: &str) -> (Value, Vec<(String, String)>) {
    let (tmp, tb) = toolbox();
    let env = |cmd: &mut Command| {
        cmd.env("TOOLSMITH_DATA", tmp.path().join("personal"))
            .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
            .env("HOME", tmp.path().join("home"))
            .env_remove("TOOLSMITH_ALLOW_UNSANDBOXED")
            .env_remove("TOOLSMITH_SPARES")
            .env_remove("TOOLSMITH_FORK_SERVERS");
        if mech == "landlock" {
            cmd.env("TOOLSMITH_BWRAP", "/nonexistent");
        }
    };
    let mut cmd = Command::new(python());
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/first_calls.py"))
        .arg("--toolsmith")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb.root());
    env(&mut cmd);
    let out = cmd.output().expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{mech}: the client failed:\n{stdout}\n{stderr}"
    );
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{mech}: no summary ({e}):\n{stdout}\n{stderr}"));
    let mut audit = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    audit
        .arg("--toolbox")
        .arg(tb.root())
        .args(["--json", "audit", "--limit", "100"]);
    env(&mut audit);
    let out = audit.output().expect("toolsmith audit");
    assert!(out.status.success(), "{mech}: toolsmith audit failed");
    let entries: Value = serde_json::from_slice(&out.stdout).expect("the audit as JSON");
    let calls = entries
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| {
            e["event"] == "call" && ["used", "unused"].contains(&e["tool"].as_str().unwrap_or(""))
        })
        .map(|e| {
            (
                e["tool"].as_str().unwrap_or_default().to_string(),
                e["process"].as_str().unwrap_or("none").to_string(),
            )
        })
        .collect();
    (summary, calls)
}

#[test]
fn no_first_call_waits_for_a_fork_server_to_start() {
    for &mech in mechanisms() {
        let (summary, calls) = run(mech);
        assert_eq!(
            summary,
            json!({
                // Nothing of a staged copy is left once a registration is answered, and the
                // tool's fork server is up.
                "used_staged_left": 0, "used_fork_server_at_answer": true,
                "unused_staged_left": 0, "unused_fork_server_at_answer": true,
                "left_by_the_first_server": 0,
                // After the restart: nothing was pre-started for the tool never called; its
                // first call started its process, and a fork server came up beside it.
                "unused_fork_server_before_call": false,
                "unused_fork_server_came": true,
                "used_fork_server_came": true,
            }),
            "{mech}"
        );
        let want: Vec<(String, String)> = [
            // The first server: the registration left the fork server for the first call.
            ("used", "forked"),
            ("used", "forked"),
            // The restart: the first call did not wait for the fork server starting beside it.
            ("unused", "started"),
            ("unused", "forked"),
            // Pre-started after the restart.
            ("used", "forked"),
        ]
        .iter()
        .map(|(t, p)| (t.to_string(), p.to_string()))
        .collect();
        assert_eq!(
            calls, want,
            "{mech}: how each call's process came (audit log)"
        );
    }
}
