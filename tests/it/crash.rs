//! Nothing lost, nothing stuck: writes against stale and live lock files, unsafe git states,
//! and kill -9 at random points of a registration loop (the CLI binary as a child process),
//! with the git CLI as the oracle.

use crate::common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use toolsmith::error::Hint;
use toolsmith::index::Index;
use toolsmith::toolbox::Toolbox;

/// The tool names `tools/` holds in HEAD.
fn committed(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = git(root, &["ls-tree", "--name-only", "HEAD", "tools/"])
        .lines()
        .filter_map(|l| l.strip_prefix("tools/"))
        .filter(|n| !n.starts_with('.'))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// The tool names the indexer lists from the work tree.
fn listed(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = Index::build(root)
        .tools()
        .map(|t| t.manifest.name.clone())
        .collect();
    v.sort();
    v
}

fn age(path: &Path, secs: u64) {
    let out = Command::new("touch")
        .arg("-d")
        .arg(format!("{secs} seconds ago"))
        .arg(path)
        .status()
        .expect("touch runs");
    assert!(out.success());
}

#[test]
fn a_write_that_cannot_commit_leaves_nothing_live() {
    let (_tmp, tb) = toolbox();
    // A lock held open by a live process: the write fails, names the file and the holder,
    // and the new tool is neither on disk nor listed.
    let lock = tb.root().join(".git/index.lock");
    let mut holder = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 3>>'{}'; sleep 30", lock.display()))
        .spawn()
        .expect("sh runs");
    while !lock.exists() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let err = tb
        .write_tool("fresh", &script_files("fresh", "New"), "t")
        .expect_err("a live index.lock must stop the write");
    let text = format!("{err}");
    assert!(text.contains("index.lock"), "{text}");
    assert!(
        text.contains(&holder.id().to_string()),
        "names the holder: {text}"
    );
    assert!(
        err.hint().is_some_and(|h| h.contains("index.lock")),
        "{:?}",
        err.hint()
    );
    assert!(!tb.tools_dir().join("fresh").exists(), "nothing live");
    assert_eq!(listed(tb.root()), Vec::<String>::new());
    holder.kill().expect("kill");
    holder.wait().expect("wait");
    std::fs::remove_file(&lock).expect("rm");
    assert_clean(tb.root());
    tb.write_tool("fresh", &script_files("fresh", "New"), "t")
        .expect("writes work again");
    assert_clean(tb.root());
}

#[test]
fn stale_git_lock_files_of_dead_processes_are_removed() {
    let (_tmp, tb) = toolbox();
    tb.write_tool("a", &script_files("a", "First"), "t")
        .unwrap();
    // Old, unheld, no git process here: git's own lock files left by a crash.
    for f in ["index.lock", "HEAD.lock", "refs/heads/main.lock"] {
        let p = tb.root().join(".git").join(f);
        std::fs::write(&p, b"").unwrap();
        age(&p, 60);
    }
    let start = Instant::now();
    tb.write_tool("a", &script_files("a", "Second"), "t")
        .expect("stale locks are recovered");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    for f in ["index.lock", "HEAD.lock", "refs/heads/main.lock"] {
        assert!(!tb.root().join(".git").join(f).exists(), "{f} removed");
    }
    assert_clean(tb.root());

    // Fresh lock files made by a toolsmith writer that died holding toolsmith's lock (its
    // record is still in toolsmith.lock): removed at once.
    let dead = {
        let mut c = Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    };
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    std::fs::write(
        tb.root().join(".git/toolsmith.lock"),
        format!("{dead} 1 {}\n", now_ms - 200),
    )
    .unwrap();
    for f in ["index.lock", "HEAD.lock"] {
        std::fs::write(tb.root().join(".git").join(f), b"").unwrap();
    }
    let start = Instant::now();
    tb.write_tool("a", &script_files("a", "Third"), "t")
        .expect("a dead writer's locks are recovered");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_clean(tb.root());
    assert_eq!(
        git(tb.root(), &["log", "-1", "--format=%s"]).trim(),
        "update a: Third"
    );
}

#[test]
fn unsafe_git_states_refuse_writes_but_reading_works() {
    let (_tmp, tb) = toolbox();
    tb.write_tool("x", &script_files("x", "Main side"), "t")
        .unwrap();
    let before = git(tb.root(), &["rev-parse", "HEAD"]);

    // Detached HEAD.
    git(tb.root(), &["checkout", "-q", "--detach"]);
    let err = tb
        .write_tool("y", &script_files("y", "Lost"), "t")
        .expect_err("detached HEAD");
    assert!(err.to_string().contains("HEAD is detached"), "{err}");
    assert!(
        err.hint().unwrap_or_default().contains("git switch"),
        "{:?}",
        err.hint()
    );
    assert!(!tb.tools_dir().join("y").exists());
    assert!(tb.delete_tool("x", "t").is_err());
    assert_eq!(listed(tb.root()), vec!["x"], "reading works");
    git(tb.root(), &["switch", "-q", "main"]);
    assert_eq!(git(tb.root(), &["rev-parse", "HEAD"]), before);

    // A merge in progress with a conflict on the tool.
    git(tb.root(), &["switch", "-q", "-c", "other"]);
    std::fs::write(
        tb.tools_dir().join("x/tool.toml"),
        script_manifest("x", "Other side"),
    )
    .unwrap();
    git(tb.root(), &["commit", "-qam", "other side"]);
    git(tb.root(), &["switch", "-q", "main"]);
    tb.write_tool("x", &script_files("x", "Main side again"), "t")
        .unwrap();
    let merge = Command::new("git")
        .args(["-C"])
        .arg(tb.root())
        .args(["merge", "-q", "other"])
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge conflicts");
    assert!(tb.root().join(".git/MERGE_HEAD").exists());
    let head = git(tb.root(), &["rev-parse", "HEAD"]);
    let err = tb
        .write_tool("x", &script_files("x", "Toolsmith wins"), "t")
        .expect_err("merge in progress");
    assert!(err.to_string().contains("a merge is in progress"), "{err}");
    assert!(
        err.hint().unwrap_or_default().contains("git merge --abort"),
        "{:?}",
        err.hint()
    );
    assert_eq!(git(tb.root(), &["rev-parse", "HEAD"]), head, "no commit");
    assert!(
        tb.root().join(".git/MERGE_HEAD").exists(),
        "the merge is not concluded"
    );
    git(tb.root(), &["merge", "--abort"]);
    tb.write_tool("x", &script_files("x", "After the merge"), "t")
        .expect("writes work again");
    assert_clean(tb.root());

    // A branch that does not exist (unborn).
    git(tb.root(), &["symbolic-ref", "HEAD", "refs/heads/nowhere"]);
    let err = tb
        .write_tool("x", &script_files("x", "Nowhere"), "t")
        .expect_err("unborn branch");
    assert!(err.to_string().contains("does not exist"), "{err}");
    git(tb.root(), &["symbolic-ref", "HEAD", "refs/heads/main"]);
}

#[test]
fn kill_9_at_random_points_of_a_registration_loop_loses_nothing() {
    let (_tmp, tb) = toolbox();
    let root = tb.root().to_path_buf();
    let bin = env!("CARGO_BIN_EXE_toolsmith");
    let register = |name: &str, description: &str| {
        let mut c = Command::new(bin);
        c.arg("--toolbox")
            .arg(&root)
            .args(["new", name, "--lang", "bash", "--description", description])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    };
    let delete = |name: &str| {
        let mut c = Command::new(bin);
        c.arg("--toolbox")
            .arg(&root)
            .args(["delete", name])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    };
    // Calibrate: how long one write takes, so kills land anywhere inside one.
    let t = Instant::now();
    assert!(register("base", "Calibration").status().unwrap().success());
    let span = t.elapsed().as_micros().max(1000) as u64;

    // A small deterministic PRNG (xorshift), seeded from the clock; printed for replay.
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("kill loop seed {seed}, one write ~{span} us");
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut kills, mut attempts, mut recoveries, mut max_recovery) = (0, 0, 0, Duration::ZERO);
    let loop_start = Instant::now();
    let mut i = 0;
    while kills < 40 && i < 200 {
        i += 1;
        let name = format!("t{}", i % 5);
        // `new` refuses an existing tool: adds and removes alternate per name.
        let mut cmd = if committed(&root).contains(&name) {
            delete(&name)
        } else {
            register(&name, &format!("Version {i}"))
        };
        let mut child = cmd.spawn().expect("spawn toolsmith");
        let wait = next() % span;
        std::thread::sleep(Duration::from_micros(wait));
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        let status = child.wait().expect("wait");
        attempts += 1;
        if status.code().is_none() {
            kills += 1;
        }
        // What the killed write left for the next one to finish or undo.
        let left_work = root.join(".git/toolsmith-journal").exists()
            || ["index.lock", "HEAD.lock", "refs/heads/main.lock"]
                .iter()
                .any(|f| root.join(".git").join(f).exists())
            || std::fs::metadata(root.join(".git/toolsmith.lock")).is_ok_and(|m| m.len() > 0)
            || std::fs::read_dir(root.join("tools"))
                .unwrap()
                .any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with(".staging")));
        if left_work {
            recoveries += 1;
        }
        // The next write succeeds, and quickly.
        let probe = format!("probe{}", i % 3);
        let t = Instant::now();
        let mut cmd = if committed(&root).contains(&probe) {
            delete(&probe)
        } else {
            register(&probe, "Probe")
        };
        let out = cmd.output().expect("run toolsmith");
        let took = t.elapsed();
        assert!(
            out.status.success(),
            "iteration {i}: the next write failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        max_recovery = max_recovery.max(took);
        assert_clean(&root);
        assert_eq!(listed(&root), committed(&root), "iteration {i}");
        let leftovers: Vec<_> = std::fs::read_dir(root.join("tools"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".staging") || n.starts_with(".trash"))
            .collect();
        assert!(leftovers.is_empty(), "iteration {i}: {leftovers:?}");
        assert!(!root.join(".git/toolsmith-journal").exists());
    }
    eprintln!(
        "kill loop: {kills} of {attempts} writes killed by SIGKILL mid-run, {recoveries} left a lock, journal or staged copy behind; every next write succeeded; max time to the next successful write {} ms; loop {} ms",
        max_recovery.as_millis(),
        loop_start.elapsed().as_millis()
    );
    assert!(
        kills >= 30,
        "only {kills} kills landed in {attempts} attempts"
    );
    let _ = Toolbox::open(&root).expect("opens");
}

