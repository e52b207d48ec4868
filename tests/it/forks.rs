//! Fork servers (`runner::fork`) with real interpreters and the real sandboxes, both of them in
//! every test (bubblewrap, and the in-process sandbox with bubblewrap hidden): a Python call
//! forked from its tool's fork server starts from a clean state (no file in its working
//! directory or /tmp, no variable, module state, IPC object or process of an earlier call),
//! runs without any capability, under no_new_privs and the full seccomp program, cannot see
//! the server or other calls, and its limits (time, output, memory, processes) hold per call;
//! concurrent calls each get their own scratch; a replaced tool directory runs nothing; a
//! server starting on a toolbox makes the tools it used most ready before any call; the
//! memory bound holds.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use toolsmith::app::{App, CallError};
use toolsmith::register::{self, ScriptSpec};
use toolsmith::runner::RunError;
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::Actor;

/// These tests start many processes each: they take turns.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn make_app(
    mechanism: &str,
    tweak: impl FnOnce(&mut toolsmith::config::Config),
) -> (tempfile::TempDir, App) {
    let (tmp, tb) = toolbox();
    let personal = tmp.path().join("personal");
    let mut config = toolsmith::config::Config::from_env().expect("config");
    if mechanism == "landlock" {
        config.sandbox.bwrap = PathBuf::from("/nonexistent/bwrap");
    }
    tweak(&mut config);
    let chosen =
        toolsmith::sandbox::choose(toolsmith::manifest::SandboxMode::Required, &config.sandbox)
            .expect("a sandbox (scripts/setup.sh installs bubblewrap)");
    assert_eq!(chosen.as_str(), mechanism, "the mechanism under test");
    let app = App::new(tb, config).with_personal_dir(personal);
    app.scripts().spares.set_enabled(true);
    (tmp, app)
}

async fn add(app: &App, v: Value) {
    let name = v["name"].as_str().unwrap_or_default().to_string();
    let s: ScriptSpec = serde_json::from_value(v).expect("a valid spec");
    register::register(app, &s, &Actor::from("test"), &NoHost, &|_, _, _| {})
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
}

fn dir(app: &App, name: &str) -> PathBuf {
    app.toolbox.root().join("tools").join(name)
}

async fn call(app: &App, name: &str, args: Value) -> Result<Value, CallError> {
    app.call(name, args, &NoHost)
        .await
        .map(|o| o.structured.unwrap_or(Value::String(o.text)))
}

/// What a call can see of earlier calls and of the machine, printed as JSON.
const PROBE: &str = r#"import ctypes, json, os, subprocess, sys
seen = {}
seen["file"] = os.path.exists("left.txt")
open("left.txt", "w").write("x")
seen["tmp"] = os.path.exists("/tmp/left-by-last-call")
try:
    open("/tmp/left-by-last-call", "w").write("x")
except OSError:
    pass
seen["env"] = os.environ.get("LEFT_BY_LAST_CALL")
os.environ["LEFT_BY_LAST_CALL"] = "1"
seen["module"] = getattr(json, "left_by_last_call", None)
json.left_by_last_call = 1
seen["modules"] = "left_module_4242" in sys.modules
sys.modules["left_module_4242"] = json
libc = ctypes.CDLL(None, use_errno=True)
seen["shm"] = libc.shmget(0x4242, 0, 0) >= 0
libc.shmget(0x4242, 4096, 0o1000 | 0o600)
seen["procs"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
subprocess.Popen(["sleep", "31.4159"], start_new_session=True)
seen["pid"], seen["ppid"] = os.getpid(), os.getppid()
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"):
    seen[k] = status[k].strip()
seen["mount"] = libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None) == 0
seen["userns"] = libc.unshare(0x10000000) == 0
seen["scratch"] = sorted(os.listdir("."))
seen["home"] = os.environ.get("HOME") == os.getcwd()
print(json.dumps(seen))
"#;

