//! The toolbox spine against real git: every mutation is one clean commit.

use crate::common;
use common::*;
use std::sync::Arc;
use toolsmith::error::Hint;
use toolsmith::index::Index;
use toolsmith::toolbox::{FileSpec, Toolbox};

#[test]
fn init_makes_a_clean_repository_with_the_layout() {
    let (_tmp, tb) = toolbox();
    assert_clean(tb.root());
    for f in ["README.md", ".gitignore", ".gitattributes"] {
        assert!(tb.root().join(f).is_file(), "{f} missing");
    }
    assert!(tb.root().join("tools").is_dir());
    let msg = git(tb.root(), &["log", "-1", "--format=%B"]);
    assert!(msg.contains("Actor: test"), "{msg}");
    assert_eq!(git(tb.root(), &["branch", "--show-current"]).trim(), "main");
    let ignore = std::fs::read_to_string(tb.root().join(".gitignore")).unwrap();
    assert!(
        ignore.contains(".venv/") && ignore.contains("node_modules/") && ignore.contains("target/")
    );
}

#[test]
fn every_mutation_is_one_clean_commit_with_trailers() {
    let (_tmp, tb) = toolbox();
    let base = commit_count(tb.root());

    let out = tb
        .write_tool(
            "echo",
            &script_files("echo", "Echoes its input"),
            "claude-desktop",
        )
        .unwrap();
    assert_eq!(out.action, "add");
    assert_clean(tb.root());
    assert_eq!(commit_count(tb.root()), base + 1);
    let msg = git(tb.root(), &["log", "-1", "--format=%B"]);
    assert!(msg.starts_with("add echo: Echoes its input"), "{msg}");
    assert!(
        msg.contains("Tool: echo") && msg.contains("Actor: claude-desktop"),
        "{msg}"
    );
    assert_eq!(
        git(tb.root(), &["show", "HEAD:tools/echo/main.py"])
            .lines()
            .next(),
        Some("import json, sys")
    );

    // Update: replaces the whole directory (a dropped file disappears from git too).
    let mut files = script_files("echo", "Echoes its input, louder");
    files.push(FileSpec {
        path: "run.sh".into(),
        contents: b"#!/bin/sh\necho hi\n".to_vec(),
        executable: true,
    });
    tb.write_tool("echo", &files, "cli").unwrap();
    assert_clean(tb.root());
    assert!(
        git(tb.root(), &["log", "-1", "--format=%s"])
            .starts_with("update echo: Echoes its input, louder")
    );
    assert!(
        git(tb.root(), &["ls-files", "-s", "tools/echo/run.sh"]).starts_with("100755"),
        "executable bit kept"
    );

    let files = vec![
        FileSpec::new("tool.toml", script_manifest("echo", "Echoes")),
        FileSpec::new("main.py", "print(1)\n"),
    ];
    tb.write_tool("echo", &files, "cli").unwrap();
    assert_clean(tb.root());
    assert_eq!(
        git(tb.root(), &["ls-files", "tools/echo"]).lines().count(),
        2
    );

    // Writing the same content again makes no commit.
    let n = commit_count(tb.root());
    let again = tb.write_tool("echo", &files, "cli").unwrap();
    assert!(again.commit.is_none());
    assert_eq!(commit_count(tb.root()), n);

    tb.delete_tool("echo", "cli").unwrap();
    assert_clean(tb.root());
    assert!(!tb.root().join("tools/echo").exists());
    assert!(git(tb.root(), &["log", "-1", "--format=%B"]).starts_with("delete echo:"));
    // History keeps it.
    assert!(
        git(tb.root(), &["log", "--format=%s", "--", "tools/echo"])
            .lines()
            .count()
            >= 3
    );

    // A commit with the git CLI on top keeps working.
    std::fs::write(tb.root().join("NOTES.md"), "hand-written\n").unwrap();
    git(tb.root(), &["add", "NOTES.md"]);
    git(
        tb.root(),
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@x",
            "commit",
            "-q",
            "-m",
            "notes",
        ],
    );
    assert_clean(tb.root());
    tb.write_tool("again", &script_files("again", "Again"), "cli")
        .unwrap();
    assert_clean(tb.root());
}

