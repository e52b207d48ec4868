//! Test helpers: the `git` CLI as the oracle, and temp toolboxes.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Run the git CLI in `dir` and return stdout; panics with stderr on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Write a tool's files under `tb/tools/<name>/` and commit them (as author `t`), the way a
/// person adds a tool by hand.
pub fn commit_tool(tb: &Path, name: &str, files: &[(&str, &str)]) {
    let dir = tb.join("tools").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    git(tb, &["add", &format!("tools/{name}")]);
    commit(tb, &format!("add {name}"));
}

/// Commit what is staged in `dir`, as a test's author.
pub fn commit(dir: &Path, message: &str) {
    git(
        dir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            message,
        ],
    );
}

/// A git repository at `repo` holding `files` (path, text) in one commit.
pub fn git_repo(repo: &Path, files: &[(&str, &str)]) -> std::path::PathBuf {
    for (p, text) in files {
        let path = repo.join(p);
        std::fs::create_dir_all(path.parent().expect("a file in a directory")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    git(repo, &["init", "-q", "-b", "main"]);
    git(repo, &["add", "-A"]);
    commit(repo, "files");
    repo.to_path_buf()
}

/// `git status --porcelain` is empty and `git fsck --strict` is clean.
pub fn assert_clean(dir: &Path) {
    let status = git(dir, &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(status, "", "git status is not clean in {}", dir.display());
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["fsck", "--strict", "--no-progress"])
        .output()
        .expect("git fsck runs");
    assert!(
        out.status.success(),
        "git fsck failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("error") && !err.contains("missing"),
        "git fsck reported: {err}"
    );
}

pub fn commit_count(dir: &Path) -> usize {
    git(dir, &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .expect("a count")
}

/// A minimal valid script manifest.
pub fn script_manifest(name: &str, description: &str) -> String {
    format!(
        "format = 1\nname = \"{name}\"\ndescription = \"{description}\"\nkind = \"script\"\ntags = [\"test\"]\n\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\nprotocol = \"plain\"\n\n[input_schema]\ntype = \"object\"\n[input_schema.properties.text]\ntype = \"string\"\n"
    )
}

pub fn script_files(name: &str, description: &str) -> Vec<toolsmith::toolbox::FileSpec> {
    use toolsmith::toolbox::FileSpec;
    vec![
        FileSpec::new("tool.toml", script_manifest(name, description)),
        FileSpec::new(
            "main.py",
            "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({\"echo\": args}))\n",
        ),
    ]
}

/// A fresh empty toolbox in a temp dir.
pub fn toolbox() -> (tempfile::TempDir, toolsmith::toolbox::Toolbox) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tb = toolsmith::toolbox::Toolbox::init(&tmp.path().join("box"), &[], "test").expect("init");
    (tmp, tb)
}

/// A person approves what the stored tool `name` asks for, on this app's machine (its
/// personal directory), as `toolsmith approve NAME` does.
pub fn approve(app: &toolsmith::app::App, name: &str) {
    let tool = app.tool(name).expect("the tool exists");
    let items = toolsmith::approval::requested(&tool.manifest);
    let dir = app.toolbox.tools_dir().join(name);
    let content = toolsmith::approval::content_hash(&dir, &tool, &items).expect("hash");
    app.gate()
        .decide(
            name,
            &content,
            &items,
            toolsmith::approval::Decision::Approved,
            "test",
        )
        .expect("record the approval");
}

/// Whether a process whose command line contains `marker` is still there a moment after a
/// call returned. A call's processes are killed (SIGKILL) before its result returns; the kernel
/// finishes their exit right after, so one that is still there after two seconds survived.
pub fn leftover(marker: &str) -> bool {
    // pgrep exits 0 when it found a process, 1 when it found none; anything else (or no pgrep
    // at all) means it could not look, and "nothing left" would then be a guess.
    let running = || {
        let out = std::process::Command::new("pgrep")
            .args(["-f", marker])
            .output()
            .unwrap_or_else(|e| {
                panic!("pgrep could not run ({e}), so no survivor can be looked for: install procps (scripts/setup.sh does)")
            });
        match out.status.code() {
            Some(0) => true,
            Some(1) => false,
            _ => panic!(
                "pgrep -f {marker:?} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    };
    for _ in 0..40 {
        if !running() {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    running()
}

/// The Python with the official MCP SDK (`target/test-venv`, made by scripts/setup.sh), or
/// `TOOLSMITH_TEST_PYTHON`.
pub fn python() -> std::path::PathBuf {
    let p = std::env::var_os("TOOLSMITH_TEST_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-venv/bin/python")
        });
    assert!(
        p.exists(),
        "the Python venv with the mcp SDK is missing at {}: run ./scripts/setup.sh (./scripts/test.sh does)",
        p.display()
    );
    p
}

/// The newest environment of `tool` for an ecosystem (`py`, `node`): its generations are
/// `<toolbox>/.toolsmith/env/<tool>/<sub>-<id>/`.
#[allow(dead_code)]
pub fn env_of(root: &std::path::Path, tool: &str, sub: &str) -> Option<std::path::PathBuf> {
    let dir = root.join(".toolsmith/env").join(tool);
    let mut found: Vec<(std::time::SystemTime, std::path::PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&format!("{sub}-")))
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}

/// An HTTP server on 127.0.0.1 answering every request with `hello PATH`; the request
/// lines it saw.
pub fn http_server() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let mut reader = BufReader::new(conn.try_clone().expect("clone"));
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let path = line.split(' ').nth(1).unwrap_or("?").to_string();
            let mut rest = String::new();
            while reader.read_line(&mut rest).is_ok_and(|n| n > 2) {
                rest.clear();
            }
            log.lock().expect("log").push(line.trim().to_string());
            let body = format!("hello {path}");
            let mut conn = conn;
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, seen)
}

/// The sandbox mechanisms a test runs under on Linux: bubblewrap and the in-process sandbox
/// (bubblewrap hidden with `TOOLSMITH_BWRAP=/nonexistent` for that server); the in-process
/// sandbox alone when the whole run hides bubblewrap (`TOOLSMITH_BWRAP` naming a missing file).
#[allow(dead_code)]
pub fn mechanisms() -> &'static [&'static str] {
    let hidden = std::env::var_os("TOOLSMITH_BWRAP").is_some_and(|b| {
        let b = std::path::PathBuf::from(b);
        b.is_absolute() && !b.exists()
    });
    if hidden {
        &["landlock"]
    } else {
        &["bubblewrap", "landlock"]
    }
}