/// Each call forked from the tool's fork server starts clean, sandboxed as a script process is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forked_call_sees_nothing_of_earlier_calls_and_holds_no_privilege() {
    let _turn = TURN.lock().await;
    for &mech in mechanisms() {
        let (_tmp, app) = make_app(mech, |_| {});
        add(&app, json!({"name": "probe", "language": "python", "protocol": "plain", "description": "what a call sees", "code": PROBE})).await;
        let d = dir(&app, "probe");
        let mut server = None;
        let mut last = None;
        for round in 0..4 {
            let seen = call(&app, "probe", json!({}))
                .await
                .unwrap_or_else(|e| panic!("{mech} {round}: {e}"));
            // As a spare's: under bubblewrap the tool is pid 2 (its init is pid 1), under the
            // in-process sandbox it is the namespace's init.
            let (procs, pid, ppid) = match mech {
                "bubblewrap" => (json!([1, 2]), 2, 1),
                _ => (json!([1]), 1, 0),
            };
            let want = json!({
                "file": false, "tmp": false, "env": null, "module": null, "modules": false,
                "shm": false, "procs": procs, "pid": pid, "ppid": ppid,
                "CapEff": "0000000000000000", "CapPrm": "0000000000000000",
                "CapBnd": "0000000000000000", "CapAmb": "0000000000000000",
                "NoNewPrivs": "1", "Seccomp": "2", "mount": false, "userns": false,
                "scratch": ["left.txt"], "home": true,
            });
            assert_eq!(seen, want, "{mech}, call {round}");
            last = Some(seen);
            // The same server forked every call (none of them went through a spare).
            let now = app.scripts().spares.server_pid(&d);
            assert!(now.is_some(), "{mech}: a fork server runs");
            assert!(
                server.is_none() || server == now,
                "{mech}: the same fork server"
            );
            server = now;
            assert!(
                app.scripts().spares.idle_pids(&d).is_empty(),
                "{mech}: no spare"
            );
        }
        assert!(
            !leftover("sleep 31.4159"),
            "{mech}: a call's background process survived it"
        );
        app.scripts().spares.stop_all();
        // A spare (fork servers off) runs the tool in the same process tree, seeing the same.
        let (_tmp2, spares) = make_app(mech, |c| c.fork_servers = false);
        add(&spares, json!({"name": "probe", "language": "python", "protocol": "plain", "description": "what a call sees", "code": PROBE})).await;
        for round in ["first", "spare"] {
            spares.scripts().spares.settled().await;
            let seen = call(&spares, "probe", json!({})).await.unwrap();
            assert_eq!(Some(&seen), last.as_ref(), "{mech}: {round} through spares");
        }
        assert!(
            spares
                .scripts()
                .spares
                .server_pid(&dir(&spares, "probe"))
                .is_none()
        );
        spares.scripts().spares.stop_all();
    }
}

/// A process forked ahead compiles the tool's entry while it waits (`stubs/python.py`); the
/// call runs the entry as the file holds it at the call. Edited in place after that compile
/// (the same fork server: the edit changes no grant), the new code runs; an entry that no
/// longer compiles fails as a cold start does, with the error at its line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forked_call_runs_its_entry_as_the_file_holds_it_at_the_call() {
    let _turn = TURN.lock().await;
    for &mech in mechanisms() {
        let (_tmp, app) = make_app(mech, |_| {});
        let v1 = "import json\nprint(json.dumps({'v': 1}))\n";
        add(&app, json!({"name": "ver", "language": "python", "protocol": "plain", "description": "its version", "code": v1})).await;
        let d = dir(&app, "ver");
        let entry = d.join("main.py");
        assert_eq!(std::fs::read_to_string(&entry).unwrap(), v1, "{mech}");
        assert_eq!(
            call(&app, "ver", json!({})).await.unwrap(),
            json!({"v": 1}),
            "{mech}"
        );
        let server = app.scripts().spares.server_pid(&d);
        assert!(server.is_some(), "{mech}: a fork server runs");
        for (round, (code, want)) in [
            (
                "import json\nprint(json.dumps({'v': 2}))\n",
                json!({"v": 2}),
            ),
            (
                "import json\nprint(json.dumps({'v': 3, 'same': 1}))\n",
                json!({"v": 3, "same": 1}),
            ),
        ]
        .into_iter()
        .enumerate()
        {
            // The next call's process is forked and has compiled the entry as it was.
            app.scripts().spares.settled().await;
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            std::fs::write(&entry, code).unwrap();
            assert_eq!(
                call(&app, "ver", json!({})).await.unwrap(),
                want,
                "{mech}, edit {round}"
            );
            assert_eq!(
                app.scripts().spares.server_pid(&d),
                server,
                "{mech}: the same fork server"
            );
        }
        app.scripts().spares.settled().await;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        std::fs::write(&entry, "import json\n\nprint('unclosed'\n").unwrap();
        match call(&app, "ver", json!({})).await {
            Err(CallError::Run(RunError::Failed { code, stderr, .. })) => {
                assert_eq!(code, 1, "{mech}: {stderr}");
                assert!(
                    stderr.contains("SyntaxError") && stderr.contains("main.py\", line 3"),
                    "{mech}: {stderr}"
                );
            }
            other => panic!("{mech}: {other:?}"),
        }
        app.scripts().spares.stop_all();
    }
}

