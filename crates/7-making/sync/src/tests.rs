//! The rules of a sync that need no remote: what `--take` accepts, and what a plan takes from
//! a target commit (tools and top-level files; anything else refused; local changes refused),
//! over a real git repository.

use super::*;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A repository with one tool (`a`), and the commit id.
fn repo() -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    git(tmp.path(), &["init", "-q", "-b", "main"]);
    write(tmp.path(), "tools/a/main.py", "print(1)\n");
    write(tmp.path(), "tools/a/tool.toml", "name = \"a\"\n");
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-qm", "a"]);
    let head = git(tmp.path(), &["rev-parse", "HEAD"]);
    (tmp, head)
}

fn commit(dir: &Path, message: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", message]);
    git(dir, &["rev-parse", "HEAD"])
}

#[test]
fn take_is_a_name_and_a_side() {
    assert_eq!(parse_take("a=ours").unwrap(), ("a".into(), Side::Ours));
    assert_eq!(parse_take("a=theirs").unwrap(), ("a".into(), Side::Theirs));
    assert!(parse_take("a").unwrap_err().contains("NAME=ours"));
    assert!(
        parse_take("a=mine")
            .unwrap_err()
            .contains("not `ours` or `theirs`")
    );
}

#[test]
fn a_plan_takes_tools_and_top_level_files_from_the_target() {
    let (tmp, first) = repo();
    let root = tmp.path();
    write(root, "tools/a/main.py", "print(2)\n");
    write(root, "tools/b/main.py", "print(3)\n");
    write(root, "README.md", "# box\n");
    let second = commit(root, "change a, add b and a readme");
    git(root, &["reset", "-q", "--hard", &first]);
    let (changes, top) = plan(root, &first, &second).unwrap();
    let names: Vec<&str> = changes.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert!(
        changes
            .iter()
            .all(|(_, c)| matches!(c, Change::Write { .. }))
    );
    assert_eq!(top.len(), 1);
    assert_eq!(top[0].0, "README.md");
    assert_eq!(top[0].1.as_ref().unwrap().contents, b"# box\n");
    // The other way, b is removed and the readme with it.
    git(root, &["reset", "-q", "--hard", &second]);
    let (changes, top) = plan(root, &second, &first).unwrap();
    assert!(
        changes
            .iter()
            .any(|(n, c)| n == "b" && matches!(c, Change::Remove))
    );
    assert!(top.iter().any(|(p, f)| p == "README.md" && f.is_none()));
}

#[test]
fn a_plan_refuses_what_is_not_a_tool_or_top_level_file() {
    for (path, what) in [
        ("docs/guide.md", "docs/guide.md"),
        ("tools/.gitkeep", "tools/.gitkeep"),
    ] {
        let (tmp, first) = repo();
        write(tmp.path(), path, "x\n");
        let second = commit(tmp.path(), "outside the tools");
        match plan(tmp.path(), &first, &second) {
            Err(SyncError::Unsupported { what: w }) => assert_eq!(w, what),
            other => panic!("{path}: {other:?}"),
        }
    }
}

#[test]
fn a_plan_refuses_a_tool_changed_here_and_not_committed() {
    let (tmp, first) = repo();
    let root = tmp.path();
    write(root, "tools/a/main.py", "print(2)\n");
    let second = commit(root, "change a");
    git(root, &["reset", "-q", "--hard", &first]);
    write(root, "tools/a/main.py", "print(\"mine\")\n");
    match plan(root, &first, &second) {
        Err(SyncError::LocalChanges { paths }) => assert!(paths.contains("tools/a"), "{paths}"),
        other => panic!("{other:?}"),
    }
}
