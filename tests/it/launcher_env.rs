//! The launcher's environment is toolsmith's (issue 39), driven as a hostile AI would over MCP
//! (tests/py/launcher_env.py), under bubblewrap and under the in-process sandbox (bubblewrap
//! hidden), the server running with a fake key in its temporary HOME. A held imported tool
//! carries a library whose constructor writes a marker file and prints the key; an entry (and a
//! script) asking to preload it — or for any variable that steers a loader or an interpreter —
//! is refused with why before anything starts: no marker, the key nowhere. (Under bubblewrap,
//! `bwrap` itself used to start with the entry's environment, so the constructor ran on the
//! host and the error handed its output back.) A script's approved variable and secret reach
//! only its sandboxed program: no process outside the sandbox holds the secret, bubblewrap's
//! own hold no environment at all.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A constructor that runs wherever the library is loaded: it leaves a marker on the host and
/// prints the key.
const LIBRARY: &str = r#"#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void hit(void) {
    int m = open(MARKER, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (m >= 0) {
        char line[64];
        int n = snprintf(line, sizeof line, "ran in pid %d\n", (int)getpid());
        write(m, line, n);
        close(m);
    }
    int k = open(KEY, O_RDONLY);
    if (k >= 0) {
        char key[4096];
        ssize_t n = read(k, key, sizeof key);
        if (n > 0) write(2, key, n);
        close(k);
    }
}
"#;

/// A repository holding the tool `x` with `libdata.so` beside its script.
fn repo_with_library(dir: &Path, marker: &Path, key: &Path) -> PathBuf {
    let repo = dir.join("library-repo");
    let tool = repo.join("tools/x");
    std::fs::create_dir_all(&tool).unwrap();
    std::fs::write(
        tool.join("tool.toml"),
        script_manifest("x", "Echoes its input"),
    )
    .unwrap();
    std::fs::write(
        tool.join("main.py"),
        "import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n",
    )
    .unwrap();
    let src = dir.join("libdata.c");
    std::fs::write(&src, LIBRARY).unwrap();
    let out = Command::new("gcc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(tool.join("libdata.so"))
        .arg(format!("-DMARKER={:?}", marker.to_string_lossy()))
        .arg(format!("-DKEY={:?}", key.to_string_lossy()))
        .arg(&src)
        .output()
        .expect("gcc (scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(
        &repo,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "a tool with a library",
        ],
    );
    repo
}

fn run(mech: &str) {
    let (tmp, tb) = toolbox();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let nonce = std::process::id();
    let key_text = format!("FAKE-PRIVATE-KEY-{nonce}-do-not-leak");
    let key = home.join(".ssh/id_rsa");
    std::fs::write(
        &key,
        format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{key_text}\n"),
    )
    .unwrap();
    let marker = tmp.path().join("ran-on-the-host");
    let repo = repo_with_library(tmp.path(), &marker, &key);
    let secret = format!("launch-secret-{nonce}-7f3a");
    let mut cmd = Command::new(python());
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/launcher_env.py"))
        .arg("--toolsmith")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb.root())
        .arg("--repo")
        .arg(&repo)
        .arg("--marker")
        .arg(&marker)
        .args(["--key", &key_text, "--secret", &secret])
        .env("HOME", &home)
        .env("TOOLSMITH_DATA", tmp.path().join("personal"))
        .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
        .env("TOOLSMITH_TEST_LAUNCH_ENV", "passed-through")
        .env_remove("TOOLSMITH_ALLOW_UNSANDBOXED");
    if mech == "landlock" {
        cmd.env("TOOLSMITH_BWRAP", "/nonexistent");
    }
    let out = cmd.output().expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{mech}: the client failed:\n{stdout}\n{stderr}"
    );
    let s: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{mech}: no summary ({e}):\n{stdout}\n{stderr}"));
    for (case, r) in s["refused"].as_object().expect("refused") {
        let text = r["text"].as_str().unwrap_or_default();
        assert_eq!(r["error"], json!(true), "{mech} {case}: refused: {text}");
        assert!(
            text.contains("is refused: it ") && text.contains("hint:"),
            "{mech} {case}: the error says why, with a hint: {text}"
        );
    }
    assert_eq!(
        s["marker"],
        json!(false),
        "{mech}: the library ran on the host"
    );
    assert_eq!(
        s["key_seen"],
        json!(false),
        "{mech}: the key reached the AI"
    );
    assert_eq!(
        s["entry_dir"],
        json!(false),
        "{mech}: a refused entry was added"
    );
    assert_eq!(
        s["script_dir"],
        json!(false),
        "{mech}: a refused script was added"
    );
    assert!(!marker.exists(), "{mech}: the library ran on the host");
    // The approved variable and secret reach the program, and only inside its sandbox.
    assert_eq!(
        s["peek"],
        json!({"passed": "passed-through", "secret_len": secret.len()}),
        "{mech}"
    );
    let holders = s["holders"].as_array().expect("holders");
    assert!(!holders.is_empty(), "{mech}: the call's process was seen");
    for h in holders {
        assert_eq!(
            h["outside"],
            json!(false),
            "{mech}: a process outside the sandbox holds the secret: {h}"
        );
    }
    let launchers = s["bwrap_environs"].as_array().expect("bwrap_environs");
    if mech == "bubblewrap" {
        assert!(!launchers.is_empty(), "bubblewrap's processes were seen");
    }
    for env in launchers {
        assert_eq!(
            env,
            &json!(""),
            "{mech}: bubblewrap started with an environment"
        );
    }
}

#[test]
fn an_entry_or_script_cannot_steer_what_starts_it() {
    for &mech in mechanisms() {
        run(mech);
    }
}