/// Twenty calls at once: each forked, each in its own scratch, none seeing another's files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_forked_calls_each_have_their_own_scratch() {
    let _turn = TURN.lock().await;
    for &mech in mechanisms() {
        let (_tmp, app) = make_app(mech, |_| {});
        add(&app, json!({"name": "own", "language": "python", "protocol": "plain", "description": "writes its own file",
            "code": "import json, os, sys, time\nn = json.load(sys.stdin)['n']\nopen('mine-%d' % n, 'w').write('x')\ntime.sleep(0.2)\nprint(json.dumps({'n': n, 'files': sorted(os.listdir('.'))}))\n"})).await;
        call(&app, "own", json!({"n": -1})).await.unwrap();
        let server = app.scripts().spares.server_pid(&dir(&app, "own"));
        let calls = (0..20).map(|n| call(&app, "own", json!({"n": n})));
        let outs = futures::future::join_all(calls).await;
        for (n, out) in outs.into_iter().enumerate() {
            assert_eq!(
                out.unwrap_or_else(|e| panic!("{mech} {n}: {e}")),
                json!({"n": n, "files": [format!("mine-{n}")]}),
                "{mech}"
            );
        }
        assert_eq!(
            app.scripts().spares.server_pid(&dir(&app, "own")),
            server,
            "{mech}: one server forked them all"
        );
        app.scripts().spares.stop_all();
    }
}

