//! Reading history and trees, refusals, and ignore/attribute rules.

use super::*;

#[test]
fn log_lists_only_commits_touching_the_prefix() {
    let fx = Fixture::toolbox();
    let mut expected_b = Vec::new();
    for round in 0..3 {
        fx.write("tools/b/tool.toml", format!("round = {round}\n").as_bytes());
        expected_b.push(
            commit_dir(
                &fx.repo,
                "tools/b",
                &format!("b round {round}\n\nbody {round}"),
                &sig(),
            )
            .expect("commit")
            .expect("a commit"),
        );
        fx.write("tools/a/main.py", format!("print({round})\n").as_bytes());
        commit_dir(&fx.repo, "tools/a", &format!("a round {round}"), &sig())
            .expect("commit")
            .expect("a commit");
    }
    expected_b.reverse();

    let b_log = log(&fx.repo, Some("tools/b"), 100).expect("log");
    let ids: Vec<_> = b_log.iter().map(|c| c.id.clone()).collect();
    assert_eq!(ids, expected_b);
    assert_eq!(
        ids.join("\n") + "\n",
        fx.git(&["log", "--format=%H", "--", "tools/b"])
    );
    assert_eq!(b_log[0].summary, "b round 2");
    assert_eq!(b_log[0].message, "b round 2\n\nbody 2");
    assert_eq!(b_log[0].author, "Tool Smith");
    assert_eq!(b_log[0].email, "smith@example.com");
    let git_time: i64 = fx
        .git(&["log", "-1", "--format=%at", &b_log[0].id])
        .trim()
        .parse()
        .expect("number");
    assert_eq!(b_log[0].time, git_time);

    let a_log = log(&fx.repo, Some("tools/a"), 100).expect("log");
    let a_ids: Vec<_> = a_log.iter().map(|c| c.id.clone()).collect();
    assert_eq!(
        a_ids.join("\n") + "\n",
        fx.git(&["log", "--format=%H", "--", "tools/a"])
    );
    assert_eq!(a_ids.len(), 4, "init + 3 rounds");

    assert_eq!(log(&fx.repo, Some("tools/a"), 2).expect("log").len(), 2);
    let all = log(&fx.repo, None, 100).expect("log");
    let all_ids: Vec<_> = all.iter().map(|c| c.id.clone()).collect();
    assert_eq!(all_ids.join("\n") + "\n", fx.git(&["log", "--format=%H"]));
    assert!(
        log(&fx.repo, Some("tools/nope"), 10)
            .expect("log")
            .is_empty()
    );
    assert!(log(&fx.repo, None, 0).expect("log").is_empty());
}

#[test]
fn read_tree_at_returns_old_contents() {
    let fx = Fixture::toolbox();
    fx.write("tools/a/run.sh", b"#!/bin/sh\n");
    fx.make_executable("tools/a/run.sh");
    fx.write("tools/a/lib/util.py", b"old\n");
    let old = commit_dir(&fx.repo, "tools/a", "v1", &sig())
        .expect("commit")
        .expect("a commit");
    fx.write("tools/a/lib/util.py", b"new\n");
    std::fs::remove_file(fx.repo.join("tools/a/run.sh")).expect("rm");
    commit_dir(&fx.repo, "tools/a", "v2", &sig())
        .expect("commit")
        .expect("a commit");

    let files = read_tree_at(&fx.repo, &old, "tools/a").expect("read");
    let expected: Vec<(String, Vec<u8>, bool)> = vec![
        ("lib/util.py".into(), b"old\n".to_vec(), false),
        ("main.py".into(), b"print('a')\n".to_vec(), false),
        ("run.sh".into(), b"#!/bin/sh\n".to_vec(), true),
        ("tool.toml".into(), b"name = \"a\"\n".to_vec(), false),
    ];
    assert_eq!(files, expected);

    let now = read_tree_at(&fx.repo, "HEAD", "tools/a/").expect("read");
    assert_eq!(
        now.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
        ["lib/util.py", "main.py", "tool.toml"]
    );
    assert_eq!(now[0].1, b"new\n");
    assert_eq!(
        read_tree_at(&fx.repo, "HEAD~1", "tools/a/lib").expect("read"),
        vec![("util.py".into(), b"old\n".to_vec(), false)]
    );
    assert!(
        read_tree_at(&fx.repo, "HEAD", "tools/missing")
            .expect("read")
            .is_empty()
    );
    assert_eq!(read_tree_at(&fx.repo, "HEAD", "").expect("read").len(), 5);
    let not_dir = read_tree_at(&fx.repo, "HEAD", "README.md");
    assert!(
        matches!(not_dir, Err(GitError::NotATreeAt { .. })),
        "{not_dir:?}"
    );
}

