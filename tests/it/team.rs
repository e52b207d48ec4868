//! Team toolboxes across machines: clones of one toolbox through a bare repository served by a
//! real `git daemon` on 127.0.0.1, following it with `sync` (fast-forward, merge, conflicts
//! settled each way, `--watch`), with the git CLI as the oracle after every step.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use toolsmith::error::Hint;
use toolsmith::sync::{self, Side, SyncError, SyncRequest};
use toolsmith::toolbox::{Actor, FileSpec, Toolbox};

/// A bare repository served by `git daemon` on loopback, and the clones of it.
pub(crate) struct Team {
    pub(crate) tmp: tempfile::TempDir,
    daemon: Child,
    url: String,
}

impl Drop for Team {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Team {
    /// A toolbox `a` made by toolsmith, pushed to a bare repository behind a git daemon.
    pub(crate) fn new() -> (Team, Toolbox) {
        let tmp = tempfile::tempdir().unwrap();
        let bare = tmp.path().join("team.git");
        git(
            tmp.path(),
            &["init", "--quiet", "--bare", "-b", "main", "team.git"],
        );
        git(&bare, &["config", "daemon.receivepack", "true"]);
        let port = free_port();
        let daemon = Command::new("git")
            .args([
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--enable=receive-pack",
                "--listen=127.0.0.1",
            ])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", tmp.path().display()))
            .arg(tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("git daemon starts");
        let url = format!("git://127.0.0.1:{port}/team.git");
        let team = Team { tmp, daemon, url };
        // Wait until the daemon answers.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let ok = Command::new("git")
                .args(["ls-remote", &team.url])
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "git daemon did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let a = Toolbox::init(&team.dir("a"), &[], "test").unwrap();
        git(a.root(), &["remote", "add", "origin", &team.url]);
        git(
            a.root(),
            &["push", "--quiet", "origin", "HEAD:refs/heads/main"],
        );
        (team, a)
    }

    fn dir(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// Another machine: a clone of the team repository, opened by toolsmith.
    pub(crate) fn clone(&self, name: &str) -> Toolbox {
        git(self.tmp.path(), &["clone", "--quiet", &self.url, name]);
        let dir = self.dir(name);
        git(&dir, &["config", "user.name", name]);
        git(
            &dir,
            &["config", "user.email", &format!("{name}@example.com")],
        );
        Toolbox::open(&dir).unwrap()
    }
}

pub(crate) fn write(tb: &Toolbox, name: &str, body: &str) {
    let files = vec![
        FileSpec::new(
            "tool.toml",
            script_manifest(name, &format!("{name}: {body}")),
        ),
        FileSpec::new(
            "main.py",
            format!(
                "import json, sys\nargs = json.load(sys.stdin)\n# {body}\nprint(json.dumps({{\"said\": {body:?}}}))\n"
            ),
        ),
    ];
    tb.write_tool(name, &files, "test").unwrap();
}

fn sync_lib(tb: &Toolbox, take: &[(&str, Side)]) -> Result<sync::SyncOutcome, SyncError> {
    let req = SyncRequest {
        remote: None,
        take: take.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
    };
    sync::sync(tb, &req, &Actor::from("test"))
}

fn head(tb: &Toolbox) -> String {
    git(tb.root(), &["rev-parse", "HEAD"]).trim().to_string()
}

fn main_py(tb: &Toolbox, name: &str) -> String {
    std::fs::read_to_string(tb.root().join("tools").join(name).join("main.py")).unwrap()
}

fn cli(tb: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn three_clones_merge_different_tools_and_settle_conflicts_each_way() {
    let (team, a) = Team::new();
    let b = team.clone("b");
    let c = team.clone("c");

    // Different tools on two machines: a pushes, b merges (one merge commit), c fast-forwards.
    write(&a, "alpha", "from a");
    write(&b, "beta", "from b");
    let o = sync_lib(&a, &[]).unwrap();
    assert_eq!((o.action, o.pushed), ("pushed", true));
    let o = sync_lib(&b, &[]).unwrap();
    assert_eq!(o.action, "merge", "{o:?}");
    assert_eq!(o.changed_tools, vec!["alpha".to_string()]);
    let parents = git(b.root(), &["log", "-1", "--format=%P"]);
    assert_eq!(
        parents.split_whitespace().count(),
        2,
        "a merge commit: {parents}"
    );
    assert_clean(b.root());
    let o = sync_lib(&c, &[]).unwrap();
    assert_eq!(o.action, "fast-forward");
    assert_eq!(head(&c), head(&b), "c fast-forwarded to b's merge");
    for tb in [&b, &c] {
        assert!(tb.root().join("tools/alpha/main.py").exists());
        assert!(tb.root().join("tools/beta/main.py").exists());
        assert_clean(tb.root());
    }
    assert_eq!(sync_lib(&a, &[]).unwrap().action, "fast-forward");
    assert_eq!(sync_lib(&a, &[]).unwrap().action, "up-to-date");
    assert_clean(a.root());

    // The same tool changed on both sides: nothing changes, the conflict names both versions.
    write(&a, "alpha", "a's rewrite");
    write(&b, "alpha", "b's rewrite");
    sync_lib(&a, &[]).unwrap();
    let before = head(&b);
    let e = sync_lib(&b, &[]).unwrap_err();
    let SyncError::Conflict { conflicts } = &e else {
        panic!("expected a conflict, got {e}");
    };
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].name, "alpha");
    let text = e.to_string();
    assert!(
        text.contains("alpha: a's rewrite") && text.contains("alpha: b's rewrite"),
        "both versions' summaries: {text}"
    );
    assert!(
        e.hint().unwrap().contains("--take alpha=ours"),
        "{:?}",
        e.hint()
    );
    assert_eq!(head(&b), before, "nothing half-merged");
    assert!(main_py(&b, "alpha").contains("b's rewrite"));
    assert_clean(b.root());

    // Settled as ours: b keeps its version, and a follows it.
    let o = sync_lib(&b, &[("alpha", Side::Ours)]).unwrap();
    assert_eq!(o.action, "merge");
    assert!(main_py(&b, "alpha").contains("b's rewrite"));
    assert_clean(b.root());
    sync_lib(&a, &[]).unwrap();
    assert!(main_py(&a, "alpha").contains("b's rewrite"));
    assert_clean(a.root());

    // Again, settled as theirs through the CLI: c takes the remote's version.
    sync_lib(&c, &[]).unwrap();
    write(&a, "alpha", "a again");
    write(&c, "alpha", "c again");
    sync_lib(&a, &[]).unwrap();
    let out = cli(c.root(), &["sync"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("alpha") && err.contains("hint:"), "{err}");
    assert_clean(c.root());
    let out = cli(c.root(), &["sync", "--take", "alpha=theirs"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(main_py(&c, "alpha").contains("a again"));
    assert_clean(c.root());
    assert_eq!(
        git(&team.dir("team.git"), &["rev-parse", "main"]).trim(),
        head(&c),
        "c pushed its merge"
    );

    // A change waiting uncommitted where the remote changes the same tool: refused, kept.
    sync_lib(&b, &[]).unwrap();
    write(&a, "beta", "a edits beta");
    sync_lib(&a, &[]).unwrap();
    let edit = b.root().join("tools/beta/main.py");
    std::fs::write(&edit, "print('hand edit')\n").unwrap();
    let e = sync_lib(&b, &[]).unwrap_err();
    assert!(matches!(e, SyncError::LocalChanges { .. }), "{e}");
    assert_eq!(
        std::fs::read_to_string(&edit).unwrap(),
        "print('hand edit')\n"
    );
    git(b.root(), &["checkout", "--", "tools/beta"]);
    sync_lib(&b, &[]).unwrap();
    assert_clean(b.root());

    // A top-level file both sides changed, and a tool deleted on one side while changed on the
    // other: listed as conflicts (the deleted side says so), settled together.
    sync_lib(&a, &[]).unwrap();
    for (tb, text) in [(&a, "# a's toolbox\n"), (&b, "# b's toolbox\n")] {
        std::fs::write(tb.root().join("README.md"), text).unwrap();
        git(tb.root(), &["commit", "-q", "-am", "readme"]);
    }
    tb_delete(&a, "beta");
    write(&b, "beta", "b keeps beta");
    sync_lib(&a, &[]).unwrap();
    let e = sync_lib(&b, &[]).unwrap_err();
    let SyncError::Conflict { conflicts } = &e else {
        panic!("expected conflicts, got {e}");
    };
    let names: Vec<&str> = conflicts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["README.md", "beta"], "{e}");
    let beta = conflicts.iter().find(|c| c.name == "beta").unwrap();
    assert!(beta.theirs.is_none() && beta.ours.is_some(), "{beta:?}");
    assert!(e.to_string().contains("theirs: deleted"), "{e}");
    assert_clean(b.root());
    sync_lib(&b, &[("README.md", Side::Theirs), ("beta", Side::Ours)]).unwrap();
    assert_eq!(
        std::fs::read_to_string(b.root().join("README.md")).unwrap(),
        "# a's toolbox\n"
    );
    assert!(main_py(&b, "beta").contains("b keeps beta"));
    assert_clean(b.root());
    sync_lib(&a, &[]).unwrap();
    assert!(main_py(&a, "beta").contains("b keeps beta"));
    assert_clean(a.root());
}

fn tb_delete(tb: &Toolbox, name: &str) {
    tb.delete_tool(name, "test").unwrap();
}

#[test]
fn sync_watch_keeps_a_machine_following() {
    let (team, a) = Team::new();
    let b = team.clone("b");
    let mut watcher = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(b.root())
        .args(["sync", "--watch", "1s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    write(&a, "gamma", "followed");
    sync_lib(&a, &[]).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !b.root().join("tools/gamma/main.py").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert!(
        b.root().join("tools/gamma/main.py").exists(),
        "b followed a"
    );
    assert_clean(b.root());
}

/// An ed25519 key pair for tests; returns (private key path, public key line).
fn keygen(dir: &Path, who: &str) -> (PathBuf, String) {
    let key = dir.join(format!("{who}_key"));
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", who, "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    (key, public.trim().to_string())
}

fn sign_with(tb: &Toolbox, key: &Path) {
    git(tb.root(), &["config", "gpg.format", "ssh"]);
    git(
        tb.root(),
        &["config", "user.signingkey", &key.display().to_string()],
    );
    git(tb.root(), &["config", "commit.gpgsign", "true"]);
}

fn standing(tb: &Toolbox, name: &str) -> toolsmith::trust::Standing {
    toolsmith::trust::standing(tb, name).unwrap()
}

pub(crate) fn is_held(tb: &Toolbox, name: &str) -> bool {
    matches!(standing(tb, name), toolsmith::trust::Standing::Held(_))
}

#[test]
fn signed_changes_run_unsigned_or_unknown_are_held_until_trusted() {
    use toolsmith::trust::{Standing, Trusted};
    let (team, a) = Team::new();
    let (alice_key, alice_pub) = keygen(team.tmp.path(), "alice");
    let (mallory_key, mallory_pub) = keygen(team.tmp.path(), "mallory");
    // The team's allowed_signers, committed by hand on a.
    std::fs::write(
        a.root().join("allowed_signers"),
        format!("alice@example.com {alice_pub}\n"),
    )
    .unwrap();
    git(a.root(), &["add", "allowed_signers"]);
    git(
        a.root(),
        &[
            "-c",
            "user.name=a",
            "-c",
            "user.email=a@example.com",
            "commit",
            "-q",
            "-m",
            "team keys",
        ],
    );
    sync_lib(&a, &[]).unwrap();
    let b = team.clone("b");
    let c = team.clone("c");
    sign_with(&a, &alice_key);

    // A signed change from an allowed key runs at once on another machine.
    write(&a, "signed_tool", "by alice");
    let signers = team.tmp.path().join("signers");
    std::fs::write(&signers, format!("alice@example.com {alice_pub}\n")).unwrap();
    let allowed = format!("gpg.ssh.allowedSignersFile={}", signers.display());
    git(a.root(), &["-c", &allowed, "verify-commit", "HEAD"]);
    assert_clean(a.root());
    sync_lib(&a, &[]).unwrap();
    let o = sync_lib(&b, &[]).unwrap();
    assert_eq!(o.changed_tools, vec!["signed_tool".to_string()]);
    assert!(o.held.is_empty(), "{o:?}");
    assert!(
        matches!(standing(&b, "signed_tool"), Standing::Trusted(Trusted::Signed { ref signer, .. }) if signer == "alice@example.com"),
        "{:?}",
        standing(&b, "signed_tool")
    );
    let out = cli(
        b.root(),
        &["call", "signed_tool", "--args", r#"{"text":"x"}"#],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("by alice"));
    assert_clean(b.root());

    // An unsigned change is held: listed and readable, calls refused with what to do.
    sync_lib(&c, &[]).unwrap();
    write(&c, "plain_tool", "unsigned");
    sync_lib(&c, &[]).unwrap();
    let o = sync_lib(&b, &[]).unwrap();
    assert_eq!(o.held, vec!["plain_tool".to_string()]);
    let Standing::Held(h) = standing(&b, "plain_tool") else {
        panic!("plain_tool should be held");
    };
    assert_eq!(h.reason, "not signed");
    let out = cli(
        b.root(),
        &["call", "plain_tool", "--args", r#"{"text":"x"}"#],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("held")
            && err.contains("toolsmith review plain_tool")
            && err.contains("toolsmith trust plain_tool"),
        "{err}"
    );
    let out = cli(b.root(), &["list"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("plain_tool"));
    let out = cli(b.root(), &["guide"]);
    let guide = String::from_utf8_lossy(&out.stdout);
    assert!(
        guide.contains("## Held tools") && guide.contains("`plain_tool`"),
        "{guide}"
    );

    // A key not in allowed_signers — even one the same commit adds to allowed_signers.
    sign_with(&c, &mallory_key);
    std::fs::write(
        c.root().join("allowed_signers"),
        format!("alice@example.com {alice_pub}\nmallory@example.com {mallory_pub}\n"),
    )
    .unwrap();
    git(c.root(), &["add", "allowed_signers"]);
    git(c.root(), &["commit", "-q", "-m", "add my key"]);
    write(&c, "signed_tool", "by mallory");
    sync_lib(&c, &[]).unwrap();
    let before = main_py(&b, "signed_tool");
    let o = sync_lib(&b, &[]).unwrap();
    assert!(o.changed_files.contains(&"allowed_signers".to_string()));
    assert_eq!(o.held, vec!["signed_tool".to_string()], "{o:?}");
    let Standing::Held(h) = standing(&b, "signed_tool") else {
        panic!("mallory's version should be held");
    };
    assert!(
        h.reason.contains("mallory@example.com") && h.reason.contains("not accepted"),
        "{}",
        h.reason
    );
    assert!(!before.contains("mallory"));
    assert_clean(b.root());

    // Review shows the diff since the last trusted version; trust lets it run.
    let out = cli(b.root(), &["review", "signed_tool"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let review = String::from_utf8_lossy(&out.stdout);
    assert!(
        review.contains("-# by alice") && review.contains("+# by mallory"),
        "{review}"
    );
    let out = cli(b.root(), &["trust", "signed_tool"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cli(
        b.root(),
        &["call", "signed_tool", "--args", r#"{"text":"x"}"#],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("by mallory"));
    // Trust is bound to that exact content: the next unsigned change is held again.
    write(&c, "signed_tool", "mallory again");
    sync_lib(&c, &[]).unwrap();
    sync_lib(&b, &[]).unwrap();
    assert!(is_held(&b, "signed_tool"));
    assert!(is_held(&b, "plain_tool"), "never trusted here");

    // A signature by a key in no version of allowed_signers at all.
    let (eve_key, _) = keygen(team.tmp.path(), "eve");
    sign_with(&c, &eve_key);
    write(&c, "eve_tool", "by eve");
    sync_lib(&c, &[]).unwrap();
    sync_lib(&b, &[]).unwrap();
    let Standing::Held(h) = standing(&b, "eve_tool") else {
        panic!("eve's tool should be held");
    };
    assert_eq!(h.reason, "signed by a key not in allowed_signers");

    // Alice (accepted) signs a new allowed_signers that adds bob and drops mallory: accepted
    // here although mallory's change before it was not, so bob's signed change runs at once.
    let (bob_key, bob_pub) = keygen(team.tmp.path(), "bob");
    sync_lib(&a, &[]).unwrap();
    std::fs::write(
        a.root().join("allowed_signers"),
        format!("alice@example.com {alice_pub}\nbob@example.com {bob_pub}\n"),
    )
    .unwrap();
    git(a.root(), &["add", "allowed_signers"]);
    git(
        a.root(),
        &[
            "-c",
            "user.name=a",
            "-c",
            "user.email=a@example.com",
            "commit",
            "-q",
            "-m",
            "add bob, drop mallory",
        ],
    );
    sync_lib(&a, &[]).unwrap();
    sync_lib(&c, &[]).unwrap();
    sign_with(&c, &bob_key);
    write(&c, "bob_tool", "by bob");
    sync_lib(&c, &[]).unwrap();
    let o = sync_lib(&b, &[]).unwrap();
    assert!(o.held.is_empty(), "{o:?}");
    assert!(
        matches!(standing(&b, "bob_tool"), Standing::Trusted(Trusted::Signed { ref signer, .. }) if signer == "bob@example.com"),
        "{:?}",
        standing(&b, "bob_tool")
    );
    assert_clean(b.root());

    // A `git pull` by hand ends up held the same way; a person's own `git commit` does not.
    git(c.root(), &["config", "commit.gpgsign", "false"]);
    write(&c, "pulled_tool", "pulled by hand");
    sync_lib(&c, &[]).unwrap();
    git(
        b.root(),
        &["pull", "--quiet", "--no-rebase", "origin", "main"],
    );
    assert!(is_held(&b, "pulled_tool"));
    std::fs::write(b.root().join("tools/pulled_tool/main.py"), "print('{}')\n").unwrap();
    git(b.root(), &["commit", "-q", "-am", "my own fix"]);
    assert!(!is_held(&b, "pulled_tool"));
    assert_clean(b.root());

    // An import is held until trusted; b's own writes never are.
    let out = cli(
        b.root(),
        &[
            "import",
            &a.root().display().to_string(),
            "--path",
            "tools/signed_tool",
            "--name",
            "imported",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(is_held(&b, "imported"));
    write(&b, "own_tool", "mine");
    assert!(!is_held(&b, "own_tool"));
    // Rewriting a held tool here makes it ours; rolling back to the held version (as an AI
    // could) does not trust that version.
    let held_version = head(&b);
    write(&b, "plain_tool", "b's own");
    assert!(!is_held(&b, "plain_tool"));
    toolsmith::history::rollback_tool(&b, "plain_tool", &held_version, "test").unwrap();
    assert!(is_held(&b, "plain_tool"));
    assert_clean(b.root());
}

#[test]
fn a_running_server_follows_a_sync_and_refuses_held_tools_over_mcp() {
    let (team, a) = Team::new();
    let b = team.clone("b");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/team_sync.py");
    let out = Command::new(python())
        .arg(script)
        .args(["--toolsmith", env!("CARGO_BIN_EXE_toolsmith"), "--toolbox"])
        .arg(b.root())
        .arg("--other")
        .arg(a.root())
        .env("TOOLSMITH_CACHE", team.tmp.path().join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "team_sync.py failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary");
    assert_eq!(s["cli_sync_notifications"], 1, "{s}");
    assert_eq!(s["meta_sync_notifications"], 1, "{s}");
    assert_eq!(s["listed"], true, "{s}");
    assert_eq!(s["held_call"]["is_error"], true, "{s}");
    let text = s["held_call"]["text"].as_str().unwrap();
    assert!(
        text.contains("held")
            && text.contains("toolsmith review from_afar")
            && text.contains("toolsmith trust from_afar"),
        "{text}"
    );
    assert_eq!(s["get_tool_ok"], true, "{s}");
    assert_eq!(s["get_tool_held"]["reason"], "not signed", "{s}");
    assert_eq!(s["guide_held"], true, "{s}");
    assert_eq!(s["sync_result"]["action"], "fast-forward", "{s}");
    assert_eq!(
        s["sync_result"]["held"],
        serde_json::json!(["second_afar"]),
        "{s}"
    );
    assert_eq!(s["trusted_call"]["is_error"], false, "{s}");
    assert!(
        s["trusted_call"]["text"]
            .as_str()
            .unwrap()
            .contains("Hello, x!"),
        "{s}"
    );
    assert_clean(b.root());
    assert_clean(a.root());
}

fn git_env(dir: &Path, env: &[(&str, &Path)], args: &[&str], stdin: Option<&[u8]>) -> String {
    use std::io::Write;
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(bytes) = stdin {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn an_integration_interrupted_after_the_branch_moved_is_finished_on_open() {
    // A sync that crashed after moving the branch (a tool and a top-level file changed) but
    // before the staged copies were moved into place and the index written: the next open
    // finishes it from the journal, and git agrees.
    let tmp = tempfile::tempdir().unwrap();
    let tb = Toolbox::init(&tmp.path().join("box"), &[], "test").unwrap();
    write(&tb, "x", "version one");
    let root = tb.root().to_path_buf();
    let v2_main = b"print('version two')\n".to_vec();
    let v2_toml = script_manifest("x", "x: version two").into_bytes();
    let readme = b"# The team's toolbox\n".to_vec();
    // The staged copies, as Toolbox::integrate leaves them.
    let staging = root.join("tools/.staging-x-999999-1");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::write(staging.join("main.py"), &v2_main).unwrap();
    std::fs::write(staging.join("tool.toml"), &v2_toml).unwrap();
    std::fs::write(
        root.join(".git/toolsmith.staging-README.md-999999-1"),
        &readme,
    )
    .unwrap();
    // The commit, made with git plumbing, and the branch moved to it.
    let index = tmp.path().join("tmp-index");
    let env = [("GIT_INDEX_FILE", index.as_path())];
    git_env(&root, &env, &["read-tree", "HEAD"], None);
    for (path, bytes) in [
        ("tools/x/main.py", &v2_main),
        ("tools/x/tool.toml", &v2_toml),
        ("README.md", &readme),
    ] {
        let blob = git_env(&root, &[], &["hash-object", "-w", "--stdin"], Some(bytes));
        let info = format!("100644,{blob},{path}");
        git_env(
            &root,
            &env,
            &["update-index", "--add", "--cacheinfo", &info],
            None,
        );
    }
    let tree = git_env(&root, &env, &["write-tree"], None);
    let commit = git_env(
        &root,
        &[],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit-tree",
            &tree,
            "-p",
            "HEAD",
            "-m",
            "sync: merge",
        ],
        None,
    );
    git(&root, &["update-ref", "refs/heads/main", &commit]);
    let journal = serde_json::json!({
        "pid": 999999,
        "commit": commit,
        "moves": [{"tool": "x", "staging": ".staging-x-999999-1", "trash": ".trash-x-999999-1", "keep_env": true}],
        "prefixes": ["tools/x", "README.md"],
        "branch": "refs/heads/main",
        "files": [{"path": "README.md", "staging": "toolsmith.staging-README.md-999999-1"}],
    });
    std::fs::write(root.join(".git/toolsmith-journal"), journal.to_string()).unwrap();

    let tb = Toolbox::open(&root).unwrap();
    assert_eq!(
        std::fs::read(root.join("tools/x/main.py")).unwrap(),
        v2_main
    );
    assert_eq!(std::fs::read(root.join("README.md")).unwrap(), readme);
    assert!(!root.join(".git/toolsmith-journal").exists());
    assert!(!staging.exists());
    assert_eq!(head(&tb), commit);
    assert_clean(&root);
}