/// Time, output, memory and task limits hold for each forked call; what a call started dies
/// with it, and a fork bomb in one call leaves the server forking the next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_hold_per_forked_call() {
    let _turn = TURN.lock().await;
    for &mech in mechanisms() {
        let (_tmp, app) = make_app(mech, |_| {});
        add(&app, json!({"name": "loops", "language": "python", "protocol": "plain", "description": "loops forever",
            "limits": {"timeout_ms": 800},
            "code": "import subprocess\nsubprocess.Popen(['sleep', '27.1829'])\nwhile True:\n    pass\n"})).await;
        add(&app, json!({"name": "chatty", "language": "python", "protocol": "plain", "description": "prints too much",
            "limits": {"output_bytes": 10000},
            "code": "import sys\nsys.stdout.write('x' * 1000000)\n"})).await;
        add(&app, json!({"name": "greedy", "language": "python", "protocol": "plain", "description": "allocates too much",
            "limits": {"memory_mb": 200},
            "code": "b = bytearray(1024 * 1024 * 1024)\nprint('{\"allocated\": true}')\n"})).await;
        add(&app, json!({"name": "bomb", "language": "python", "protocol": "plain", "description": "forks forever when asked",
            "limits": {"timeout_ms": 2500},
            "code": "import json, os, sys, time\nif json.load(sys.stdin).get('bomb'):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            time.sleep(0.01)\nprint(json.dumps({'ok': True}))\n"})).await;
        for round in 0..2 {
            let e = call(&app, "loops", json!({})).await.unwrap_err();
            assert!(
                matches!(e, CallError::Run(RunError::Timeout { ms: 800, .. })),
                "{mech} {round}: {e}"
            );
            assert!(
                !leftover("sleep 27.1829"),
                "{mech} {round}: the loop's child survived"
            );
            let e = call(&app, "chatty", json!({})).await.unwrap_err();
            assert!(
                matches!(
                    e,
                    CallError::Run(RunError::OutputTooLarge { bytes: 10000, .. })
                ),
                "{mech} {round}: {e}"
            );
            let e = call(&app, "greedy", json!({})).await.unwrap_err();
            assert!(
                matches!(&e, CallError::Run(RunError::Failed { stderr, .. }) if stderr.contains("MemoryError")),
                "{mech} {round}: {e}"
            );
        }
        for t in ["loops", "chatty", "greedy"] {
            assert!(
                app.scripts().spares.server_pid(&dir(&app, t)).is_some(),
                "{mech}: {t} ran forked"
            );
        }
        assert_eq!(
            call(&app, "bomb", json!({})).await.unwrap(),
            json!({"ok": true})
        );
        let server = app.scripts().spares.server_pid(&dir(&app, "bomb"));
        let entry = dir(&app, "bomb").join("main.py");
        let bomb = call(&app, "bomb", json!({"bomb": true}));
        let beside = async {
            tokio::time::sleep(std::time::Duration::from_millis(700)).await;
            call(&app, "bomb", json!({})).await
        };
        let (bombed, other) = tokio::join!(bomb, beside);
        assert!(
            matches!(bombed, Err(CallError::Run(RunError::Timeout { .. }))),
            "{mech}: {bombed:?}"
        );
        assert_eq!(
            other.unwrap(),
            json!({"ok": true}),
            "{mech}: a call beside the bomb"
        );
        assert_eq!(
            app.scripts().spares.server_pid(&dir(&app, "bomb")),
            server,
            "{mech}: the same server forked it"
        );
        assert!(
            !leftover(entry.to_str().unwrap()),
            "{mech}: fork bomb processes survived"
        );
        app.scripts().spares.stop_all();
    }
}

/// Exit codes, uncaught errors, output a child process writes late (the tool waits for it) and a JSON-RPC
/// tool's exchange come through a fork server as they do from a spare.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_statuses_and_output_through_a_fork_server() {
    let _turn = TURN.lock().await;
    let helper = {
        let t = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/python/main.py"),
        )
        .unwrap();
        t[t.find("# --- toolsmith jsonrpc helper").unwrap()..].to_string()
    };
    for &mech in mechanisms() {
        let (_tmp, app) = make_app(mech, |_| {});
        let cases: &[(&str, &str, i32)] = &[
            ("py_exit", "import sys\nprint('out')\nsys.exit(5)\n", 5),
            (
                "py_os_exit",
                "import os, sys\nprint('out')\nsys.stdout.flush()\nos._exit(6)\n",
                6,
            ),
            (
                "py_raise",
                "def f():\n    raise ValueError('boom 4242')\nf()\n",
                1,
            ),
        ];
        for (name, code, _) in cases {
            add(&app, json!({"name": name, "language": "python", "protocol": "plain", "description": "exits", "code": code})).await;
        }
        for round in 0..2 {
            for (name, _, want) in cases {
                match call(&app, name, json!({})).await {
                    Err(CallError::Run(RunError::Failed { code, stderr, .. })) => {
                        assert_eq!(code, *want, "{mech} {round} {name}: {stderr}");
                        if *name == "py_raise" {
                            assert!(
                                stderr.contains("ValueError: boom 4242")
                                    && stderr.contains("line 2, in f"),
                                "{stderr}"
                            );
                            assert!(
                                !stderr.contains("runpy") && !stderr.contains("fork"),
                                "{stderr}"
                            );
                        }
                    }
                    other => panic!("{mech} {round} {name}: {other:?}"),
                }
            }
        }
        add(&app, json!({"name": "late", "language": "python", "protocol": "plain", "description": "writes late",
            "code": "import subprocess\np = subprocess.Popen(['sh', '-c', 'sleep 0.3; echo late'])\nprint('early', flush=True)\np.wait()\n"})).await;
        add(&app, json!({"name": "big", "language": "python", "protocol": "plain", "description": "writes a lot",
            "code": "import sys\nsys.stdout.write('x' * 300000)\n"})).await;
        add(&app, json!({"name": "rpc", "language": "python", "description": "echo over JSON-RPC",
            "code": format!("def run(args, ctx):\n    return {{'echo': args.get('text')}}\n{helper}")})).await;
        for _ in 0..2 {
            assert_eq!(
                call(&app, "late", json!({})).await.unwrap(),
                json!("early\nlate"),
                "{mech}"
            );
            let big = call(&app, "big", json!({})).await.unwrap();
            assert_eq!(big.as_str().map(str::len), Some(300000), "{mech}");
            assert_eq!(
                call(&app, "rpc", json!({"text": "hi"})).await.unwrap(),
                json!({"echo": "hi"}),
                "{mech}"
            );
        }
        assert!(app.scripts().spares.server_pid(&dir(&app, "rpc")).is_some());
        app.scripts().spares.stop_all();
    }
}