#[test]
fn resolve_understands_rev_specs() {
    let fx = Fixture::toolbox();
    fx.write("tools/a/main.py", b"1");
    commit_dir(&fx.repo, "tools/a", "1", &sig()).expect("commit");
    fx.write("tools/a/main.py", b"2");
    commit_dir(&fx.repo, "tools/a", "2", &sig()).expect("commit");
    let head = fx.head();
    assert_eq!(resolve(&fx.repo, "HEAD").expect("HEAD"), head);
    assert_eq!(resolve(&fx.repo, "main").expect("main"), head);
    assert_eq!(resolve(&fx.repo, &head[..8]).expect("prefix"), head);
    assert_eq!(
        resolve(&fx.repo, "HEAD~2").expect("HEAD~2"),
        fx.git(&["rev-parse", "HEAD~2"]).trim()
    );
    fx.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@x",
        "tag",
        "-a",
        "-m",
        "v1",
        "v1",
        "HEAD~1",
    ]);
    assert_eq!(
        resolve(&fx.repo, "v1").expect("annotated tag"),
        fx.git(&["rev-parse", "HEAD~1"]).trim()
    );
    let bad = resolve(&fx.repo, "no-such-branch");
    assert!(
        matches!(bad, Err(GitError::UnknownRevision { .. })),
        "{bad:?}"
    );
    let tree = resolve(&fx.repo, "HEAD^{tree}");
    assert!(
        matches!(tree, Err(GitError::UnknownRevision { .. })),
        "{tree:?}"
    );
    let msg = resolve(&fx.repo, "HEAD~99")
        .expect_err("too far")
        .to_string();
    assert!(msg.contains("HEAD~99"), "{msg}");
}

#[test]
fn symlinks_and_nested_repositories_are_refused_without_side_effects() {
    let fx = Fixture::toolbox();
    let head = fx.head();
    fx.write("tools/s/tool.toml", b"s");
    std::os::unix::fs::symlink("tool.toml", fx.repo.join("tools/s/link")).expect("symlink");
    let err = commit_dir(&fx.repo, "tools/s", "with link", &sig()).expect_err("must refuse");
    assert!(matches!(err, GitError::Symlink { .. }), "{err:?}");
    assert!(err.to_string().contains("tools/s/link"), "{err}");
    assert_eq!(fx.head(), head);
    assert!(!fx.repo.join(".git/index.lock").exists());

    // A symlinked tool directory is refused too.
    std::os::unix::fs::symlink(fx.repo.join("tools/a"), fx.repo.join("tools/alias"))
        .expect("symlink");
    let err = commit_dir(&fx.repo, "tools/alias", "alias", &sig()).expect_err("must refuse");
    assert!(matches!(err, GitError::Symlink { .. }), "{err:?}");
    std::fs::remove_file(fx.repo.join("tools/alias")).expect("rm");

    // An ignored symlink is fine (a venv is full of them).
    std::fs::remove_file(fx.repo.join("tools/s/link")).expect("rm");
    std::fs::create_dir_all(fx.repo.join("tools/s/.venv/bin")).expect("mkdir");
    std::os::unix::fs::symlink("/usr/bin/python3", fx.repo.join("tools/s/.venv/bin/python"))
        .expect("symlink");
    commit_dir(&fx.repo, "tools/s", "without link", &sig())
        .expect("commit")
        .expect("a commit");
    fx.assert_consistent();

    fx.write("tools/n/tool.toml", b"n");
    fx.write("tools/n/vendored/.git/HEAD", b"ref: refs/heads/main\n");
    let err = commit_dir(&fx.repo, "tools/n", "nested", &sig()).expect_err("must refuse");
    assert!(matches!(err, GitError::NestedRepository { .. }), "{err:?}");
    assert!(!fx.repo.join(".git/index.lock").exists());
}

#[test]
fn bad_input_is_reported_not_panicked() {
    let fx = Fixture::toolbox();
    for bad in [
        "",
        "/abs",
        "../x",
        "tools/../x",
        "tools//x",
        "tools/.git",
        "./tools",
        "a\\b",
    ] {
        let err = commit_dir(&fx.repo, bad, "m", &sig()).expect_err(bad);
        assert!(
            matches!(err, GitError::InvalidPath { .. }),
            "{bad}: {err:?}"
        );
    }
    let err = commit_dir(&fx.repo, "tools/a", "  \n", &sig()).expect_err("empty message");
    assert!(matches!(err, GitError::InvalidMessage { .. }), "{err:?}");
    let bad_sig = Signature {
        name: "x <y>".into(),
        email: "e".into(),
    };
    let err = commit_dir(&fx.repo, "tools/a", "m", &bad_sig).expect_err("bad signature");
    assert!(matches!(err, GitError::InvalidSignature { .. }), "{err:?}");

    fx.write(
        "tools/w/git~1/config",
        b"an 8.3 alias of .git on NTFS: git refuses it",
    );
    let err = commit_dir(&fx.repo, "tools/w", "m", &sig()).expect_err("protectNTFS");
    assert!(matches!(err, GitError::InvalidPath { .. }), "{err:?}");
    assert!(!fx.repo.join(".git/index.lock").exists());

    fx.write("tools/file", b"not a dir");
    let err = commit_dir(&fx.repo, "tools/file", "m", &sig()).expect_err("a file");
    assert!(matches!(err, GitError::NotADirectory { .. }), "{err:?}");

    let elsewhere = tempfile::tempdir().expect("tmp");
    let err = commit_dir(elsewhere.path(), "tools/a", "m", &sig()).expect_err("no repo");
    assert!(matches!(err, GitError::NotARepository { .. }), "{err:?}");
    assert!(!is_work_tree(elsewhere.path()));
    assert!(is_work_tree(&fx.repo.join("tools")));
    assert!(open(&fx.repo.join("tools/a")).is_ok());
}