#[test]
fn hostile_names_are_refused_and_nothing_leaves_the_toolbox() {
    let (tmp, tb) = toolbox();
    let before = git(tb.root(), &["rev-parse", "HEAD"]);
    let long = "a".repeat(300);
    for name in [
        "../x",
        "/abs",
        "a/b",
        "",
        &long,
        ".git",
        "a\nb",
        "a\u{1b}b",
        "..",
        "call_tool",
    ] {
        let err = tb
            .write_tool(name, &script_files("x", "x"), "t")
            .expect_err(name);
        assert!(err.hint().is_some(), "{name:?}: {err}");
    }
    // Bad file paths inside a tool are refused too.
    for path in ["../escape.txt", "/etc/evil", "a/../../b", ".git/config"] {
        let mut files = script_files("ok", "ok");
        files.push(FileSpec::new(path, "x"));
        assert!(tb.write_tool("ok", &files, "t").is_err(), "{path}");
    }
    assert_eq!(git(tb.root(), &["rev-parse", "HEAD"]), before);
    assert_clean(tb.root());
    let mut outside: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    outside.sort();
    assert_eq!(
        outside,
        vec!["box".to_string()],
        "nothing written beside the toolbox"
    );
    assert!(!std::path::Path::new("/abs").exists());
    let tools: Vec<_> = std::fs::read_dir(tb.tools_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(tools.len(), 1, "only .gitkeep in tools/: {tools:?}");
}

#[test]
fn twenty_concurrent_writers_lose_nothing() {
    let (_tmp, tb) = toolbox();
    let base = commit_count(tb.root());
    let tb = Arc::new(tb);
    let handles: Vec<_> = (0..20)
        .map(|i| {
            let tb = Arc::clone(&tb);
            std::thread::spawn(move || {
                let name = format!("tool{i}");
                tb.write_tool(
                    &name,
                    &script_files(&name, &format!("Tool number {i}")),
                    "t",
                )
                .map(|o| o.commit.is_some())
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap().unwrap(), "each writer made a commit");
    }
    assert_eq!(commit_count(tb.root()), base + 20);
    assert_clean(tb.root());
    assert_eq!(Index::build(tb.root()).tools().count(), 20);
    for i in 0..20 {
        assert_eq!(
            git(
                tb.root(),
                &["log", "--format=%s", "--", &format!("tools/tool{i}")]
            )
            .lines()
            .count(),
            1
        );
    }
}

#[test]
fn concurrent_writers_in_separate_processes_lose_nothing() {
    let (_tmp, tb) = toolbox();
    let base = commit_count(tb.root());
    let bin = env!("CARGO_BIN_EXE_toolsmith");
    let children: Vec<_> = (0..6)
        .map(|i| {
            std::process::Command::new(bin)
                .args([
                    "--toolbox",
                    tb.root().to_str().unwrap(),
                    "new",
                    &format!("proc{i}"),
                    "--lang",
                    "bash",
                ])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    assert_eq!(commit_count(tb.root()), base + 6);
    assert_clean(tb.root());
}

#[test]
fn an_interrupted_write_leaves_the_old_tool_or_the_new_one() {
    let (_tmp, tb) = toolbox();
    tb.write_tool("keep", &script_files("keep", "Old version"), "t")
        .unwrap();
    let head = git(tb.root(), &["rev-parse", "HEAD"]);
    // A live writer's staging directory (this process) is never touched by recovery.
    let live = tb
        .tools_dir()
        .join(format!(".staging-other-{}-9", std::process::id()));
    std::fs::create_dir_all(&live).unwrap();
    // A crash while preparing: a half-written staging directory is left behind.
    let staging = tb.tools_dir().join(".staging-keep-999999999-2");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::write(staging.join("tool.toml"), "name = \"kee").unwrap();
    // A crash between moving the old directory aside and moving the new one in.
    let trash = tb.tools_dir().join(".trash-keep-999999999-3");
    std::fs::rename(tb.tools_dir().join("keep"), &trash).unwrap();
    // The index never shows the half-written directory.
    assert!(
        Index::build(tb.root())
            .get(".staging-keep-999999999-2")
            .is_none()
    );

    let tb = Toolbox::open(tb.root()).unwrap();
    assert!(!staging.exists() && !trash.exists());
    assert!(
        live.exists(),
        "a live process's staging directory is left alone"
    );
    std::fs::remove_dir_all(&live).unwrap();
    let idx = Index::build(tb.root());
    assert_eq!(
        idx.tool("keep").unwrap().manifest.description,
        "Old version"
    );
    assert_eq!(git(tb.root(), &["rev-parse", "HEAD"]), head);
    assert_clean(tb.root());
}

#[test]
fn log_lists_a_tools_versions_newest_first() {
    let (_tmp, tb) = toolbox();
    tb.write_tool("a", &script_files("a", "First"), "t")
        .unwrap();
    tb.write_tool("b", &script_files("b", "Other"), "t")
        .unwrap();
    tb.write_tool("a", &script_files("a", "Second"), "t")
        .unwrap();
    let log = tb.log(Some("a"), 10).unwrap();
    let summaries: Vec<_> = log.iter().map(|c| c.summary.as_str()).collect();
    assert_eq!(summaries, vec!["update a: Second", "add a: First"]);
    assert!(tb.log(Some("../a"), 10).is_err());
}

#[test]
fn each_toolbox_commits_with_its_own_identity() {
    let (_t1, one) = toolbox();
    let (_t2, two) = toolbox();
    git(one.root(), &["config", "user.name", "Ada One"]);
    git(one.root(), &["config", "user.email", "ada@one.example"]);
    git(two.root(), &["config", "user.name", "Bob Two"]);
    git(two.root(), &["config", "user.email", "bob@two.example"]);
    // Interleaved in one process: no identity is remembered from the other toolbox.
    for (tb, who) in [
        (&one, "Ada One <ada@one.example>"),
        (&two, "Bob Two <bob@two.example>"),
        (&one, "Ada One <ada@one.example>"),
    ] {
        tb.write_tool("echo", &script_files("echo", who), "t")
            .unwrap();
        assert_eq!(
            git(tb.root(), &["log", "-1", "--format=%an <%ae>|%cn <%ce>"]).trim(),
            format!("{who}|{who}")
        );
        assert_clean(tb.root());
    }
    // A change of the identity between writes is seen at the next write.
    git(two.root(), &["config", "user.name", "Bob Renamed"]);
    two.delete_tool("echo", "t").unwrap();
    assert_eq!(
        git(two.root(), &["log", "-1", "--format=%an"]).trim(),
        "Bob Renamed"
    );
}
