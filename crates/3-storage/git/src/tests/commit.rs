//! Commits: init, one and several directories, concurrency, staged changes kept.

use super::*;

#[test]
fn init_makes_main_branch_first_commit_and_clean_index() {
    let fx = Fixture::toolbox();
    fx.assert_consistent();
    assert_eq!(fx.git(&["symbolic-ref", "HEAD"]).trim(), "refs/heads/main");
    assert_eq!(fx.count(), 1);
    assert_eq!(fx.last_message(), "init toolbox\n\n");
    assert_eq!(
        fx.git(&["log", "-1", "--format=%an <%ae>|%cn <%ce>"])
            .trim(),
        "Tool Smith <smith@example.com>|Tool Smith <smith@example.com>"
    );
    assert_eq!(
        fx.git(&["ls-files"]),
        ".gitignore\nREADME.md\ntools/a/main.py\ntools/a/tool.toml\n"
    );
    assert_eq!(resolve(&fx.repo, "HEAD").expect("resolve"), fx.head());

    let again = init_with_files(&fx.repo, &[], "again", &sig());
    assert!(
        matches!(again, Err(GitError::AlreadyExists { .. })),
        "{again:?}"
    );
}

#[test]
fn errors_can_cross_threads_and_convert_to_boxed_errors() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<GitError>();
    let boxed: Box<dyn std::error::Error + Send + Sync> =
        Box::new(GitError::InvalidMessage { reason: "x" });
    assert_eq!(boxed.to_string(), "invalid commit message: x");
}

#[test]
fn init_with_duplicate_paths_keeps_the_last_content() {
    let fx = Fixture::empty();
    init_with_files(
        &fx.repo,
        &[("a.txt", b"one"), ("d/b.txt", b"b"), ("a.txt", b"two")],
        "init",
        &sig(),
    )
    .expect("init");
    assert_eq!(fx.git(&["ls-files"]), "a.txt\nd/b.txt\n");
    assert_eq!(fx.git(&["cat-file", "blob", "HEAD:a.txt"]), "two");
    fx.assert_consistent();
}

#[test]
fn a_file_where_the_tool_directory_goes_is_replaced() {
    let fx = Fixture::toolbox();
    // Someone committed a *file* at tools/q with the CLI.
    fx.write("tools/q", b"i am a file");
    fx.git(&["add", "tools/q"]);
    fx.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@x",
        "commit",
        "-q",
        "-m",
        "file q",
    ]);
    // Removing the non-existent directory tools/q/sub leaves the file alone.
    assert_eq!(
        commit_dir(&fx.repo, "tools/q/sub", "nothing", &sig()).expect("commit"),
        None
    );
    fx.assert_consistent();
    // Now the file becomes a directory.
    std::fs::remove_file(fx.repo.join("tools/q")).expect("rm");
    fx.write("tools/q/tool.toml", b"q");
    commit_dir(&fx.repo, "tools/q", "dir q", &sig())
        .expect("commit")
        .expect("a commit");
    assert_eq!(fx.git(&["ls-files", "tools/q"]), "tools/q/tool.toml\n");
    fx.assert_consistent();
}

#[test]
fn init_refuses_bad_paths_before_touching_disk() {
    let fx = Fixture::empty();
    let err =
        init_with_files(&fx.repo, &[("../evil", b"x")], "init", &sig()).expect_err("must fail");
    assert!(matches!(err, GitError::InvalidPath { .. }), "{err:?}");
    assert!(!fx.repo.exists());
}