/// A dead process's pid (spawned and reaped).
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn a_journaled_write_is_finished_or_rolled_back_on_open() {
    let (_tmp, tb) = toolbox();
    let root = tb.root().to_path_buf();
    tb.write_tool("x", &script_files("x", "Version one"), "t")
        .unwrap();
    tb.write_tool("x", &script_files("x", "Version two"), "t")
        .unwrap();
    let head = git(&root, &["rev-parse", "HEAD"]).trim().to_string();
    let pid = dead_pid();

    // Crash after the branch moved, before the swap: the staged copy holds version two, the
    // live directory still version one.
    let staging = format!(".staging-x-{pid}-1");
    std::fs::rename(root.join("tools/x"), root.join("tools").join(&staging)).unwrap();
    std::fs::create_dir(root.join("tools/x")).unwrap();
    for f in ["tool.toml", "main.py"] {
        let old = git(&root, &["show", &format!("HEAD~1:tools/x/{f}")]);
        std::fs::write(root.join("tools/x").join(f), old).unwrap();
    }
    let journal = serde_json::json!({
        "pid": pid, "commit": head, "branch": "refs/heads/main",
        "prefixes": ["tools/x"],
        "moves": [{"tool": "x", "staging": staging, "trash": format!(".trash-x-{pid}-2"), "keep_env": false}],
    });
    std::fs::write(root.join(".git/toolsmith-journal"), journal.to_string()).unwrap();
    let tb = Toolbox::open(&root).unwrap();
    assert_eq!(
        Index::build(tb.root())
            .tool("x")
            .unwrap()
            .manifest
            .description,
        "Version two",
        "rolled forward"
    );
    assert!(!root.join(".git/toolsmith-journal").exists());
    assert!(!root.join("tools").join(&staging).exists());
    assert_clean(&root);

    // Crash before the branch moved: the journal names a commit the branch never reached.
    let staging = format!(".staging-x-{pid}-3");
    std::fs::create_dir(root.join("tools").join(&staging)).unwrap();
    std::fs::write(root.join("tools").join(&staging).join("tool.toml"), "half").unwrap();
    let journal = serde_json::json!({
        "pid": pid, "commit": "0123456789012345678901234567890123456789", "branch": "refs/heads/main",
        "prefixes": ["tools/x"],
        "moves": [{"tool": "x", "staging": staging, "trash": format!(".trash-x-{pid}-4"), "keep_env": false}],
    });
    std::fs::write(root.join(".git/toolsmith-journal"), journal.to_string()).unwrap();
    let tb = Toolbox::open(&root).unwrap();
    assert_eq!(
        Index::build(tb.root())
            .tool("x")
            .unwrap()
            .manifest
            .description,
        "Version two",
        "rolled back"
    );
    assert!(!root.join("tools").join(&staging).exists());
    assert!(!root.join(".git/toolsmith-journal").exists());
    assert_eq!(git(&root, &["rev-parse", "HEAD"]).trim(), head);
    assert_clean(&root);
}
