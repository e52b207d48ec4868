//! Tests for the git layer, with the git CLI as the oracle.

use super::*;
use std::process::Command;
use std::sync::Arc;

fn sig() -> Signature {
    Signature {
        name: "Tool Smith".into(),
        email: "smith@example.com".into(),
    }
}

/// A toolbox repository in a temp dir plus an empty HOME for the git CLI (no identity, no
/// user config).
struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

impl Fixture {
    fn empty() -> Fixture {
        let tmp = tempfile::tempdir().expect("create temp dir");
        let home = tmp.path().join("home");
        std::fs::create_dir(&home).expect("create HOME");
        let repo = tmp.path().join("box");
        Fixture {
            _tmp: tmp,
            home,
            repo,
        }
    }

    /// A toolbox with a .gitignore, a README and one tool `tools/a`.
    fn toolbox() -> Fixture {
        let fx = Fixture::empty();
        init_with_files(
            &fx.repo,
            &[
                (".gitignore", DEFAULT_GITIGNORE.as_bytes()),
                ("README.md", b"# toolbox\n"),
                ("tools/a/tool.toml", b"name = \"a\"\n"),
                ("tools/a/main.py", b"print('a')\n"),
            ],
            "init toolbox",
            &sig(),
        )
        .expect("init toolbox");
        fx
    }

    fn git_output(&self, args: &[&str]) -> std::process::Output {
        Command::new("git")
            .args(args)
            .current_dir(&self.repo)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_AUTHOR_NAME")
            .env_remove("GIT_AUTHOR_EMAIL")
            .env_remove("GIT_COMMITTER_NAME")
            .env_remove("GIT_COMMITTER_EMAIL")
            .env_remove("EMAIL")
            .output()
            .expect("run git")
    }

    fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("git prints UTF-8 here")
    }

    fn write(&self, rela: &str, content: &[u8]) {
        let path = self.repo.join(rela);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write file");
    }

    fn make_executable(&self, rela: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.repo.join(rela);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_owned()
    }

    fn count(&self) -> usize {
        self.git(&["rev-list", "--count", "HEAD"])
            .trim()
            .parse()
            .expect("a number")
    }

    /// `git status` clean, index == HEAD tree exactly, fsck strict clean, no lock left behind.
    fn assert_consistent(&self) {
        assert_eq!(
            self.git(&["status", "--porcelain", "--untracked-files=all"]),
            "",
            "git status must be clean"
        );
        assert_eq!(
            self.git(&["diff-files", "--name-status"]),
            "",
            "work tree must match index"
        );
        assert_eq!(
            self.git(&["write-tree"]),
            self.git(&["rev-parse", "HEAD^{tree}"]),
            "index must match HEAD's tree exactly"
        );
        let fsck = self.git_output(&["fsck", "--strict", "--no-dangling"]);
        assert!(
            fsck.status.success() && fsck.stdout.is_empty() && fsck.stderr.is_empty(),
            "git fsck --strict: {}{}",
            String::from_utf8_lossy(&fsck.stdout),
            String::from_utf8_lossy(&fsck.stderr)
        );
        assert!(
            !self.repo.join(".git/index.lock").exists(),
            "index.lock left behind"
        );
    }

    fn last_message(&self) -> String {
        self.git(&["log", "-1", "--format=%B"])
    }

    fn ls_files(&self) -> String {
        self.git(&["ls-files", "-s"])
    }
}

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

/// `cargo test --release -- --ignored --nocapture bench_`
#[test]
#[ignore = "benchmark; run explicitly in release mode"]
fn bench_commit_dir_with_1000_tools() {
    use std::time::Instant;
    let fx = Fixture::empty();
    let mut contents: Vec<(String, Vec<u8>)> =
        vec![(".gitignore".into(), DEFAULT_GITIGNORE.as_bytes().to_vec())];
    for i in 0..1000 {
        contents.push((
            format!("tools/t{i:04}/tool.toml"),
            format!("name = \"t{i}\"\n").into_bytes(),
        ));
        contents.push((
            format!("tools/t{i:04}/main.py"),
            format!("print({i})\n").into_bytes(),
        ));
    }
    let files: Vec<(&str, &[u8])> = contents
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_slice()))
        .collect();
    let t = Instant::now();
    init_with_files(&fx.repo, &files, "1000 tools", &sig()).expect("init");
    println!("init_with_files, 2001 files: {:?}", t.elapsed());
    fx.assert_consistent();

    let mut times = Vec::new();
    for round in 0..30 {
        let tool = format!("tools/t{:04}", (round * 37) % 1000);
        fx.write(
            &format!("{tool}/main.py"),
            format!("print('round {round}')\n").as_bytes(),
        );
        let t = Instant::now();
        commit_dir(&fx.repo, &tool, &format!("edit {tool}"), &sig())
            .expect("commit")
            .expect("a commit");
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "commit_dir with 1000 tools: min {:?}, median {:?}, max {:?} (30 commits)",
        times[0],
        times[times.len() / 2],
        times[times.len() - 1]
    );
    let t = Instant::now();
    assert_eq!(
        commit_dir(&fx.repo, "tools/t0001", "noop", &sig()).expect("commit"),
        None
    );
    println!("commit_dir without change: {:?}", t.elapsed());

    let t = Instant::now();
    let hist = log(&fx.repo, Some("tools/t0000"), 100).expect("log");
    println!(
        "log(tools/t0000) over 31 commits: {:?} ({} hits)",
        t.elapsed(),
        hist.len()
    );
    let t = Instant::now();
    let files = read_tree_at(&fx.repo, "HEAD~5", "tools/t0500").expect("read");
    println!(
        "read_tree_at one tool: {:?} ({} files)",
        t.elapsed(),
        files.len()
    );
    fx.assert_consistent();
}