#[test]
fn gitattributes_filters_apply_like_git_add() {
    let fx = Fixture::toolbox();
    fx.write(".gitattributes", b"*.txt text eol=lf\n");
    fx.git(&["add", ".gitattributes"]);
    fx.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@x",
        "commit",
        "-q",
        "-m",
        "attrs",
    ]);
    fx.write("tools/a/notes.txt", b"line one\r\nline two\r\n");
    commit_dir(&fx.repo, "tools/a", "crlf notes", &sig())
        .expect("commit")
        .expect("a commit");
    assert_eq!(
        fx.git(&["cat-file", "blob", "HEAD:tools/a/notes.txt"]),
        "line one\nline two\n"
    );
    fx.assert_consistent();
}

#[test]
fn nested_gitignore_and_directory_only_patterns() {
    let fx = Fixture::toolbox();
    fx.write("tools/a/.gitignore", b"*.log\n/cache/\n");
    fx.write("tools/a/run.log", b"log");
    fx.write("tools/a/cache/x", b"c");
    fx.write("tools/a/sub/cache/y", b"kept: /cache/ is anchored");
    fx.write(
        "tools/a/target",
        b"a file named target is kept: target/ only matches directories",
    );
    commit_dir(&fx.repo, "tools/a", "ignores", &sig())
        .expect("commit")
        .expect("a commit");
    assert_eq!(
        fx.git(&["ls-files", "tools/a"]),
        "tools/a/.gitignore\ntools/a/main.py\ntools/a/sub/cache/y\ntools/a/target\ntools/a/tool.toml\n"
    );
    fx.assert_consistent();

    // A tool directory whose files are all ignored is committed as removed.
    fx.write("tools/z/__pycache__/m.pyc", b"x");
    fx.write("tools/z/target/out", b"x");
    assert_eq!(
        commit_dir(&fx.repo, "tools/z", "z", &sig()).expect("commit"),
        None
    );
    fx.assert_consistent();
}

/// A file whose stat data the index recorded (before the index was written) is known unchanged
/// without reading it; an edit of the same size with its mtime put back is not (its ctime
/// moved); nor is a file git has not seen.
#[test]
fn head_files_by_stat_trusts_only_what_the_index_vouches_for() {
    let fx = Fixture::toolbox();
    fx.write("tools/b/tool.toml", b"name = \"b\"\n");
    fx.write("tools/b/run.sh", b"echo b\n");
    fx.make_executable("tools/b/run.sh");
    // Written well before the index, so no entry is "racy".
    std::thread::sleep(std::time::Duration::from_millis(50));
    fx.git(&["add", "tools/b"]);
    fx.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "b",
    ]);
    let files = head_files_by_stat(&fx.repo, "tools/b").expect("listed");
    assert_eq!(
        files,
        vec![
            ("run.sh".to_string(), true, true),
            ("tool.toml".to_string(), false, true)
        ]
    );

    // Same size, mtime restored: the ctime still gives it away.
    let path = fx.repo.join("tools/b/tool.toml");
    let mtime = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .expect("mtime");
    std::thread::sleep(std::time::Duration::from_millis(20));
    fx.write("tools/b/tool.toml", b"name = \"c\"\n");
    std::fs::File::options()
        .write(true)
        .open(&path)
        .and_then(|f| f.set_modified(mtime))
        .expect("set mtime");
    let files = head_files_by_stat(&fx.repo, "tools/b").expect("listed");
    assert_eq!(files[1], ("tool.toml".to_string(), false, false));
    assert!(files[0].2, "the other file is still vouched for");

    // Not in HEAD at all, or not a directory there: nothing listed.
    assert!(
        head_files_by_stat(&fx.repo, "tools/none")
            .expect("ok")
            .is_empty()
    );
    assert!(
        head_files_by_stat(&fx.repo, "README.md")
            .expect("ok")
            .is_empty()
    );
}
