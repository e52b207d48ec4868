//! `tool_history` against the git CLI as the oracle: without a memo (a fresh clone), after
//! hand commits (no trailers, renames, deletes, restores), with and without git's
//! commit-graph, after a deeper fetch of a shallow clone, and with a memo that was not written
//! on this machine (never trusted).

use crate::common;
use common::*;
use std::path::Path;
use std::process::Command;
use toolsmith::history;
use toolsmith::toolbox::Toolbox;

const MEMO: &str = ".toolsmith/history-v2.bin";

/// `git log` of the tool's directory: the versions `tool_history` must list, in its order.
fn git_log(root: &Path, name: &str) -> Vec<String> {
    git(
        root,
        &["log", "--format=%H", "--", &format!("tools/{name}")],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

fn versions(tb: &Toolbox, name: &str) -> Vec<String> {
    history::tool_history(tb, name, 1000)
        .unwrap()
        .into_iter()
        .map(|v| v.commit)
        .collect()
}

/// `toolsmith history NAME` (a new process with `data` as its personal directory): the
/// commits it lists.
fn cli_history(root: &Path, data: &Path, name: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA", data)
        .arg("--toolbox")
        .arg(root)
        .args(["history", name, "--json", "--limit", "1000"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array()
        .or_else(|| v["versions"].as_array())
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|x| x["commit"].as_str().unwrap().to_string())
        .collect()
}

fn hand_commit(root: &Path, args: &[&str], message: &str) {
    let mut all = vec!["-c", "user.name=Hand", "-c", "user.email=hand@example.com"];
    all.extend_from_slice(args);
    git(root, &all);
    git(
        root,
        &[
            "-c",
            "user.name=Hand",
            "-c",
            "user.email=hand@example.com",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
}

/// A toolbox with writes by toolsmith and by hand: a tool changed without trailers, one
/// renamed with `git mv`, one deleted by hand and restored, and many tools so `tools/` is
/// wider than one entry's change.
fn mixed_history() -> (tempfile::TempDir, Toolbox) {
    let (tmp, tb) = toolbox();
    let root = tb.root().to_path_buf();
    for i in 0..40 {
        let name = format!("t{i:02}");
        tb.write_tool(&name, &script_files(&name, &format!("tool {i}")), "test")
            .unwrap();
    }
    for round in 0..3 {
        for i in (round..40).step_by(7) {
            let name = format!("t{i:02}");
            tb.write_tool(
                &name,
                &script_files(&name, &format!("tool {i}, round {round}")),
                "test",
            )
            .unwrap();
        }
        // By hand, no trailers: edit, add a file, rename, delete, restore.
        let t = root.join(format!("tools/t{:02}/NOTES.md", round + 1));
        std::fs::write(&t, format!("round {round}\n")).unwrap();
        hand_commit(&root, &["add", "-A"], &format!("notes, round {round}"));
    }
    hand_commit(&root, &["mv", "tools/t05", "tools/t05b"], "rename t05");
    hand_commit(&root, &["rm", "-r", "-q", "tools/t06"], "delete t06");
    git(&root, &["checkout", "-q", "HEAD~1", "--", "tools/t06"]);
    git(
        &root,
        &[
            "-c",
            "user.name=Hand",
            "-c",
            "user.email=hand@example.com",
            "commit",
            "-q",
            "-m",
            "restore t06",
        ],
    );
    tb.write_tool("t07", &script_files("t07", "tool 7 again"), "test")
        .unwrap();
    (tmp, tb)
}

fn names(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = git(root, &["log", "--format=", "--name-only"])
        .lines()
        .filter_map(|l| l.strip_prefix("tools/"))
        .filter_map(|l| l.split('/').next())
        .filter(|n| toolsmith::names::validate(n).is_ok())
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

fn check_all(tb: &Toolbox, when: &str) {
    check_names(tb, &names(tb.root()), when);
}

fn check_names(tb: &Toolbox, all: &[String], when: &str) {
    assert!(all.len() > 40, "{all:?}");
    for name in all {
        assert_eq!(
            versions(tb, name),
            git_log(tb.root(), name),
            "{when}: {name}"
        );
    }
}

/// A fresh clone has no memo: the first call builds it and lists what `git log` lists, for
/// every tool; a hand commit afterwards is found; deleting the memo changes nothing.
#[test]
fn history_without_a_memo_equals_git_log_including_hand_commits() {
    let (tmp, tb) = mixed_history();
    let clone = tmp.path().join("clone");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            &format!("file://{}", tb.root().display()),
            clone.to_str().unwrap(),
        ],
    );
    let cb = Toolbox::open(&clone).unwrap();
    assert!(!clone.join(MEMO).exists());
    check_all(&cb, "fresh clone");
    assert!(clone.join(MEMO).exists(), "the first call wrote the memo");

    std::fs::write(clone.join("tools/t09/main.py"), "print('by hand')\n").unwrap();
    hand_commit(&clone, &["add", "-A"], "t09 by hand");
    check_all(&cb, "after a hand commit");
    assert_eq!(
        versions(&cb, "t09")[0],
        git(&clone, &["rev-parse", "HEAD"]).trim()
    );

    std::fs::remove_file(clone.join(MEMO)).unwrap();
    check_all(&cb, "memo deleted");
    assert_clean(&clone);
}

/// git's commit-graph (with changed-path Bloom filters, and then stale: commits after it) does
/// not change any answer.
#[test]
fn history_with_and_without_a_commit_graph_agree() {
    let (_tmp, tb) = mixed_history();
    let root = tb.root();
    git(
        root,
        &["commit-graph", "write", "--reachable", "--changed-paths"],
    );
    assert!(root.join(".git/objects/info/commit-graph").exists());
    check_all(&tb, "with a commit-graph");
    tb.write_tool("t11", &script_files("t11", "after the graph"), "test")
        .unwrap();
    hand_commit(root, &["rm", "-r", "-q", "tools/t12"], "delete t12 by hand");
    check_all(&tb, "with a stale commit-graph");
    assert_clean(root);
}

/// A shallow clone's boundary commit counts as adding every tool; after
/// `git fetch --unshallow` the memo is rebuilt and the full history is listed.
#[test]
fn a_deeper_fetch_replaces_the_shallow_boundary() {
    let (tmp, tb) = mixed_history();
    let shallow = tmp.path().join("shallow");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "3",
            &format!("file://{}", tb.root().display()),
            shallow.to_str().unwrap(),
        ],
    );
    let sb = Toolbox::open(&shallow).unwrap();
    let all = names(tb.root());
    check_names(&sb, &all, "shallow");
    assert!(versions(&sb, "t00").len() < git_log(tb.root(), "t00").len());
    git(&shallow, &["fetch", "-q", "--unshallow"]);
    check_names(&sb, &all, "unshallowed");
    assert_eq!(versions(&sb, "t00"), git_log(tb.root(), "t00"));
}

/// The memo on disk is authenticated with a key of this machine: a memo whose facts were
/// changed (two tools' names swapped, a well-formed lie) is rebuilt, not believed.
#[test]
fn a_memo_that_was_changed_is_not_trusted() {
    let (tmp, tb) = mixed_history();
    let root = tb.root();
    let data = tmp.path().join("data");
    let history = |name: &str| cli_history(root, &data, name);
    assert_eq!(history("t20"), git_log(root, "t20"));
    let memo = std::fs::read(root.join(MEMO)).unwrap();
    let swap = |bytes: &[u8], a: &[u8], b: &[u8]| -> Vec<u8> {
        let mut out = bytes.to_vec();
        for i in 0..out.len() - a.len() {
            if &bytes[i..i + a.len()] == a {
                out[i..i + a.len()].copy_from_slice(b);
            } else if &bytes[i..i + b.len()] == b {
                out[i..i + b.len()].copy_from_slice(a);
            }
        }
        out
    };
    let lie = swap(&memo, b"t20", b"t21");
    assert_ne!(lie, memo);
    std::fs::write(root.join(MEMO), &lie).unwrap();
    assert_eq!(history("t20"), git_log(root, "t20"));
    assert_eq!(history("t21"), git_log(root, "t21"));
    assert_ne!(std::fs::read(root.join(MEMO)).unwrap(), lie, "rebuilt");
    // Another machine's (another key's) memo is rebuilt too.
    let other = tmp.path().join("other");
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA", &other)
        .arg("--toolbox")
        .arg(root)
        .args(["history", "t20", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let theirs = std::fs::read(root.join(MEMO)).unwrap();
    assert_ne!(theirs[8..40], memo[8..40], "written with the other key");
    assert_eq!(history("t20"), git_log(root, "t20"));
    assert_clean(root);
}

/// A server started without a memo has it built in a child process (`toolsmith
/// __history-memo`, so the memory the build takes leaves with the child): the command on its
/// own writes the memo and exits, a server writes it while serving, and either memo answers as
/// `git log` does.
#[test]
fn a_missing_memo_is_built_by_a_child_process() {
    let (tmp, tb) = mixed_history();
    let root = tb.root();
    let data = tmp.path().join("data");
    let memo = root.join(MEMO);
    let toolsmith = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        c.env("TOOLSMITH_DATA", &data).arg("--toolbox").arg(root);
        c
    };
    // `toolsmith history` with the same personal directory: it reads the memo written.
    let history = |name: &str| cli_history(root, &data, name);
    let _ = std::fs::remove_file(&memo);
    let out = toolsmith().arg("__history-memo").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A rebuilt memo is a new file (written beside it, then renamed over it).
    let identity = || {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(&memo).expect("a memo");
        (m.ino(), m.mtime_nsec())
    };
    let written = identity();
    assert_eq!(history("t20"), git_log(root, "t20"));
    assert_eq!(identity(), written, "the memo was used, not rebuilt");

    std::fs::remove_file(&memo).unwrap();
    let mut server = toolsmith()
        .arg("serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !memo.is_file() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server wrote no memo"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = server.kill();
    let _ = server.wait();
    let written = identity();
    assert_eq!(history("t20"), git_log(root, "t20"));
    assert_eq!(history("t33"), git_log(root, "t33"));
    assert_eq!(identity(), written, "the memo was used, not rebuilt");
    assert_eq!(git(root, &["status", "--porcelain"]), "");
}