#[test]
fn commit_dir_lifecycle_keeps_git_consistent() {
    let fx = Fixture::toolbox();

    // Add a new tool directory.
    fx.write("tools/b/tool.toml", b"name = \"b\"\n");
    fx.write("tools/b/src/lib.rs", b"pub fn b() {}\n");
    let c1 = commit_dir(&fx.repo, "tools/b", "add b", &sig())
        .expect("commit")
        .expect("a commit");
    assert_eq!(c1, fx.head());
    assert_eq!(fx.last_message(), "add b\n\n");
    assert_eq!(fx.count(), 2);
    fx.assert_consistent();

    // Modify a file.
    fx.write("tools/b/tool.toml", b"name = \"b\"\nversion = 2\n");
    let c2 = commit_dir(&fx.repo, "tools/b/", "bump b", &sig())
        .expect("commit")
        .expect("a commit");
    assert_eq!(
        fx.git(&["diff", "--name-only", &c1, &c2]),
        "tools/b/tool.toml\n"
    );
    assert_eq!(fx.last_message(), "bump b\n\n");
    fx.assert_consistent();

    // Add an executable file.
    fx.write("tools/b/run.sh", b"#!/bin/sh\necho b\n");
    fx.make_executable("tools/b/run.sh");
    commit_dir(&fx.repo, "tools/b", "add runner", &sig())
        .expect("commit")
        .expect("a commit");
    assert!(fx.ls_files().contains("100755 "), "{}", fx.ls_files());
    assert!(
        fx.git(&["ls-tree", "-r", "HEAD", "tools/b/run.sh"])
            .starts_with("100755 blob")
    );
    fx.assert_consistent();

    // Only the executable bit changes.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            fx.repo.join("tools/b/run.sh"),
            std::fs::Permissions::from_mode(0o644),
        )
        .expect("chmod");
    }
    commit_dir(&fx.repo, "tools/b", "not executable", &sig())
        .expect("commit")
        .expect("a commit");
    assert!(
        fx.git(&["ls-tree", "-r", "HEAD", "tools/b/run.sh"])
            .starts_with("100644 blob")
    );
    fx.assert_consistent();

    // Build output inside a tool is ignored by .gitignore and never committed.
    fx.write("tools/b/target/debug/b", b"\x7fELF...");
    fx.write("tools/b/.venv/bin/python", b"#!");
    fx.write("tools/b/src/__pycache__/x.pyc", b"pyc");
    fx.write("tools/b/node_modules/left-pad/index.js", b"x");
    assert_eq!(
        commit_dir(&fx.repo, "tools/b", "build only", &sig()).expect("commit"),
        None
    );
    assert!(
        !fx.git(&["ls-files"]).contains("target"),
        "{}",
        fx.git(&["ls-files"])
    );
    fx.assert_consistent();

    // Nothing changed: no commit.
    let before = fx.count();
    assert_eq!(
        commit_dir(&fx.repo, "tools/b", "noop", &sig()).expect("commit"),
        None
    );
    assert_eq!(fx.count(), before);

    // A commit made with the git CLI on top works and keeps the status clean.
    fx.write("README.md", b"# toolbox\n\nedited by hand\n");
    fx.git(&["add", "README.md"]);
    fx.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@x",
        "commit",
        "-q",
        "-m",
        "cli edit",
    ]);
    fx.assert_consistent();
    assert_eq!(
        fx.git(&["show", "--name-only", "--format=", "HEAD"]),
        "README.md\n"
    );

    // ... and toolsmith commits on top of the CLI commit.
    fx.write("tools/a/main.py", b"print('a2')\n");
    commit_dir(&fx.repo, "tools/a", "edit a", &sig())
        .expect("commit")
        .expect("a commit");
    assert_eq!(fx.git(&["log", "-2", "--format=%s"]), "edit a\ncli edit\n");
    fx.assert_consistent();

    // Remove a tool directory.
    std::fs::remove_dir_all(fx.repo.join("tools/b")).expect("rm");
    commit_dir(&fx.repo, "tools/b", "remove b", &sig())
        .expect("commit")
        .expect("a commit");
    assert!(!fx.git(&["ls-files"]).contains("tools/b"));
    assert_eq!(fx.git(&["ls-tree", "HEAD", "tools/b"]), "");
    fx.assert_consistent();
    // Removing it again is a no-op.
    assert_eq!(
        commit_dir(&fx.repo, "tools/b", "remove b again", &sig()).expect("commit"),
        None
    );

    // Remove the last tool: `tools` disappears from the tree (no empty trees are written).
    std::fs::remove_dir_all(fx.repo.join("tools/a")).expect("rm");
    commit_dir(&fx.repo, "tools/a", "remove a", &sig())
        .expect("commit")
        .expect("a commit");
    assert_eq!(
        fx.git(&["ls-tree", "--name-only", "HEAD"]),
        ".gitignore\nREADME.md\n"
    );
    fx.assert_consistent();

    // And a CLI commit after all of that still works.
    fx.write("NOTES", b"n\n");
    fx.git(&["add", "NOTES"]);
    fx.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@x",
        "commit",
        "-q",
        "-m",
        "notes",
    ]);
    fx.assert_consistent();
}

