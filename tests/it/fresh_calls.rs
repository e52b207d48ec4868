//! Every call starts fresh, by every path (issue 39): a Python tool called three times through
//! `toolsmith serve` by the official MCP client (tests/py/fresh_calls.py), once per path a
//! call's process can come from — a fork server, a spare, a process started for the call —
//! and per mechanism (bubblewrap, and the in-process sandbox with bubblewrap hidden). Each
//! call looks for what the one before left in /tmp, /dev/shm, its working directory, HOME, /
//! and /dev, SysV IPC and POSIX IPC, finds nothing, leaves a marker where it may and fills
//! /dev/shm past its cap. (Under bubblewrap a forked call used to see the previous call's
//! /dev/shm and what it wrote in / and /dev, and a call could pin memory there past the
//! scratch cap.)

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// The client's summary of three calls of the probe through `path` under `mech`.
fn three_calls(mech: &str, path: &str, nonce: u32) -> Value {
    let (tmp, tb) = toolbox();
    let mut cmd = Command::new(python());
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/fresh_calls.py"))
        .arg("--toolsmith")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb.root())
        .args(["--path", path, "--nonce", &nonce.to_string()])
        .env("TOOLSMITH_DATA", tmp.path().join("personal"))
        .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
        .env("HOME", tmp.path().join("home"))
        .env_remove("TOOLSMITH_ALLOW_UNSANDBOXED")
        .env_remove("TOOLSMITH_SPARES")
        .env_remove("TOOLSMITH_FORK_SERVERS");
    if mech == "landlock" {
        cmd.env("TOOLSMITH_BWRAP", "/nonexistent");
    }
    match path {
        "spare" => {
            cmd.env("TOOLSMITH_FORK_SERVERS", "0");
        }
        "cold" => {
            cmd.env("TOOLSMITH_FORK_SERVERS", "0")
                .env("TOOLSMITH_SPARES", "0");
        }
        _ => {}
    }
    let out = cmd.output().expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{mech} {path}: the client failed:\n{stdout}\n{stderr}"
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{mech} {path}: no summary ({e}):\n{stdout}\n{stderr}"))
}

#[test]
fn every_call_starts_fresh_by_every_path() {
    let nonce = std::process::id() ^ (std::time::UNIX_EPOCH.elapsed().unwrap().subsec_nanos());
    let nonce = nonce % 1_000_000;
    for &mech in mechanisms() {
        for path in ["fork", "spare", "cold"] {
            let s = three_calls(mech, path, nonce);
            let taken = (s["fork_server"].as_bool(), s["spares"].as_bool());
            let want = match path {
                "fork" => (Some(true), Some(false)),
                "spare" => (Some(false), Some(true)),
                _ => (Some(false), Some(false)),
            };
            assert_eq!(
                taken, want,
                "{mech} {path}: the path taken (fork server, spares)"
            );
            // The in-process sandbox keeps the host's /tmp out of reach (TMPDIR is the call's
            // scratch), and Landlock refuses POSIX message queues (their file system has no
            // path to grant); everything else is the call's own.
            let (tmp, mq, rest) = if mech == "bubblewrap" {
                ("written", "written", "denied: EROFS")
            } else {
                ("denied: EACCES", "denied: EACCES", "denied: EACCES")
            };
            for (i, call) in s["calls"].as_array().expect("calls").iter().enumerate() {
                let found = &call["found"];
                let nothing: serde_json::Map<String, Value> = found
                    .as_object()
                    .expect("found")
                    .keys()
                    .map(|k| (k.clone(), json!(false)))
                    .collect();
                assert_eq!(
                    found,
                    &Value::Object(nothing),
                    "{mech} {path} call {i}: what an earlier call left"
                );
                let left = &call["left"];
                let mut want = json!({
                    "tmp": tmp, "shm": "written", "cwd": "written", "home": "written",
                    "root": rest, "dev": rest,
                    "sysv_shm": "written", "sysv_msg": "written", "sysv_sem": "written",
                    "posix_shm": "written", "posix_sem": "written", "posix_mq": mq,
                    "big_error": "ENOSPC",
                });
                let mib = left["big_mib"].as_u64().expect("big_mib");
                assert!(
                    mib < toolsmith::sandbox::SHM_MB,
                    "{mech} {path} call {i}: /dev/shm holds at most {} MiB, {mib} MiB written",
                    toolsmith::sandbox::SHM_MB
                );
                want["big_mib"] = json!(mib);
                assert_eq!(left, &want, "{mech} {path} call {i}: what it could leave");
                assert_eq!(call["home_is_cwd"], json!(true), "{mech} {path}");
            }
        }
    }
}
