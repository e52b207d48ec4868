//! Fork servers (`runner::fork`) with real interpreters and the real sandboxes, both of them in
//! every test (bubblewrap, and the in-process sandbox with bubblewrap hidden): a Python call
//! forked from its tool's fork server starts from a clean state (no file in its working
//! directory or /tmp, no variable, module state, IPC object or process of an earlier call),
//! runs without any capability, under no_new_privs and the full seccomp program, cannot see
//! the server or other calls, and its limits (time, output, memory, processes) hold per call;
//! concurrent calls each get their own scratch; a replaced tool directory runs nothing; a
//! server starting on a toolbox makes the tools it used most ready before any call; the
//! memory bound holds.

mod common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use toolsmith::app::{App, CallError};
use toolsmith::register::{self, ScriptSpec};
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::Actor;

/// These tests start many processes each: they take turns.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The two mechanisms a fork server runs under on Linux.
const MECHANISMS: [&str; 2] = ["bubblewrap", "landlock"];

fn make_app(mechanism: &str, tweak: impl FnOnce(&mut toolsmith::config::Config)) -> (tempfile::TempDir, App) {
    let (tmp, tb) = toolbox();
    let personal = tmp.path().join("personal");
    let mut config = toolsmith::config::Config::from_env().expect("config");
    if mechanism == "landlock" {
        config.sandbox.bwrap = PathBuf::from("/nonexistent/bwrap");
    }
    tweak(&mut config);
    let chosen = toolsmith::runner::sandbox::choose(
        toolsmith::manifest::SandboxMode::Required,
        &config.sandbox,
    )
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
    for mech in MECHANISMS {
        let (_tmp, app) = make_app(mech, |_| {});
        add(&app, json!({"name": "probe", "language": "python", "protocol": "plain", "description": "what a call sees", "code": PROBE})).await;
        let d = dir(&app, "probe");
        let mut server = None;
        let mut last = None;
        for round in 0..4 {
            let seen = call(&app, "probe", json!({})).await.unwrap_or_else(|e| panic!("{mech} {round}: {e}"));
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
            assert!(server.is_none() || server == now, "{mech}: the same fork server");
            server = now;
            assert!(app.scripts().spares.idle_pids(&d).is_empty(), "{mech}: no spare");
        }
        assert!(!leftover("sleep 31.4159"), "{mech}: a call's background process survived it");
        app.scripts().spares.stop_all();
        // A spare (fork servers off) runs the tool in the same process tree, seeing the same.
        let (_tmp2, spares) = make_app(mech, |c| c.fork_servers = false);
        add(&spares, json!({"name": "probe", "language": "python", "protocol": "plain", "description": "what a call sees", "code": PROBE})).await;
        for round in ["first", "spare"] {
            spares.scripts().spares.settled().await;
            let seen = call(&spares, "probe", json!({})).await.unwrap();
            assert_eq!(Some(&seen), last.as_ref(), "{mech}: {round} through spares");
        }
        assert!(spares.scripts().spares.server_pid(&dir(&spares, "probe")).is_none());
        spares.scripts().spares.stop_all();
    }
}