#[test]
fn commit_dirs_makes_one_commit_for_several_prefixes() {
    let fx = Fixture::toolbox();
    fx.write("tools/x/tool.toml", b"x");
    fx.write("tools/y/tool.toml", b"y");
    fx.write("tools/y/deep/er/file.txt", b"deep");
    std::fs::remove_dir_all(fx.repo.join("tools/a")).expect("rm");
    let id = commit_dirs(
        &fx.repo,
        &["tools/x", "tools/y", "tools/a", "tools/x"],
        "import x, y; drop a",
        &sig(),
    )
    .expect("commit")
    .expect("a commit");
    assert_eq!(id, fx.head());
    assert_eq!(fx.count(), 2);
    assert_eq!(
        fx.git(&["ls-files", "tools"]),
        "tools/x/tool.toml\ntools/y/deep/er/file.txt\ntools/y/tool.toml\n"
    );
    fx.assert_consistent();

    assert_eq!(
        commit_dirs(&fx.repo, &[], "nothing", &sig()).expect("ok"),
        None
    );
    let nested = commit_dirs(&fx.repo, &["tools/x", "tools/x/sub"], "nested", &sig());
    assert!(
        matches!(nested, Err(GitError::InvalidPath { .. })),
        "{nested:?}"
    );
}

#[test]
fn commit_dir_on_unborn_head_made_by_git_cli() {
    let fx = Fixture::empty();
    std::fs::create_dir_all(&fx.repo).expect("mkdir");
    fx.git(&["init", "-q", "-b", "main"]);
    fx.write("tools/t/tool.toml", b"t");
    assert!(log(&fx.repo, None, 10).expect("log").is_empty());
    let id = commit_dir(&fx.repo, "tools/t", "first", &sig())
        .expect("commit")
        .expect("a commit");
    assert_eq!(id, fx.head());
    assert_eq!(fx.count(), 1);
    assert_eq!(fx.git(&["symbolic-ref", "HEAD"]).trim(), "refs/heads/main");
    fx.assert_consistent();
}

#[test]
fn commit_dir_leaves_other_staged_changes_alone() {
    let fx = Fixture::toolbox();
    fx.write("README.md", b"staged by the user\n");
    fx.git(&["add", "README.md"]);
    fx.write("tools/a/main.py", b"print('changed')\n");
    commit_dir(&fx.repo, "tools/a", "edit a", &sig())
        .expect("commit")
        .expect("a commit");
    assert_eq!(
        fx.git(&["show", "--name-only", "--format=", "HEAD"]),
        "tools/a/main.py\n"
    );
    assert_eq!(fx.git(&["diff", "--cached", "--name-only"]), "README.md\n");
    assert_eq!(fx.git(&["status", "--porcelain"]), "M  README.md\n");
}

#[test]
fn twenty_threads_commit_their_own_tools() {
    let fx = Fixture::toolbox();
    let before = fx.count();
    for i in 0..20 {
        fx.write(
            &format!("tools/t{i}/tool.toml"),
            format!("name = \"t{i}\"\n").as_bytes(),
        );
        fx.write(
            &format!("tools/t{i}/main.py"),
            format!("print({i})\n").as_bytes(),
        );
    }
    let repo = Arc::new(fx.repo.clone());
    let handles: Vec<_> = (0..20)
        .map(|i| {
            let repo = Arc::clone(&repo);
            std::thread::spawn(move || {
                commit_dir(&repo, &format!("tools/t{i}"), &format!("add t{i}"), &sig())
            })
        })
        .collect();
    for handle in handles {
        let result = handle.join().expect("thread must not panic");
        assert!(matches!(result, Ok(Some(_))), "{result:?}");
    }
    assert_eq!(fx.count(), before + 20);
    for i in 0..20 {
        assert_eq!(
            fx.git(&["ls-files", &format!("tools/t{i}")])
                .lines()
                .count(),
            2,
            "tools/t{i}"
        );
    }
    fx.assert_consistent();
}