/// The pid of the fork server of `dir` once it is up (a call never waits for one to start:
/// it starts beside the call), or None after a minute.
async fn server_up(app: &App, dir: &std::path::Path) -> Option<u32> {
    for _ in 0..600 {
        if let Some(pid) = app.scripts().spares.server_pid(dir) {
            return Some(pid);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    None
}

/// A fork server killed from outside is replaced; a changed environment gets a new server;
/// an approved tool's directory replaced after its approval was checked runs nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_is_replaced_and_a_replaced_directory_runs_nothing() {
    let _turn = TURN.lock().await;
    for &mech in mechanisms() {
        let (tmp, app) = make_app(mech, |_| {});
        // SAFETY: this binary's other tests do not read this variable; set before any call.
        unsafe { std::env::set_var("FORK_TEST_VALUE", "one") };
        add(&app, json!({"name": "envy", "language": "python", "protocol": "plain", "description": "prints a variable",
            "capabilities": {"env": ["FORK_TEST_VALUE"]},
            "code": "import os, json\nprint(json.dumps({'v': os.environ.get('FORK_TEST_VALUE')}))\n"})).await;
        approve(&app, "envy");
        let d = dir(&app, "envy");
        // Approved after its registration: its first call starts its own process, and its
        // fork server starts beside it.
        assert_eq!(
            call(&app, "envy", json!({})).await.unwrap(),
            json!({"v": "one"})
        );
        // A call no fork server was ready for ran at once; the server started beside it.
        let first = server_up(&app, &d).await.expect("a fork server");
        // SAFETY: kill(2) on the server this test's app started.
        unsafe { libc::kill(first as i32, libc::SIGKILL) };
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(
            call(&app, "envy", json!({})).await.unwrap(),
            json!({"v": "one"}),
            "{mech}: after the kill"
        );
        let second = server_up(&app, &d).await.expect("a new fork server");
        assert_ne!(first, second);
        unsafe { std::env::set_var("FORK_TEST_VALUE", "two") };
        assert_eq!(
            call(&app, "envy", json!({})).await.unwrap(),
            json!({"v": "two"}),
            "{mech}: a new environment"
        );
        assert_ne!(app.scripts().spares.server_pid(&d), Some(second));

        let admitted = |app: &App| {
            let mut t = toolsmith::runner::Granted::defaults(
                app.tool("envy").unwrap(),
                toolsmith::index::Origin::Stored,
            );
            t.admitted = toolsmith::platform::dir_id(&d);
            t
        };
        let t = admitted(&app);
        // What a commit does: a new directory renamed into place.
        let new = tmp.path().join("new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::copy(d.join("tool.toml"), new.join("tool.toml")).unwrap();
        std::fs::write(new.join("main.py"), "print('{\"swapped\": true}')\n").unwrap();
        std::fs::rename(&d, tmp.path().join("old")).unwrap();
        std::fs::rename(&new, &d).unwrap();
        match app.scripts().call(&d, &t, &json!({}), &NoHost).await {
            Err(RunError::Replaced { tool }) => assert_eq!(tool, "envy"),
            other => panic!("{mech}: {other:?}"),
        }
        app.scripts().spares.stop_all();
    }
}

/// A server starting on a toolbox makes ready, before any call, what the tools it used most
/// need: a fork server for a Python tool, a spare for a Bash tool; not for a tool that waits
/// for a person's approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_prestarts_what_its_most_used_tools_need() {
    let _turn = TURN.lock().await;
    let (tmp, app) = make_app(mechanisms()[0], |_| {});
    add(&app, json!({"name": "py_used", "language": "python", "protocol": "plain", "description": "echo", "code": "print('{}')\n"})).await;
    add(&app, json!({"name": "sh_used", "language": "bash", "protocol": "plain", "description": "echo", "code": "echo '{}'\n"})).await;
    add(&app, json!({"name": "asks", "language": "python", "protocol": "plain", "description": "wants a variable",
        "capabilities": {"env": ["HOME"]}, "code": "print('{}')\n"})).await;
    let root = app.toolbox.root().to_path_buf();
    for name in ["py_used", "sh_used", "asks", "py_used"] {
        app.usage().record(name);
    }
    app.usage().flush();
    app.scripts().spares.stop_all();
    drop(app);
    // The server starts again on the same toolbox.
    let tb = toolsmith::toolbox::Toolbox::open(&root).expect("open");
    let app = App::new(tb, toolsmith::config::Config::from_env().unwrap())
        .with_personal_dir(tmp.path().join("personal"));
    app.scripts().spares.set_enabled(true);
    app.prestart().await;
    app.scripts().spares.settled().await;
    let server = app.scripts().spares.server_pid(&dir(&app, "py_used"));
    assert!(
        server.is_some(),
        "the Python tool's fork server runs before any call"
    );
    assert_eq!(
        app.scripts().spares.idle_pids(&dir(&app, "sh_used")).len(),
        1,
        "the Bash tool's spare waits"
    );
    assert!(
        app.scripts()
            .spares
            .server_pid(&dir(&app, "asks"))
            .is_none(),
        "nothing for a tool waiting for approval"
    );
    assert_eq!(call(&app, "py_used", json!({})).await.unwrap(), json!({}));
    assert_eq!(
        app.scripts().spares.server_pid(&dir(&app, "py_used")),
        server,
        "the first call used it"
    );
    app.scripts().spares.stop_all();
}

/// What waits between calls stays within the memory bound (`TOOLSMITH_SPARE_MEMORY`): with
/// room for one Python fork server, the least recently used tool's is stopped for another's,
/// and every call still runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_waits_stays_within_the_memory_bound() {
    let _turn = TURN.lock().await;
    let (_tmp, app) = make_app(mechanisms()[0], |c| c.spare_memory_mb = 30);
    for name in ["one", "two"] {
        add(&app, json!({"name": name, "language": "python", "protocol": "plain", "description": "echo", "code": "print('{\"ok\": 1}')\n"})).await;
    }
    for name in ["one", "two", "one", "two"] {
        assert_eq!(call(&app, name, json!({})).await.unwrap(), json!({"ok": 1}));
        app.scripts().spares.settled().await;
        let waiting: Vec<bool> = ["one", "two"]
            .iter()
            .map(|n| app.scripts().spares.server_pid(&dir(&app, n)).is_some())
            .collect();
        assert_eq!(
            waiting.iter().filter(|w| **w).count(),
            1,
            "after {name}: {waiting:?}"
        );
        assert!(
            app.scripts().spares.server_pid(&dir(&app, name)).is_some(),
            "the tool just called keeps its server"
        );
    }
    app.scripts().spares.stop_all();
}
