//! Pre-started spares (`runner::spare`, an `App`'s pool) with real interpreters and the real sandbox: a call
//! through a spare sees nothing of the previous call (module state, scratch files, environment),
//! a spare killed from outside is skipped and replaced, a changed environment gets a new spare,
//! and the limits (time, output, memory, processes) hold for spares as for cold starts.
//! Python tools' fork servers are off here (`tests/it/forks.rs` tests those). Run also with
//! `TOOLSMITH_BWRAP=/nonexistent` (the in-process sandbox).

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use toolsmith::app::{App, CallError};
use toolsmith::register::{self, ScriptSpec};
use toolsmith::runner::RunError;
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::Actor;

fn template_helper(lang: &str, file: &str, marker: &str) -> String {
    let t = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("templates/{lang}/{file}")),
    )
    .unwrap();
    t[t.find(marker).expect("the template has a helper")..].to_string()
}

async fn add(app: &App, v: Value) {
    let name = v["name"].as_str().unwrap_or_default().to_string();
    let s: ScriptSpec = serde_json::from_value(v).expect("a valid spec");
    register::register(app, &s, &Actor::from("test"), &NoHost, &|_, _, _| {})
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// These tests start many processes each: they take turns.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// An app whose Python tools run through spares too (fork servers off: tests/it/forks.rs tests
/// those).
fn app() -> (tempfile::TempDir, App) {
    let (tmp, tb) = toolbox();
    let personal = tmp.path().join("personal");
    let mut config = toolsmith::config::Config::from_env().expect("config");
    config.fork_servers = false;
    (tmp, App::new(tb, config).with_personal_dir(personal))
}

fn dir(app: &App, name: &str) -> PathBuf {
    app.toolbox.root().join("tools").join(name)
}

async fn call(app: &App, name: &str, args: Value) -> Result<Value, CallError> {
    app.call(name, args, &NoHost)
        .await
        .map(|o| o.structured.unwrap_or(Value::String(o.text)))
}

/// Call once more through the tool's waiting spare, checking that the spare was used (its
/// process is gone afterwards) and that a new one took its place.
async fn through_spare(app: &App, name: &str, args: Value) -> Result<Value, CallError> {
    app.scripts().spares.settled().await;
    let before = app.scripts().spares.idle_pids(&dir(app, name));
    assert_eq!(before.len(), 1, "{name}: one spare waits");
    let out = call(app, name, args).await;
    app.scripts().spares.settled().await;
    let after = app.scripts().spares.idle_pids(&dir(app, name));
    assert_eq!(after.len(), 1, "{name}: a new spare waits");
    assert_ne!(before, after, "{name}: the call used the spare");
    assert!(
        !Path::new(&format!("/proc/{}", before[0])).exists()
            || std::fs::read_to_string(format!("/proc/{}/stat", before[0]))
                .is_ok_and(|s| s.contains(") Z ")),
        "{name}: the used spare is gone"
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_through_a_spare_sees_nothing_of_the_previous_call() {
    let _turn = TURN.lock().await;
    let (_tmp, app) = app();
    app.scripts().spares.set_enabled(true);
    let py_helper = template_helper("python", "main.py", "# --- toolsmith jsonrpc helper");
    let py = format!(
        "import os\nCOUNT = 0\ndef run(args, ctx):\n    global COUNT\n    COUNT += 1\n    seen_file = os.path.exists('left.txt')\n    open('left.txt', 'w').write('x')\n    seen_env = os.environ.get('LEFT_BY_LAST_CALL')\n    os.environ['LEFT_BY_LAST_CALL'] = '1'\n    return {{'count': COUNT, 'file': seen_file, 'env': seen_env, 'argv0': os.path.basename(__import__('sys').argv[0]), 'main': __name__ if __import__('sys').modules['__main__'].__dict__ is globals() else 'not sys.modules[__main__]'}}\n{py_helper}"
    );
    add(
        &app,
        json!({"name": "fresh_py", "language": "python", "description": "state probe", "code": py}),
    )
    .await;
    let js_helper = template_helper("node", "main.js", "// --- toolsmith jsonrpc helper");
    let js = format!(
        "'use strict';\nconst fs = require('fs');\nlet count = 0;\nasync function run() {{ count += 1; const file = fs.existsSync('left.txt'); fs.writeFileSync('left.txt', 'x'); const env = process.env.LEFT_BY_LAST_CALL || null; process.env.LEFT_BY_LAST_CALL = '1'; globalThis.leftOver = (globalThis.leftOver || 0) + 1; return {{ count, file, env, global: globalThis.leftOver, main: require.main === module }}; }}\n{js_helper}"
    );
    add(
        &app,
        json!({"name": "fresh_js", "language": "node", "description": "state probe", "code": js}),
    )
    .await;
    let fresh_py =
        json!({"count": 1, "file": false, "env": null, "argv0": "main.py", "main": "__main__"});
    let fresh_js = json!({"count": 1, "file": false, "env": null, "global": 1, "main": true});
    // The first call starts its process at once; the next ones find a spare waiting.
    assert_eq!(call(&app, "fresh_py", json!({})).await.unwrap(), fresh_py);
    assert_eq!(call(&app, "fresh_js", json!({})).await.unwrap(), fresh_js);
    for _ in 0..2 {
        assert_eq!(
            through_spare(&app, "fresh_py", json!({})).await.unwrap(),
            fresh_py
        );
        assert_eq!(
            through_spare(&app, "fresh_js", json!({})).await.unwrap(),
            fresh_js
        );
    }

    // Every language runs through its spare as through a cold start (plain scripts that
    // print a fact only a fresh process has: nothing in scratch yet).
    let probes = [
        (
            "fresh_rb",
            "ruby",
            "require 'json'\nseen = File.exist?('left.txt')\nFile.write('left.txt', 'x')\nputs JSON.generate({'seen' => seen, 'main' => __FILE__ == $0})\n",
        ),
        (
            "fresh_sh",
            "bash",
            // As `bash ENTRY`: $0 and BASH_SOURCE name the entry, no positional parameters.
            "if [ -e left.txt ]; then s=true; else s=false; fi\n: > left.txt\nif [ \"$0\" = \"${BASH_SOURCE[0]}\" ] && [ \"${0##*/}\" = main.sh ] && [ $# -eq 0 ]; then m=true; else m=false; fi\nprintf '{\"seen\":%s,\"main\":%s}\\n' \"$s\" \"$m\"\n",
        ),
        (
            "fresh_pl",
            "perl",
            "use JSON::PP;\nmy $s = -e 'left.txt' ? JSON::PP::true : JSON::PP::false;\nopen(my $f, '>', 'left.txt'); close $f;\nprint encode_json({seen => $s, main => JSON::PP::true}), \"\\n\";\n",
        ),
        (
            "fresh_php",
            "php",
            "<?php $s = file_exists('left.txt'); touch('left.txt'); echo json_encode(['seen' => $s, 'main' => realpath($argv[0]) === __FILE__]), \"\\n\";\n",
        ),
    ];
    let want = json!({"seen": false, "main": true});
    for (name, lang, code) in probes {
        add(&app, json!({"name": name, "language": lang, "protocol": "plain", "description": "state probe", "code": code})).await;
        assert_eq!(
            call(&app, name, json!({})).await.unwrap(),
            want,
            "{name} cold"
        );
        assert_eq!(
            through_spare(&app, name, json!({})).await.unwrap(),
            want,
            "{name} spare"
        );
    }
    // An uncaught error reads as it would from a cold start: the tool's own frames only.
    add(&app, json!({"name": "raises", "language": "python", "protocol": "plain", "description": "raises", "code": "def f():\n    raise ValueError('boom 4242')\nf()\n"})).await;
    let _ = call(&app, "raises", json!({})).await;
    match through_spare(&app, "raises", json!({})).await {
        Err(CallError::Run(RunError::Failed {
            code: 1, stderr, ..
        })) => {
            assert!(stderr.contains("ValueError: boom 4242"), "{stderr}");
            assert!(stderr.contains("main.py\", line 2, in f"), "{stderr}");
            assert!(!stderr.contains("runpy"), "{stderr}");
        }
        other => panic!("{other:?}"),
    }
    assert_clean(app.toolbox.root());
    // Exit codes, atexit functions and threads behave as at a normal interpreter exit.
    add(&app, json!({"name": "exits", "language": "python", "protocol": "plain", "description": "exits 3",
        "code": "import atexit, sys, threading, time\natexit.register(lambda: print('atexit ran', file=sys.stderr))\nthreading.Thread(target=lambda: (time.sleep(0.05), print('thread done', file=sys.stderr))).start()\nsys.exit(3)\n"})).await;
    let _ = call(&app, "exits", json!({})).await;
    match through_spare(&app, "exits", json!({})).await {
        Err(CallError::Run(RunError::Failed {
            code: 3, stderr, ..
        })) => {
            assert!(
                stderr.contains("thread done") && stderr.contains("atexit ran"),
                "{stderr}"
            );
        }
        other => panic!("{other:?}"),
    }
    app.scripts().spares.stop_all();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_spare_is_replaced_and_a_changed_environment_gets_a_new_spare() {
    let _turn = TURN.lock().await;
    let (_tmp, app) = app();
    app.scripts().spares.set_enabled(true);
    // SAFETY: this binary's other tests do not read this variable; set before any call.
    unsafe { std::env::set_var("SPARE_TEST_VALUE", "one") };
    add(&app, json!({"name": "envy", "language": "python", "protocol": "plain", "description": "prints a variable",
        "capabilities": {"env": ["SPARE_TEST_VALUE"]},
        "code": "import os, json\nprint(json.dumps({'v': os.environ.get('SPARE_TEST_VALUE')}))\n"})).await;
    // A person grants the variable (a capability beyond the defaults).
    approve(&app, "envy");
    assert_eq!(
        call(&app, "envy", json!({})).await.unwrap(),
        json!({"v": "one"})
    );
    app.scripts().spares.settled().await;
    let pids = app.scripts().spares.idle_pids(&dir(&app, "envy"));
    assert_eq!(pids.len(), 1);
    // SAFETY: kill(2) on the spare this test's server started.
    unsafe { libc::kill(pids[0] as i32, libc::SIGKILL) };
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        call(&app, "envy", json!({})).await.unwrap(),
        json!({"v": "one"}),
        "the call after the kill"
    );
    app.scripts().spares.settled().await;
    let replaced = app.scripts().spares.idle_pids(&dir(&app, "envy"));
    assert_eq!(replaced.len(), 1, "a new spare waits");
    assert_ne!(replaced, pids);

    // The environment changes: the waiting spare (started with "one") must not serve the call.
    unsafe { std::env::set_var("SPARE_TEST_VALUE", "two") };
    assert_eq!(
        call(&app, "envy", json!({})).await.unwrap(),
        json!({"v": "two"})
    );
    assert_eq!(
        through_spare(&app, "envy", json!({})).await.unwrap(),
        json!({"v": "two"})
    );
    // So does a new version of the tool (its directory is replaced by the commit).
    add(&app, json!({"name": "envy", "language": "python", "protocol": "plain", "description": "prints a variable, v2",
        "capabilities": {"env": ["SPARE_TEST_VALUE"]},
        "code": "import os, json\nprint(json.dumps({'v2': os.environ.get('SPARE_TEST_VALUE')}))\n"})).await;
    approve(&app, "envy");
    assert_eq!(
        call(&app, "envy", json!({})).await.unwrap(),
        json!({"v2": "two"})
    );
    app.scripts().spares.stop_all();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_hold_for_spares() {
    let _turn = TURN.lock().await;
    let (_tmp, app) = app();
    app.scripts().spares.set_enabled(true);
    add(&app, json!({"name": "loops", "language": "python", "protocol": "plain", "description": "loops forever",
        "limits": {"timeout_ms": 600},
        "code": "import subprocess\nsubprocess.Popen(['sleep', '27.1828'])\nwhile True:\n    pass\n"})).await;
    add(&app, json!({"name": "chatty", "language": "python", "protocol": "plain", "description": "prints too much",
        "limits": {"output_bytes": 10000},
        "code": "import sys\nsys.stdout.write('x' * 1000000)\n"})).await;
    add(&app, json!({"name": "greedy", "language": "python", "protocol": "plain", "description": "allocates too much",
        "limits": {"memory_mb": 200},
        "code": "b = bytearray(1024 * 1024 * 1024)\nprint('{\"allocated\": true}')\n"})).await;
    for round in ["cold", "spare"] {
        if round == "spare" {
            app.scripts().spares.settled().await;
            for t in ["loops", "chatty", "greedy"] {
                assert_eq!(
                    app.scripts().spares.idle_pids(&dir(&app, t)).len(),
                    1,
                    "{t}: a spare waits"
                );
            }
        }
        let e = call(&app, "loops", json!({})).await.unwrap_err();
        assert!(
            matches!(e, CallError::Run(RunError::Timeout { ms: 600, .. })),
            "{round}: {e}"
        );
        assert!(
            !leftover("sleep 27.1828"),
            "{round}: the loop's child survived"
        );
        let e = call(&app, "chatty", json!({})).await.unwrap_err();
        assert!(
            matches!(
                e,
                CallError::Run(RunError::OutputTooLarge { bytes: 10000, .. })
            ),
            "{round}: {e}"
        );
        let e = call(&app, "greedy", json!({})).await.unwrap_err();
        assert!(
            matches!(&e, CallError::Run(RunError::Failed { stderr, .. }) if stderr.contains("MemoryError")),
            "{round}: {e}"
        );
    }

    let contained = toolsmith::sandbox::PidsCgroup::new(8, &app.config().sandbox).is_some()
        || unsafe { libc::geteuid() } != 0;
    if contained {
        add(&app, json!({"name": "bomb", "language": "bash", "protocol": "plain", "description": "A fork bomb",
            "limits": {"timeout_ms": 3000},
            "code": "bomb_2718() { bomb_2718 | bomb_2718 & }; bomb_2718; wait\n"})).await;
        let entry = dir(&app, "bomb").join("main.sh");
        for round in ["cold", "spare"] {
            if round == "spare" {
                app.scripts().spares.settled().await;
                assert_eq!(app.scripts().spares.idle_pids(&dir(&app, "bomb")).len(), 1);
            }
            match call(&app, "bomb", json!({})).await {
                Ok(_) | Err(CallError::Run(RunError::Timeout { .. } | RunError::Failed { .. })) => {
                }
                Err(e) => panic!("{round}: {e}"),
            }
            assert!(
                !leftover(entry.to_str().unwrap()),
                "{round}: fork bomb processes survived"
            );
        }
    }
    app.scripts().spares.stop_all();
}

/// The status a tool exits with is the call's, whichever way it ends, through a spare (whose
/// stub reports it on its channel, or leaves it to the process when it cannot): an exit code,
/// an exit that skips the language's exit handlers, a replaced exit handler, an exit code set
/// by the tool's own exit handler. And the call's output is everything written
/// to stdout, by the tool's background processes too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_statuses_and_late_output_through_spares() {
    let _turn = TURN.lock().await;
    let (_tmp, app) = app();
    app.scripts().spares.set_enabled(true);
    let cases: &[(&str, &str, &str, i32)] = &[
        ("sh_exit", "bash", "echo out\nexit 3\n", 3),
        ("sh_trap", "bash", "trap 'exit 4' EXIT\necho out\n", 4),
        (
            "py_exit",
            "python",
            "import sys\nprint('out')\nsys.exit(5)\n",
            5,
        ),
        (
            "py_os_exit",
            "python",
            "import os, sys\nprint('out')\nsys.stdout.flush()\nos._exit(6)\n",
            6,
        ),
        (
            "py_raise",
            "python",
            "print('out')\nraise ValueError('no')\n",
            1,
        ),
        (
            "js_exit_code",
            "node",
            "process.on('exit', () => { process.exitCode = 7; });\nconsole.log('out');\n",
            7,
        ),
        (
            "js_exit",
            "node",
            "console.log('out');\nprocess.exit(8);\n",
            8,
        ),
        ("rb_exit", "ruby", "puts 'out'\nexit 9\n", 9),
        (
            "rb_exit_bang",
            "ruby",
            "puts 'out'\n$stdout.flush\nexit!(10)\n",
            10,
        ),
        ("pl_exit", "perl", "print \"out\\n\";\nexit 11;\n", 11),
        (
            "pl_posix_exit",
            "perl",
            "use POSIX ();\n$| = 1;\nprint \"out\\n\";\nPOSIX::_exit(12);\n",
            12,
        ),
        (
            "php_exit",
            "php",
            "<?php\necho \"out\\n\";\nexit(13);\n",
            13,
        ),
    ];
    for (name, lang, code, _) in cases {
        add(&app, json!({"name": name, "language": lang, "protocol": "plain", "description": "exits", "code": code})).await;
    }
    for round in ["first", "spare"] {
        if round == "spare" {
            app.scripts().spares.settled().await;
        }
        for (name, _, _, want) in cases {
            match call(&app, name, json!({})).await {
                Err(CallError::Run(RunError::Failed { code, stderr, .. })) => {
                    assert_eq!(code, *want, "{round} {name}: {stderr}");
                }
                other => panic!("{round} {name}: {other:?}"),
            }
        }
    }
    // Everything written before the end arrives (the stubs end the call's stdout at the exit).
    let big: &[(&str, &str, &str)] = &[
        (
            "js_big",
            "node",
            "process.stdout.write('x'.repeat(300000));\n",
        ),
        (
            "py_big",
            "python",
            "import sys\nsys.stdout.write('x' * 300000)\n",
        ),
        ("sh_big", "bash", "head -c 300000 /dev/zero | tr '\\0' x\n"),
    ];
    for (name, lang, code) in big {
        add(&app, json!({"name": name, "language": lang, "protocol": "plain", "description": "writes a lot", "code": code})).await;
    }
    for round in ["first", "spare"] {
        if round == "spare" {
            app.scripts().spares.settled().await;
        }
        for (name, _, _) in big {
            let out = call(&app, name, json!({})).await.unwrap();
            let text = out.as_str().unwrap_or_default();
            assert_eq!(text.len(), 300000, "{round} {name}");
            assert!(text.bytes().all(|b| b == b'x'), "{round} {name}");
        }
    }
    add(&app, json!({"name": "sh_late", "language": "bash", "protocol": "plain", "description": "writes late",
        "code": "( sleep 0.3; echo late ) &\necho early\nwait\n"})).await;
    for round in ["first", "spare"] {
        if round == "spare" {
            app.scripts().spares.settled().await;
        }
        assert_eq!(
            call(&app, "sh_late", json!({})).await.unwrap(),
            json!("early\nlate"),
            "{round}"
        );
    }
    app.scripts().spares.stop_all();
}

/// An approved tool's directory replaced after the approval was checked (a commit landing
/// between `approval::admit` and the process start): nothing of the new code runs with the
/// grants given to the old, through a spare or a fresh process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_call_whose_directory_was_replaced_meanwhile_runs_nothing() {
    let _turn = TURN.lock().await;
    let (tmp, app) = app();
    // SAFETY: this binary's other tests do not read this variable; set before any call.
    unsafe { std::env::set_var("SPARE_TEST_SWAPPED", "granted") };
    add(&app, json!({"name": "swapped", "language": "python", "protocol": "plain", "description": "prints a variable",
        "capabilities": {"env": ["SPARE_TEST_SWAPPED"]},
        "code": "import os, json\nprint(json.dumps({'v': 1, 'env': os.environ.get('SPARE_TEST_SWAPPED')}))\n"})).await;
    approve(&app, "swapped");
    let d = dir(&app, "swapped");
    let admitted = |app: &App| {
        let mut t = toolsmith::runner::Granted::defaults(
            app.tool("swapped").unwrap(),
            toolsmith::index::Origin::Stored,
        );
        t.admitted = toolsmith::platform::dir_id(&d);
        t
    };
    let swap = |n: u32| {
        // What a commit does: a new directory renamed into place.
        let new = tmp.path().join(format!("new-{n}"));
        std::fs::create_dir_all(&new).unwrap();
        for f in ["tool.toml", "main.py"] {
            std::fs::copy(d.join(f), new.join(f)).unwrap();
        }
        std::fs::write(
            new.join("main.py"),
            "import os, json\nprint(json.dumps({'v': 2, 'env': os.environ.get('SPARE_TEST_SWAPPED')}))\n",
        )
        .unwrap();
        std::fs::rename(&d, tmp.path().join(format!("old-{n}"))).unwrap();
        std::fs::rename(&new, &d).unwrap();
    };
    for spares in [false, true] {
        app.scripts().spares.set_enabled(spares);
        let t = admitted(&app);
        let out = app.scripts().call(&d, &t, &json!({}), &NoHost).await;
        assert_eq!(
            out.expect("the approved directory runs").structured,
            Some(json!({"v": 1, "env": "granted"})),
        );
        app.scripts().spares.settled().await;
        assert_eq!(
            app.scripts().spares.idle_pids(&d).len(),
            usize::from(spares),
            "spares: {spares}"
        );
        let t = admitted(&app);
        swap(u32::from(spares));
        match app.scripts().call(&d, &t, &json!({}), &NoHost).await {
            Err(RunError::Replaced { tool }) => assert_eq!(tool, "swapped"),
            other => panic!("spares: {spares}: {other:?}"),
        }
        // Put back what git has, for the next round.
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::rename(tmp.path().join(format!("old-{}", u32::from(spares))), &d).unwrap();
    }
    app.scripts().spares.stop_all();
}
